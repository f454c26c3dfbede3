// The engine's decisions on scenarios worked out by hand: which chunk each fit takes, when
// chunks split and merge, how regions grow, where aligned blocks land, what fails.
#include "support/compositions.hpp"
#include "support/fixtures.hpp"
#include "support/scenarios.hpp"
#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/policies/policy.hpp>

#include <gtest/gtest.h>

#include <limits>

namespace fraglab::testing {
namespace {

constexpr std::uintptr_t B = sim_base;

TEST(FitDecisions, BestFitTakesTheSmallestLowestAddressChunk)
{
  choice const expected{0, 1280};
  EXPECT_EQ((two_choices<policy<bins_index, best_fit>>()), expected);
  EXPECT_EQ((two_choices<policy<tree_index, best_fit>>()), expected);
  EXPECT_EQ((two_choices<policy<segregated_index, best_fit>>()), expected);
  EXPECT_EQ((two_choices<policy<address_ordered_list_index, best_fit>>()), expected);
  // Ties by list order: LIFO holds D, C, A, rest; FIFO holds rest, A, C, D.
  EXPECT_EQ((two_choices<policy<lifo_list_index, best_fit>>()), (choice{1280, 0}));
  EXPECT_EQ((two_choices<policy<fifo_list_index, best_fit>>()), (choice{0, 1280}));
}

TEST(FitDecisions, FirstFitTakesTheFirstChunkInIndexOrder)
{
  // Address order: 256@B, then 512@B+512 (split: the low half is taken).
  EXPECT_EQ((two_choices<policy<address_ordered_tree_index, first_fit>>()), (choice{0, 512}));
  EXPECT_EQ((two_choices<policy<address_ordered_list_index, first_fit>>()), (choice{0, 512}));
  EXPECT_EQ((two_choices<policy<lifo_list_index, first_fit>>()), (choice{1280, 512}));
  // FIFO: the big remainder went in first; its new remainder goes to the back.
  EXPECT_EQ((two_choices<policy<fifo_list_index, first_fit>>()), (choice{1792, 0}));
}

TEST(FitDecisions, NextFitResumesAfterThePreviousAllocation)
{
  // The rover stands at X3 (B+1536): the next free chunk above is the big one.
  EXPECT_EQ((two_choices<policy<address_ordered_tree_index, next_fit>>()), (choice{1792, 2048}));
  EXPECT_EQ((two_choices<policy<address_ordered_list_index, next_fit>>()), (choice{1792, 2048}));
  // LIFO: D, C, A, rest; the rover moves to C when D is taken.
  EXPECT_EQ((two_choices<policy<lifo_list_index, next_fit>>()), (choice{1280, 512}));
  EXPECT_EQ((two_choices<policy<fifo_list_index, next_fit>>()), (choice{1792, 0}));
}

TEST(FitDecisions, WorstFitTakesTheLargestChunk)
{
  choice const expected{1792, 2048};
  EXPECT_EQ((two_choices<policy<bins_index, worst_fit>>()), expected);
  EXPECT_EQ((two_choices<policy<tree_index, worst_fit>>()), expected);
  EXPECT_EQ((two_choices<policy<address_ordered_tree_index, worst_fit>>()), expected);
  EXPECT_EQ((two_choices<policy<segregated_index, worst_fit>>()), expected);
  EXPECT_EQ((two_choices<policy<address_ordered_list_index, worst_fit>>()), expected);
  EXPECT_EQ((two_choices<policy<lifo_list_index, worst_fit>>()), expected);
}

TEST(FitDecisions, GoodFitTakesTheHeadOfTheFirstFittingClass)
{
  // 256-byte chunks share TLSF list (1,0); its head is the last one freed, D.
  EXPECT_EQ((two_choices<policy<segregated_index, good_fit>>()), (choice{1280, 0}));
}

using best_tree = policy<tree_index, best_fit>;

TEST(Coalescing, ImmediateMergesWithBothNeighbours)
{
  auto a = fixed_pool<best_tree>(4096);
  auto x = a->allocate(256), y = a->allocate(256), z = a->allocate(256);
  a->deallocate(y.address);
  a->deallocate(x.address);
  EXPECT_EQ(layout(*a), (std::vector<layout_entry>{{B, 512, false}, {B + 512, 256, true}, {B + 768, 3328, false}}));
  EXPECT_EQ(a->stats().splits, 3u);  // x, y and z each cut from the rest
  EXPECT_EQ(a->stats().merges, 1u);  // y found both neighbours live; x joined y
  a->deallocate(z.address);
  EXPECT_EQ(layout(*a), (std::vector<layout_entry>{{B, 4096, false}}));
  EXPECT_EQ(a->stats().merges, 3u);  // z joined the rest, then x and y before it
  // A freed and coalesced pool hands back the same address for the same request.
  EXPECT_EQ(a->allocate(256).address, x.address);
}

TEST(Coalescing, DeferredMergesOnlyWhenAMissWouldOtherwiseGrow)
{
  auto a = fixed_pool<best_tree>(4096, coalesce_mode::deferred);
  auto x = a->allocate(256), y = a->allocate(256), z = a->allocate(3584);
  a->deallocate(x.address);
  a->deallocate(y.address);
  a->deallocate(z.address);
  EXPECT_EQ(a->stats().free_chunks, 3u);
  EXPECT_EQ(a->stats().splits, 2u);  // z took the rest whole
  EXPECT_EQ(a->stats().merges, 0u);
  EXPECT_EQ(a->check_invariants(), "");
  auto whole = a->allocate(4096);  // no chunk fits until the three merge
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole.address, B);
  EXPECT_EQ(a->stats().merges, 2u);
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(Coalescing, NeverLeavesFragmentsApartAndTheFixedPoolFails)
{
  auto a = fixed_pool<best_tree>(4096, coalesce_mode::never);
  auto x = a->allocate(2048), y = a->allocate(2048);
  a->deallocate(x.address);
  a->deallocate(y.address);
  auto whole = a->allocate(4096);
  EXPECT_FALSE(whole);
  EXPECT_EQ(whole.status, alloc_status::no_growth);
  EXPECT_EQ(a->stats().failed_allocations, 1u);
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(Splitting, TensorFlowsRatioRuleHandsOutTheWholeChunkBelowTwiceTheRequest)
{
  using A = alloc_t<best_tree>;
  A::config c;
  c.size = {.quantum = 256, .min_size = 256};
  c.growth.kind = growth_kind::fixed;
  c.growth.initial = 4096;
  c.split.ratio = 2.0;
  c.split.max_internal_fragmentation = 128 * MiB;
  A a(simulated_backend{}, c);
  auto x = a.allocate(1024);  // 4096 >= 2 x 1024: split
  EXPECT_EQ(x.size, 1024u);
  auto y = a.allocate(1024);  // 3072 >= 2048: split
  auto z = a.allocate(2048);  // 2048 exactly
  a.deallocate(x.address);
  auto w = a.allocate(768);   // 1024 < 1536: the whole 1024-byte chunk
  EXPECT_EQ(w.address, B);
  EXPECT_EQ(w.size, 1024u);
  EXPECT_EQ(a.stats().allocated_bytes, 1024u + 1024u + 2048u);  // chunk sizes, not requests
  EXPECT_EQ(a.stats().live_bytes, 768u + 1024u + 2048u);
  (void)y;
  (void)z;
}

TEST(Growth, DoublingRegionsLandWhereTheSimulatedBackendPutsThem)
{
  using A = alloc_t<best_tree>;
  A::config c;
  c.size = {.quantum = 256, .min_size = 256};
  c.growth.kind = growth_kind::doubling;
  c.growth.initial = 2 * MiB;
  A a(simulated_backend{}, c);
  auto r1 = a.allocate(1536 * KiB);  // region 2 MiB at B
  auto r2 = a.allocate(1536 * KiB);  // miss: region 4 MiB at B + 2 MiB
  auto r3 = a.allocate(3 * MiB);     // 2.5 MiB left there: region 8 MiB at B + 6 MiB
  EXPECT_EQ(r1.address, B);
  EXPECT_EQ(r2.address, B + 2 * MiB);
  EXPECT_EQ(r3.address, B + 6 * MiB);
  auto s = a.stats();
  EXPECT_EQ(s.reserved_bytes, 14 * MiB);
  EXPECT_EQ(s.regions, 3u);
  EXPECT_EQ(s.acquisitions, 3u);
  // A request larger than any hole fails once the limit stops growth, though total free
  // bytes (2.5 + 0.5 + 5 MiB) would hold it.
  A::config limited = c;
  limited.growth.memory_limit = 14 * MiB;
  A b(simulated_backend{}, limited);
  b.allocate(1536 * KiB);
  b.allocate(1536 * KiB);
  b.allocate(3 * MiB);
  auto big = b.allocate(6 * MiB);
  EXPECT_FALSE(big);
  EXPECT_EQ(big.status, alloc_status::limit);
  EXPECT_GE(b.stats().reserved_bytes - b.stats().allocated_bytes, 6 * MiB);
  EXPECT_EQ(b.check_invariants(), "");
}

TEST(Growth, HeapExtendsItsFreeTopLikeSbrk)
{
  using A = alloc_t<best_tree, heap_backend>;
  A::config c;  // quantum 16, exact growth
  A a(heap_backend{}, c);
  auto x = a.allocate(1000);  // 1008 bytes; the break moves one page
  EXPECT_EQ(x.address, heap_base);
  EXPECT_EQ(a.stats().reserved_bytes, 4096u);
  auto y = a.allocate(5000);  // 5008 bytes: the free top holds 3088, one more page suffices
  EXPECT_EQ(y.address, heap_base + 1008);
  EXPECT_EQ(a.stats().reserved_bytes, 8192u);
  EXPECT_EQ(a.stats().regions, 1u);
  EXPECT_EQ(layout(a), (std::vector<layout_entry>{{heap_base, 1008, true}, {heap_base + 1008, 5008, true},
                                                 {heap_base + 6016, 2176, false}}));
  a.deallocate(x.address);
  a.deallocate(y.address);
  EXPECT_EQ(a.release_free_regions(), 8192u);
  EXPECT_EQ(a.backend().top(), heap_base);
  EXPECT_EQ(a.stats().peak_reserved_bytes, 8192u);  // the footprint: the break's high-water mark
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Alignment, AlignedBlocksCarveAFreeFrontRemainder)
{
  auto a = fixed_pool<best_tree>(64 * KiB);
  auto x = a->allocate(256);
  auto y = a->allocate(100, 4096);  // needs 256 + 3840 bytes; lands on the next 4 KiB boundary
  ASSERT_TRUE(y);
  EXPECT_EQ(y.address, B + 4096);
  EXPECT_EQ(y.size, 256u);
  EXPECT_EQ(layout(*a), (std::vector<layout_entry>{{B, 256, true},
                                                  {B + 256, 3840, false},
                                                  {B + 4096, 256, true},
                                                  {B + 4352, 64 * KiB - 4352, false}}));
  EXPECT_EQ(a->stats().splits, 3u);  // x; then the gap below y, and y from the rest
  a->deallocate(x.address);
  a->deallocate(y.address);
  EXPECT_EQ(layout(*a), (std::vector<layout_entry>{{B, 64 * KiB, false}}));
  EXPECT_EQ(a->stats().merges, 3u);  // x to the gap; y to the rest and then to x and the gap
}

TEST(Pools, PerStreamPoolsNeverShareChunks)
{
  using A = alloc_t<best_tree>;
  A::config c;
  c.size = {.quantum = 256, .min_size = 256};
  c.pools.per_stream = true;
  A a(simulated_backend{}, c);
  auto x = a.allocate(256, 1, /*stream=*/0);
  a.deallocate(x.address);
  auto y = a.allocate(256, 1, /*stream=*/1);
  EXPECT_EQ(y.address, B + 256);  // stream 0's free chunk is not stream 1's to take
  EXPECT_EQ(a.stats().reserved_bytes, 512u);
  auto z = a.allocate(256, 1, /*stream=*/0);
  EXPECT_EQ(z.address, B);
  A::config shared = c;
  shared.pools.per_stream = false;
  A b(simulated_backend{}, shared);
  b.deallocate(b.allocate(256, 1, 0).address);
  EXPECT_EQ(b.allocate(256, 1, 1).address, B);
}

TEST(Failure, CapacityFailureLeavesStateIntactAndFreeingLetsARetrySucceed)
{
  using A = alloc_t<best_tree>;
  A::config c;
  c.size = {.quantum = 256, .min_size = 256};
  simulated_backend_params bp;
  bp.capacity = 1 * MiB;
  A a(simulated_backend(bp), c);
  auto x = a.allocate(512 * KiB);
  auto y = a.allocate(512 * KiB);
  ASSERT_TRUE(x && y);
  auto before = layout(a);
  auto z = a.allocate(256);
  EXPECT_FALSE(z);
  EXPECT_EQ(z.status, alloc_status::capacity);
  EXPECT_EQ(layout(a), before);
  EXPECT_EQ(a.check_invariants(), "");
  a.deallocate(x.address);
  auto retry = a.allocate(256);
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry.address, x.address);
}

TEST(Failure, BackendsPlaceARangeOnlyWhereItFitsBelowTheLimit)
{
  using detail::aligned_range_below;
  std::uintptr_t constexpr top = std::numeric_limits<std::uintptr_t>::max();
  EXPECT_EQ(aligned_range_below(100, 64, 28, 256), 128u);
  EXPECT_EQ(aligned_range_below(100, 64, 128, 256), 128u);  // ends exactly at the limit
  EXPECT_EQ(aligned_range_below(100, 64, 129, 256), std::nullopt);
  EXPECT_EQ(aligned_range_below(300, 64, 0, 256), std::nullopt);  // starts above the limit
  EXPECT_EQ(aligned_range_below(top - 10, 64, 1, top), std::nullopt);  // rounding up wraps
  EXPECT_EQ(aligned_range_below(1, 20 * MiB, MiB, top), 20 * MiB);  // PyTorch's 20 MiB pages
}

TEST(Failure, NoRegionWrapsTheAddressSpace)
{
  // Under an unlimited capacity, a request near 2^64 once got a region whose end wrapped
  // below its base; freeing the block after it then merged across the wrap (found by
  // fuzz_policy_ops on list_ao_best).
  simulated_backend b;
  EXPECT_FALSE(b.acquire(std::numeric_limits<std::size_t>::max() - MiB, 1));
  EXPECT_FALSE(b.reserve(std::numeric_limits<std::size_t>::max() - MiB, 1));
  EXPECT_EQ(b.acquired_bytes(), 0u);
  heap_backend h;
  EXPECT_FALSE(h.acquire(std::numeric_limits<std::size_t>::max() - MiB, 1));
  EXPECT_FALSE(h.acquire_mapping(std::numeric_limits<std::size_t>::max() - MiB));
  EXPECT_EQ(h.acquired_bytes(), 0u);
  auto huge_after_small = [](auto& a) {
    auto const small = a.allocate(4 * KiB);
    ASSERT_TRUE(small);
    auto const huge = a.allocate(std::numeric_limits<std::size_t>::max() - 3 * MiB);
    EXPECT_FALSE(huge);
    EXPECT_NE(huge.status, alloc_status::ok);
    EXPECT_EQ(a.deallocate(small.address), free_status::ok);
    EXPECT_EQ(a.check_invariants(), "");
  };
  alloc_t<best_tree> on_simulated(simulated_backend{});
  huge_after_small(on_simulated);
  alloc_t<policy<address_ordered_list_index, best_fit>, heap_backend> on_heap(heap_backend{});
  huge_after_small(on_heap);
}

// A pool rule that maps every request of a MiB or more on its own, in a mapping one page
// long: arithmetic that wrapped, as dlmalloc's once did for a request near 2^64.
struct short_mapping_pools : stream_pool_rule {
  static constexpr part_hook hooks = part_hook::size_class_pools | part_hook::mapping_size;
  [[nodiscard]] std::size_t mapping_size(std::size_t n, bool) const noexcept { return n >= MiB ? 4 * KiB : 0; }
};

TEST(Failure, AMappingShorterThanItsRequestIsRefused)
{
  // fuzz_policy_ops found dlmalloc handing out a 4 KiB block for a request of 2^64 - 63.
  using A = alloc_t<policy<tree_index, best_fit, threshold_split, coalescing, growth_rule, quantum_size_rule,
                           short_mapping_pools>,
                    heap_backend>;
  A a(heap_backend{});
  auto const small = a.allocate(4 * KiB);
  ASSERT_TRUE(small);
  auto const big = a.allocate(2 * MiB);
  EXPECT_FALSE(big);
  EXPECT_EQ(big.status, alloc_status::size_overflow);
  EXPECT_EQ(a.stats().failed_allocations, 1u);
  EXPECT_EQ(a.stats().live_chunks, 1u);
  EXPECT_EQ(a.deallocate(small.address), free_status::ok);
  EXPECT_EQ(a.check_invariants(), "");
}

// Blocks with a mapping of their own live in a pool no key names: with per-stream pools,
// no stream (the largest included) may find its free blocks there, nor they its.
struct per_stream_mapping_pools : stream_pool_rule {
  static constexpr part_hook hooks = part_hook::size_class_pools | part_hook::mapping_size;
  per_stream_mapping_pools() { per_stream = true; }
  [[nodiscard]] std::size_t mapping_size(std::size_t n, bool) const noexcept { return n >= MiB ? n : 0; }
};

TEST(Pools, NoStreamSharesThePoolOfMappedBlocks)
{
  using A = alloc_t<policy<tree_index, best_fit, threshold_split, coalescing, growth_rule, quantum_size_rule,
                           per_stream_mapping_pools>,
                    heap_backend>;
  A a(heap_backend{});
  constexpr stream_id last = ~stream_id{0};
  auto const mapped = a.allocate(2 * MiB, 1, 5);  // the first pool is stream 5's, then the mapped one
  ASSERT_TRUE(mapped);
  std::size_t const pools = a.pool_count();
  auto const on_last = a.allocate(64, 1, last);
  auto const on_zero = a.allocate(64, 1, 0);
  ASSERT_TRUE(on_last && on_zero);
  EXPECT_EQ(a.pool_count(), pools + 2);  // each stream got a pool of its own
  EXPECT_EQ(on_last.size, on_zero.size);  // split from an ordinary region, not handed out whole
  EXPECT_EQ(a.deallocate(mapped.address), free_status::ok);  // a mapped block is released when freed
  EXPECT_EQ(a.stats().live_chunks, 2u);
  EXPECT_EQ(a.deallocate(on_last.address), free_status::ok);
  EXPECT_EQ(a.deallocate(on_zero.address), free_status::ok);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Failure, ReleasingFreeRegionsMakesRoomForAnotherPool)
{
  using A = alloc_t<best_tree>;
  A::config c;
  c.size = {.quantum = 256, .min_size = 256};
  c.pools.per_stream = true;
  simulated_backend_params bp;
  bp.capacity = 1 * MiB;
  A::config releasing = c;
  releasing.growth.release_free_regions = true;
  for (bool release : {false, true}) {
    A a(simulated_backend(bp), release ? releasing : c);
    a.deallocate(a.allocate(1 * MiB, 1, 0).address);  // stream 0 caches a whole free region
    auto y = a.allocate(512 * KiB, 1, 1);
    EXPECT_EQ(bool(y), release);
    EXPECT_EQ(a.stats().releases, release ? 1u : 0u);
    EXPECT_EQ(a.stats().merges, 0u);  // the record a released region takes is no merge
    EXPECT_EQ(a.check_invariants(), "");
  }
}

TEST(Growth, AcquisitionsComeInWholeGranulesWhereTheBackendsGranularityIsFiner)
{
  // A granule of 8 KiB on a heap of 4 KiB pages: the 12 KiB the growth rule asks for would
  // end the region half a granule past its last whole chunk, so it grows to 16 KiB. With a
  // limit of 28 KiB, what is left (12 KiB) holds only one more granule. (fuzz_policy_params:
  // tf_bfc over a backend of 8-byte granularity.)
  using A = alloc_t<best_tree, heap_backend>;
  A::config c;
  c.size = {.quantum = 8 * KiB, .min_size = 8 * KiB};
  c.growth.kind = growth_kind::proportional;
  c.growth.initial = 12 * KiB;
  c.growth.factor = 1.0;  // each region as large as all before it
  c.growth.memory_limit = 28 * KiB;
  A a(heap_backend{}, c);
  auto const x = a.allocate(1);
  ASSERT_TRUE(x);
  EXPECT_EQ(a.stats().reserved_bytes, 16 * KiB);
  EXPECT_EQ(layout(a), (std::vector<layout_entry>{{heap_base, 8 * KiB, true}, {heap_base + 8 * KiB, 8 * KiB, false}}));
  ASSERT_TRUE(a.allocate(8 * KiB));
  auto const z = a.allocate(1);  // 16 KiB asked; 12 KiB of the limit is left, which holds one granule
  ASSERT_TRUE(z) << to_string(z.status);
  EXPECT_EQ(a.stats().reserved_bytes, 24 * KiB);
  EXPECT_FALSE(a.allocate(1));  // 4 KiB left: less than a granule
  EXPECT_EQ(a.check_invariants(), "");
}

}  // namespace
}  // namespace fraglab::testing

