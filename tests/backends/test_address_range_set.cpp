// The disjoint address ranges that the backends laying out addresses share: decisions
// worked out by hand, and agreement with a map of every unit of a small address space on
// random sequences.
#include <fraglab/backends/detail/address_range_set.hpp>
#include <fraglab/runtime/gen/rng.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace fraglab::detail {
namespace {

using range = address_range_set::range;

std::vector<range> ranges_of(address_range_set const& h)
{
  std::vector<range> out;
  h.for_each([&](range r) { out.push_back(r); });
  return out;
}

TEST(AddressRangeSet, TheLowestRangeThatHoldsASizeAlignedIsCarvedAndItsSidesStay)
{
  address_range_set h;
  ASSERT_TRUE(h.insert(0x1000, 0x100));
  ASSERT_TRUE(h.insert(0x2010, 0x200));
  ASSERT_TRUE(h.insert(0x3000, 0x1000));
  EXPECT_EQ(h.take_first_fit(0x180, 0x10), 0x2010u);   // the first range is too small
  EXPECT_EQ(h.take_first_fit(0x80, 0x100), 0x1000u);   // lowest first, at the range's start
  // Neither [0x1080, 0x1100) nor [0x2190, 0x2210) holds 0x80 bytes at a multiple of 0x100.
  EXPECT_EQ(h.take_first_fit(0x80, 0x100), 0x3000u);
  EXPECT_EQ(h.take_first_fit(0x80, 0x10), 0x1080u);    // the whole range: it is gone
  EXPECT_EQ(h.take_first_fit(0x100, 0x800), 0x3800u);  // the alignment's gap stays
  EXPECT_EQ(ranges_of(h), (std::vector<range>{{0x2190, 0x80}, {0x3080, 0x780}, {0x3900, 0x700}}));
  EXPECT_EQ(h.take_first_fit(0x1000, 1), std::nullopt);
  EXPECT_EQ(h.count(), 3u);
}

TEST(AddressRangeSet, AnInsertedRangeMergesWithTheRangesItTouchesWhereAllowed)
{
  address_range_set h;
  EXPECT_EQ(h.insert(0x100, 0x100), (range{0x100, 0x100}));
  EXPECT_EQ(h.insert(0x300, 0x100), (range{0x300, 0x100}));
  EXPECT_EQ(h.insert(0x200, 0x100), (range{0x100, 0x300}));  // joins both
  EXPECT_EQ(h.count(), 1u);
  // A boundary at 0x1000 that ranges may not cross (the arena's separately mapped ranges).
  auto const same_side = [](std::uintptr_t a, std::uintptr_t b) { return (a < 0x1000) == (b < 0x1000); };
  EXPECT_EQ(h.insert(0xf00, 0x100, same_side), (range{0xf00, 0x100}));
  EXPECT_EQ(h.insert(0x1000, 0x100, same_side), (range{0x1000, 0x100}));
  EXPECT_EQ(h.insert(0xe00, 0x100, same_side), (range{0xe00, 0x200}));
  EXPECT_EQ(ranges_of(h), (std::vector<range>{{0x100, 0x300}, {0xe00, 0x200}, {0x1000, 0x100}}));
  EXPECT_EQ(h.take_first_fit(0x300, 1), 0x100u);
  EXPECT_EQ(h.take_first_fit(0x300, 1), std::nullopt);  // 0xe00-0x1100 is two ranges
  EXPECT_TRUE(h.erase(0xe00, 0x200));
  EXPECT_EQ(ranges_of(h), (std::vector<range>{{0x1000, 0x100}}));
}

TEST(AddressRangeSet, ARangeInsertedTwiceOrOverlappingOneChangesNothing)
{
  address_range_set h;
  ASSERT_TRUE(h.insert(0x1000, 0x1000));
  EXPECT_FALSE(h.insert(0x1000, 0x1000));
  EXPECT_FALSE(h.insert(0x1800, 0x100));   // inside
  EXPECT_FALSE(h.insert(0x0f00, 0x200));   // reaches into it from below
  EXPECT_FALSE(h.insert(0x1f00, 0x200));   // from above
  EXPECT_FALSE(h.insert(0x0800, 0x2000));  // covers it
  EXPECT_FALSE(h.insert(0x5000, 0));
  EXPECT_FALSE(h.insert(~std::uintptr_t{0} - 0x10, 0x100));  // wraps
  EXPECT_EQ(ranges_of(h), (std::vector<range>{{0x1000, 0x1000}}));
}

TEST(AddressRangeSet, ARangeErasedIsCarvedFromTheOneRangeHoldingItWhole)
{
  address_range_set h;
  ASSERT_TRUE(h.insert(0x1000, 0x1000));
  ASSERT_TRUE(h.insert(0x3000, 0x1000));
  EXPECT_TRUE(h.contains(0x1800, 0x800));
  EXPECT_FALSE(h.contains(0x1800, 0x1000));  // runs past the range
  EXPECT_FALSE(h.contains(0x2000, 0x10));
  EXPECT_TRUE(h.overlaps(0x1f00, 0x1200));
  EXPECT_TRUE(h.overlaps(0x0800, 0x900));
  EXPECT_FALSE(h.overlaps(0x2000, 0x1000));  // touches both, shares no byte
  EXPECT_FALSE(h.overlaps(0x1000, 0));
  EXPECT_FALSE(h.erase(0x1800, 0x2000));     // spans the gap between the two
  EXPECT_FALSE(h.erase(0x0f00, 0x200));
  EXPECT_TRUE(h.erase(0x1400, 0x400));       // from the middle: both sides stay
  EXPECT_TRUE(h.erase(0x3000, 0x1000));      // all of it
  EXPECT_EQ(ranges_of(h), (std::vector<range>{{0x1000, 0x400}, {0x1800, 0x800}}));
  EXPECT_FALSE(h.erase(0x1400, 0x400));      // twice
}

// Units of 16 bytes in spans of 128 units that ranges may not cross; true: in the set.
class unit_map {
 public:
  static constexpr std::size_t units = 1024, span = 128, unit = 16;

