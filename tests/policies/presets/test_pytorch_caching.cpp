// pytorch_caching's decisions on scenarios computed from PyTorch's rules, and exact
// agreement with PyTorch's recorded decisions on the snapshots in ../shared/traces.
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/policies/presets/pytorch_caching.hpp>
#include <fraglab/policies/presets/pytorch_memory_stats.hpp>
#include <fraglab/runtime/inspect/verify_snapshot.hpp>
#include <fraglab/runtime/trace/pytorch_snapshot.hpp>
#include "support/fixtures.hpp"
#include "support/shared_traces.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <vector>

namespace fraglab::testing {
namespace {

namespace pt = presets::pytorch;
using A = allocator<pt::policy, simulated_backend>;

std::unique_ptr<A> make(pt::settings s = {})
{
  simulated_backend_params bp;
  bp.granularity = 2 * MiB;  // cudaMalloc hands out 2 MiB-aligned ranges
  return std::make_unique<A>(simulated_backend(bp), pt::make_config<simulated_backend>(s));
}

TEST(PyTorchCaching, RoundsTo512AndByPowerOfTwoDivisions)
{
  pt::size_rule r;
  EXPECT_EQ(r.round(1), 512u);
  EXPECT_EQ(r.round(512), 512u);
  EXPECT_EQ(r.round(513), 1024u);
  EXPECT_EQ(r.round(1200), 1536u);
  r.divisions.fill(4);
  EXPECT_EQ(r.round(1200), 1536u);          // 1200 <= 512 x 4: the guard keeps 512-rounding
  EXPECT_EQ(r.round(3000), 3072u);          // (2048, 4096) in steps of 512
  EXPECT_EQ(r.round(5000), 5120u);          // (4096, 8192) in steps of 1024
  EXPECT_EQ(r.round(4096), 4096u);          // a power of two stays
  EXPECT_EQ(r.round(9 * MiB + 1), 10 * MiB);  // (8, 16) MiB in steps of 2 MiB
  pt::size_rule by_interval;
  by_interval.divisions[3] = 2;  // only [8 MiB, 16 MiB)
  EXPECT_EQ(by_interval.round(9 * MiB + 1), 12 * MiB);
  EXPECT_EQ(by_interval.round(5 * MiB + 1), 5 * MiB + 512);
}

TEST(PyTorchCaching, SmallRequestsShareTwoMiBSegmentsAndSplitDownTo512)
{
  auto a = make();
  auto x = a->allocate(1000);  // 1024 B in a new 2 MiB small segment
  auto y = a->allocate(1000);
  EXPECT_EQ(x.address, sim_base);
  EXPECT_EQ(y.address, sim_base + 1024);
  EXPECT_EQ(a->stats().reserved_bytes, 2 * MiB);
  a->deallocate(x.address);
  auto z = a->allocate(512);  // best fit: the freed 1024-byte block, split (remainder 512)
  EXPECT_EQ(z.address, sim_base);
  EXPECT_EQ(z.size, 512u);
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(PyTorchCaching, LargeRequestsGetTwentyMiBSegmentsAndKeepUnsplitTailsUpTo1MiB)
{
  auto a = make();
  auto x = a->allocate(3 * MiB);  // 1..10 MiB: a 20 MiB segment, remainder 17 MiB splits
  EXPECT_EQ(a->stats().reserved_bytes, 20 * MiB);
  auto y = a->allocate(16 * MiB + 512 * KiB);  // leaves 512 KiB: not > 1 MiB, so no split
  EXPECT_EQ(y.address, x.address + 3 * MiB);
  EXPECT_EQ(y.size, 17 * MiB);
  auto small = a->allocate(100);  // small pool: never takes the large segment's memory
  EXPECT_EQ(a->stats().reserved_bytes, 22 * MiB);
  EXPECT_NE(small.address, 0u);
  auto big = a->allocate(11 * MiB);  // >= 10 MiB: a segment of the request rounded to 2 MiB
  EXPECT_EQ(a->stats().reserved_bytes, 34 * MiB);
  EXPECT_EQ(big.size, 12 * MiB);  // rounded 11 MiB; the 1 MiB tail stays (not > 1 MiB)
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(PyTorchCaching, StreamsNeverShareBlocks)
{
  auto a = make();
  auto x = a->allocate(1000, 1, 7);
  a->deallocate(x.address);
  auto y = a->allocate(1000, 1, 8);
  EXPECT_NE(y.address, x.address);
  EXPECT_EQ(a->stats().reserved_bytes, 4 * MiB);
  EXPECT_EQ(a->allocate(1000, 1, 7).address, x.address);
}

// Stream 0's two pools are found by the allocator's two quick checks, the other streams'
// by a search: each way must hand each (stream, pool) back only its own blocks.
TEST(PyTorchCaching, EveryStreamAndPoolGetsBackOnlyItsOwnBlocks)
{
  auto a = make();
  constexpr stream_id streams = 6;
  std::vector<std::uintptr_t> small, large;
  for (stream_id s = 0; s < streams; ++s) {
    small.push_back(a->allocate(1000, 1, s).address);
    large.push_back(a->allocate(3 * MiB, 1, s).address);
  }
  EXPECT_EQ(a->pool_count(), 2 * streams);
  EXPECT_EQ(a->stats().reserved_bytes, streams * (2 * MiB + 20 * MiB));
  for (stream_id s = 0; s < streams; ++s) {
    a->deallocate(small[s]);
    a->deallocate(large[s]);
  }
  for (stream_id s = streams; s-- > 0;) {
    EXPECT_EQ(a->allocate(3 * MiB, 1, s).address, large[s]) << "stream " << s;
    EXPECT_EQ(a->allocate(1000, 1, s).address, small[s]) << "stream " << s;
  }
  EXPECT_EQ(a->stats().reserved_bytes, streams * (2 * MiB + 20 * MiB));
  EXPECT_EQ(a->check_invariants(), "");
}

// Streams are 64-bit values (CUDA stream handles); streams 2^63 apart, and the largest
// stream, are streams of their own: a pool key that folded the stream with the pool's bit
// gave 1 and 2^63 + 1 one segment.
TEST(PyTorchCaching, StreamsFarApartNeverShareASegment)
{
  auto a = make();
  constexpr stream_id high = stream_id{1} << 63;
  std::vector<stream_id> const streams{1, high + 1, 0, high, ~stream_id{0}, ~stream_id{0} >> 1};
  std::vector<std::uintptr_t> small;
  for (stream_id s : streams) small.push_back(a->allocate(1000, 1, s).address);
  EXPECT_EQ(a->pool_count(), streams.size());
  EXPECT_EQ(a->stats().reserved_bytes, streams.size() * 2 * MiB);  // a segment each
  for (std::size_t i = 0; i < streams.size(); ++i) a->deallocate(small[i]);
  for (std::size_t i = streams.size(); i-- > 0;)
    EXPECT_EQ(a->allocate(1000, 1, streams[i]).address, small[i]) << "stream " << streams[i];
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(PyTorchCaching, MaxSplitSizeKeepsOversizeBlocksWhole)
{
  pt::settings s;
  s.max_split_size = 64 * MiB;
  auto a = make(s);
  auto big = a->allocate(100 * MiB);
  a->deallocate(big.address);
  // A request below max_split_size never takes an oversize block: new segment.
  auto small = a->allocate(30 * MiB);
  EXPECT_NE(small.address, big.address);
  EXPECT_EQ(a->stats().reserved_bytes, 130 * MiB);
  // A request above it takes the oversize block only within 20 MiB, and never splits it.
  auto close = a->allocate(90 * MiB);
  EXPECT_EQ(close.address, big.address);
  EXPECT_EQ(close.size, 100 * MiB);
  a->deallocate(close.address);
  auto far = a->allocate(70 * MiB);  // 100 >= 70 + 20: not allowed
  EXPECT_NE(far.address, big.address);
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(PyTorchCaching, ReleasesFreeSegmentsAndRetriesWhenTheDeviceIsFull)
{
  simulated_backend_params bp;
  bp.granularity = 2 * MiB;
  bp.capacity = 52 * MiB;
  A a(simulated_backend(bp), pt::make_config<simulated_backend>());
  auto x = a.allocate(5 * MiB);  // 1..10 MiB: a 20 MiB segment
  auto y = a.allocate(5 * MiB, 1, /*stream=*/1);  // another stream: its own 20 MiB segment
  a.deallocate(x.address);        // its segment is wholly free, cached
  // A 30 MiB segment would pass 52 MiB; empty_cache gives back x's segment; the retry fits.
  auto z = a.allocate(30 * MiB);
  ASSERT_TRUE(z);
  EXPECT_EQ(a.stats().releases, 1u);
  EXPECT_EQ(a.stats().reserved_bytes, 50 * MiB);
  auto w = a.allocate(16 * MiB);  // a new 16 MiB segment would pass 52 MiB; nothing is wholly free
  EXPECT_FALSE(w);
  EXPECT_EQ(w.status, alloc_status::capacity);
  EXPECT_EQ(a.check_invariants(), "");
  (void)y;
}

std::unique_ptr<A> make_on_device(pt::settings s, std::size_t device)
{
  simulated_backend_params bp;
  bp.granularity = 2 * MiB;
  bp.capacity = device;
  return std::make_unique<A>(simulated_backend(bp), pt::make_config<simulated_backend>(s));
}

TEST(PyTorchCaching, OnAMissReleasesTheSmallestCachedOversizeSegmentThatCoversTheRequest)
{
  auto a = make_on_device({.max_split_size = 32 * MiB}, 100 * MiB);
  auto x = a->allocate(40 * MiB);  // oversize: a 40 MiB segment, never split
  auto y = a->allocate(34 * MiB);
  a->deallocate(x.address);
  a->deallocate(y.address);
  // 30 MiB < max_split_size may not take a cached oversize block, and a new 30 MiB segment
  // would pass 100 MiB: release the smallest cached segment >= max(30, 32) MiB (y's) and retry.
  auto z = a->allocate(30 * MiB);
  ASSERT_TRUE(z);
  EXPECT_EQ(z.address, y.address);  // the device hands y's range out again
  EXPECT_EQ(a->stats().releases, 1u);
  EXPECT_EQ(a->stats().release_retries, 0u);  // empty_cache was not needed
  EXPECT_EQ(a->stats().reserved_bytes, 70 * MiB);
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(PyTorchCaching, WithoutOneLargeEnoughReleasesOversizeSegmentsLargestFirst)
{
  auto a = make_on_device({.max_split_size = 32 * MiB}, 100 * MiB);
  auto x = a->allocate(40 * MiB);
  auto y = a->allocate(34 * MiB);
  a->deallocate(x.address);
  a->deallocate(y.address);
  auto w = a->allocate(50 * MiB);  // no cached segment >= 50 MiB: release 40, then 34 (74 >= 50)
  ASSERT_TRUE(w);
  EXPECT_EQ(a->stats().releases, 2u);
  EXPECT_EQ(a->stats().release_retries, 0u);
  EXPECT_EQ(a->stats().reserved_bytes, 50 * MiB);
}

TEST(PyTorchCaching, WhenOversizeReleaseFallsShortEmptyCacheFollows)
{
  auto a = make_on_device({.max_split_size = 32 * MiB}, 70 * MiB);
  auto x = a->allocate(40 * MiB);
  auto s = a->allocate(5 * MiB);  // a 20 MiB segment, split
  a->deallocate(x.address);
  a->deallocate(s.address);
  // 45 MiB -> a 46 MiB segment: 60 + 46 > 70. Oversize release frees the 40 MiB segment but
  // stops at the 20 MiB one (< max_split_size): 40 < 45, so no retry yet; empty_cache frees
  // the 20 MiB segment and the retry succeeds.
  auto w = a->allocate(45 * MiB);
  ASSERT_TRUE(w);
  EXPECT_EQ(a->stats().releases, 2u);
  EXPECT_EQ(a->stats().release_retries, 1u);  // PyTorch's num_alloc_retries
  EXPECT_EQ(a->stats().reserved_bytes, 46 * MiB);
}

TEST(PyTorchCaching, GarbageCollectionReleasesCachedSegmentsOlderThanTheMeanAge)
{
  for (double threshold : {0.0, 0.5}) {
    pt::settings s;
    s.memory_limit = 100 * MiB;  // set_per_process_memory_fraction
    s.garbage_collection_threshold = threshold;
    auto a = make_on_device(s, 1024 * MiB);
    auto a1 = a->allocate(30 * MiB);  // large-pool searches: 1
    auto a2 = a->allocate(24 * MiB);  // 2
    auto a3 = a->allocate(12 * MiB);  // 3; reserved 66 MiB
    a->deallocate(a1.address);        // cached at 3
    a->deallocate(a3.address);
    ASSERT_TRUE(a->allocate(12 * MiB));  // 4: reuses a3's segment
    a->deallocate(a2.address);           // cached at 4
    // 40 MiB misses (5). With GC: 66 > 50 MiB, reclaim 16 MiB: ages a1 2, a2 1, mean 1.5,
    // so only a1's 30 MiB goes; then 36 + 40 fits under 100. Without GC: 66 + 40 > 100, so
    // empty_cache releases both.
    ASSERT_TRUE(a->allocate(40 * MiB));
    if (threshold > 0) {
      EXPECT_EQ(a->stats().releases, 1u);
      EXPECT_EQ(a->stats().reserved_bytes, 76 * MiB);
      EXPECT_EQ(a->stats().release_retries, 0u);
    } else {
      EXPECT_EQ(a->stats().releases, 2u);
      EXPECT_EQ(a->stats().reserved_bytes, 52 * MiB);
      EXPECT_EQ(a->stats().release_retries, 1u);
    }
    EXPECT_EQ(a->check_invariants(), "");
  }
}

TEST(PyTorchCaching, MemoryStatsUsePyTorchsNamesAndMeanings)
{
  auto a = make({.max_split_size = 32 * MiB});
  auto x = a->allocate(1000);     // 1024 B in a 2 MiB small segment
  auto y = a->allocate(3 * MiB);  // a 20 MiB segment, split: 17 MiB inactive
  auto z = a->allocate(40 * MiB);  // oversize
  a->deallocate(x.address);
  std::map<std::string_view, pt::memory_stat> by_name;
  for (auto const& s : pt::memory_stats(*a, 32 * MiB)) by_name[s.name] = s;
  EXPECT_EQ(by_name["allocation"].current, 2u);
  EXPECT_EQ(by_name["allocation"].peak, 3u);
  EXPECT_EQ(by_name["allocation"].allocated, 3u);
  EXPECT_EQ(by_name["allocation"].freed, 1u);
  EXPECT_EQ(by_name["allocated_bytes"].current, 43 * MiB);
  EXPECT_EQ(by_name["allocated_bytes"].peak, 43 * MiB + 1024);
  EXPECT_EQ(by_name["requested_bytes"].current, 43 * MiB);
  EXPECT_EQ(by_name["requested_bytes"].allocated, 43 * MiB + 1000);
  EXPECT_EQ(by_name["segment"].current, 3u);
  EXPECT_EQ(by_name["reserved_bytes"].current, 62 * MiB);
  EXPECT_EQ(by_name["inactive_split"].current, 1u);  // x's segment is whole again
  EXPECT_EQ(by_name["inactive_split_bytes"].current, 17 * MiB);
  EXPECT_EQ(by_name["oversize_allocations"].current, 1u);
  EXPECT_EQ(by_name["oversize_segments"].current, 1u);
  EXPECT_EQ(by_name["num_device_alloc"].current, 3u);
  EXPECT_EQ(by_name["num_ooms"].current, 0u);
  (void)y;
  (void)z;
}

std::unique_ptr<A> make_expandable(std::size_t device = 1024 * MiB)
{
  pt::settings s;
  s.expandable_segments = true;
  s.device_memory = device;
  return make_on_device(s, device);
}

TEST(PyTorchExpandable, MapsPagesAtTheEndOfOneRangePerPoolWithoutSegmentPadding)
{
  auto a = make_expandable();
  auto x = a->allocate(1000);     // small pool: one 2 MiB page
  auto y = a->allocate(3 * MiB);  // large pool: one 20 MiB page
  EXPECT_EQ(a->stats().reserved_bytes, 22 * MiB);
  // 30 MiB: the free tail holds 17 MiB, so 13 MiB more are needed: one more 20 MiB page,
  // mapped right after and merged with the tail. (pytorch_caching would add a 30 MiB segment.)
  auto z = a->allocate(30 * MiB);
  EXPECT_EQ(z.address, y.address + 3 * MiB);
  EXPECT_EQ(a->stats().reserved_bytes, 42 * MiB);
  EXPECT_EQ(z.size, 30 * MiB);  // split: the remainder (7 MiB) is at least 512 B
  EXPECT_EQ(a->check_invariants(), "");
  (void)x;
}

TEST(PyTorchExpandable, BestFitPassesOverTheFreeTailForABlockThatCannotExpand)
{
  auto a = make_expandable();
  auto p = a->allocate(8 * MiB);  // one 20 MiB page: p, then a 12 MiB tail
  auto q = a->allocate(2 * MiB);
  auto r = a->allocate(3 * MiB);  // the tail is 7 MiB now
  a->deallocate(p.address);       // 8 MiB free at the start
  // 6 MiB: the 7 MiB tail is the smallest fit, but it could expand without end, so PyTorch
  // takes the next block in order, p's 8 MiB.
  EXPECT_EQ(a->allocate(6 * MiB).address, p.address);
  (void)q;
  (void)r;
}

TEST(PyTorchExpandable, AMissIsServedFromTheFreeTailEvenWhenItIsOversize)
{
  pt::settings s;
  s.expandable_segments = true;
  s.device_memory = 1024 * MiB;
  s.max_split_size = 32 * MiB;
  auto a = make_on_device(s, s.device_memory);
  auto x = a->allocate(40 * MiB);  // two 20 MiB pages, taken whole
  auto y = a->allocate(50 * MiB);  // three more pages; the 10 MiB remainder splits off as the tail
  ASSERT_EQ(a->stats().reserved_bytes, 100 * MiB);
  a->deallocate(y.address);  // a 60 MiB free tail
  // 4 MiB is below max_split_size and the tail is above it, so get_free_block refuses it; the
  // miss goes to try_allocate_expandable_block, whose candidate is that tail, already mapped
  // and large enough: it is split where it is, and nothing is mapped.
  auto z = a->allocate(4 * MiB);
  ASSERT_TRUE(z);
  EXPECT_EQ(z.address, y.address);
  EXPECT_EQ(a->stats().reserved_bytes, 100 * MiB);
  EXPECT_EQ(a->check_invariants(), "");
  (void)x;
}

TEST(PyTorchExpandable, EmptyCacheUnmapsTheWholePagesOfTheFreeTail)
{
  auto a = make_expandable();
  auto x = a->allocate(8 * MiB);   // page 1
  auto b = a->allocate(25 * MiB);  // 12 MiB tail + 13 MiB: page 2
  ASSERT_EQ(a->stats().reserved_bytes, 40 * MiB);
  a->deallocate(b.address);  // a 32 MiB free tail from 8 MiB to 40 MiB
  EXPECT_EQ(a->release_free_regions(), 20 * MiB);  // page 2 lies wholly in the tail
  EXPECT_EQ(a->stats().reserved_bytes, 20 * MiB);
  auto z = a->allocate(30 * MiB);  // the tail (12 MiB) grows by one page again
  EXPECT_EQ(z.address, x.address + 8 * MiB);
  EXPECT_EQ(a->stats().reserved_bytes, 40 * MiB);
  a->deallocate(z.address);
  a->deallocate(x.address);
  EXPECT_EQ(a->release_free_regions(), 40 * MiB);  // nothing live: every page goes
  EXPECT_EQ(a->allocate(1 * MiB + 1).address, x.address);  // mapping starts again at the range's base
  EXPECT_EQ(a->check_invariants(), "");
}

// empty_cache unmaps the whole pages inside every free block of an expandable segment, not
// only the tail's (PyTorch's release_blocks and unmap_block), which leaves holes; a miss maps
// into the first unmapped range in address order that can hold the request with the free
// block before it (find_expandable_block), so holes fill before the end grows. Offsets in MiB
// from the range's base, 20 MiB pages.
struct ExpandableWithAHole : ::testing::Test {
  std::unique_ptr<A> a = make_expandable();
  allocation x, b, c;
  std::uintptr_t base = 0;
  void SetUp() override
  {
    x = a->allocate(15 * MiB);  // page [0, 20): x, then a 5 MiB tail
    b = a->allocate(45 * MiB);  // the tail and pages [20, 60): b is [15, 60)
    c = a->allocate(10 * MiB);  // page [60, 80): c, then a 10 MiB tail
    base = x.address;
    ASSERT_EQ(b.address, base + 15 * MiB);
    ASSERT_EQ(c.address, base + 60 * MiB);
    a->deallocate(b.address);  // [15, 60) free
    // Pages [20, 60) lie wholly in the free block; [15, 20) and the tail [70, 80) hold no
    // whole page.
    ASSERT_EQ(a->release_free_regions(), 40 * MiB);
    ASSERT_EQ(a->stats().reserved_bytes, 40 * MiB);
    ASSERT_EQ(a->check_invariants(), "");
  }
};

TEST_F(ExpandableWithAHole, AMissMapsIntoTheHoleBeforeTheEnd)
{
  // 30 MiB: no free block holds it. The hole [20, 60) with the free [15, 20) before it holds
  // 45 MiB: 25 MiB are lacking, so pages [20, 60) are mapped again (the tail would have
  // mapped [80, 100) and put it at 70).
  auto z = a->allocate(30 * MiB);
  EXPECT_EQ(z.address, base + 15 * MiB);
  EXPECT_EQ(a->stats().reserved_bytes, 80 * MiB);
  EXPECT_EQ(a->stats().regions, 1u);  // mapped from 0 to 80 again: one range
  EXPECT_EQ(a->check_invariants(), "");
}

TEST_F(ExpandableWithAHole, BestFitWeighsTheHoleAfterABlock)
{
  // 4 MiB: the best fit is [15, 20), which could grow into the 40 MiB hole (45 MiB); the next
  // block, the tail [70, 80), could grow without end, so the best fit stays: a block that
  // ends before unmapped pages is passed over only for one that could expand to less.
  EXPECT_EQ(a->allocate(4 * MiB).address, base + 15 * MiB);
  EXPECT_EQ(a->stats().reserved_bytes, 40 * MiB);
}

TEST_F(ExpandableWithAHole, FillingTheHoleJoinsTheRangesAndTheirFreeBlocks)
{
  a->deallocate(c.address);  // [60, 80) free: the range above the hole holds nothing live
  // 60 MiB: the free [15, 20), the hole and the free [60, 80) hold 65 MiB together. Mapping the
  // whole hole joins the two ranges, and the free blocks merge into [15, 80).
  auto z = a->allocate(60 * MiB);
  EXPECT_EQ(z.address, base + 15 * MiB);
  EXPECT_EQ(a->stats().reserved_bytes, 80 * MiB);
  EXPECT_EQ(a->stats().regions, 1u);
  EXPECT_EQ(a->stats().free_chunks, 1u);  // the 5 MiB remainder at [75, 80)
  EXPECT_EQ(a->largest_free_bytes(), 5 * MiB);
  EXPECT_EQ(a->check_invariants(), "");
}

TEST_F(ExpandableWithAHole, EmptyCacheWithNothingLiveUnmapsEveryPage)
{
  a->deallocate(c.address);
  a->deallocate(x.address);
  EXPECT_EQ(a->release_free_regions(), 40 * MiB);
  EXPECT_EQ(a->stats().reserved_bytes, 0u);
  EXPECT_EQ(a->stats().regions, 0u);
  EXPECT_EQ(a->allocate(1 * MiB + 1).address, base);  // mapping starts again at the range's base
  EXPECT_EQ(a->check_invariants(), "");
}

// The bar: every decision PyTorch recorded, reproduced.
TEST(PyTorchCaching, ReproducesEveryRecordedDecisionOfTheSharedSnapshots)
{
  auto const dir = shared_traces("pytorch");
  if (dir.empty()) GTEST_SKIP() << "../shared/traces/pytorch not found: the snapshot comparison needs it";
  int files = 0;
  for (auto const& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".pickle") continue;
    ++files;
    auto const s = trace::read_pytorch_snapshot(entry.path().string());
    auto const results = verify_pytorch_snapshot(s, settings_for_verify(s));
    ASSERT_EQ(results.size(), 1u) << entry.path();
    auto const& r = results.front();
    EXPECT_GT(r.addresses_total, 1000u) << entry.path();
    EXPECT_EQ(r.addresses_matched, r.addresses_total) << entry.path();
    EXPECT_EQ(r.segments_matched, r.segments_total) << entry.path();
    for (auto const& m : r.first_mismatches) ADD_FAILURE() << entry.path() << " event " << m.event << ": " << m.what;
  }
  EXPECT_EQ(files, 3);
}

}  // namespace
}  // namespace fraglab::testing
