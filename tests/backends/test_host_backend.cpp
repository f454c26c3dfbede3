// The host backend: blocks of real memory, and address reservations in the process's own
// address space, whose pages are mapped and unmapped as cuda_vmm maps device pages.
#include "backends/host_backend.hpp"
#include "support/training_trace.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

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
  EXPECT_FALSE(b.release(a.base, 8192));  // not the size it was given
  EXPECT_TRUE(b.release(a.base, 4096));
  EXPECT_FALSE(b.release(a.base, 4096));  // twice
  EXPECT_EQ(b.acquired_bytes(), 0u);
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
  host_backend moved = [&] {
    host_backend b = two_mib_pages();
    acquisition const r = b.reserve(4 * MiB, 2 * MiB);
    a = b.acquire_at(r.base, 2 * MiB);
    return host_backend(std::move(b));  // the moved-from backend is destroyed here
  }();
  ASSERT_TRUE(a);
  std::memset(at(a.base), 3, a.size);
  EXPECT_TRUE(all_bytes_are(a.base, a.size, 3));
  EXPECT_TRUE(moved.release(a.base, a.size));
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
