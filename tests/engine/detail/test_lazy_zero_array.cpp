// lazy_zero_array: zeros that cost only the pages written, counted with mincore(2), which
// reports the resident pages of a mapping exactly; given back when its owner goes.
#include <fraglab/engine/detail/lazy_zero_array.hpp>

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <new>
#include <vector>

namespace fraglab {
namespace {

std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// Resident pages of [p, p + bytes), or -1 where the range is not mapped.
long resident_pages(void const* p, std::size_t bytes)
{
  std::vector<unsigned char> in((bytes + page_size() - 1) / page_size());
  if (::mincore(const_cast<void*>(p), bytes, in.data()) != 0) return errno == ENOMEM ? -1 : -2;
  long n = 0;
  for (unsigned char v : in) n += v & 1;
  return n;
}

TEST(LazyZeroArray, CostsOnlyThePagesWritten)
{
  std::size_t const n = std::size_t{1} << 27;  // 1 GiB of words
  detail::lazy_zero_array<std::uint64_t> a(n);
  ASSERT_NE(a.get(), nullptr);
  std::size_t const per_page = page_size() / sizeof(std::uint64_t);
  EXPECT_EQ(resident_pages(a.get(), n * sizeof(std::uint64_t)), 0);
  a.get()[0] = 1;
  a.get()[1] = 2;                 // the same page
  a.get()[per_page + 7] = 3;      // the second page
  a.get()[n / 2] = 4;
  a.get()[n - 1] = 5;             // the last page
  EXPECT_EQ(resident_pages(a.get(), n * sizeof(std::uint64_t)), 4);
  EXPECT_EQ(a.get()[0] + a.get()[1] + a.get()[per_page + 7] + a.get()[n / 2] + a.get()[n - 1], 15u);
  EXPECT_EQ(a.get()[2], 0u);
  EXPECT_EQ(a.get()[n - 2], 0u);
  EXPECT_EQ(a.get()[n / 4], 0u);  // never written: zero
}

TEST(LazyZeroArray, MovesItsPagesAndGivesThemBackOnce)
{
  std::size_t const n = 1024;
  void* pages = nullptr;
  {
    detail::lazy_zero_array<char*> a(n);
    pages = a.get();
    a.get()[3] = reinterpret_cast<char*>(&a);
    detail::lazy_zero_array<char*> b(std::move(a));
    EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    EXPECT_EQ(b.get(), pages);
    EXPECT_EQ(b.get()[3], reinterpret_cast<char*>(&a));
    detail::lazy_zero_array<char*> c(n);
    void* other = c.get();
    c = std::move(b);  // c's own pages go back now
    EXPECT_EQ(c.get(), pages);
    EXPECT_EQ(resident_pages(other, n * sizeof(char*)), -1);
    EXPECT_EQ(resident_pages(pages, n * sizeof(char*)), 1);
  }
  EXPECT_EQ(resident_pages(pages, n * sizeof(char*)), -1);  // unmapped with its last owner
}

TEST(LazyZeroArray, MoreThanTheAddressSpaceIsBadAlloc)
{
  EXPECT_THROW(detail::lazy_zero_array<std::uint64_t>(~std::size_t{0} / 4), std::bad_alloc);  // bytes overflow
  EXPECT_THROW(detail::lazy_zero_array<std::uint64_t>(std::size_t{1} << 60), std::bad_alloc);  // 8 EiB
  detail::lazy_zero_array<int> empty;
  EXPECT_EQ(empty.get(), nullptr);
}

}  // namespace
}  // namespace fraglab
