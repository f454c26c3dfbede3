// buddy and segregated_pow2 decisions on scenarios computed by hand from their rules, run
// through the registry exactly as `fraglab replay -p NAME` runs them (heap backend, 4 KiB
// pages, base 2^32).
#include <fraglab/runtime/registry/composition.hpp>
#include "support/fixtures.hpp"

#include <gtest/gtest.h>

namespace fraglab::testing {
namespace {

constexpr std::uintptr_t B = heap_base;

TEST(Buddy, SplitsByHalvingAndMergesOnlyWithTheBuddy)
{
  auto a = make_composition("buddy", {}, {})->make();
  // 100 B -> 128. A 4 KiB page is halved down to 128: free 128, 256, 512, 1024 and 2048
  // halves follow x.
  auto x = a->allocate(100);
  EXPECT_EQ(x.address, B);
  EXPECT_EQ(x.size, 128u);
  auto y = a->allocate(200);  // 256: the free 256-byte half
  EXPECT_EQ(y.address, B + 256);
  auto z = a->allocate(100);  // 128: x's buddy
  EXPECT_EQ(z.address, B + 128);
  a->deallocate(x.address);  // x's buddy z is live: no merge
  a->deallocate(z.address);  // z and x merge into 256 at B; its buddy y is live
  EXPECT_EQ(layout(*a), (std::vector<layout_entry>{{B, 256, false},
                                                   {B + 256, 256, true},
                                                   {B + 512, 512, false},
                                                   {B + 1024, 1024, false},
                                                   {B + 2048, 2048, false}}));
  a->deallocate(y.address);  // merges all the way back to the page
  EXPECT_EQ(layout(*a), (std::vector<layout_entry>{{B, 4096, false}}));
  EXPECT_EQ(a->stats().splits, 5u);  // the page halved five times for x; y and z fit whole halves
  EXPECT_EQ(a->stats().merges, 5u);  // z with x, then y with 256, 512, 1024 and 2048
  auto w = a->allocate(3000);  // 4096: the whole page, no split
  EXPECT_EQ(w.address, B);
  EXPECT_EQ(w.size, 4096u);
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(Buddy, FreeNeighboursThatAreNotBuddiesStayApart)
{
  auto a = make_composition("buddy", {}, {})->make();
  auto p = a->allocate(128);
  auto q = a->allocate(128);
  auto r = a->allocate(256);
  auto s = a->allocate(128);  // from the 512 half: s at 512, its buddy 128 at 640 free
  ASSERT_EQ(r.address, B + 256);
  ASSERT_EQ(s.address, B + 512);
  a->deallocate(q.address);  // q (128 at 128) and r (256 at 256) are adjacent but not buddies
  a->deallocate(r.address);
  auto const chunks = layout(*a);
  EXPECT_EQ(chunks[1], (layout_entry{B + 128, 128, false}));
  EXPECT_EQ(chunks[2], (layout_entry{B + 256, 256, false}));
  EXPECT_EQ(a->check_invariants(), "");
  (void)p;
}

TEST(Buddy, LargeBlocksGetRegionsAlignedToTheirSize)
{
  auto a = make_composition("buddy", {}, {})->make();
  ASSERT_TRUE(a->allocate(3000));  // the first page
  auto v = a->allocate(5000);      // 8192: the break moves up to the next 8 KiB boundary
  EXPECT_EQ(v.address, B + 8192);
  EXPECT_EQ(v.size, 8192u);
  auto aligned = a->allocate(100, 4096);  // 4096 B aligned to 4 KiB: a page of its own
  EXPECT_EQ(aligned.address % 4096, 0u);
  EXPECT_EQ(aligned.size, 4096u);
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(SegregatedPow2, EachClassHasItsOwnPagesAndBlocksAreNeverSplitForAnotherClass)
{
  auto a = make_composition("segregated_pow2", {}, {})->make();
  auto x = a->allocate(20);  // class 32: a page of its own, carved from its start
  auto y = a->allocate(24);  // class 32: the next 32 bytes of that page
  EXPECT_EQ(x.address, B);
  EXPECT_EQ(y.address, B + 32);
  EXPECT_EQ(x.size, 32u);
  auto z = a->allocate(100);  // class 128: a new page
  EXPECT_EQ(z.address, B + 4096);
  a->deallocate(x.address);
  auto small = a->allocate(10);  // class 16: never takes x's free 32-byte block
  EXPECT_EQ(small.address, B + 8192);
  auto again = a->allocate(30);  // class 32: the free list is LIFO, x's block first
  EXPECT_EQ(again.address, x.address);
  a->deallocate(again.address);
  a->deallocate(y.address);  // neighbours, but no coalescing
  EXPECT_EQ(a->stats().free_chunks, 5u);  // 32, 32 and the three pages' carved-off rests
  EXPECT_EQ(a->stats().reserved_bytes, 3 * 4096u);
  EXPECT_EQ(a->check_invariants(), "");
}

}  // namespace
}  // namespace fraglab::testing
