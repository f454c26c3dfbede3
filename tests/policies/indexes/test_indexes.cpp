// Each free index against a brute-force model: random inserts and erases of chunks with
// random sizes and addresses, and after every step each query the index serves must name
// the chunk the rule defines. Plus hand-checked shapes (bins, TLSF classes).
#include <fraglab/engine/chunk.hpp>
#include <fraglab/engine/concepts.hpp>
#include <fraglab/policies/fits.hpp>
#include <fraglab/policies/indexes/address_ordered_tree_index.hpp>
#include <fraglab/policies/indexes/bins_index.hpp>
#include <fraglab/policies/indexes/fine_bins_index.hpp>
#include <fraglab/policies/indexes/list_index.hpp>
#include <fraglab/policies/indexes/segregated_index.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>
#include <fraglab/runtime/gen/rng.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <limits>
#include <memory>
#include <vector>

namespace fraglab {
namespace {

template <class Spec>
using chunk_of = basic_chunk<Spec>;

// The rule each fit defines, over chunks in index order (`order`: list order for LIFO/FIFO,
// address order otherwise). Ties go to the first in that order.
template <class C>
C* model_best(std::vector<C*> const& order, std::size_t n)
{
  C* best = nullptr;
  for (C* c : order)
    if (c->size >= n && (best == nullptr || c->size < best->size)) best = c;
  return best;
}
template <class C>
C* model_worst(std::vector<C*> const& order, std::size_t n)
{
  C* best = nullptr;
  for (C* c : order)
    if (best == nullptr || c->size > best->size) best = c;
  return best != nullptr && best->size >= n ? best : nullptr;
}
template <class C>
C* model_first(std::vector<C*> const& order, std::size_t n)
{
  for (C* c : order)
    if (c->size >= n) return c;
  return nullptr;
}
// The next chunk after c in (size, address) order.
template <class C>
C* model_successor(std::vector<C*> const& members, C const* c)
{
  auto after = [](C const* a, C const* b) { return a->size < b->size || (a->size == b->size && a->address < b->address); };
  C* next = nullptr;
  for (C* m : members)
    if (after(c, m) && (next == nullptr || after(m, next))) next = m;
  return next;
}
template <class C>
std::vector<C*> by_address(std::vector<C*> v)
{
  std::sort(v.begin(), v.end(), [](C* a, C* b) { return a->address < b->address; });
  return v;
}

template <class Spec>
struct index_fixture {
  using C = chunk_of<Spec>;
  typename Spec::template index<C> ix;
  std::vector<std::unique_ptr<C>> storage;
  std::vector<C*> members;  // in list order for LIFO/FIFO models
  gen::rng r{42};
  typename C::region_type region;  // every chunk's, at base 0 unless a test moves it

  explicit index_fixture(typename Spec::params p = {}) : ix(p) {}

