// The live-address map's radix tree: its leaves and directory pages counted by hand, and
// against std::unordered_map on random inserts and extractions over two directories.
#include <fraglab/engine/detail/address_radix_tree.hpp>
#include <fraglab/runtime/gen/rng.hpp>

#include <gtest/gtest.h>

#include <deque>
#include <unordered_map>
#include <vector>

namespace fraglab {
namespace {

struct record {
  std::uintptr_t address = 0;
};

using tree = detail::address_radix_tree<record>;
using detail::radix_insert;

// Granule 16: a leaf covers 512 granules, 8 KiB; a directory page 512 leaves, 4 MiB; a
// directory 2^30 granules, 16 GiB.
TEST(AddressRadixTree, CountsItsLeavesAndDirectoryPagesByHand)
{
  tree t{16};
  record a{0}, b{16}, c{8192}, d{std::uintptr_t{4} << 20}, e{std::uintptr_t{1} << 40};
  EXPECT_EQ(t.insert(a), radix_insert::placed_in_new_leaf);
  EXPECT_EQ(t.insert(b), radix_insert::placed);  // the same leaf
  EXPECT_EQ(t.insert(c), radix_insert::placed_in_new_leaf);
  EXPECT_EQ(t.leaves(), 2u);
  EXPECT_EQ(t.memory(), 2 * tree::leaf_bytes() + 4096);
  EXPECT_EQ(t.insert(d), radix_insert::placed_in_new_leaf);  // the directory's second page
  EXPECT_EQ(t.memory(), 3 * tree::leaf_bytes() + 2 * 4096);
  EXPECT_EQ(t.insert(e), radix_insert::placed_in_new_leaf);  // a second directory
  EXPECT_EQ(t.memory(), 4 * tree::leaf_bytes() + 3 * 4096);
  EXPECT_EQ(t.size(), 5u);

  record inside{8};
  EXPECT_EQ(t.insert(inside), radix_insert::taken);  // a's granule
  EXPECT_EQ(t.size(), 5u);
  EXPECT_EQ(t.find(8), nullptr);   // inside a, not a block
  EXPECT_EQ(t.find(32), nullptr);  // a's leaf, no block
  EXPECT_EQ(t.find(std::uintptr_t{1} << 50), nullptr);  // no directory
  EXPECT_EQ(t.find(0), &a);
  EXPECT_EQ(t.find(std::uintptr_t{1} << 40), &e);

  EXPECT_EQ(t.extract(8192), &c);  // c's leaf empties and is kept spare
  EXPECT_EQ(t.leaves(), 3u);
  EXPECT_EQ(t.memory(), 4 * tree::leaf_bytes() + 3 * 4096);
  EXPECT_EQ(t.extract(8192), nullptr);
  EXPECT_EQ(t.find(8192), nullptr);
  EXPECT_EQ(t.insert(c), radix_insert::placed_in_new_leaf);  // the spare again: no new memory
  EXPECT_EQ(t.memory(), 4 * tree::leaf_bytes() + 3 * 4096);

  std::size_t seen = 0;
  t.for_each([&](record&) { ++seen; });
  EXPECT_EQ(seen, 5u);
  t.clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.memory(), 0u);
  EXPECT_EQ(t.find(0), nullptr);
  EXPECT_EQ(t.insert(a), radix_insert::placed_in_new_leaf);
}

// Half the keys near address 0 and half near 2^40, so lookups alternate between the
// directories; absent addresses, interior addresses and extractions of absent blocks must
// all agree with the reference. At the end every leaf has been released.
TEST(AddressRadixTree, AgreesWithUnorderedMapAcrossDirectories)
{
  tree t{16};
  std::unordered_map<std::uintptr_t, record*> reference;
  std::deque<record> records;
  std::vector<record*> live;
  gen::rng r(11);
  auto random_address = [&] {
    std::uintptr_t const base = r.chance(50) ? 0 : std::uintptr_t{1} << 40;
    return base + (r.uniform(0, (1u << 18) - 1) << 4);  // 4 MiB of granules each
  };
  for (int step = 0; step < 100000; ++step) {
    if (live.empty() || r.chance((step / 20000) % 2 == 0 ? 65 : 35)) {
      std::uintptr_t const address = random_address();
      if (reference.count(address) != 0) continue;
      record& rec = records.emplace_back(record{address});
      ASSERT_NE(t.insert(rec), radix_insert::taken);
      reference[address] = &rec;
      live.push_back(&rec);
    } else {
      std::size_t const i = r.uniform(0, live.size() - 1);
      ASSERT_EQ(t.extract(live[i]->address + 8), nullptr) << "step " << step;
      ASSERT_EQ(t.extract(live[i]->address), live[i]) << "step " << step;
      reference.erase(live[i]->address);
      live[i] = live.back();
      live.pop_back();
    }
    ASSERT_EQ(t.size(), reference.size());
    if (step % 101 == 0)
      for (int k = 0; k < 50; ++k) {
        std::uintptr_t const probe = random_address();
        auto const it = reference.find(probe);
        ASSERT_EQ(t.find(probe), it == reference.end() ? nullptr : it->second) << "step " << step;
      }
  }
  std::size_t seen = 0;
  t.for_each([&](record& rec) {
    ++seen;
    EXPECT_EQ(reference.at(rec.address), &rec);
  });
  EXPECT_EQ(seen, reference.size());
  for (record* rec : live) ASSERT_EQ(t.extract(rec->address), rec);
  EXPECT_EQ(t.leaves(), 0u);
  EXPECT_EQ(t.size(), 0u);
}

}  // namespace
}  // namespace fraglab
