// The live-address map against std::unordered_map on random inserts and extractions: every
// lookup, present or absent, must agree after every step. Addresses are multiples of
// 4 KiB, so their low bits are all equal and runs of probes form; extracting from the middle of
// a run exercises the backward shift. Address 0 is used too: emptiness is not an address.
#include "engine/detail/live_address_map.hpp"
#include "experiments/gen/rng.hpp"

#include <gtest/gtest.h>

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
