// dlmalloc's decisions on scenarios computed by hand from malloc.c 2.8.6's rules, through
// the registry as `fraglab replay -p dlmalloc` runs it (heap backend at 2^32, 4 KiB pages).
#include <fraglab/runtime/registry/composition.hpp>
#include "support/fixtures.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace fraglab::testing {
namespace {

constexpr std::uintptr_t B = heap_base;

std::unique_ptr<any_allocator> make() { return make_composition("dlmalloc", {}, {})->make(); }

TEST(Dlmalloc, PadsRequestsWithABoundaryTagAndCarvesFromTheTop)
{
  auto a = make();
  auto x = a->allocate(100);  // 100 + 8 -> 112
  auto y = a->allocate(100);
  auto z = a->allocate(1);  // at least MIN_CHUNK_SIZE: 32
  EXPECT_EQ(x.address, B);
  EXPECT_EQ(x.size, 112u);
  EXPECT_EQ(y.address, B + 112);
  EXPECT_EQ(z.size, 32u);
  EXPECT_EQ(a->stats().reserved_bytes, 4096u);  // the first sbrk: 112 + 96, rounded to the page
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(Dlmalloc, SmallBinsAreExactAndLastInFirstOut)
{
  auto a = make();
  auto p = a->allocate(100);
  auto g1 = a->allocate(16);
  auto q = a->allocate(100);
  auto g2 = a->allocate(16);
  a->deallocate(p.address);
  a->deallocate(q.address);
  EXPECT_EQ(a->allocate(100).address, q.address);  // the newest 112-byte chunk first
  EXPECT_EQ(a->allocate(100).address, p.address);
  EXPECT_EQ(a->allocate(100).address, g2.address + 32);  // bins empty: the top
  (void)g1;
}

TEST(Dlmalloc, ASmallRequestSplitsTheSmallestTreeChunkAndItsRemainderBecomesTheDesignatedVictim)
{
  auto a = make();
  auto x = a->allocate(1000);  // 1008
  auto guard = a->allocate(16);
  a->deallocate(x.address);  // a tree chunk of 1008
  auto s = a->allocate(40);  // 48: no small bin, no dv: the tree chunk; 960 left become the dv
  EXPECT_EQ(s.address, x.address);
  auto t = a->allocate(40);  // the dv holds it: carved from the dv
  EXPECT_EQ(t.address, x.address + 48);
  auto u = a->allocate(500);  // large (512), no tree chunk: the dv again
  EXPECT_EQ(u.address, x.address + 96);
  auto v = a->allocate(600);  // 608 > the dv's 400: the top
  EXPECT_EQ(v.address, guard.address + 32);
  a->deallocate(t.address);                         // neighbours live: a small bin
  EXPECT_EQ(a->allocate(40).address, t.address);   // exact bin before the dv
  a->deallocate(u.address);                         // merges with the dv: the dv grows back
  EXPECT_EQ(a->allocate(800).address, u.address);  // 816 <= 912: from the dv
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(Dlmalloc, ALargeRequestTakesTheTreeChunkOnlyWhenItFitsBetterThanTheDesignatedVictim)
{
  auto a = make();
  auto big = a->allocate(2000);  // 2016
  auto g1 = a->allocate(16);
  auto mid = a->allocate(1500);  // 1520
  auto g2 = a->allocate(16);
  a->deallocate(big.address);
  auto s = a->allocate(100);  // 112 from the 2016 tree chunk: the dv is the other 1904
  ASSERT_EQ(s.address, big.address);
  a->deallocate(mid.address);  // a tree chunk of 1520
  // 1408: the tree chunk leaves 112, the dv would leave 496: the tree chunk wins.
  auto l = a->allocate(1400);
  EXPECT_EQ(l.address, mid.address);
  auto m = a->allocate(1400);  // no tree chunk now: the dv
  EXPECT_EQ(m.address, big.address + 112);
  a->deallocate(l.address);  // merges with its 112-byte remainder: a tree chunk of 1520 again
  // 400: the tree chunk would leave 1120, the dv (496) leaves 96: the dv wins.
  auto n = a->allocate(392);
  EXPECT_EQ(n.address, big.address + 1520);
  EXPECT_EQ(a->check_invariants(), "");
  (void)g1;
  (void)g2;
}

TEST(Dlmalloc, EqualSizedTreeChunksAreTakenOldestFirst)
{
  auto a = make();
  auto p1 = a->allocate(1000);
  auto g1 = a->allocate(16);
  auto p2 = a->allocate(1000);
  auto g2 = a->allocate(16);
  a->deallocate(p2.address);  // p2 arrives in the tree first
  a->deallocate(p1.address);
  EXPECT_EQ(a->allocate(900).address, p2.address);
  EXPECT_EQ(a->allocate(900).address, p1.address);
  (void)g1;
  (void)g2;
}

TEST(Dlmalloc, LargeRequestsGetMappingsOnceTheHeapExistsAndTheTopIsTrimmed)
{
  auto a = make();
  // The first request grows the heap even above the mmap threshold (topsize is 0).
  auto big = a->allocate(3 * MiB);  // 3 MiB + 16: 769 pages
  EXPECT_EQ(big.address, B);
  EXPECT_EQ(a->stats().reserved_bytes, 769 * 4096u);
  a->deallocate(big.address);  // the top is now the whole heap, above 2 MiB: trimmed
  EXPECT_EQ(a->stats().reserved_bytes, 4096u);
  auto m = a->allocate(300 * KiB);  // 307216 B: nothing free holds it, so a mapping of 76 pages
  EXPECT_GE(m.address, B + (std::uintptr_t{1} << 40));
  EXPECT_EQ(m.size, 76 * 4096u);
  EXPECT_EQ(a->stats().reserved_bytes, 77 * 4096u);
  a->deallocate(m.address);  // munmap
  EXPECT_EQ(a->stats().reserved_bytes, 4096u);
  EXPECT_EQ(a->check_invariants(), "");
}

TEST(Dlmalloc, ARequestNear2To64IsRefusedOnceTheHeapExists)
{
  // Once the heap exists such a request takes sys_alloc's mmap path, whose padding (63
  // bytes, then the page) wrapped past 2^64 into a one-page mapping, and a 4 KiB block was
  // handed out for it (found by fuzz_policy_ops). dlmalloc's mmap_alloc refuses a size that
  // wraps, and so does the heap path after it (its padding of 96 bytes and the top's foot
  // wrap too). A little further below 2^64 nothing wraps, and the backend refuses the space.
  auto a = make();
  auto const small = a->allocate(100);
  ASSERT_TRUE(small);
  std::size_t const max = std::numeric_limits<std::size_t>::max();
  for (std::size_t const below : {63u, 100u}) {
    auto const huge = a->allocate(max - below);
    EXPECT_FALSE(huge) << below;
    EXPECT_EQ(huge.status, alloc_status::size_overflow) << below;
  }
  auto const unwrapped = a->allocate(max - 8 * KiB);
  EXPECT_FALSE(unwrapped);
  EXPECT_EQ(unwrapped.status, alloc_status::backend_refused);
  EXPECT_EQ(a->stats().failed_allocations, 3u);
  EXPECT_EQ(a->stats().reserved_bytes, 4096u);
  EXPECT_EQ(a->deallocate(small.address), free_status::ok);
  EXPECT_EQ(a->check_invariants(), "");
}

}  // namespace
}  // namespace fraglab::testing
