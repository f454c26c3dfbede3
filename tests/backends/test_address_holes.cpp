// The holes the address-placing backends share: decisions worked out by hand, and agreement
// with a map of every unit of a small address space on random sequences.
#include "backends/detail/address_holes.hpp"
#include "experiments/gen/rng.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace fraglab::detail {
namespace {

using range = address_holes::range;

std::vector<range> holes_of(address_holes const& h)
{
  std::vector<range> out;
  h.for_each([&](range r) { out.push_back(r); });
  return out;
}

TEST(AddressHoles, TheLowestHoleThatHoldsTheRangeAlignedIsTakenAndItsSidesStay)
{
  address_holes h;
  ASSERT_TRUE(h.give_back(0x1000, 0x100));
  ASSERT_TRUE(h.give_back(0x2010, 0x200));
  ASSERT_TRUE(h.give_back(0x3000, 0x1000));
  EXPECT_EQ(h.take_first_fit(0x180, 0x10), 0x2010u);   // the first hole is too small
  EXPECT_EQ(h.take_first_fit(0x80, 0x100), 0x1000u);   // lowest first, at the hole's start
  // Neither [0x1080, 0x1100) nor [0x2190, 0x2210) holds 0x80 bytes at a multiple of 0x100.
  EXPECT_EQ(h.take_first_fit(0x80, 0x100), 0x3000u);
  EXPECT_EQ(h.take_first_fit(0x80, 0x10), 0x1080u);    // the whole hole: it is gone
  EXPECT_EQ(h.take_first_fit(0x100, 0x800), 0x3800u);  // the alignment's gap stays a hole
  EXPECT_EQ(holes_of(h), (std::vector<range>{{0x2190, 0x80}, {0x3080, 0x780}, {0x3900, 0x700}}));
  EXPECT_EQ(h.take_first_fit(0x1000, 1), std::nullopt);
  EXPECT_EQ(h.count(), 3u);
}

TEST(AddressHoles, AGivenBackRangeMergesWithTheHolesItTouchesWhereAllowed)
{
  address_holes h;
  EXPECT_EQ(h.give_back(0x100, 0x100), (range{0x100, 0x100}));
  EXPECT_EQ(h.give_back(0x300, 0x100), (range{0x300, 0x100}));
  EXPECT_EQ(h.give_back(0x200, 0x100), (range{0x100, 0x300}));  // joins both
  EXPECT_EQ(h.count(), 1u);
  // A boundary at 0x1000 that holes may not cross (the arena's separately mapped ranges).
  auto const same_side = [](std::uintptr_t a, std::uintptr_t b) { return (a < 0x1000) == (b < 0x1000); };
  EXPECT_EQ(h.give_back(0xf00, 0x100, same_side), (range{0xf00, 0x100}));
  EXPECT_EQ(h.give_back(0x1000, 0x100, same_side), (range{0x1000, 0x100}));
  EXPECT_EQ(h.give_back(0xe00, 0x100, same_side), (range{0xe00, 0x200}));
  EXPECT_EQ(holes_of(h), (std::vector<range>{{0x100, 0x300}, {0xe00, 0x200}, {0x1000, 0x100}}));
  EXPECT_EQ(h.take_first_fit(0x300, 1), 0x100u);
  EXPECT_EQ(h.take_first_fit(0x300, 1), std::nullopt);  // 0xe00-0x1100 is two holes
  h.remove(0xe00);
  EXPECT_EQ(holes_of(h), (std::vector<range>{{0x1000, 0x100}}));
}

TEST(AddressHoles, ARangeGivenBackTwiceOrOverlappingAHoleChangesNothing)
{
  address_holes h;
  ASSERT_TRUE(h.give_back(0x1000, 0x1000));
  EXPECT_FALSE(h.give_back(0x1000, 0x1000));
  EXPECT_FALSE(h.give_back(0x1800, 0x100));   // inside
  EXPECT_FALSE(h.give_back(0x0f00, 0x200));   // reaches into it from below
  EXPECT_FALSE(h.give_back(0x1f00, 0x200));   // from above
  EXPECT_FALSE(h.give_back(0x0800, 0x2000));  // covers it
  EXPECT_FALSE(h.give_back(0x5000, 0));
  EXPECT_FALSE(h.give_back(~std::uintptr_t{0} - 0x10, 0x100));  // wraps
  EXPECT_EQ(holes_of(h), (std::vector<range>{{0x1000, 0x1000}}));
}

// Units of 16 bytes in spans of 128 units that holes may not cross; true: free.
class unit_map {
 public:
  static constexpr std::size_t units = 1024, span = 128, unit = 16;

