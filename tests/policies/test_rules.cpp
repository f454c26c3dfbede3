// Split, size and growth rules on values computed by hand from their definitions.
#include <fraglab/policies/growth_rules.hpp>
#include <fraglab/policies/size_rules.hpp>
#include <fraglab/policies/split_rules.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

namespace fraglab {
namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;

TEST(ThresholdSplit, TensorFlowRuleSplitsAtTwiceTheRequestOrAHugeRemainder)
{
  threshold_split tf{.ratio = 2.0, .max_internal_fragmentation = 128 * MiB};
  EXPECT_TRUE(tf.should_split(1024, 512));    // chunk >= 2 x request
  EXPECT_FALSE(tf.should_split(1023 + 1, 513));
  EXPECT_FALSE(tf.should_split(768, 512));    // 768 < 1024 and 256 B remainder is small
  EXPECT_TRUE(tf.should_split(400 * MiB, 250 * MiB));   // remainder 150 MiB >= 128 MiB
  EXPECT_FALSE(tf.should_split(300 * MiB, 250 * MiB));  // remainder 50 MiB
  EXPECT_FALSE(tf.should_split(512, 512));    // nothing to split off
}

TEST(ThresholdSplit, PyTorchRulesByMinimumRemainderAndMaxSplitSize)
{
  threshold_split small{.min_remainder = 512};
  EXPECT_TRUE(small.should_split(1024, 512));
  EXPECT_FALSE(small.should_split(1024, 1024 - 256));
  threshold_split large{.min_remainder = MiB + 1, .max_split_size = 64 * MiB};
  EXPECT_FALSE(large.should_split(2 * MiB + 512, MiB + 512));  // remainder exactly 1 MiB: not > 1 MiB
  EXPECT_TRUE(large.should_split(2 * MiB + 1024, MiB + 512));
  EXPECT_FALSE(large.should_split(200 * MiB, 64 * MiB));  // at max_split_size: never split
}

TEST(ThresholdSplit, NeverAndAnyRemainder)
{
  EXPECT_FALSE(threshold_split::never().should_split(1 << 20, 16));
  threshold_split any;
  EXPECT_TRUE(any.should_split(32, 16));
}

TEST(QuantumSizeRule, RoundsWithHeaderMinimumAndPowerOfTwoClasses)
{
  quantum_size_rule r{.quantum = 16, .min_size = 32, .header = 8};
  EXPECT_EQ(r.round(1), 32u);    // 9 -> min 32
  EXPECT_EQ(r.round(24), 32u);   // 32
  EXPECT_EQ(r.round(25), 48u);   // 33 -> 48
  quantum_size_rule tf{.quantum = 256, .min_size = 256};
  EXPECT_EQ(tf.round(1), 256u);
  EXPECT_EQ(tf.round(257), 512u);
  quantum_size_rule p2{.quantum = 16, .min_size = 16, .power_of_two_classes = true};
  EXPECT_EQ(p2.round(17), 32u);
  EXPECT_EQ(p2.round(4096), 4096u);
  EXPECT_EQ(p2.round(4097), 8192u);
}

TEST(QuantumSizeRule, OverflowIsReportedNotWrapped)
{
  quantum_size_rule r{.quantum = 256, .min_size = 256, .header = 16};
  EXPECT_FALSE(r.round(std::numeric_limits<std::size_t>::max()).has_value());
  EXPECT_FALSE(r.round(std::numeric_limits<std::size_t>::max() - 100).has_value());
  quantum_size_rule p2{.power_of_two_classes = true};
  EXPECT_FALSE(p2.round((std::size_t{1} << 63) + 1).has_value());
}

TEST(PlainQuantumSizeRule, RoundsAsTheQuantumRuleWithoutHeaderOrClasses)
{
  plain_quantum_size_rule tf{.quantum = 256, .min_size = 256};
  EXPECT_EQ(tf.round(1), 256u);
  EXPECT_EQ(tf.round(256), 256u);
  EXPECT_EQ(tf.round(257), 512u);
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  EXPECT_EQ(tf.round(max - 255), max - 255);         // already a multiple of 256
  EXPECT_FALSE(tf.round(max - 254).has_value());     // the next multiple does not exist
  plain_quantum_size_rule small{.quantum = 16, .min_size = 48};
  quantum_size_rule same{.quantum = 16, .min_size = 48};
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{47}, std::size_t{48}, std::size_t{49},
                        std::size_t{4095}, max - 15, max - 14, max})
    EXPECT_EQ(small.round(n), same.round(n)) << n;
  EXPECT_EQ(small.granule(), 16u);
  EXPECT_THROW((plain_quantum_size_rule{.quantum = 24}.validate()), std::invalid_argument);
}