  C* make(std::uintptr_t address, std::size_t size)
  {
    storage.push_back(std::make_unique<C>());
    storage.back()->address = address;
    storage.back()->size = size;
    storage.back()->set_region(&region);
    return storage.back().get();
  }
};

// Random chunks at distinct addresses (slots 64 KiB apart), sizes from a skewed spread, at
// least `least`.
// An index that exchanges chunks in one step (keyed_in_place_index) also gets exchanges:
// a member for a fresh chunk, or for itself resized, to a size near its own (which often
// keeps its place in the order) or anywhere in the spread (which often does not). An index
// that updates in place (in_place_index) gets the same sizes through resized, half of them
// with the start moved too (within its slot, so that the address order stays), as a split
// moves the remainder's start up and a merge moves the next chunk's start down.
template <class Spec, class Check>
void drive_randomly(Check&& check, int steps = 3000, bool front_insert = false, bool back_insert = false,
                    std::size_t least = 16)
{
  index_fixture<Spec> f;
  using C = typename index_fixture<Spec>::C;
  constexpr bool exchanges = keyed_in_place_index<decltype(f.ix), C>;
  constexpr bool in_place = in_place_index<decltype(f.ix), C>;
  std::vector<bool> used(4096, false);
  auto const base = std::uintptr_t{1} << 30;
  auto random_size = [&] {
    return std::max<std::size_t>(least, f.r.chance(30) ? 16 * f.r.uniform(1, 8) : 16 * (f.r.log_uniform(0, 12) + 1));
  };
  auto free_slot = [&] {
    std::size_t slot = f.r.uniform(0, used.size() - 1);
    while (used[slot]) slot = (slot + 1) % used.size();
    used[slot] = true;
    return base + slot * 65536;
  };
  auto add_member = [&](C* c) {
    if (front_insert) f.members.insert(f.members.begin(), c);
    else if (back_insert) f.members.push_back(c);
    else f.members.insert(std::upper_bound(f.members.begin(), f.members.end(), c,
                                           [](auto* a, auto* b) { return a->address < b->address; }),
                          c);
  };
  for (int step = 0; step < steps; ++step) {
    bool const insert = f.members.empty() || (f.members.size() < 600 && f.r.chance(55));
    if constexpr (exchanges || in_place) {
      if (!f.members.empty() && f.r.chance(25)) {
        std::size_t const i = f.r.uniform(0, f.members.size() - 1);
        C* old = f.members[i];
        std::size_t const was = old->size;
        std::size_t const delta = 16 * f.r.uniform(0, 4);
        std::size_t const near = f.r.chance(50) || delta + least > was ? was + delta : was - delta;
        std::size_t const size = f.r.chance(50) ? near : random_size();
        if constexpr (in_place) {
          old->size = size;
          std::uintptr_t const slot_base = base + (old->address - base) / 65536 * 65536;
          if (f.r.chance(50)) old->address = slot_base + 16 * f.r.uniform(0, 4);
          f.ix.resized(*old, was);
        } else if (f.r.chance(50)) {
          old->size = size;
          f.ix.exchange(*old, was, *old);
        } else {
          C* fresh = f.make(free_slot(), size);
          f.ix.exchange(*old, was, *fresh);
          used[(old->address - base) / 65536] = false;
          f.members.erase(f.members.begin() + static_cast<std::ptrdiff_t>(i));
          add_member(fresh);
        }
        ASSERT_EQ(f.ix.size(), f.members.size());
        ASSERT_EQ(f.ix.check(), "") << "step " << step;
        for (C* m : f.members) ASSERT_TRUE(f.ix.contains(*m)) << "step " << step;
        check(f, 16 * (f.r.log_uniform(0, 12) + 1), step);
        if (::testing::Test::HasFatalFailure()) return;
        continue;
      }
    }
    if (insert) {
      auto* c = f.make(free_slot(), random_size());
      f.ix.insert(*c);
      add_member(c);
    } else {
      std::size_t const i = f.r.uniform(0, f.members.size() - 1);
      auto* c = f.members[i];
      f.ix.erase(*c);
      used[(c->address - base) / 65536] = false;
      f.members.erase(f.members.begin() + static_cast<std::ptrdiff_t>(i));
    }
    ASSERT_EQ(f.ix.size(), f.members.size());
    ASSERT_EQ(f.ix.check(), "") << "step " << step;
    std::size_t const n = 16 * (f.r.log_uniform(0, 12) + 1);
    check(f, n, step);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The (size, address) order's queries: best and worst fit, the largest chunk, and the
// successor, which for bins crosses to the next non-empty bin when c is the last of its own.
template <class Spec>
void expect_size_address_order_on_random_sets()
{
  drive_randomly<Spec>([](auto& f, std::size_t n, int step) {
    ASSERT_EQ(f.ix.find_best(n), model_best(f.members, n)) << "step " << step << " n " << n;
    ASSERT_EQ(worst_fit::select(f.ix, n), model_worst(f.members, n)) << "step " << step;
    ASSERT_EQ(f.ix.largest(), model_worst(f.members, 0)) << "step " << step;
    if (f.members.empty()) return;
    auto* c = f.members[static_cast<std::size_t>(step) % f.members.size()];
    ASSERT_EQ(f.ix.successor(*c), model_successor(f.members, c)) << "step " << step;
  });
}

TEST(TreeIndex, BestWorstAndSuccessorMatchTheRuleOnRandomSets)
{
  expect_size_address_order_on_random_sets<tree_index>();
}

TEST(BinsIndex, BestWorstAndSuccessorMatchTheRuleOnRandomSets)
{
  expect_size_address_order_on_random_sets<bins_index>();
}

// 64 bins per doubling from 64 B: every doubling of drive_randomly's sizes fills one bitmap
// word, so searches and successors cross words through the summary.
struct fine_bins : basic_bins_index<6, 64 * 64> {
  struct params : bins_index_params {
    params() : bins_index_params{64, 11 * 64} {}
  };
};

TEST(BinsIndex, FinerBinsMatchTheRuleOnRandomSets) { expect_size_address_order_on_random_sets<fine_bins>(); }

// The (size, address) order's queries, and the order of for_each, on an index whose chunks
// of its smallest sizes cross the line to and from their address bitmaps hundreds of times
// (`in_bitmap(ix)`: whether the front watched is in its bitmaps).
template <class Spec, class InBitmap>
void expect_size_address_order_across_the_address_bitmap(InBitmap in_bitmap, std::size_t least = 16)
{
  int steps_in_bitmap = 0;
  drive_randomly<Spec>([&](auto& f, std::size_t n, int step) {
    steps_in_bitmap += in_bitmap(f.ix) ? 1 : 0;
    ASSERT_EQ(f.ix.find_best(n), model_best(f.members, n)) << "step " << step << " n " << n;
    ASSERT_EQ(f.ix.find_best(n - 8), model_best(f.members, n - 8)) << "step " << step << " n " << n - 8;  // between sizes
    ASSERT_EQ(f.ix.largest(), model_worst(f.members, 0)) << "step " << step;
    if (f.members.empty()) return;
    auto* c = f.members[static_cast<std::size_t>(step) % f.members.size()];
    ASSERT_EQ(f.ix.successor(*c), model_successor(f.members, c)) << "step " << step;
    using C = std::remove_pointer_t<std::remove_cvref_t<decltype(c)>>;
    std::vector<C const*> visited;
    f.ix.for_each([&](C const& x) { visited.push_back(&x); });
    ASSERT_TRUE(std::is_sorted(visited.begin(), visited.end(), [](C const* a, C const* b) {
      return a->size < b->size || (a->size == b->size && a->address < b->address);
    })) << "step " << step;
  }, 3000, false, false, least);
  EXPECT_GT(steps_in_bitmap, 300);  // the bitmap really served a good part of the run
}

// Bins from 16 B with a step of 16 (drive_randomly's sizes are multiples of 16): bin 0 holds
// one size, bin 1 two, bin 3 eight, bin 6 64 (bin 7, with 128, has no bitmaps). Each
// bin's chunks move to their bitmaps at 4 of them.
struct bitmap_bins : bins_index {
  struct params : bins_index_params {
    params() : bins_index_params{16, 21, 4} {}
  };
};

TEST(BinsIndex, EachBinInItsAddressBitmapsMatchesTheRuleOnRandomSets)
{
  for (unsigned b : {0u, 1u, 3u, 6u})
    expect_size_address_order_across_the_address_bitmap<bitmap_bins>([b](auto const& ix) { return ix.in_address_bitmaps(b); });
}

TEST(BinsIndex, ABinOfSeveralSizesServesBestFitAndSuccessorFromItsBitmaps)
{
  using spec = bins_index;
  index_fixture<spec> f(bins_index_params{256, 21, 4});  // bin 2: 1024, 1280, 1536 and 1792
  auto* a = f.make(0x9000, 1536);
  auto* b = f.make(0x1000, 1792);
  auto* c = f.make(0x5000, 1024);
  auto* d = f.make(0x3000, 1536);
  for (auto* x : {a, b, c, d}) f.ix.insert(*x);
  EXPECT_TRUE(f.ix.in_address_bitmaps(2));
  EXPECT_EQ(f.ix.find_best(1025), d);  // 1280 is empty: the next size, lowest address
  EXPECT_EQ(f.ix.find_best(1024), c);
  EXPECT_EQ(f.ix.find_best(1537), b);
  EXPECT_EQ(f.ix.find_best(1793), nullptr);
  EXPECT_EQ(f.ix.successor(*c), d);
  EXPECT_EQ(f.ix.successor(*d), a);
  EXPECT_EQ(f.ix.successor(*a), b);
  EXPECT_EQ(f.ix.successor(*b), nullptr);
  EXPECT_EQ(f.ix.largest(), b);
  EXPECT_EQ(f.ix.check(), "");

  b->size = 1280;  // shrinks within the bin: out of one bitmap, into another
  f.ix.exchange(*b, 1792, *b);
  EXPECT_EQ(f.ix.find_best(1025), b);
  EXPECT_EQ(f.ix.largest(), d);
  EXPECT_EQ(f.ix.check(), "");
  auto* e = f.make(0x20000, 2048);  // bin 3: the successor crosses to the next bin
  f.ix.insert(*e);
  EXPECT_EQ(f.ix.successor(*a), e);
  EXPECT_EQ(f.ix.find_best(1537), e);
  EXPECT_EQ(f.ix.check(), "");

  auto* odd = f.make(0x40000, 1152);  // between two sizes (a finer granule): back to the tree
  f.ix.insert(*odd);
  EXPECT_FALSE(f.ix.in_address_bitmaps(2));
  EXPECT_EQ(f.ix.find_best(1025), odd);
  EXPECT_EQ(f.ix.successor(*odd), b);
  EXPECT_EQ(f.ix.check(), "");
}

TEST(BinsIndex, FirstBinKeepsItsAddressBitmapBesideLargerChunksAndLeavesItForASmallerOneOrWhenItShrinks)
{
  using spec = bins_index;
  index_fixture<spec> f(bins_index_params{256, 21, 4});
  std::vector<chunk_of<spec>*> unit;
  for (std::uintptr_t a : {0x9000u, 0x1100u, 0x5000u, 0x3000u}) unit.push_back(f.make(a, 256));
  for (auto* c : unit) f.ix.insert(*c);
  EXPECT_TRUE(f.ix.in_address_bitmaps(0));
  EXPECT_EQ(f.ix.find_best(256), unit[1]);  // the lowest address
  EXPECT_EQ(f.ix.find_best(1), unit[1]);
  EXPECT_EQ(f.ix.find_best(257), nullptr);  // nothing larger
  EXPECT_EQ(f.ix.successor(*unit[1]), unit[3]);
  EXPECT_EQ(f.ix.successor(*unit[0]), nullptr);
  EXPECT_EQ(f.ix.largest(), unit[1]);
  EXPECT_EQ(f.ix.check(), "");

  auto* wide = f.make(0x20000, 384);  // also bin 0, larger: it goes to bin 0's tree, after the bitmap
  f.ix.insert(*wide);
  EXPECT_TRUE(f.ix.in_address_bitmaps(0));
  EXPECT_EQ(f.ix.find_best(257), wide);
  EXPECT_EQ(f.ix.find_best(256), unit[1]);
  EXPECT_EQ(f.ix.successor(*unit[0]), wide);
  EXPECT_EQ(f.ix.largest(), wide);
  EXPECT_EQ(f.ix.check(), "");

  auto* narrow = f.make(0x40, 128);  // smaller than the bitmap's chunks: they go back to the tree
  f.ix.insert(*narrow);
  EXPECT_FALSE(f.ix.in_address_bitmaps(0));
  EXPECT_EQ(f.ix.find_best(1), narrow);
  EXPECT_EQ(f.ix.find_best(129), unit[1]);
  EXPECT_EQ(f.ix.successor(*narrow), unit[1]);
  EXPECT_EQ(f.ix.successor(*unit[0]), wide);
  EXPECT_EQ(f.ix.check(), "");
  auto* fifth = f.make(0x800, 256);  // five unit chunks, but one smaller before them: they stay
  f.ix.insert(*fifth);
  EXPECT_FALSE(f.ix.in_address_bitmaps(0));
  EXPECT_EQ(f.ix.find_best(1), narrow);
  EXPECT_EQ(f.ix.check(), "");
  f.ix.erase(*fifth);

  // The move narrow stopped (bin 0 held 6) is not tried again before the bin holds 12.
  f.ix.erase(*narrow);
  f.ix.insert(*fifth);
  EXPECT_FALSE(f.ix.in_address_bitmaps(0));
  std::vector<chunk_of<spec>*> more;
  for (std::uintptr_t a = 0x50000; a < 0x50000 + 6 * 0x1000; a += 0x1000) {
    EXPECT_FALSE(f.ix.in_address_bitmaps(0));
    more.push_back(f.make(a, 256));
    f.ix.insert(*more.back());
  }
  EXPECT_TRUE(f.ix.in_address_bitmaps(0));
  EXPECT_EQ(f.ix.find_best(256), fifth);
  for (auto* c : more) f.ix.erase(*c);
  EXPECT_TRUE(f.ix.in_address_bitmaps(0));  // 5 left, not under a quarter of 4
  auto* big = f.make(0x40000, 4096);  // bin 4
  f.ix.exchange(*unit[2], 256, *big);  // a chunk leaves the bitmap for another bin in one step
  EXPECT_EQ(f.ix.find_best(385), big);
  EXPECT_EQ(f.ix.successor(*unit[0]), wide);
  EXPECT_EQ(f.ix.successor(*wide), big);
  EXPECT_EQ(f.ix.check(), "");
  for (auto* c : {fifth, unit[0], unit[1], unit[3]}) f.ix.erase(*c);  // under a quarter of 4: back to the tree
  EXPECT_FALSE(f.ix.in_address_bitmaps(0));
  EXPECT_EQ(f.ix.size(), 2u);
  EXPECT_EQ(f.ix.check(), "");
}

// The tree's 16-byte chunks (the classic presets' smallest) move to the bitmap at 4.
struct bitmap_tree : tree_index {
  struct params : tree_index_params {
    params() : tree_index_params{16, 4} {}
  };
};
// A least size that is not a power of two: the bitmap's unit is 32 B.
struct odd_bitmap_tree : tree_index {
  struct params : tree_index_params {
    params() : tree_index_params{48, 4} {}
  };
};

TEST(TreeIndex, LeastSizeInItsAddressBitmapMatchesTheRuleOnRandomSets)
{
  auto const in_bitmap = [](auto const& ix) { return ix.least_size_in_bitmap(); };
  expect_size_address_order_across_the_address_bitmap<bitmap_tree>(in_bitmap);
  expect_size_address_order_across_the_address_bitmap<odd_bitmap_tree>(in_bitmap, 48);
}

// A front of the least size in its bitmap (from two chunks), then exchanges across it: a
// chunk that takes a larger one's place but has the least size goes to the bitmap, one
// that grows out of it to the rest. `then` goes on from there.
template <class Spec, class Then>
void expect_exchanges_never_put_a_least_size_chunk_beside_the_bitmap(typename Spec::params p, Then then)
{
  index_fixture<Spec> f(p);
  auto* a = f.make(0x1000, 16);
  auto* b = f.make(0x2000, 16);
  auto* c = f.make(0x3000, 32);
  for (auto* x : {a, b, c}) f.ix.insert(*x);
  EXPECT_TRUE(f.ix.least_size_in_bitmap());
  auto* shrunk = f.make(0x3000, 16);  // c's place, but the least size: into the bitmap
  f.ix.exchange(*c, 32, *shrunk);
  EXPECT_EQ(f.ix.check(), "");
  EXPECT_EQ(f.ix.successor(*b), shrunk);
  EXPECT_EQ(f.ix.largest(), a);  // one size left: the lowest address
  b->size = 48;                  // grows out of the bitmap
  f.ix.exchange(*b, 16, *b);
  EXPECT_EQ(f.ix.check(), "");
  EXPECT_EQ(f.ix.find_best(17), b);
  EXPECT_EQ(f.ix.find_best(16), a);
  EXPECT_EQ(f.ix.successor(*shrunk), b);  // the bitmap's last, then the rest's first
  EXPECT_EQ(f.ix.size(), 3u);
  then(f, a, shrunk);
}

TEST(TreeIndex, ExchangesInPlaceNeverPutALeastSizeChunkInTheTreeBesideTheBitmap)
{
  expect_exchanges_never_put_a_least_size_chunk_beside_the_bitmap<tree_index>(tree_index_params{16, 2},
                                                                               [](auto&, auto*, auto*) {});
}

TEST(FineBinsIndex, BestWorstAndSuccessorMatchTheRuleOnRandomSets)
{
  expect_size_address_order_on_random_sets<fine_bins_index>();
}

// The fine bins' 16-byte chunks move to the front's bitmap at 4; a least size of 48 B, not
// a power of two, has a bitmap of 32-byte units, and its chunks leave bin [48, 56).
struct bitmap_fine_bins : fine_bins_index {
  struct params : fine_bins_index_params {
    params() { least_size_bitmap_from = 4; }
  };
};
struct odd_bitmap_fine_bins : fine_bins_index {
  struct params : fine_bins_index_params {
    params()
    {
      least_size = 48;
      least_size_bitmap_from = 4;
    }
  };
};

TEST(FineBinsIndex, LeastSizeInItsAddressBitmapMatchesTheRuleOnRandomSets)
{
  auto const in_bitmap = [](auto const& ix) { return ix.least_size_in_bitmap(); };
  expect_size_address_order_across_the_address_bitmap<bitmap_fine_bins>(in_bitmap);
  expect_size_address_order_across_the_address_bitmap<odd_bitmap_fine_bins>(in_bitmap, 48);
}

// By default the front waits for 1,024 chunks of the least size, where tree_index's waits
// for 64: below that they stay in their own bin's tree, since the bitmap would map a page
// of pointers per 8 KiB of their span (fine_bins_index.hpp, "Why from 1024"). It gives them
// back under a quarter of that.
TEST(FineBinsIndex, TheFrontWaitsForAThousandChunksOfTheLeastSize)
{
  index_fixture<fine_bins_index> f;
  std::vector<chunk_of<fine_bins_index>*> sixteens;
  f.ix.insert(*f.make(0x10, 32));  // lower in address, but after them in the (size, address) order
  for (std::uintptr_t i = 0; i < 1024; ++i) {
    EXPECT_FALSE(f.ix.least_size_in_bitmap()) << "with " << i << " chunks of 16 bytes";
    sixteens.push_back(f.make(0x10000 + 0x4000 * (1023 - i), 16));  // in falling address order
    f.ix.insert(*sixteens.back());
  }
  EXPECT_TRUE(f.ix.least_size_in_bitmap());
  EXPECT_EQ(f.ix.check(), "");
  EXPECT_EQ(f.ix.find_best(1), sixteens.back());  // the lowest address
  EXPECT_EQ(f.ix.find_best(17)->size, 32u);
  for (std::size_t left = 1024; left > 256; --left) f.ix.erase(*sixteens[left - 1]);  // the lowest first
  EXPECT_TRUE(f.ix.least_size_in_bitmap());  // 256 left: not under a quarter
  EXPECT_EQ(f.ix.find_best(1), sixteens[255]);
  f.ix.erase(*sixteens[255]);
  EXPECT_FALSE(f.ix.least_size_in_bitmap());
  EXPECT_EQ(f.ix.check(), "");
  EXPECT_EQ(f.ix.find_best(1), sixteens[254]);
  EXPECT_EQ(f.ix.size(), 256u);
}

TEST(FineBinsIndex, ExchangesNeverPutALeastSizeChunkInTheBinsBesideTheBitmap)
{
  fine_bins_index_params p;
  p.least_size_bitmap_from = 2;
  expect_exchanges_never_put_a_least_size_chunk_beside_the_bitmap<fine_bins_index>(p, [](auto& f, auto* a, auto* shrunk) {
    f.ix.erase(*a);
    EXPECT_TRUE(f.ix.least_size_in_bitmap());  // one left, not under a quarter of 2
    auto* tiny = f.make(0x6000, 8);            // smaller than the least size: the bitmap's chunk goes back to the bins
    f.ix.insert(*tiny);
    EXPECT_FALSE(f.ix.least_size_in_bitmap());
    EXPECT_EQ(f.ix.check(), "");
    EXPECT_EQ(f.ix.find_best(1), tiny);
    EXPECT_EQ(f.ix.successor(*tiny), shrunk);
    EXPECT_EQ(f.ix.size(), 3u);
  });
}

// A bin of fine_bins_index spans a quarter of a doubling: [256, 320) holds 256, 272 and
// 304 here. A request its least chunk serves, or one its greatest does not, is answered
// from the tree's header: a step for the bin's search and one for the bin's answer. A
// request between them descends, and counts its comparisons too.
TEST(FineBinsIndex, ABinAnswersFromItsTreesEndsWithoutADescent)
{
  index_fixture<fine_bins_index> f;
  auto* least = f.make(0x1000, 256);
  auto* mid = f.make(0x2000, 272);
  auto* greatest = f.make(0x3000, 304);
  auto* next_bin = f.make(0x4000, 320);
  for (auto* x : {greatest, next_bin, mid, least}) f.ix.insert(*x);
  auto steps_of = [&](std::size_t n, auto* expected) {
    std::uint64_t const before = f.ix.steps();
    EXPECT_EQ(f.ix.find_best(n), expected) << n;
    return f.ix.steps() - before;
  };
  EXPECT_EQ(steps_of(241, least), 1u);     // bin [224, 256) is empty: the next bin's first
  EXPECT_EQ(steps_of(256, least), 2u);     // the least fits
  EXPECT_EQ(steps_of(305, next_bin), 3u);  // the greatest does not: the next bin's first
  EXPECT_GT(steps_of(257, mid), 2u);       // between: a descent
  EXPECT_GT(steps_of(290, greatest), 2u);
}

// The lowest chunk answers every first-fit request it holds in one step, with no descent;
// one it does not hold is sought from the root. Erasing it hands the place to the next chunk
// up. (The random-set driver below fails where that step goes to the wrong chunk.)
TEST(AddressOrderedTreeIndex, TheLowestChunkServesWhatItHoldsWithoutADescent)
{
  index_fixture<address_ordered_tree_index> f;
  std::vector<chunk_of<address_ordered_tree_index>*> chunks;
  for (std::uintptr_t i = 0; i < 64; ++i) chunks.push_back(f.make(0x10000 + i * 0x1000, i % 2 == 0 ? 64 : 512));
  for (std::size_t i = 0; i < chunks.size(); ++i) f.ix.insert(*chunks[(i * 37) % chunks.size()]);  // in no order
  auto steps_of = [&](std::size_t n, auto* expected) {
    std::uint64_t const before = f.ix.steps();
    EXPECT_EQ(f.ix.find_first(n), expected) << n;
    return f.ix.steps() - before;
  };
  EXPECT_EQ(steps_of(64, chunks[0]), 1u);
  EXPECT_GT(steps_of(65, chunks[1]), 1u);  // the lowest is too small: a descent
  for (std::size_t gone = 0; gone < 8; ++gone) {
    f.ix.erase(*chunks[gone]);
    ASSERT_EQ(f.ix.check(), "") << "after erasing chunk " << gone;
    EXPECT_EQ(steps_of(64, chunks[gone + 1]), 1u) << "after erasing chunk " << gone;
  }
  f.ix.insert(*chunks[3]);  // below the lowest again
  EXPECT_EQ(steps_of(1, chunks[3]), 1u);
  EXPECT_EQ(f.ix.check(), "");
}

TEST(AddressOrderedTreeIndex, FirstNextAndWorstMatchTheRuleOnRandomSets)
{
  std::uintptr_t rover = 0;
  drive_randomly<address_ordered_tree_index>([&](auto& f, std::size_t n, int step) {
    ASSERT_EQ(f.ix.find_first(n), model_first(f.members, n)) << "step " << step;
    ASSERT_EQ(worst_fit::select(f.ix, n), model_worst(f.members, n)) << "step " << step;
    // Next fit: lowest address at or above the rover, else wrap to the lowest.
    using C = std::remove_pointer_t<std::remove_cvref_t<decltype(f.members.front())>>;
    C* expected = nullptr;
    for (C* c : f.members)
      if (c->address >= rover && c->size >= n) {
        expected = c;
        break;
      }
    if (expected == nullptr) expected = model_first(f.members, n);
    C* got = f.ix.find_next(n);
    ASSERT_EQ(got, expected) << "step " << step;
    if (got != nullptr) rover = got->address;
  });
}

TEST(SegregatedIndex, BestWorstAndGoodMatchTheRuleOnRandomSets)
{
  drive_randomly<segregated_index>([](auto& f, std::size_t n, int step) {
    ASSERT_EQ(f.ix.find_best(n), model_best(by_address(f.members), n)) << "step " << step << " n " << n;
    ASSERT_EQ(worst_fit::select(f.ix, n), model_worst(by_address(f.members), n)) << "step " << step;
    // Good fit: some chunk whose whole class fits n, from the lowest such class.
    auto* got = f.ix.find_good(n);
    std::size_t const bound = f.ix.good_fit_size(n);
    using C = std::remove_pointer_t<decltype(got)>;
    C* smallest_class_member = nullptr;
    for (C* c : f.members)
      if (c->size >= bound && (smallest_class_member == nullptr ||
                               f.ix.list_of(c->size) < f.ix.list_of(smallest_class_member->size)))
        smallest_class_member = c;
    if (smallest_class_member == nullptr) {
      ASSERT_EQ(got, nullptr) << "step " << step;
    } else {
      ASSERT_NE(got, nullptr) << "step " << step;
      ASSERT_GE(got->size, n);
      ASSERT_EQ(f.ix.list_of(got->size), f.ix.list_of(smallest_class_member->size)) << "step " << step;
    }
  });
}

TEST(ListIndex, AddressOrderedScansMatchTheRule)
{
  drive_randomly<address_ordered_list_index>([](auto& f, std::size_t n, int step) {
    ASSERT_EQ(f.ix.find_first(n), model_first(f.members, n)) << "step " << step;
    ASSERT_EQ(f.ix.find_best(n), model_best(f.members, n)) << "step " << step;
    ASSERT_EQ(worst_fit::select(f.ix, n), model_worst(f.members, n)) << "step " << step;
  });
}

TEST(ListIndex, LifoAndFifoScanInListOrder)
{
  drive_randomly<lifo_list_index>(
      [](auto& f, std::size_t n, int step) {
        ASSERT_EQ(f.ix.find_first(n), model_first(f.members, n)) << "step " << step;
        ASSERT_EQ(f.ix.find_best(n), model_best(f.members, n)) << "step " << step;
      },
      2000, /*front_insert=*/true);
  drive_randomly<fifo_list_index>(
      [](auto& f, std::size_t n, int step) {
        ASSERT_EQ(f.ix.find_first(n), model_first(f.members, n)) << "step " << step;
        ASSERT_EQ(worst_fit::select(f.ix, n), model_worst(f.members, n)) << "step " << step;
      },
      2000, false, /*back_insert=*/true);
}

TEST(BinsIndex, BinOfFollowsTensorFlowsFormula)
{
  index_fixture<bins_index> f;
  // bin(x) = min(20, floor(log2(max(x, 256) / 256)))
  EXPECT_EQ(f.ix.bin_of(1), 0u);
  EXPECT_EQ(f.ix.bin_of(256), 0u);
  EXPECT_EQ(f.ix.bin_of(511), 0u);
  EXPECT_EQ(f.ix.bin_of(512), 1u);
  EXPECT_EQ(f.ix.bin_of(1 << 20), 12u);
  EXPECT_EQ(f.ix.bin_of((std::size_t{256} << 20) - 1), 19u);
  EXPECT_EQ(f.ix.bin_of(std::size_t{256} << 20), 20u);
  EXPECT_EQ(f.ix.bin_of(std::size_t{1} << 40), 20u);
  EXPECT_EQ(f.ix.bin_lower_bound(3), 2048u);
}

TEST(BinsIndex, BestFitCrossesToTheNextNonEmptyBinAndPrefersLowAddresses)
{
  index_fixture<bins_index> f;
  auto* a = f.make(0x3000, 1024);  // bin 2
  auto* b = f.make(0x1000, 1024);  // same size, lower address
  auto* c = f.make(0x9000, 600);   // bin 1, too small for 700
  auto* d = f.make(0x5000, 4096);  // bin 4
  for (auto* x : {a, b, c, d}) f.ix.insert(*x);
  EXPECT_EQ(f.ix.find_best(700), b);   // bin 1 has nothing >= 700; bin 2's smallest, lowest address
  EXPECT_EQ(f.ix.find_best(600), c);
  EXPECT_EQ(f.ix.find_best(2000), d);  // skips empty bin 3
  EXPECT_EQ(f.ix.find_best(5000), nullptr);
  f.ix.erase(*b);
  EXPECT_EQ(f.ix.find_best(700), a);
}

TEST(BinsIndex, FinerBinsCutEachDoublingIntoEqualSteps)
{
  using quarters = basic_bins_index<2, 41 * 4>;  // as pytorch_caching's pools: four bins per doubling from 512 B
  index_fixture<quarters> f(bins_index_params{512, 41 * 4});
  EXPECT_EQ(f.ix.bin_of(1), 0u);
  EXPECT_EQ(f.ix.bin_of(639), 0u);  // [512, 640) and everything below 512
  EXPECT_EQ(f.ix.bin_of(640), 1u);
  EXPECT_EQ(f.ix.bin_of(767), 1u);
  EXPECT_EQ(f.ix.bin_of(768), 2u);
  EXPECT_EQ(f.ix.bin_of(896), 3u);
  EXPECT_EQ(f.ix.bin_of(1023), 3u);
  EXPECT_EQ(f.ix.bin_of(1024), 4u);
  EXPECT_EQ(f.ix.bin_of(1280), 5u);
  EXPECT_EQ(f.ix.bin_of((std::size_t{20} << 20) + 1), 4u * 15 + 1);  // 20 MiB: 16 MiB + 1/4 of 16 MiB
  EXPECT_EQ(f.ix.bin_of(~std::size_t{0}), 41u * 4 - 1);
  for (unsigned b : {0u, 1u, 2u, 3u, 4u, 5u, 61u})
    EXPECT_EQ(f.ix.bin_of(f.ix.bin_lower_bound(b)), b) << "bin " << b;
  EXPECT_EQ(f.ix.bin_lower_bound(5), 1280u);
  EXPECT_EQ(f.ix.bin_lower_bound(61), std::size_t{20} << 20);

  using quarter_bins = quarters::index<chunk_of<quarters>>;
  EXPECT_THROW(quarter_bins(bins_index_params{2, 8}), std::invalid_argument);             // bins under a byte
  EXPECT_THROW(quarter_bins(bins_index_params{512, 41 * 4 + 64}), std::invalid_argument);  // past 3 bitmap words
  EXPECT_THROW(bins_index::index<chunk_of<bins_index>>(bins_index_params{256, 65}), std::invalid_argument);
}

// Every bin's lower bound is a size: with a large bin_base, the bins run out of sizes before
// bin_count does. Found by fuzz_policy_params (fine_bins from 2^30: a shift of 64).
TEST(BinsIndex, RefusesBinsThatWouldStartAbove2To64)
{
  using quarters = basic_bins_index<2, 160>;
  using quarter_bins = quarters::index<chunk_of<quarters>>;
  std::size_t const base = std::size_t{1} << 30;
  EXPECT_THROW(quarter_bins(bins_index_params{base, 34 * 4 + 1}), std::invalid_argument);
  index_fixture<quarters> f(bins_index_params{base, 34 * 4});  // the last bin starts at 1.75 x 2^63
  EXPECT_EQ(f.ix.bin_lower_bound(34 * 4 - 1), std::size_t{7} << 61);
  EXPECT_EQ(f.ix.bin_of(~std::size_t{0}), 34u * 4 - 1);
  EXPECT_EQ(f.ix.bin_of(std::size_t{7} << 61), 34u * 4 - 1);
  EXPECT_EQ(f.ix.bin_of((std::size_t{7} << 61) - 1), 34u * 4 - 2);

  using doublings = basic_bins_index<0, 64>;
  using doubling_bins = doublings::index<chunk_of<doublings>>;
  EXPECT_THROW(doubling_bins(bins_index_params{base, 35}), std::invalid_argument);
  index_fixture<doublings> g(bins_index_params{base, 34});
  EXPECT_EQ(g.ix.bin_lower_bound(33), std::size_t{1} << 63);
  EXPECT_EQ(g.ix.bin_of(~std::size_t{0}), 33u);
}

TEST(BinBitmap, FindsTheNextBinAcrossWordsAndClearsTheSummary)
{
  detail::bin_bitmap<4> m;
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.first_from(0), m.none);
  m.set(3);
  m.set(130);
  m.set(255);
  EXPECT_EQ(m.first_from(0), 3u);
  EXPECT_EQ(m.first_from(3), 3u);
  EXPECT_EQ(m.first_from(4), 130u);  // word 1 is empty: the summary skips it
  EXPECT_EQ(m.first_from(131), 255u);
  EXPECT_EQ(m.first_after(3), 130u);
  EXPECT_EQ(m.first_after(63), 130u);
  EXPECT_EQ(m.first_after(255), m.none);
  EXPECT_EQ(m.highest(), 255u);
  m.reset(255);
  EXPECT_EQ(m.highest(), 130u);
  EXPECT_EQ(m.first_from(131), m.none);
  m.reset(130);
  m.reset(3);
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.check(), "");

  detail::bin_bitmap<1> one;
  one.set(63);
  EXPECT_EQ(one.first_from(63), 63u);
  EXPECT_EQ(one.first_after(62), 63u);
  EXPECT_EQ(one.first_after(63), one.none);
  EXPECT_EQ(one.highest(), 63u);
}

// Bits in every level and in two windows: the search climbs over empty words and empty
// level-1 and level-2 words, and crosses windows; chunks need not be aligned to the unit.
TEST(UnitAddressSet, OrdersByAddressAcrossLevelsAndWindows)
{
  using C = chunk_of<bins_index>;
  std::deque<C> chunks;
  auto make = [&](std::uintptr_t a) -> C& {
    C& c = chunks.emplace_back();
    c.address = a;
    c.size = 256;
    return c;
  };
  std::uintptr_t const window = std::uintptr_t{256} << 24;  // 4 GiB of 256-byte units
  std::uintptr_t const base = 5 * window;
  detail::unit_address_set<C> s(256);
  C& far = make(base + window + 0x100);           // the next window
  // Off bit 0 of every level's word, so that a search must read each level: unit 270,535 is
  // bit 1 of level 3, bit 2 of level-2 word 1, bit 3 of level-1 word 66, bit 7 of word 4227.
  C& level3 = make(base + 256 * (64u * 64 * 64 + 2 * 64 * 64 + 3 * 64 + 7));
  C& level2 = make(base + 256 * (64u * 64 + 3 * 64 + 5));  // unit 4293: level-1 word 1, bit 3
  C& odd = make(base + 256 * 70 + 128);            // unit 70, not aligned to the unit
  C& low = make(base + 256 * 3);
  for (C* c : {&far, &level3, &level2, &odd, &low}) ASSERT_TRUE(s.try_insert(*c));
  EXPECT_EQ(s.size(), 5u);
  EXPECT_EQ(s.first(), &low);
  EXPECT_EQ(s.next(low), &odd);
  EXPECT_EQ(s.next(odd), &level2);
  EXPECT_EQ(s.next(level2), &level3);
  EXPECT_EQ(s.next(level3), &far);
  EXPECT_EQ(s.next(far), nullptr);
  EXPECT_TRUE(s.contains(odd));
  C& stranger = make(base + 256 * 71);
  EXPECT_FALSE(s.contains(stranger));
  EXPECT_EQ(s.check(), "");
  std::vector<C const*> order;
  s.for_each([&](C const& c) { order.push_back(&c); });
  EXPECT_EQ(order, (std::vector<C const*>{&low, &odd, &level2, &level3, &far}));

  s.erase(low);
  s.erase(odd);
  EXPECT_EQ(s.first(), &level2);  // level 0's and level 1's first words are empty again
  s.erase(level2);
  s.erase(level3);
  EXPECT_EQ(s.first(), &far);  // the first window is empty: the search moves on
  s.erase(far);
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.first(), nullptr);
  EXPECT_EQ(s.check(), "");