  void set(std::uintptr_t base, std::size_t size, bool free)
  {
    for (std::size_t u = base / unit; u < (base + size) / unit; ++u) free_[u] = free;
  }
  // The lowest aligned place where `size` free bytes lie within one span: what first fit
  // over maximal holes must return.
  [[nodiscard]] std::optional<std::uintptr_t> first_fit(std::size_t size, std::size_t alignment) const
  {
    for (std::uintptr_t a = 0; a + size <= units * unit; a += alignment) {
      if (a / (span * unit) != (a + size - 1) / (span * unit)) continue;
      bool all = true;
      for (std::size_t u = a / unit; all && u < (a + size) / unit; ++u) all = free_[u];
      if (all) return a;
    }
    return std::nullopt;
  }
  // The maximal free runs, cut at the spans' boundaries.
  [[nodiscard]] std::vector<range> runs() const
  {
    std::vector<range> out;
    for (std::size_t u = 0; u < units; ++u) {
      if (!free_[u]) continue;
      if (u % span != 0 && free_[u - 1]) out.back().size += unit;
      else out.push_back({u * unit, unit});
    }
    return out;
  }

 private:
  std::vector<bool> free_ = std::vector<bool>(units, false);
};

TEST(AddressHoles, AgreeWithAMapOfEveryUnitOnRandomSequences)
{
  auto const same_span = [](std::uintptr_t a, std::uintptr_t b) {
    return a / (unit_map::span * unit_map::unit) == b / (unit_map::span * unit_map::unit);
  };
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    gen::rng rng(seed);
    address_holes h;
    unit_map model;
    for (std::size_t s = 0; s < unit_map::units / unit_map::span; ++s) {
      h.give_back(s * unit_map::span * unit_map::unit, unit_map::span * unit_map::unit, same_span);
      model.set(s * unit_map::span * unit_map::unit, unit_map::span * unit_map::unit, true);
    }
    std::vector<range> taken;
    for (int step = 0; step < 2000; ++step) {
      if (taken.empty() || rng.chance(55)) {
        std::size_t const size = unit_map::unit * rng.uniform(1, 32);
        std::size_t const alignment = unit_map::unit << rng.uniform(0, 5);
        auto const at = h.take_first_fit(size, alignment);
        ASSERT_EQ(at, model.first_fit(size, alignment)) << "seed " << seed << " step " << step;
        if (at) {
          model.set(*at, size, false);
          taken.push_back({*at, size});
        }
      } else {
        // A whole range, or a piece from its start or its end, as a backend trims a region.
        std::size_t const i = rng.uniform(0, taken.size() - 1);
        range r = taken[i];
        range give = r;
        if (r.size > unit_map::unit && rng.chance(30)) {
          give.size = unit_map::unit * rng.uniform(1, r.size / unit_map::unit - 1);
          if (rng.chance(50)) give.base = r.end() - give.size;
          taken[i] = give.base == r.base ? range{r.base + give.size, r.size - give.size} : range{r.base, r.size - give.size};
        } else {
          taken[i] = taken.back();
          taken.pop_back();
        }
        ASSERT_TRUE(h.give_back(give.base, give.size, same_span)) << "seed " << seed << " step " << step;
        model.set(give.base, give.size, true);
        EXPECT_FALSE(h.give_back(give.base, give.size, same_span));  // twice
      }
      ASSERT_EQ(holes_of(h), model.runs()) << "seed " << seed << " step " << step;
    }
  }
}

}  // namespace
}  // namespace fraglab::detail