growth_context ctx(std::size_t need, std::size_t acquired = 0, std::size_t tail = 0, std::size_t gran = 256)
{
  return {need, acquired, tail, gran};
}

TEST(GrowthRule, DoublingGivesRegionsOfTwoFourEightMiB)
{
  growth_rule g{.kind = growth_kind::doubling, .initial = 2 * MiB};
  std::size_t held = 0;
  for (std::size_t expected : {2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB}) {
    auto d = g.acquisition(ctx(256, held));
    ASSERT_EQ(d.bytes, expected);
    g.on_acquired(d.bytes);
    held += d.bytes;
  }
}

TEST(GrowthRule, DoublingEnlargesForABigRequestWithoutAnExtraDoubling)
{
  growth_rule g{.kind = growth_kind::doubling, .initial = 2 * MiB};
  auto d = g.acquisition(ctx(5 * MiB));
  EXPECT_EQ(d.bytes, 8 * MiB);  // 2 -> 4 -> 8 holds 5 MiB
  g.on_acquired(d.bytes);
  EXPECT_EQ(g.current_region_size(), 8 * MiB);  // enlarged this time: not doubled again
  EXPECT_EQ(g.acquisition(ctx(256, 8 * MiB)).bytes, 8 * MiB);
}

TEST(GrowthRule, LimitCapsTheRegionOrRefuses)
{
  growth_rule g{.kind = growth_kind::doubling, .initial = 2 * MiB, .memory_limit = 3 * MiB};
  auto first = g.acquisition(ctx(256));
  EXPECT_EQ(first.bytes, 2 * MiB);
  g.on_acquired(first.bytes);
  auto second = g.acquisition(ctx(256, 2 * MiB));
  EXPECT_EQ(second.bytes, 1 * MiB);  // min(4 MiB, what the limit leaves)
  auto refused = g.acquisition(ctx(2 * MiB, 2 * MiB));
  EXPECT_EQ(refused.bytes, 0u);
  EXPECT_EQ(refused.refusal, alloc_status::limit);
}

TEST(GrowthRule, BackoffRetriesAtNinetyPercentWhileTheRequestStillFits)
{
  growth_rule g{.kind = growth_kind::doubling, .backoff = 0.9};
  auto c = ctx(1 * MiB);
  EXPECT_EQ(g.on_refused(c, 2 * MiB), 1887488u);  // 0.9 x 2 MiB = 1887436.8 -> up to 256: 1887488
  EXPECT_EQ(g.on_refused(c, 1 * MiB + 256), 0u);   // 0.9x would not hold the request
  growth_rule none{.kind = growth_kind::doubling};
  EXPECT_EQ(none.on_refused(c, 2 * MiB), 0u);
}

TEST(GrowthRule, ExactTakesOnlyWhatTheFreeTailLacks)
{
  growth_rule g{.kind = growth_kind::exact};
  EXPECT_EQ(g.acquisition(ctx(10000, 0, 0, 4096)).bytes, 12288u);
  EXPECT_EQ(g.acquisition(ctx(10000, 0, 8192, 4096)).bytes, 4096u);  // 1808 missing -> one page
}

TEST(GrowthRule, SegmentsFollowPyTorchsSizes)
{
  growth_rule g{.kind = growth_kind::segments};
  EXPECT_EQ(g.acquisition(ctx(512)).bytes, 2 * MiB);
  EXPECT_EQ(g.acquisition(ctx(1 * MiB)).bytes, 2 * MiB);
  EXPECT_EQ(g.acquisition(ctx(1 * MiB + 512)).bytes, 20 * MiB);
  EXPECT_EQ(g.acquisition(ctx(10 * MiB - 512)).bytes, 20 * MiB);
  EXPECT_EQ(g.acquisition(ctx(10 * MiB)).bytes, 10 * MiB);
  EXPECT_EQ(g.acquisition(ctx(11 * MiB + 512)).bytes, 12 * MiB);
}

TEST(GrowthRule, FixedPoolIsAcquiredOnce)
{
  growth_rule g{.kind = growth_kind::fixed, .initial = 1 * MiB};
  auto d = g.acquisition(ctx(256));
  EXPECT_EQ(d.bytes, 1 * MiB);
  g.on_acquired(d.bytes);
  auto again = g.acquisition(ctx(256, MiB));
  EXPECT_EQ(again.bytes, 0u);
  EXPECT_EQ(again.refusal, alloc_status::no_growth);
}

}  // namespace
}  // namespace fraglab