  far.size = 512;  // a chunk of another size is reported
  ASSERT_TRUE(s.try_insert(far));
  EXPECT_NE(s.check(), "");
}

// The process's resident bytes (/proc/self/statm).
std::size_t resident_bytes()
{
  std::size_t pages = 0, resident = 0;
  std::ifstream("/proc/self/statm") >> pages >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// Sixteen windows of 16-byte units, a chunk in each: their chunk pointers span 2 GiB, of
// which only the pages the chunks touch are mapped. (When the windows came from calloc,
// glibc zero-filled each 128 MiB under MALLOC_PERTURB_, which meson test sets: a bins test
// spent 58 s in the kernel.)
TEST(UnitAddressSet, AWindowCostsThePagesItsChunksTouchNotItsSpan)
{
  using C = chunk_of<bins_index>;
  std::uintptr_t const window = std::uintptr_t{16} << 24;  // 256 MiB of 16-byte units
  std::deque<C> chunks(16);
  detail::unit_address_set<C> s(16);
  std::size_t const before = resident_bytes();
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    chunks[i].address = (std::uintptr_t{3} << 40) + i * window + 16 * 4096 * i;
    chunks[i].size = 16;
    ASSERT_TRUE(s.try_insert(chunks[i]));
  }
  std::size_t const after = resident_bytes();
  std::size_t const grown = after > before ? after - before : 0;  // the heap may have been trimmed meanwhile
  EXPECT_LT(grown, std::size_t{32} << 20) << "resident bytes grew by " << grown;
  EXPECT_EQ(s.size(), 16u);
  EXPECT_EQ(s.first(), &chunks[0]);
  EXPECT_EQ(s.check(), "");
}

// Words filled and emptied again, in two windows: the summary bits above a word are set
// when it gains its first chunk and cleared when it loses its last, and a search from any
// chunk crosses empty and full words. Against an address-ordered model every 25 steps:
// the first chunk, the successors, membership, and check().
TEST(UnitAddressSet, FilledAndEmptiedWordsMatchAnAddressOrderedModel)
{
  using C = chunk_of<bins_index>;
  std::uintptr_t const base = std::uintptr_t{7} << 36;
  std::uintptr_t const window = std::uintptr_t{16} << 24;  // 256 MiB of 16-byte units
  // 3 words of 64 units in one window, and one word in the next
  std::vector<std::uintptr_t> units;
  for (std::uintptr_t u = 0; u < 3 * 64; ++u) units.push_back(base + 16 * u);
  for (std::uintptr_t u = 0; u < 64; ++u) units.push_back(base + window + 16 * u);
  std::deque<C> chunks(units.size());
  for (std::size_t i = 0; i < units.size(); ++i) {
    chunks[i].address = units[i];
    chunks[i].size = 16;
  }
  detail::unit_address_set<C> s(16);
  std::vector<bool> in(units.size(), false);
  gen::rng r{7};
  auto expect_model = [&](int step) {
    C const* expected_first = nullptr;
    C const* prev = nullptr;
    std::size_t count = 0;
    for (std::size_t i = 0; i < units.size(); ++i) {
      EXPECT_EQ(s.contains(chunks[i]), in[i]) << "step " << step << " unit " << i;
      if (!in[i]) continue;
      ++count;
      if (prev == nullptr) {
        expected_first = &chunks[i];
      } else {
        EXPECT_EQ(s.next(*prev), &chunks[i]) << "step " << step << " unit " << i;
      }
      prev = &chunks[i];
    }
    if (prev != nullptr) {
      EXPECT_EQ(s.next(*prev), nullptr);
    }
    EXPECT_EQ(s.first(), expected_first) << "step " << step;
    EXPECT_EQ(s.size(), count);
    EXPECT_EQ(s.check(), "") << "step " << step;
  };
  for (int step = 0; step < 4000; ++step) {
    // Phases that favour inserting, then erasing, so that words go full and empty again.
    bool const filling = (step / 500) % 2 == 0;
    std::size_t const i = r.uniform(0, units.size() - 1);
    if (!in[i] && (filling ? r.chance(90) : r.chance(10))) {
      ASSERT_TRUE(s.try_insert(chunks[i]));
      in[i] = true;
    } else if (in[i] && (filling ? r.chance(10) : r.chance(90))) {
      s.erase(chunks[i]);
      in[i] = false;
    }
    if (step % 25 == 0 || step % 500 == 499) expect_model(step);
    if (::testing::Test::HasFailure()) return;
  }
  // Every word full, then every word empty.
  for (std::size_t i = 0; i < units.size(); ++i)
    if (!in[i]) {
      ASSERT_TRUE(s.try_insert(chunks[i]));
      in[i] = true;
    }
  expect_model(-1);
  for (std::size_t i = 0; i < units.size(); ++i) {
    s.erase(chunks[i]);
    in[i] = false;
  }
  expect_model(-2);
  EXPECT_TRUE(s.empty());
}

// The TLSF mapping's floor(log2 n) is one bsr (engine/detail/bits.hpp): it must agree with
// bit_width's at every power of two and on both sides of it.
TEST(SegregatedIndex, Log2FloorOfANonZeroSizeIsBitWidthsAnswer)
{
  for (unsigned k = 0; k < 64; ++k) {
    std::size_t const p = std::size_t{1} << k;
    for (std::size_t const n : {p - 1, p, p + 1, p | (p >> 1)}) {
      if (n != 0) {
        EXPECT_EQ(detail::log2_floor_nonzero(n), detail::log2_floor(n)) << n;
      }
    }
  }
  EXPECT_EQ(detail::log2_floor_nonzero(~std::size_t{0}), 63u);
  static_assert(detail::log2_floor_nonzero(1) == 0 && detail::log2_floor_nonzero(4096) == 12);
}

TEST(SegregatedIndex, ClassesFollowTlsfsTwoLevelMapping)
{
  index_fixture<segregated_index> f;  // SLI 5, linear below 256 in steps of 8
  EXPECT_EQ(f.ix.list_of(0), (std::pair<unsigned, unsigned>{0, 0}));
  EXPECT_EQ(f.ix.list_of(7), (std::pair<unsigned, unsigned>{0, 0}));
  EXPECT_EQ(f.ix.list_of(8), (std::pair<unsigned, unsigned>{0, 1}));
  EXPECT_EQ(f.ix.list_of(128), (std::pair<unsigned, unsigned>{0, 16}));
  EXPECT_EQ(f.ix.list_of(255), (std::pair<unsigned, unsigned>{0, 31}));
  EXPECT_EQ(f.ix.list_of(256), (std::pair<unsigned, unsigned>{1, 0}));
  EXPECT_EQ(f.ix.list_of(264), (std::pair<unsigned, unsigned>{1, 1}));  // 256 + 8: 32 lists of 8 bytes
  EXPECT_EQ(f.ix.list_of(1024 + 3 * 32), (std::pair<unsigned, unsigned>{3, 3}));
  // Good fit rounds up to the next boundary: waste below 1/32 of the request.
  EXPECT_EQ(f.ix.good_fit_size(1025), 1056u);
  EXPECT_EQ(f.ix.good_fit_size(1024), 1024u);
  auto* exact = f.make(0x1000, 1040);  // same list as 1025 ([1024, 1056)) but the list may hold misfits
  auto* next = f.make(0x2000, 1056);
  f.ix.insert(*exact);
  f.ix.insert(*next);
  EXPECT_EQ(f.ix.find_good(1025), next);  // O(1): never searches inside a list
  EXPECT_EQ(f.ix.find_best(1025), exact);  // exact best fit searches the list
}

// find_good maps a request straight to the list of its rounded size; the rounding must land
// exactly on a class boundary: a chunk of good_fit_size(n) is found and one byte less is
// not. Every size to 4 KiB, every power of two's neighbours, every parameter choice, and
// requests whose rounding overflows.
TEST(SegregatedIndex, GoodFitFindsExactlyTheChunksOfItsRoundedSize)
{
  for (unsigned sli : {1u, 3u, 5u, 6u}) {
    for (std::size_t linear : {std::size_t{64}, std::size_t{256}}) {
      index_fixture<segregated_index> f(segregated_index_params{sli, linear});
      std::vector<std::size_t> requests;
      for (std::size_t n = 1; n <= 4096; ++n) requests.push_back(n);
      for (unsigned k = 12; k < 64; ++k)
        for (std::size_t const d : {std::size_t{0}, std::size_t{1}, std::size_t{2}}) {
          requests.push_back((std::size_t{1} << k) - d);
          requests.push_back((std::size_t{1} << k) + 1 + d);
          requests.push_back((std::size_t{1} << k) + (std::size_t{1} << (k - sli)) - d);
        }
      requests.push_back(std::numeric_limits<std::size_t>::max());
      auto* c = f.make(0x1000, 0);
      for (std::size_t const n : requests) {
        std::size_t const rounded = f.ix.good_fit_size(n);
        if (rounded < n) {  // overflow: no chunk can be good enough
          c->size = std::numeric_limits<std::size_t>::max();
          f.ix.insert(*c);
          ASSERT_EQ(f.ix.find_good(n), nullptr) << "sli " << sli << " n " << n;
          f.ix.erase(*c);
          continue;
        }
        c->size = rounded;
        f.ix.insert(*c);
        ASSERT_EQ(f.ix.find_good(n), c) << "sli " << sli << " linear " << linear << " n " << n;
        f.ix.erase(*c);
        c->size = rounded - 1;
        if (c->size == 0) continue;
        f.ix.insert(*c);
        ASSERT_EQ(f.ix.find_good(n), nullptr) << "sli " << sli << " linear " << linear << " n " << n;
        f.ix.erase(*c);
      }
    }
  }
}

// TLSF's mapping in the type (tlsf_segregated_index, what the registry builds for tlsf)
// numbers every size as the runtime mapping does with the same params, rounds as it does,
// and refuses any other params rather than use its constants for them.
TEST(SegregatedIndex, FixedMappingNumbersEverySizeAsTheRuntimeOne)
{
  index_fixture<segregated_index> runtime;
  index_fixture<tlsf_segregated_index> fixed;
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 4096; ++n) sizes.push_back(n);
  for (unsigned k = 12; k < 64; ++k)
    for (std::size_t const d : {std::size_t{0}, std::size_t{1}, std::size_t{33}}) {
      sizes.push_back((std::size_t{1} << k) - d);
      sizes.push_back((std::size_t{1} << k) + d);
    }
  sizes.push_back(std::numeric_limits<std::size_t>::max());
  for (std::size_t const n : sizes) {
    ASSERT_EQ(fixed.ix.list_of(n), runtime.ix.list_of(n)) << "n " << n;
    ASSERT_EQ(fixed.ix.good_fit_size(n), runtime.ix.good_fit_size(n)) << "n " << n;
  }
  EXPECT_THROW(index_fixture<tlsf_segregated_index>(segregated_index_params{4, 256}), std::invalid_argument);
  EXPECT_THROW(index_fixture<tlsf_segregated_index>(segregated_index_params{5, 128}), std::invalid_argument);
}