namespace fraglab::testing {
namespace {

TEST(Growth, ExactGrowthCountsOnAFreeTailOnlyWhenTheNewMemoryExtendsIt)
{
  // Stream 0's region ends in a free tail, but stream 1's region now sits on top of the
  // heap: new memory for stream 0 cannot extend that tail, so it must supply the whole need.
  using A = alloc_t<policy<tree_index, best_fit>, heap_backend>;
  A::config c;
  c.pools.per_stream = true;
  A a(heap_backend{}, c);
  auto x = a.allocate(1000, 1, 0);  // stream 0: one page, 3088 B free at its end
  ASSERT_TRUE(x);
  ASSERT_TRUE(a.allocate(1000, 1, 1));  // stream 1: the next page
  auto y = a.allocate(5000, 1, 0);      // 5008 B: more than stream 0's free tail
  ASSERT_TRUE(y) << to_string(y.status);
  EXPECT_EQ(y.address, heap_base + 8192);  // a new region of its own above stream 1's
  EXPECT_EQ(a.stats().reserved_bytes, 8192u + 8192u);
  EXPECT_EQ(a.check_invariants(), "");
}

}  // namespace
}  // namespace fraglab::testing

namespace fraglab::testing {
namespace {

// allocate_cached() and claim(): what a layer over the engine calls (docs/architecture.md,
// "Layers over the engine").
TEST(LayerOperations, AllocateCachedServesFromFreeChunksAndNeverGrows)
{
  using P = policy<bins_index, best_fit>;
  typename alloc_t<P>::config c;
  c.size = {.quantum = 256, .min_size = 256};
  c.growth.kind = growth_kind::exact;
  alloc_t<P> a(simulated_backend{}, c);
  allocation const miss = a.allocate_cached(1024);
  EXPECT_EQ(miss.status, alloc_status::no_growth);
  EXPECT_EQ(a.counters().reserved_bytes, 0u);
  EXPECT_EQ(a.counters().failed_allocations, 0u) << "a layer's first try is not a failure";
  allocation const grown = a.allocate(4096);
  ASSERT_TRUE(grown);
  a.deallocate(grown.address);
  allocation const hit = a.allocate_cached(1024);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit.address, grown.address);
  EXPECT_EQ(a.counters().acquisitions, 1u);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(LayerOperations, ClaimHoldsARangeInsideOneFreeChunkLive)
{
  auto a = fixed_pool<policy<bins_index, best_fit>>(4096);
  allocation const x = a->allocate(256);  // the pool is acquired; X at B
  ASSERT_EQ(x.address, sim_base);
  EXPECT_TRUE(a->claim(sim_base + 1024, 512));
  EXPECT_EQ(layout(*a), (std::vector<layout_entry>{{B, 256, true}, {B + 256, 768, false}, {B + 1024, 512, true},
                                                   {B + 1536, 2560, false}}));
  EXPECT_EQ(a->counters().allocated_bytes, 768u);
  EXPECT_EQ(a->counters().allocations, 1u) << "a claim is not an allocation";
  // Not inside one free chunk: across a live one, past the end, unaligned, or live already.
  EXPECT_FALSE(a->claim(sim_base + 768, 512));
  EXPECT_FALSE(a->claim(sim_base + 3840, 512));
  EXPECT_FALSE(a->claim(sim_base + 300, 256));
  EXPECT_FALSE(a->claim(sim_base, 256));
  EXPECT_EQ(a->check_invariants(), "");
  EXPECT_EQ(a->deallocate(sim_base + 1024), free_status::ok);
  EXPECT_EQ(layout(*a), (std::vector<layout_entry>{{B, 256, true}, {B + 256, 3840, false}}));
  EXPECT_EQ(a->check_invariants(), "");
}

}  // namespace
}  // namespace fraglab::testing
