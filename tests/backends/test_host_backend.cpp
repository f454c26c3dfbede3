// The host backend: blocks of real memory, and address reservations in the process's own
// address space, whose pages are mapped and unmapped as cuda_vmm maps device pages.
#include <fraglab/backends/host_backend.hpp>
#include "support/training_trace.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace fraglab {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

host_backend two_mib_pages(std::size_t capacity = std::numeric_limits<std::size_t>::max())
{
  return host_backend({.capacity = capacity, .granularity = 2 * MiB});
}

char* at(std::uintptr_t address) { return reinterpret_cast<char*>(address); }

bool all_bytes_are(std::uintptr_t address, std::size_t n, char value)
{
  for (std::size_t i = 0; i < n; i += 4096)
    if (at(address)[i] != value || at(address)[i + 4095] != value) return false;
  return true;
}

TEST(HostBackend, BlocksAreAlignedAndOnlyWhatWasGivenIsTakenBack)
{
  host_backend b({.capacity = 16384, .granularity = 4096});
  acquisition const a = b.acquire(100, 8192);
  ASSERT_TRUE(a);
  EXPECT_EQ(a.size, 4096u);
  EXPECT_EQ(a.base % 8192, 0u);
  std::memset(at(a.base), 7, a.size);
  EXPECT_FALSE(b.acquire(16384, 4096));  // over the capacity, with 4096 held
  EXPECT_EQ(b.stats().refusals, 1u);
  EXPECT_FALSE(b.acquire(4096, 3 * 8192));  // an alignment not a power of two
  EXPECT_FALSE(b.acquire(0, 3 * 8192));     // and nothing asked: refused once
  EXPECT_EQ(b.stats().refusals, 3u);
  EXPECT_EQ(b.acquired_bytes(), 4096u);
  EXPECT_FALSE(b.release(a.base, 8192));  // not the size it was given
  EXPECT_TRUE(b.release(a.base, 4096));
  EXPECT_FALSE(b.release(a.base, 4096));  // twice
  EXPECT_EQ(b.acquired_bytes(), 0u);
}

// A region's footprint in the arena: whole pages, and under ASan a poisoned page after it.
constexpr std::size_t footprint(std::size_t pages_bytes) { return pages_bytes + detail::host_region_arena::redzone; }

// Regions land in the order they are acquired, whatever the rest of the process allocates
// in between: a policy that chooses among regions by address (first fit) then decides alike
// in every build. Through operator new the second region took the hole the C++ heap had just
// freed, below the first.
TEST(HostBackend, RegionsLandInTheOrderTheyAreAcquiredWhateverTheHeapDoes)
{
  host_backend b({.granularity = 4096});
  auto* const hole = static_cast<char*>(std::malloc(64 * 1024));
  ASSERT_NE(hole, nullptr);
  hole[0] = 1;
  acquisition const first = b.acquire(8192, 4096);
  std::free(hole);
  std::vector<void*> held;
  for (std::size_t n : {24u, 4000u, 9000u, 100u}) held.push_back(std::malloc(n));
  acquisition const second = b.acquire(8192, 4096);
  acquisition const third = b.acquire(4096, 4096);
  for (void* p : held) std::free(p);
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ(second.base, first.base + footprint(8192));
  EXPECT_EQ(third.base, second.base + footprint(8192));
  // A region given back is placed again, lowest first, and its pages read as zeros.
  std::memset(at(second.base), 9, second.size);
  ASSERT_TRUE(b.release(second.base, second.size));
  acquisition const again = b.acquire(4096, 4096);
  ASSERT_TRUE(again);
  EXPECT_EQ(again.base, second.base);
  EXPECT_TRUE(all_bytes_are(again.base, again.size, 0));
}