  void set(std::uintptr_t base, std::size_t size, bool free)
  {
    for (std::size_t u = base / unit; u < (base + size) / unit; ++u) free_[u] = free;
  }
  // The lowest aligned place where `size` free bytes lie within one span: what first fit
  // over maximal ranges must return.
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
  [[nodiscard]] bool any(std::uintptr_t base, std::size_t size) const
  {
    for (std::size_t u = base / unit; u < (base + size) / unit; ++u)
      if (free_[u]) return true;
    return false;
  }
  [[nodiscard]] bool all_in_one_span(std::uintptr_t base, std::size_t size) const
  {
    if (base / (span * unit) != (base + size - 1) / (span * unit)) return false;
    for (std::size_t u = base / unit; u < (base + size) / unit; ++u)
      if (!free_[u]) return false;
    return true;
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

TEST(AddressRangeSet, AgreeWithAMapOfEveryUnitOnRandomSequences)
{
  auto const same_span = [](std::uintptr_t a, std::uintptr_t b) {
    return a / (unit_map::span * unit_map::unit) == b / (unit_map::span * unit_map::unit);
  };
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    gen::rng rng(seed);
    address_range_set h;
    unit_map model;
    for (std::size_t s = 0; s < unit_map::units / unit_map::span; ++s) {
      h.insert(s * unit_map::span * unit_map::unit, unit_map::span * unit_map::unit, same_span);
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
        ASSERT_TRUE(h.insert(give.base, give.size, same_span)) << "seed " << seed << " step " << step;
        model.set(give.base, give.size, true);
        EXPECT_FALSE(h.insert(give.base, give.size, same_span));  // twice
      }
      // A probe anywhere: what the set says of it, and, one time in five, erased where held.
      std::size_t const probe_size = unit_map::unit * rng.uniform(1, 48);
      std::uintptr_t const probe = unit_map::unit * rng.uniform(0, unit_map::units - probe_size / unit_map::unit);
      bool const held = model.all_in_one_span(probe, probe_size);
      EXPECT_EQ(h.contains(probe, probe_size), held);
      EXPECT_EQ(h.overlaps(probe, probe_size), model.any(probe, probe_size));
      if (rng.chance(20)) {
        ASSERT_EQ(h.erase(probe, probe_size), held) << "seed " << seed << " step " << step;
        if (held) {
          model.set(probe, probe_size, false);
          taken.push_back({probe, probe_size});
        }
      }
      ASSERT_EQ(ranges_of(h), model.runs()) << "seed " << seed << " step " << step;
    }
  }
}

}  // namespace
}  // namespace fraglab::detail
