// The simulated address space: where it places regions, worked out by hand, and what it
// refuses to take back.
#include <fraglab/backends/simulated_backend.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace fraglab {
namespace {

constexpr std::uintptr_t B = std::uintptr_t{1} << 40;  // the default base

using placed = std::pair<std::uintptr_t, std::size_t>;
placed where(acquisition a) { return {a.base, a.size}; }

TEST(SimulatedBackend, ReleasedRangesAreReusedLowestFirstAndTheTopFallsWhenTheyReachIt)
{
  simulated_backend b;  // a granularity of 256 bytes
  acquisition const a = b.acquire(1000, 1);
  EXPECT_EQ(where(a), (placed{B, 1024}));
  acquisition const c = b.acquire(256, 4096);
  EXPECT_EQ(where(c), (placed{B + 4096, 256}));  // [B + 1024, B + 4096) is left, for smaller ranges
  EXPECT_EQ(b.next_address(), B + 4352);
  acquisition const d = b.acquire(512, 1);
  EXPECT_EQ(where(d), (placed{B + 1024, 512}));  // in the alignment's gap
  ASSERT_TRUE(b.release(a.base, a.size));
  EXPECT_EQ(where(b.acquire(4096, 1)), (placed{B + 4352, 4096}));  // no hole holds it
  ASSERT_TRUE(b.release(B + 4352, 4096));
  EXPECT_EQ(b.next_address(), B + 4352);      // the released range reached the top
  ASSERT_TRUE(b.release(d.base, d.size));     // [B, B + 4096) is one hole now
  EXPECT_EQ(where(b.acquire(4096, 1)), (placed{B, 4096}));
  ASSERT_TRUE(b.release(c.base, c.size));
  EXPECT_EQ(b.next_address(), B + 4096);
  ASSERT_TRUE(b.release(B + 2048, 2048));     // a region's tail, as the engine trims one
  EXPECT_EQ(b.next_address(), B + 2048);
  ASSERT_TRUE(b.release(B, 2048));
  EXPECT_EQ(b.next_address(), B);
  EXPECT_EQ(b.acquired_bytes(), 0u);
}

TEST(SimulatedBackend, AMergingSpaceGrowsContiguouslyPastItsHoles)
{
  simulated_backend b({.merging = true});
  acquisition const a = b.acquire(256, 1);
  ASSERT_TRUE(b.acquire(256, 1));
  ASSERT_TRUE(b.release(a.base, a.size));
  EXPECT_EQ(where(b.acquire(256, 1)), (placed{B + 512, 256}));  // adjacent to the last, not in the hole
  simulated_backend reusing;
  acquisition const r = reusing.acquire(256, 1);
  ASSERT_TRUE(reusing.acquire(256, 1));
  ASSERT_TRUE(reusing.release(r.base, r.size));
  EXPECT_EQ(where(reusing.acquire(256, 1)), (placed{B, 256}));
}

TEST(SimulatedBackend, ARangeReleasedTwiceOrNeverHandedOutIsRefusedAndNotCounted)
{
  simulated_backend b;
  acquisition const x = b.acquire(256, 1);
  acquisition const y = b.acquire(256, 1);
  ASSERT_TRUE(b.release(x.base, x.size));
  EXPECT_FALSE(b.release(x.base, x.size));   // twice
  EXPECT_FALSE(b.release(B - 256, 512));     // below the space, reaching into the hole
  EXPECT_FALSE(b.release(y.base, 512));      // past the top
  EXPECT_FALSE(b.release(B + 4096, 256));    // above the top
  EXPECT_EQ(b.acquired_bytes(), 256u);
  ASSERT_TRUE(b.release(y.base, y.size));
  EXPECT_FALSE(b.release(y.base, y.size));   // twice, now that the top fell below it
  EXPECT_EQ(b.acquired_bytes(), 0u);
  EXPECT_EQ(b.next_address(), B);
}

// A recording's addresses: taken in order while sizes agree and the range is free; at the
// first that differs the plan is dropped and the simulated space serves again.
TEST(SimulatedBackend, FollowsARecordingsAddressesUntilTheyDiffer)
{
  constexpr std::uintptr_t cuda = std::uintptr_t{0x7f} << 40;
  constexpr std::size_t mib = std::size_t{1} << 20;
  simulated_backend b({.granularity = 2 * mib});
  std::vector<planned_segment> const plan{{cuda + 20 * mib, 20 * mib}, {cuda, 2 * mib}, {cuda + 20 * mib, 20 * mib},
                                          {cuda + 60 * mib, 2 * mib}};
  b.follow(plan);
  EXPECT_EQ(where(b.acquire(20 * mib, 1)), (placed{cuda + 20 * mib, 20 * mib}));
  EXPECT_EQ(where(b.acquire(2 * mib, 1)), (placed{cuda, 2 * mib}));  // below the first, as cudaMalloc may
  EXPECT_TRUE(b.release(cuda + 20 * mib, 20 * mib));
  EXPECT_FALSE(b.release(cuda + 20 * mib, 20 * mib));  // released twice
  EXPECT_EQ(where(b.acquire(20 * mib, 1)), (placed{cuda + 20 * mib, 20 * mib}));  // its address again
  EXPECT_EQ(where(b.acquire(4 * mib, 1)), (placed{B, 4 * mib}));  // another size: the plan is dropped
  EXPECT_EQ(where(b.acquire(2 * mib, 1)), (placed{B + 4 * mib, 2 * mib}));
  EXPECT_EQ(b.acquired_bytes(), 28 * mib);

  // A planned range that overlaps one held is not taken.
  simulated_backend c({.granularity = 2 * mib});
  std::vector<planned_segment> const overlapping{{cuda, 4 * mib}, {cuda + 2 * mib, 4 * mib}};
  c.follow(overlapping);
  EXPECT_EQ(where(c.acquire(4 * mib, 1)), (placed{cuda, 4 * mib}));
  EXPECT_EQ(where(c.acquire(4 * mib, 1)), (placed{B, 4 * mib}));
}

}  // namespace
}  // namespace fraglab

namespace fraglab {
namespace {

TEST(SimulatedBackend, MapsPagesAgainOnlyInsideItsReservations)
{
  simulated_backend b(simulated_backend_params{.granularity = 2u << 20});
  acquisition const page = b.acquire(2u << 20, 1);
  acquisition const r = b.reserve(4u << 20, 2u << 20);
  std::uintptr_t const pages[] = {page.base, page.base};
  EXPECT_TRUE(b.map_alias(r.base, pages));
  EXPECT_EQ(b.acquired_bytes(), 2u << 20);  // an alias creates no memory
  EXPECT_FALSE(b.map_alias(r.base + (2u << 20), pages));  // runs past the reservation
  EXPECT_FALSE(b.map_alias(page.base, pages));             // not a reservation
}

}  // namespace
}  // namespace fraglab