// Wherever the kernel maps a range, the layout inside it is the same: the range starts at a
// multiple of its size, so an aligned region leaves the same gap below it in every process.
// (At any page, the MiB-aligned region below would follow the first at a distance that
// changed with address-space randomization.)
TEST(HostRegionArena, ARangeStartsAtAMultipleOfItsSizeSoAlignedRegionsLandAlike)
{
  for (int arena_number = 0; arena_number < 3; ++arena_number) {  // each range where the kernel puts it
    detail::host_region_arena arena(4 * MiB);
    auto const first = arena.place(4096, 4096);
    ASSERT_TRUE(first);
    EXPECT_EQ(*first % (4 * MiB), 0u);
    EXPECT_EQ(arena.place(MiB, MiB), *first + MiB);
    EXPECT_EQ(arena.place(4096, 512 * 1024), *first + 512 * 1024);  // in the gap the last one left
    EXPECT_EQ(arena.spans(), 1u);
  }
}

TEST(HostRegionArena, AnAlignmentGapIsPlacedAgainBySmallerRegions)
{
  detail::host_region_arena arena(4 * MiB);
  auto const p = arena.place(4096, 4096);  // at the range's start: nothing lies below it
  ASSERT_TRUE(p);
  std::uintptr_t const above = *p + footprint(4096);
  // An alignment that leaves a gap of at least 32 KiB above the first region.
  std::size_t align = 64 * 1024;
  while (detail::align_up_address(above, align) - above < 32 * 1024) align *= 2;
  std::uintptr_t const q = detail::align_up_address(above, align);
  EXPECT_EQ(arena.place(4096, align), q);
  EXPECT_EQ(arena.place(8192, 4096), above);                    // in the gap, lowest first
  EXPECT_EQ(arena.place(100, 4096), above + footprint(8192));   // a whole page
  EXPECT_EQ(arena.place(align, 4096), q + footprint(4096));     // what the gap has left is too small
}

TEST(HostRegionArena, RangesGivenBackMergeAndTheLowestIsPlacedFirst)
{
  detail::host_region_arena arena(MiB);
  std::vector<std::uintptr_t> r;
  for (int i = 0; i < 5; ++i) r.push_back(*arena.place(4096, 4096));
  for (int i = 1; i < 5; ++i) EXPECT_EQ(r[i], r[0] + i * footprint(4096));
  arena.give_back(r[3], 4096);
  arena.give_back(r[1], 4096);
  arena.give_back(r[2], 4096);                  // joins both neighbours
  EXPECT_EQ(arena.place(12288, 4096), r[1]);    // only the merged range holds it
  arena.give_back(r[0], 4096);
  arena.give_back(r[1], 12288);                 // [r0, r4) is free again, in one range
  EXPECT_EQ(arena.place(4096, 4096), r[0]);
  EXPECT_EQ(arena.place(8192, 4096), r[1]);
  EXPECT_EQ(arena.place(4096, 4096), r[1] + footprint(8192));
  EXPECT_EQ(arena.place(4096, 4096), r[4] + footprint(4096));  // above every region
}

TEST(HostRegionArena, AFullRangeMapsAnotherAndLendsWhatItHasLeft)
{
  detail::host_region_arena arena(64 * 1024);
  auto const a = arena.place(48 * 1024, 4096);
  ASSERT_TRUE(a);
  auto const b = arena.place(32 * 1024, 4096);  // does not fit in what the first range has left
  ASSERT_TRUE(b);
  EXPECT_EQ(arena.spans(), 2u);
  EXPECT_TRUE(*b + 64 * 1024 <= *a || *b >= *a + 64 * 1024);
  EXPECT_EQ(arena.place(8192, 4096), *a + footprint(48 * 1024));  // the first range's rest
  EXPECT_EQ(arena.place(16 * 1024, 4096), *b + footprint(32 * 1024));
  EXPECT_EQ(arena.spans(), 2u);
  auto const big = arena.place(MiB, 4096);  // larger than a range: a range of its own size
  ASSERT_TRUE(big);
  EXPECT_EQ(arena.spans(), 3u);
  std::memset(reinterpret_cast<void*>(*big), 1, MiB);
}