// TLSF's lists are LIFO: good fit takes the chunk that entered its class last, inserted or
// exchanged in, and a chunk leaves from anywhere in its list with the others still linked
// both ways (each erase below unlinks through both neighbours' links).
TEST(SegregatedIndex, GoodFitTakesTheChunkThatEnteredItsClassLast)
{
  index_fixture<tlsf_segregated_index> f;
  auto* a = f.make(0x1000, 1024);  // all four in the list [1024, 1056)
  auto* b = f.make(0x2000, 1040);
  auto* c = f.make(0x3000, 1032);
  auto* d = f.make(0x4000, 1048);
  for (auto* x : {a, b, c, d}) f.ix.insert(*x);
  std::size_t const below_the_class = 1000;  // rounds up to [1008, 1024), empty
  EXPECT_EQ(f.ix.find_good(below_the_class), d);
  f.ix.erase(*c);  // from the middle: d, b, a
  EXPECT_EQ(f.ix.check(), "");
  EXPECT_EQ(f.ix.find_good(below_the_class), d);
  auto* e = f.make(0x5000, 1056);  // the next list
  f.ix.exchange(*d, d->size, *e);
  EXPECT_EQ(f.ix.find_good(below_the_class), b);
  auto* g = f.make(0x6000, 1028);
  f.ix.exchange(*b, b->size, *g);  // b heads its list and g belongs to it: g takes its place
  EXPECT_EQ(f.ix.find_good(below_the_class), g);
  f.ix.insert(*c);
  EXPECT_EQ(f.ix.find_good(below_the_class), c);
  f.ix.erase(*g);  // c, a
  f.ix.erase(*c);
  EXPECT_EQ(f.ix.find_good(below_the_class), a);
  f.ix.erase(*a);
  EXPECT_EQ(f.ix.find_good(below_the_class), e);
  EXPECT_EQ(f.ix.check(), "");
  EXPECT_EQ(f.ix.size(), 1u);
}

