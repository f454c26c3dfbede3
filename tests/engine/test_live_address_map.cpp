// The live-address map against std::unordered_map on random inserts and extractions: every
// lookup, present or absent, must agree after every step. Addresses are multiples of
// 4 KiB, so their low bits are all equal and runs of probes form; extracting from the middle of
// a run exercises the backward shift. Address 0 is used too: emptiness is not an address.
// Every block's requested size and stream must come back with it, moved along by shifts.
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
  std::size_t requested = 0;
  stream_id stream = 0;
};

// The block the map should hold for `rec`, or none.
detail::live_block<record> block_of(record* rec)
{
  if (rec == nullptr) return {};
  return {rec, rec->requested, rec->stream};
}

bool same(detail::live_block<record> a, detail::live_block<record> b)
{
  return a.chunk == b.chunk && a.requested == b.requested && a.stream == b.stream;
}

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
      record& rec = records.emplace_back(record{address, static_cast<std::size_t>(step) + 1, r.uniform(0, 3)});
      map.insert(rec, rec.requested, rec.stream);
      reference[address] = &rec;
      live.push_back(&rec);
    } else {
      std::size_t const i = r.uniform(0, live.size() - 1);
      ASSERT_TRUE(same(map.extract(live[i]->address), block_of(live[i]))) << "step " << step;
      reference.erase(live[i]->address);
      live[i] = live.back();
      live.pop_back();
    }
    ASSERT_EQ(map.size(), reference.size());
    if (step % 97 == 0) {
      for (auto const& [address, rec] : reference) ASSERT_TRUE(same(map.find(address), block_of(rec))) << "step " << step;
      for (int k = 0; k < 50; ++k) {
        std::uintptr_t const probe = r.uniform(0, 1 << 20) << 12;
        auto const it = reference.find(probe);
        ASSERT_TRUE(same(map.find(probe), block_of(it == reference.end() ? nullptr : it->second))) << "step " << step;
      }
    }
  }
}

TEST(LiveAddressMap, FindsAddressZeroAndForgetsItOnExtract)
{
  detail::live_address_map<record> map;
  record zero{0, 8, 0}, other{4096, 16, 2};
  EXPECT_EQ(map.find(0).chunk, nullptr);
  map.insert(zero, zero.requested, zero.stream);
  map.insert(other, other.requested, other.stream);
  EXPECT_TRUE(same(map.find(0), block_of(&zero)));
  EXPECT_TRUE(same(map.extract(0), block_of(&zero)));
  EXPECT_EQ(map.find(0).chunk, nullptr);
  EXPECT_EQ(map.extract(0).chunk, nullptr);
  EXPECT_TRUE(same(map.find(4096), block_of(&other)));
  map.clear();
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.find(4096).chunk, nullptr);
}

}  // namespace
}  // namespace fraglab