TEST(HostReservations, AreAlignedAndCostNothingUntilMapped)
{
  host_backend b = two_mib_pages();
  acquisition const big = b.reserve(90 * 1024 * MiB, 2 * MiB);  // PyTorch's 1.125 x 80 GiB
  ASSERT_TRUE(big);
  EXPECT_EQ(big.size, 90 * 1024 * MiB);
  EXPECT_EQ(big.base % (2 * MiB), 0u);
  acquisition const wide = b.reserve(3 * MiB, 8 * MiB);  // rounded to the page, aligned as asked
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide.size, 4 * MiB);
  EXPECT_EQ(wide.base % (8 * MiB), 0u);
  acquisition const large_pages = b.reserve(40 * MiB, 20 * MiB);  // not a power of two: the page
  ASSERT_TRUE(large_pages);
  EXPECT_EQ(large_pages.base % (2 * MiB), 0u);
  EXPECT_EQ(b.acquired_bytes(), 0u);
  EXPECT_EQ(b.stats().acquisitions, 0u);
  EXPECT_FALSE(b.reserve(0, 2 * MiB));
}

TEST(HostReservations, MappedPagesAreZeroedWritableAndCounted)
{
  host_backend b = two_mib_pages();
  acquisition const r = b.reserve(8 * MiB, 2 * MiB);
  ASSERT_TRUE(r);
  acquisition const a = b.acquire_at(r.base + 2 * MiB, 3 * MiB);  // rounded up to two pages
  ASSERT_TRUE(a);
  EXPECT_EQ(a.base, r.base + 2 * MiB);
  EXPECT_EQ(a.size, 4 * MiB);
  EXPECT_TRUE(all_bytes_are(a.base, a.size, 0));
  std::memset(at(a.base), 0x5a, a.size);
  EXPECT_TRUE(all_bytes_are(a.base, a.size, 0x5a));
  EXPECT_EQ(b.acquired_bytes(), 4 * MiB);
  EXPECT_EQ(b.stats().acquisitions, 1u);
}

TEST(HostReservations, AcquireAtRefusesWhatCuMemMapWould)
{
  host_backend b = two_mib_pages(6 * MiB);
  acquisition const r = b.reserve(8 * MiB, 2 * MiB);
  ASSERT_TRUE(r);
  ASSERT_TRUE(b.acquire_at(r.base, 2 * MiB));
  EXPECT_FALSE(b.acquire_at(r.base, 2 * MiB));                // mapped already
  EXPECT_FALSE(b.acquire_at(r.base + 4096, 2 * MiB));         // not at a page
  EXPECT_FALSE(b.acquire_at(r.base + 6 * MiB, 4 * MiB));      // past the reservation's end
  EXPECT_FALSE(b.acquire_at(r.base + 8 * MiB, 2 * MiB));      // outside any reservation
  EXPECT_FALSE(b.acquire_at(r.base + 2 * MiB, 6 * MiB));      // over the capacity (2 MiB held)
  EXPECT_FALSE(b.acquire_at(r.base + 2 * MiB, 0));
  EXPECT_EQ(b.stats().refusals, 6u);
  EXPECT_EQ(b.acquired_bytes(), 2 * MiB);
  EXPECT_TRUE(b.acquire_at(r.base + 2 * MiB, 4 * MiB));       // up to the capacity
}

TEST(HostReservations, ReleasedPagesAreGivenBackAndMapAgainAsZeros)
{
  host_backend b = two_mib_pages();
  acquisition const r = b.reserve(8 * MiB, 2 * MiB);
  ASSERT_TRUE(r);
  // Three acquisitions side by side, as an expandable pool grows; one release spans two.
  for (std::size_t page = 0; page < 3; ++page) ASSERT_TRUE(b.acquire_at(r.base + page * 2 * MiB, 2 * MiB));
  std::memset(at(r.base), 1, 6 * MiB);
  EXPECT_FALSE(b.release(r.base + 4096, 2 * MiB));       // not at a page
  EXPECT_FALSE(b.release(r.base + 4 * MiB, 4 * MiB));    // reaches past what is mapped
  EXPECT_TRUE(b.release(r.base + 2 * MiB, 4 * MiB));
  EXPECT_FALSE(b.release(r.base + 2 * MiB, 2 * MiB));    // twice
  EXPECT_EQ(b.acquired_bytes(), 2 * MiB);
  EXPECT_TRUE(all_bytes_are(r.base, 2 * MiB, 1));         // the first page keeps its bytes
  ASSERT_TRUE(b.acquire_at(r.base + 4 * MiB, 2 * MiB));
  EXPECT_TRUE(all_bytes_are(r.base + 4 * MiB, 2 * MiB, 0));
  EXPECT_EQ(b.stats().releases, 1u);
}

