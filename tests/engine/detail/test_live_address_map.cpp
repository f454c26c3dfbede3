// The live-address map against std::unordered_map on random inserts and extractions: every
// lookup, present or absent, must agree after every step. Thousands are live at a time, so
// blocks leave the nursery all the time. Blocks packed 16 bytes apart keep the radix tree;
// blocks 4 KiB apart, one or two to a leaf, outgrow its bound and move to the hash table,
// where their equal low bits form runs of probes and extracting from the middle of a run
// exercises the backward shift. Address 0 is used too: emptiness is not an address.
#include <fraglab/engine/detail/address_hash_table.hpp>
#include <fraglab/engine/detail/address_radix_tree.hpp>
#include <fraglab/engine/detail/live_address_map.hpp>
#include <fraglab/runtime/gen/rng.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fraglab {
namespace {

struct record {
  std::uintptr_t address = 0;
};

// (log2 of the spacing, log2 of the number of addresses): 2^16 addresses 16 bytes apart span
// 1 MiB, within the tree's free first MiB; 2^20 addresses 4 KiB apart span 4 GiB.
class LiveAddressMapSpacing : public ::testing::TestWithParam<std::pair<unsigned, unsigned>> {};

TEST_P(LiveAddressMapSpacing, AgreesWithUnorderedMapInTheRadixTreeAndInTheHashTable)
{
  auto const [spacing_log2, count_log2] = GetParam();
  detail::live_address_map<record> map{16};
  std::unordered_map<std::uintptr_t, record*> reference;
  std::deque<record> records;  // stable addresses
  std::vector<record*> live;
  gen::rng r(7);
  for (int step = 0; step < 60000; ++step) {
    bool const grow_phase = (step / 10000) % 2 == 0;  // sizes rise and fall: tables grow, runs empty
    if (live.empty() || r.chance(grow_phase ? 70 : 30)) {
      std::uintptr_t address = r.uniform(0, (1u << count_log2) - 1) << spacing_log2;
      if (reference.count(address) != 0) continue;
      record& rec = records.emplace_back(record{address});
      map.insert(rec);
      reference[address] = &rec;
      live.push_back(&rec);
    } else {
      std::size_t const i = r.uniform(0, live.size() - 1);
      ASSERT_EQ(map.extract(live[i]->address), live[i]) << "step " << step;
      reference.erase(live[i]->address);
      live[i] = live.back();
      live.pop_back();
    }
    ASSERT_EQ(map.size(), reference.size());
    ASSERT_LE(map.table_size(), map.size());
    if (step % 97 == 0) {
      for (auto const& [address, rec] : reference) ASSERT_EQ(map.find(address), rec) << "step " << step;
      for (int k = 0; k < 50; ++k) {
        std::uintptr_t const probe = r.uniform(0, (1u << count_log2) - 1) << spacing_log2;
        auto const it = reference.find(probe);
        ASSERT_EQ(map.find(probe), it == reference.end() ? nullptr : it->second) << "step " << step;
        ASSERT_EQ(map.find(probe + 8), nullptr) << "an address inside a block, step " << step;
      }
    }
  }
  EXPECT_EQ(map.hashed(), spacing_log2 > 4);
}

INSTANTIATE_TEST_SUITE_P(PackedAndSparse, LiveAddressMapSpacing, ::testing::Values(std::pair{4u, 16u}, std::pair{12u, 20u}));

// More blocks live than the nursery holds: the older ones move to the table and stay
// reachable there, through the table's growth, and leave it when extracted.
TEST(LiveAddressMap, BlocksPromotedToTheTableStayReachable)
{
  detail::live_address_map<record> map{16};
  std::deque<record> records;
  for (std::uintptr_t k = 0; k < 5000; ++k) map.insert(records.emplace_back(record{k * 48}));
  EXPECT_EQ(map.size(), 5000u);
  EXPECT_GE(map.table_size(), 5000u - 1024u);  // at most one block a nursery slot
  for (auto& rec : records) ASSERT_EQ(map.find(rec.address), &rec);
  for (auto& rec : records) ASSERT_EQ(map.extract(rec.address), &rec) << rec.address;  // oldest, promoted, first
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.table_size(), 0u);
  for (auto& rec : records) ASSERT_EQ(map.find(rec.address), nullptr);
}

// A block freed before a younger one needs its nursery slot never reaches the table: here a
// hundred long-lived blocks and a stream of short-lived ones, each freed two allocations
// later. Only long-lived blocks (and short-lived ones whose slot a newer one took) may move.
TEST(LiveAddressMap, ShortLivedBlocksStayInTheNursery)
{
  detail::live_address_map<record> map{16};
  std::deque<record> long_lived, short_lived;
  for (std::uintptr_t k = 0; k < 100; ++k) map.insert(long_lived.emplace_back(record{(1u << 30) + k * 64}));
  EXPECT_EQ(map.table_size(), 0u);
  std::size_t most_in_table = 0;
  for (std::uintptr_t k = 0; k < 100000; ++k) {
    map.insert(short_lived.emplace_back(record{k * 32}));
    if (k >= 2) {
      ASSERT_EQ(map.extract((k - 2) * 32), &short_lived[k - 2]);
    }
    most_in_table = std::max(most_in_table, map.table_size());
  }
  EXPECT_EQ(map.size(), 102u);
  // Each of the 100,000 insertions finds its slot taken with chance about 102/1024; without
  // the nursery every one of them would have gone to the table.
  EXPECT_LT(most_in_table, 300u);
  for (auto& rec : long_lived) ASSERT_EQ(map.find(rec.address), &rec);
}

