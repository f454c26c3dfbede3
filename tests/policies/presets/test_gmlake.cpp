// gmlake's decisions on scenarios worked by hand from GMLake's rules
// (policies/presets/gmlake.hpp), its invariants on random sequences, and its agreement with
// pytorch_caching where stitching never applies.
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/policies/presets/gmlake.hpp>
#include <fraglab/policies/presets/pytorch_caching.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include "support/fixtures.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <span>
#include <vector>

namespace fraglab::testing {
namespace {

namespace gm = presets::gmlake;
namespace pt = presets::pytorch;
using G = gm::allocator<simulated_backend>;

std::unique_ptr<G> make(gm::settings s = {}, std::size_t capacity = simulated_backend_params{}.capacity)
{
  simulated_backend_params bp;
  bp.granularity = 2 * MiB;
  bp.capacity = capacity;
  return std::make_unique<G>(simulated_backend(bp), s);
}

// The free chunks, by address: what a best fit chooses from.
std::map<std::uintptr_t, std::size_t> free_chunks(G const& g)
{
  std::map<std::uintptr_t, std::size_t> out;
  g.visit_chunks([&](chunk_view const& c) {
    if (!c.in_use) out[c.address] = c.size;
  });
  return out;
}

// Three segments of 200 MiB, each freed: three free blocks no 560 MiB request fits.
struct three_free_segments {
  std::unique_ptr<G> g;
  std::uintptr_t seg[3];
  explicit three_free_segments(gm::settings s = {}) : g(make(s))
  {
    for (auto& a : seg) a = g->allocate(200 * MiB).address;
    for (auto a : seg) EXPECT_EQ(g->deallocate(a), free_status::ok);
    EXPECT_EQ(g->counters().reserved_bytes, 600 * MiB);
  }
};

TEST(GMLake, RoundsLargeRequestsToWholePages)
{
  gm::size_rule r;
  EXPECT_EQ(r.round(1), 512u);
  EXPECT_EQ(r.round(MiB), MiB);             // the small pool keeps PyTorch's 512 B steps
  EXPECT_EQ(r.round(MiB + 1), 2 * MiB);     // the large pool takes whole 2 MiB pages
  EXPECT_EQ(r.round(5 * MiB + 512), 6 * MiB);
}

TEST(GMLake, StitchesThreeFreeBlocksLargestFirstAndSplitsTheLast)
{
  three_free_segments f;
  G& g = *f.g;
  allocation const a = g.allocate(560 * MiB);
  ASSERT_TRUE(a);
  // No new segment: the three blocks' pages are mapped into one new range.
  EXPECT_EQ(g.counters().reserved_bytes, 600 * MiB);
  EXPECT_EQ(g.counters().acquisitions, 3u);
  EXPECT_EQ(a.size, 560 * MiB);
  EXPECT_EQ(g.stitches(), 1u);
  EXPECT_EQ(g.stitched_bytes(), 560 * MiB);
  for (auto s : f.seg) EXPECT_TRUE(a.address + a.size <= s || a.address >= s + 200 * MiB) << "a virtual range of its own";
  // Equal sizes: the highest address first, so the lowest segment is the last taken and
  // keeps 40 MiB free at its end.
  auto const fc = free_chunks(g);
  ASSERT_EQ(fc.size(), 1u);
  EXPECT_EQ(fc.begin()->first, f.seg[0] + 160 * MiB);
  EXPECT_EQ(fc.begin()->second, 40 * MiB);
  EXPECT_EQ(g.counters().live_bytes, 560 * MiB);
  EXPECT_EQ(g.counters().allocated_bytes, 560 * MiB);
  EXPECT_EQ(g.counters().live_chunks, 1u);
  EXPECT_EQ(g.check_invariants(), "");

  // PyTorch's allocator would have taken a fourth segment.
  simulated_backend_params bp;
  bp.granularity = 2 * MiB;
  allocator<pt::policy, simulated_backend> p(simulated_backend(bp), pt::make_config<simulated_backend>());
  std::uintptr_t seg[3];
  for (auto& s : seg) s = p.allocate(200 * MiB).address;
  for (auto s : seg) p.deallocate(s);
  ASSERT_TRUE(p.allocate(560 * MiB));
  EXPECT_EQ(p.counters().reserved_bytes, 1160 * MiB);

  // Freed, its pages merge back into the three blocks, and it can serve again.
  EXPECT_EQ(g.deallocate(a.address), free_status::ok);
  auto const back = free_chunks(g);
  ASSERT_EQ(back.size(), 3u);
  for (auto s : f.seg) EXPECT_EQ(back.at(s), 200 * MiB);
  EXPECT_EQ(g.counters().live_bytes, 0u);
  EXPECT_EQ(g.counters().deallocations, 4u);
  EXPECT_EQ(g.check_invariants(), "");
}

TEST(GMLake, ReusesAStitchedBlockWithinItsLimitPinningOnlyTheRequestsPages)
{
  three_free_segments f;
  G& g = *f.g;
  allocation const a = g.allocate(560 * MiB);
  g.deallocate(a.address);
  // 520 MiB: no primitive block holds it; the stitched 560 MiB block is within 10x.
  allocation const b = g.allocate(520 * MiB);
  ASSERT_TRUE(b);
  EXPECT_EQ(b.address, a.address);
  EXPECT_EQ(g.stitched_reuses(), 1u);
  EXPECT_EQ(g.stitches(), 1u);
  // Its first 260 pages: the top segment, the middle one, and 120 MiB of the lowest.
  auto const fc = free_chunks(g);
  ASSERT_EQ(fc.size(), 1u);
  EXPECT_EQ(fc.begin()->first, f.seg[0] + 120 * MiB);
  EXPECT_EQ(fc.begin()->second, 80 * MiB);
  EXPECT_EQ(g.counters().live_bytes, 520 * MiB);
  EXPECT_EQ(g.check_invariants(), "");
  // The pages it did not pin serve other blocks meanwhile.
  allocation const c = g.allocate(60 * MiB);
  ASSERT_TRUE(c);
  EXPECT_EQ(c.address, f.seg[0] + 120 * MiB);
  EXPECT_EQ(g.check_invariants(), "");
}

TEST(GMLake, AStitchedBlockLargerThanTheReuseLimitIsNotReusedButStitchedAnew)
{
  gm::settings s;
  s.reuse_limit = 1.0;
  three_free_segments f(s);
  G& g = *f.g;
  allocation const a = g.allocate(560 * MiB);
  g.deallocate(a.address);
  allocation const b = g.allocate(540 * MiB);  // 560 > 1.0 x 540
  ASSERT_TRUE(b);
  EXPECT_NE(b.address, a.address);
  EXPECT_EQ(g.stitches(), 2u);
  EXPECT_EQ(g.stitched_reuses(), 0u);
  EXPECT_EQ(g.stitched_count(), 2u);  // the first maps pages now in use: kept, not reusable
  EXPECT_EQ(g.stitched_bytes(), 1100 * MiB);
  EXPECT_EQ(g.counters().reserved_bytes, 600 * MiB);
  EXPECT_EQ(g.check_invariants(), "");
  g.deallocate(b.address);
  // Both are reusable again: the 560 MiB one serves 560 MiB exactly.
  allocation const c = g.allocate(560 * MiB);
  EXPECT_EQ(c.address, a.address);
  EXPECT_EQ(g.check_invariants(), "");
}

TEST(GMLake, RequestsBelowTheStitchingThresholdTakeANewSegment)
{
  three_free_segments f;
  G& g = *f.g;
  ASSERT_TRUE(g.allocate(300 * MiB));
  EXPECT_EQ(g.stitches(), 0u);
  EXPECT_EQ(g.counters().reserved_bytes, 900 * MiB);
  gm::settings s;
  s.frag_limit = 256 * MiB;
  three_free_segments lower(s);
  ASSERT_TRUE(lower.g->allocate(300 * MiB));
  EXPECT_EQ(lower.g->stitches(), 1u);
  EXPECT_EQ(lower.g->counters().reserved_bytes, 600 * MiB);
}

TEST(GMLake, ASingleFreeBlockIsNeverStitched)
{
  auto g = make();
  std::uintptr_t const a = g->allocate(400 * MiB).address;
  g->deallocate(a);
  ASSERT_TRUE(g->allocate(600 * MiB));
  EXPECT_EQ(g->stitches(), 0u);
  EXPECT_EQ(g->counters().reserved_bytes, 1000 * MiB);
}

TEST(GMLake, WithoutStitchingItIsPyTorchsAllocatorWithPageRounding)
{
  gm::settings s;
  s.stitching = false;
  three_free_segments f(s);
  ASSERT_TRUE(f.g->allocate(560 * MiB));
  EXPECT_EQ(f.g->counters().reserved_bytes, 1160 * MiB);
  EXPECT_EQ(f.g->stitched_count(), 0u);
}

TEST(GMLake, GarbageCollectionDropsIdleStitchedBlocksAboveItsLimit)
{
  gm::settings s;
  s.reuse_limit = 1.0;
  s.auto_gc_limit = 1024 * MiB;
  three_free_segments f(s);
  G& g = *f.g;
  g.deallocate(g.allocate(560 * MiB).address);
  EXPECT_EQ(g.stitched_count(), 1u);
  // A second stitch takes the total to 1100 MiB, above 1 GiB: the idle first one goes.
  allocation const b = g.allocate(540 * MiB);
  ASSERT_TRUE(b);
  EXPECT_EQ(g.stitched_count(), 1u);
  EXPECT_EQ(g.stitched_bytes(), 540 * MiB);
  EXPECT_EQ(g.peak_stitched_bytes(), 1100 * MiB);
  EXPECT_EQ(g.check_invariants(), "");
}

TEST(GMLake, EmptyCacheReleasesFreeSegmentsAndDropsIdleStitchedBlocks)
{
  three_free_segments f;
  G& g = *f.g;
  g.deallocate(g.allocate(560 * MiB).address);
  EXPECT_EQ(g.release_free_regions(), 600 * MiB);
  EXPECT_EQ(g.stitched_count(), 0u);
  EXPECT_EQ(g.counters().reserved_bytes, 0u);
  EXPECT_EQ(g.check_invariants(), "");
}

TEST(GMLake, ASegmentGivenBackOnAMissDropsTheStitchedBlocksOverItsPages)
{
  // 1 GiB of device: the stitched block's segments go back when a 900 MiB request needs room.
  gm::settings s;
  auto g = make(s, 1024 * MiB);
  std::uintptr_t seg[3];
  for (auto& a : seg) a = g->allocate(200 * MiB).address;
  for (auto a : seg) g->deallocate(a);
  g->deallocate(g->allocate(560 * MiB).address);
  EXPECT_EQ(g->stitched_count(), 1u);
  // 700 MiB: no block holds it, the stitched block is smaller, stitching falls short
  // (600 MiB free), a new segment does not fit beside 600 MiB: empty_cache and a retry.
  allocation const big = g->allocate(700 * MiB);
  ASSERT_TRUE(big);
  EXPECT_EQ(g->stitched_count(), 0u);
  EXPECT_EQ(g->counters().reserved_bytes, 700 * MiB);
  EXPECT_EQ(g->check_invariants(), "");
}

TEST(GMLake, AStitchedBlockWhosePagesGoBackWhileHandedOutIsDroppedAtItsFree)
{
  // Reused for 400 MiB, a 600 MiB stitched block pins 200 pages; the third segment's pages
  // stay free, and empty_cache gives that segment back while the block is handed out.
  three_free_segments f;
  G& g = *f.g;
  allocation const a = g.allocate(600 * MiB);
  ASSERT_EQ(g.stitches(), 1u);
  g.deallocate(a.address);
  allocation const b = g.allocate(400 * MiB);
  ASSERT_EQ(b.address, a.address);
  EXPECT_EQ(g.release_free_regions(), 200 * MiB);
  EXPECT_EQ(g.stitched_count(), 1u);
  EXPECT_EQ(g.check_invariants(), "");
  EXPECT_EQ(g.deallocate(b.address), free_status::ok);
  EXPECT_EQ(g.stitched_count(), 0u);
  EXPECT_EQ(g.deallocate(b.address), free_status::unknown_pointer);
  EXPECT_EQ(g.check_invariants(), "");
}

TEST(GMLake, MisuseIsReportedAndChangesNothing)
{
  three_free_segments f;
  G& g = *f.g;
  allocation const a = g.allocate(560 * MiB);
  g.deallocate(a.address);
  EXPECT_EQ(g.deallocate(a.address), free_status::double_free);
  EXPECT_EQ(g.deallocate(a.address + 2 * MiB), free_status::unknown_pointer);
  EXPECT_EQ(g.allocate(600 * MiB, 3).status, alloc_status::bad_alignment);
  EXPECT_EQ(g.counters().misuses, 3u);
  EXPECT_EQ(g.check_invariants(), "");
}

TEST(GMLake, AStitchedBlocksReferenceFreesItAndAStaleOrForeignOneIsRefused)
{
  three_free_segments f, other;
  allocation const a = f.g->allocate(560 * MiB);
  allocation const b = other.g->allocate(560 * MiB);
  ASSERT_NE(a.record, nullptr);
  ASSERT_EQ(a.address, b.address);  // two simulated spaces hand out the same ranges
  EXPECT_EQ(f.g->deallocate(b.block()), free_status::unknown_pointer);
  EXPECT_EQ(f.g->counters().live_chunks, 1u);
  EXPECT_EQ(f.g->deallocate(a.block()), free_status::ok);
  EXPECT_EQ(f.g->deallocate(a.block()), free_status::double_free);
  EXPECT_EQ(f.g->counters().misuses, 2u);
  EXPECT_EQ(other.g->deallocate(b.block()), free_status::ok);
  EXPECT_EQ(f.g->check_invariants(), "");
}

TEST(GMLake, RefusesBackendsThatCannotMapAPageTwice)
{
  try {
    (void)make_composition("gmlake", {}, backend_choice{"host"});
    FAIL() << "gmlake over host memory was accepted";
  } catch (std::invalid_argument const& e) {
    EXPECT_NE(std::string(e.what()).find("only the simulated and cuda_vmm backends"), std::string::npos) << e.what();
  }
}

// Random sequences of small, large and stitched requests under a capacity: every invariant
// holds after every operation, and the physical bytes never exceed the capacity.
TEST(GMLake, InvariantsHoldOnRandomSequences)
{
  for (unsigned seed = 1; seed <= 6; ++seed) {
    gm::settings s;
    s.frag_limit = 64 * MiB;
    s.reuse_limit = seed % 2 == 0 ? 10.0 : 1.5;
    s.auto_gc_limit = seed % 3 == 0 ? 512 * MiB : std::size_t{1000} << 30;
    std::size_t const capacity = 2048 * MiB;
    auto g = make(s, capacity);
    std::mt19937_64 rng(seed);
    std::vector<std::uintptr_t> live;
    for (int step = 0; step < 3000; ++step) {
      unsigned const what = rng() % 100;
      if (what < 52 || live.empty()) {
        std::size_t size = 0;
        unsigned const kind = rng() % 10;
        if (kind < 4) size = 1 + rng() % MiB;
        else if (kind < 8) size = MiB + 1 + rng() % (60 * MiB);
        else size = 64 * MiB + rng() % (400 * MiB);
        allocation const a = g->allocate(size, 1, rng() % 8 == 0 ? 1 : 0);
        if (a) live.push_back(a.address);
      } else if (what < 99) {
        std::size_t const i = rng() % live.size();
        ASSERT_EQ(g->deallocate(live[i]), free_status::ok);
        live[i] = live.back();
        live.pop_back();
      } else {
        (void)g->release_free_regions();
      }
      ASSERT_LE(g->counters().reserved_bytes, capacity);
      if (step % 7 == 0) {
        ASSERT_EQ(g->check_invariants(), "") << "seed " << seed << " step " << step;
      }
    }
    EXPECT_GT(g->stitches() + g->stitched_reuses(), 0u) << "seed " << seed << ": the sequence never stitched";
    for (auto a : live) ASSERT_EQ(g->deallocate(a), free_status::ok);
    EXPECT_EQ(g->counters().live_bytes, 0u);
    EXPECT_EQ(g->counters().allocated_bytes, 0u);
    EXPECT_EQ(g->check_invariants(), "");
  }
}

// A simulated device that counts the bytes mapped a second time and taken away again.
struct alias_counts {
  std::size_t mapped = 0, unmapped = 0;
};
struct counting_backend : simulated_backend {
  alias_counts* counts;
  counting_backend(simulated_backend_params p, alias_counts* c) : simulated_backend(p), counts(c) {}
  bool map_alias(std::uintptr_t at, std::span<std::uintptr_t const> pages)
  {
    if (!simulated_backend::map_alias(at, pages)) return false;
    counts->mapped += pages.size() * granularity();
    return true;
  }
  void unmap_alias(std::uintptr_t, std::size_t n) { counts->unmapped += n; }
};

// Every stitched range is mapped once and unmapped once: when dropped, and at the latest
// when the allocator goes (on a device, an alias left behind would hold its pages).
TEST(GMLake, EveryStitchedRangeIsUnmappedOnce)
{
  alias_counts counts;
  {
    simulated_backend_params bp;
    bp.granularity = 2 * MiB;
    gm::settings s;
    s.frag_limit = 64 * MiB;
    s.reuse_limit = 1.5;
    s.auto_gc_limit = 1024 * MiB;
    gm::allocator<counting_backend> g(counting_backend(bp, &counts), s);
    std::mt19937_64 rng(11);
    std::vector<std::uintptr_t> live;
    for (int step = 0; step < 2000; ++step) {
      if (rng() % 2 == 0 || live.empty()) {
        if (allocation const a = g.allocate(MiB + 1 + rng() % (300 * MiB))) live.push_back(a.address);
      } else {
        std::size_t const i = rng() % live.size();
        ASSERT_EQ(g.deallocate(live[i]), free_status::ok);
        live[i] = live.back();
        live.pop_back();
      }
      if (step % 500 == 499) (void)g.release_free_regions();
      ASSERT_EQ(counts.mapped - counts.unmapped, g.stitched_bytes());
    }
    EXPECT_GT(g.stitches(), 0u);
  }
  EXPECT_GT(counts.mapped, 0u);
  EXPECT_EQ(counts.unmapped, counts.mapped);
}

// Where no request reaches the stitching threshold and every large size is whole pages,
// gmlake makes PyTorch's decisions, address for address.
TEST(GMLake, MakesPyTorchsDecisionsWhereNothingIsStitched)
{
  simulated_backend_params bp;
  bp.granularity = 2 * MiB;
  allocator<pt::policy, simulated_backend> p(simulated_backend(bp), pt::make_config<simulated_backend>());
  auto g = make();
  std::mt19937_64 rng(7);
  std::vector<std::uintptr_t> live;
  for (int step = 0; step < 5000; ++step) {
    if (rng() % 2 == 0 || live.empty()) {
      std::size_t const size = rng() % 3 == 0 ? 1 + rng() % MiB : (1 + rng() % 100) * 2 * MiB;
      allocation const a = p.allocate(size);
      allocation const b = g->allocate(size);
      ASSERT_EQ(a.address, b.address) << "step " << step;
      ASSERT_EQ(a.size, b.size);
      live.push_back(a.address);
    } else {
      std::size_t const i = rng() % live.size();
      p.deallocate(live[i]);
      g->deallocate(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
  }
  EXPECT_EQ(p.counters().peak_reserved_bytes, g->counters().peak_reserved_bytes);
  EXPECT_EQ(p.counters().peak_live_bytes, g->counters().peak_live_bytes);
}

}  // namespace
}  // namespace fraglab::testing