TEST(HostReservations, AMovedBackendKeepsItsMappings)
{
  acquisition a;
  acquisition region;
  host_backend moved = [&] {
    host_backend b = two_mib_pages();
    acquisition const r = b.reserve(4 * MiB, 2 * MiB);
    a = b.acquire_at(r.base, 2 * MiB);
    region = b.acquire(2 * MiB, 1);  // and a region of the arena's
    return host_backend(std::move(b));  // the moved-from backend is destroyed here
  }();
  ASSERT_TRUE(a);
  ASSERT_TRUE(region);
  std::memset(at(a.base), 3, a.size);
  std::memset(at(region.base), 4, region.size);
  EXPECT_TRUE(all_bytes_are(a.base, a.size, 3));
  EXPECT_TRUE(all_bytes_are(region.base, region.size, 4));
  EXPECT_TRUE(moved.release(a.base, a.size));
  EXPECT_TRUE(moved.release(region.base, region.size));
  EXPECT_EQ(moved.acquired_bytes(), 0u);
}

using HostReservationsDeathTest = ::testing::Test;

// What makes the real-memory tests catch a chunk that reaches past its region: the pages of a
// reservation that are not mapped fault, whether never mapped or released.
TEST_F(HostReservationsDeathTest, TouchingPagesThatAreNotMappedFaults)
{
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  host_backend b = two_mib_pages();
  acquisition const r = b.reserve(6 * MiB, 2 * MiB);
  ASSERT_TRUE(r);
  ASSERT_TRUE(b.acquire_at(r.base, 4 * MiB));
  ASSERT_TRUE(b.release(r.base + 2 * MiB, 2 * MiB));
  *at(r.base) = 1;
  EXPECT_DEATH(*static_cast<char volatile*>(at(r.base + 2 * MiB)) = 1, "");  // released
  EXPECT_DEATH(*static_cast<char volatile*>(at(r.base + 4 * MiB)) = 1, "");  // never mapped
}

#ifdef FRAGLAB_ASAN
// Under AddressSanitizer the arena poisons the bytes after each region, to the byte, and
// every region given back, as ASan's redzones did around regions from operator new.
TEST_F(HostReservationsDeathTest, UnderAsanAWritePastARegionOrIntoOneReleasedIsReported)
{
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  host_backend b({.granularity = 256});
  acquisition const a = b.acquire(1000, 256);  // 1 KiB, in a page of its own
  acquisition const next = b.acquire(4096, 4096);
  ASSERT_TRUE(a && next);
  EXPECT_EQ(a.size, 1024u);
  std::memset(at(a.base), 1, a.size);
  EXPECT_DEATH(*static_cast<char volatile*>(at(a.base + a.size)) = 1, "use-after-poison");  // one byte past
  ASSERT_TRUE(b.release(a.base, a.size));
  EXPECT_DEATH(*static_cast<char volatile*>(at(a.base)) = 1, "use-after-poison");
}
#endif

// pytorch_expandable over real host memory makes the decisions it makes over the simulated
// backend.
TEST(HostReservations, PytorchExpandableDecidesAsInSimulation)
{
  replay_result const host = testing::replay_small_training("pytorch_expandable", {}, "host");
  EXPECT_EQ(host.failed_allocs, 0u);
  EXPECT_GT(host.acquisitions, 0u);
  testing::expect_same_decisions(host, testing::replay_small_training("pytorch_expandable", {}, "simulated"));
}

}  // namespace
}  // namespace fraglab