// The parent of each chunk, by offset in its region (0: the root).
template <class Chunks>
std::vector<std::uintptr_t> parent_offsets(Chunks const& chunks)
{
  std::vector<std::uintptr_t> out;
  for (auto const* c : chunks) {
    auto const* p = c->free_hook.parent;
    out.push_back(p == nullptr ? 0 : p->address - p->region()->base + 1);
  }
  return out;
}

TEST(AddressOrderedTreeIndex, IdenticalShapeWhereverTheBackendPutTheRegion)
{
  // The same chunks in a region a page higher: a hash of the address would give other
  // priorities and another shape (and other instruction counts: docs/performance.md, "The
  // augmented first fit"); a hash of the offset in the region gives the same.
  index_fixture<address_ordered_tree_index> low, high;
  low.region.base = 0x7f0000000000;
  high.region.base = 0x7f0000001000;
  std::vector<chunk_of<address_ordered_tree_index>*> a, b;
  for (int i = 0; i < 300; ++i) {
    std::uintptr_t const offset = static_cast<std::uintptr_t>(i) * 48;
    a.push_back(low.make(low.region.base + offset, 32));
    b.push_back(high.make(high.region.base + offset, 32));
  }
  for (auto* c : a) low.ix.insert(*c);
  for (auto* c : b) high.ix.insert(*c);
  EXPECT_EQ(parent_offsets(a), parent_offsets(b));
  // A second region of the same offsets is another set of places (its creation order).
  index_fixture<address_ordered_tree_index> second;
  second.region.base = low.region.base;
  second.region.serial = 1;
  std::vector<chunk_of<address_ordered_tree_index>*> c;
  for (int i = 0; i < 300; ++i) c.push_back(second.make(second.region.base + static_cast<std::uintptr_t>(i) * 48, 32));
  for (auto* x : c) second.ix.insert(*x);
  EXPECT_NE(parent_offsets(a), parent_offsets(c));
}

TEST(AddressOrderedTreeIndex, IdenticalShapeForTheSameSetInAnyInsertionOrder)
{
  // Treap priorities come from the chunks' places, so the shape depends only on the set.
  index_fixture<address_ordered_tree_index> f1, f2;
  std::vector<std::uintptr_t> addrs;
  for (int i = 0; i < 200; ++i) addrs.push_back(0x10000 + static_cast<std::uintptr_t>(i) * 64);
  std::vector<chunk_of<address_ordered_tree_index>*> c1, c2;
  for (auto a : addrs) c1.push_back(f1.make(a, 32 + (a % 7) * 16));
  for (auto it = addrs.rbegin(); it != addrs.rend(); ++it) c2.push_back(f2.make(*it, 32 + (*it % 7) * 16));
  for (auto* c : c1) f1.ix.insert(*c);
  for (auto* c : c2) f2.ix.insert(*c);
  EXPECT_EQ(parent_offsets(c1), parent_offsets(std::vector(c2.rbegin(), c2.rend())));
}

}  // namespace
}  // namespace fraglab