// The hash table places a block a few insertions after it is handed one. Extracted in that
// time, it must be found, and it must not reach the table afterwards: here the youngest
// blocks go first, those still in flight among them, and then more insertions flush the
// ring.
TEST(AddressHashTable, BlocksExtractedOnTheirWayToTheTableNeverReachIt)
{
  detail::address_hash_table<record> table;
  std::deque<record> records;
  for (std::uintptr_t k = 0; k < 3000; ++k) {
    record& rec = records.emplace_back(record{k * 64});
    table.insert({rec.address, &rec});
  }
  for (std::size_t k = records.size(); k-- > 1000;) ASSERT_EQ(table.extract(records[k].address), &records[k]);
  EXPECT_EQ(table.size(), 1000u);
  std::deque<record> later;
  for (std::uintptr_t k = 0; k < 3000; ++k) {
    record& rec = later.emplace_back(record{(1u << 30) + k * 64});
    table.insert({rec.address, &rec});
  }
  EXPECT_EQ(table.size(), 4000u);
  for (std::size_t k = 0; k < records.size(); ++k)
    ASSERT_EQ(table.find(records[k].address), k < 1000 ? &records[k] : nullptr) << k;
  for (auto& rec : later) ASSERT_EQ(table.extract(rec.address), &rec);
  for (std::size_t k = 0; k < 1000; ++k) ASSERT_EQ(table.extract(records[k].address), &records[k]);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.extract(0), nullptr);
}

// The radix tree's memory stays within its bound: blocks a MiB apart take a leaf each, so
// once the tree passes its first MiB, the next new leaf moves every block to the hash table,
// where each is still found.
TEST(LiveAddressMap, SparseBlocksMoveToTheHashTableWhenTheTreeOutgrowsItsBound)
{
  using map_type = detail::live_address_map<record>;
  map_type map{16};
  std::deque<record> records;
  std::size_t most_memory = 0;
  for (std::uintptr_t k = 0; k < 3000; ++k) {
    map.insert(records.emplace_back(record{k << 20}));
    if (!map.hashed()) most_memory = std::max(most_memory, map.radix_memory());
  }
  EXPECT_TRUE(map.hashed());
  EXPECT_EQ(map.radix_memory(), 0u);
  // A leaf (4 KiB and its count) per block, and a directory page per four of them (a page
  // holds 512 leaf pointers, 2^16 granules apart): the tree had reached within a leaf of
  // the free MiB when the next leaf sent it past.
  std::size_t const leaf = detail::address_radix_tree<record>::leaf_bytes();
  EXPECT_GT(most_memory, map_type::radix_bytes_free - leaf);
  EXPECT_LE(most_memory, map_type::radix_bytes_free + leaf + 4096);
  EXPECT_EQ(map.size(), 3000u);
  EXPECT_GE(map.table_size(), 3000u - 1024u);  // at most one block a nursery slot
  for (auto& rec : records) ASSERT_EQ(map.find(rec.address), &rec);
  for (auto& rec : records) ASSERT_EQ(map.extract(rec.address), &rec);
  EXPECT_EQ(map.size(), 0u);
  map.clear();
  EXPECT_FALSE(map.hashed());
}

// Blocks packed 32 bytes apart fill their leaves: 100,000 of them take 391 leaves, 16 bytes a
// block, well within the bound, and stay in the tree.
TEST(LiveAddressMap, PackedBlocksStayInTheRadixTree)
{
  detail::live_address_map<record> map{16};
  std::deque<record> records;
  for (std::uintptr_t k = 0; k < 100000; ++k) map.insert(records.emplace_back(record{(std::uintptr_t{1} << 32) + k * 32}));
  EXPECT_FALSE(map.hashed());
  std::size_t const leaf = detail::address_radix_tree<record>::leaf_bytes();
  EXPECT_LE(map.radix_memory(), 391 * leaf + 4096);
  for (auto& rec : records) ASSERT_EQ(map.extract(rec.address), &rec);
  EXPECT_EQ(map.table_size(), 0u);
}

// Two live blocks in one granule cannot share the tree's entry: the map moves to the hash
// table rather than lose one (an allocator's blocks are never that close, but a map told a
// larger granule than its blocks' must still be right).
TEST(LiveAddressMap, BlocksCloserThanTheGranuleMoveToTheHashTable)
{
  detail::live_address_map<record> map{256};
  std::deque<record> records;
  for (std::uintptr_t k = 0; k < 4000; ++k) map.insert(records.emplace_back(record{k * 64}));
  EXPECT_TRUE(map.hashed());
  for (auto& rec : records) ASSERT_EQ(map.find(rec.address), &rec);
  for (auto& rec : records) ASSERT_EQ(map.extract(rec.address), &rec);
  EXPECT_EQ(map.size(), 0u);
}

TEST(LiveAddressMap, FindsAddressZeroAndForgetsItOnExtract)
{
  detail::live_address_map<record> map{16};
  record zero{0}, other{4096};
  EXPECT_EQ(map.find(0), nullptr);
  map.insert(zero);
  map.insert(other);
  EXPECT_EQ(map.find(0), &zero);
  EXPECT_EQ(map.extract(0), &zero);
  EXPECT_EQ(map.find(0), nullptr);
  EXPECT_EQ(map.extract(0), nullptr);
  EXPECT_EQ(map.find(4096), &other);
  map.clear();
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.find(4096), nullptr);
}

}  // namespace
}  // namespace fraglab
