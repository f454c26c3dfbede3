// The live-address map against std::unordered_map on random inserts and extractions: every
// lookup, present or absent, must agree after every step. Addresses are multiples of
// 4 KiB, so their low bits are all equal and runs of probes form; extracting from the middle of
// a run exercises the backward shift. Thousands are live at a time, so blocks leave the
// nursery for the table all the time. Address 0 is used too: emptiness is not an address.
#include "engine/detail/live_address_map.hpp"
#include "experiments/gen/rng.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <vector>

namespace fraglab {
namespace {

struct record {
  std::uintptr_t address = 0;
};

TEST(LiveAddressMap, AgreesWithUnorderedMapThroughGrowthAndBackwardShifts)
{
  detail::live_address_map<record> map;
  std::unordered_map<std::uintptr_t, record*> reference;
  std::deque<record> records;  // stable addresses
  std::vector<record*> live;
  gen::rng r(7);
  for (int step = 0; step < 60000; ++step) {
    bool const grow_phase = (step / 10000) % 2 == 0;  // sizes rise and fall: tables grow, runs empty
    if (live.empty() || r.chance(grow_phase ? 70 : 30)) {
      std::uintptr_t address = r.uniform(0, 1 << 20) << 12;
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
        std::uintptr_t const probe = r.uniform(0, 1 << 20) << 12;
        auto const it = reference.find(probe);
        ASSERT_EQ(map.find(probe), it == reference.end() ? nullptr : it->second) << "step " << step;
      }
    }
  }
}

// More blocks live than the nursery holds: the older ones move to the table and stay
// reachable there, through the table's growth, and leave it when extracted.
TEST(LiveAddressMap, BlocksPromotedToTheTableStayReachable)
{
  detail::live_address_map<record> map;
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
  detail::live_address_map<record> map;
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

// A promoted block waits a few promotions before it is placed in the table. Extracted in
// that time, it must be found, and it must not reach the table afterwards: here the
// youngest blocks go first, those whose promotion is still in flight among them, and then
// more promotions flush the ring.
TEST(LiveAddressMap, BlocksExtractedOnTheirWayToTheTableNeverReachIt)
{
  detail::live_address_map<record> map;
  std::deque<record> records;
  for (std::uintptr_t k = 0; k < 3000; ++k) map.insert(records.emplace_back(record{k * 64}));
  for (std::size_t k = records.size(); k-- > 1000;) ASSERT_EQ(map.extract(records[k].address), &records[k]);
  EXPECT_EQ(map.size(), 1000u);
  std::deque<record> later;
  for (std::uintptr_t k = 0; k < 3000; ++k) map.insert(later.emplace_back(record{(1u << 30) + k * 64}));
  EXPECT_EQ(map.size(), 4000u);
  for (std::size_t k = 0; k < records.size(); ++k)
    ASSERT_EQ(map.find(records[k].address), k < 1000 ? &records[k] : nullptr) << k;
  for (auto& rec : later) ASSERT_EQ(map.extract(rec.address), &rec);
  for (std::size_t k = 0; k < 1000; ++k) ASSERT_EQ(map.extract(records[k].address), &records[k]);
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.table_size(), 0u);
}

TEST(LiveAddressMap, FindsAddressZeroAndForgetsItOnExtract)
{
  detail::live_address_map<record> map;
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
