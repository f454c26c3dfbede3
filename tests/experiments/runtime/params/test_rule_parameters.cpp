// The parameters the rules declare (policies/rule_parameter.hpp), read and rendered by
// experiments/runtime/params/rule_parameters.hpp: every generic key in the table once, under its
// rule's part, with the rule's default; every rule read back as rendered; words refused by
// name.
#include <fraglab/policies/coalesce_rules.hpp>
#include <fraglab/policies/growth_rules.hpp>
#include <fraglab/policies/indexes/bins_index.hpp>
#include <fraglab/policies/indexes/segregated_index.hpp>
#include <fraglab/policies/pool_rules.hpp>
#include <fraglab/policies/presets/dlmalloc.hpp>
#include <fraglab/policies/presets/gmlake.hpp>
#include <fraglab/policies/size_rules.hpp>
#include <fraglab/policies/split_rules.hpp>
#include <fraglab/runtime/params/param_set.hpp>
#include <fraglab/runtime/params/rule_parameters.hpp>

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

namespace fraglab {
namespace {

// Each key a rule (or a preset's settings) declares: the table's row has its part, and its default is the text of a
// default-constructed rule's member.
template <class Rule>
std::size_t expect_rows_of()
{
  std::size_t keys = 0;
  rule_parameters_detail::for_each_parameter<Rule>([&](auto const& field) {
    ++keys;
    EXPECT_EQ(part_of(field.key), Rule::part) << field.key;
    EXPECT_EQ(param_set{}.text(field.key), params_of_rule(Rule{}).text(field.key)) << field.key;
  });
  return keys;
}

TEST(RuleParameters, EveryGenericKeyIsATableRowWithItsRulesDefault)
{
  std::size_t const keys = expect_rows_of<quantum_size_rule>() + expect_rows_of<threshold_split>() +
                           expect_rows_of<coalescing>() + expect_rows_of<growth_rule>() +
                           expect_rows_of<bins_index_params>() + expect_rows_of<segregated_index_params>() +
                           expect_rows_of<stream_pool_rule>();
  EXPECT_EQ(keys, 29u);
  EXPECT_EQ(expect_rows_of<presets::dlmalloc::settings>() + expect_rows_of<presets::gmlake::settings>(), 6u);
  // The texts a user reads in `fraglab policies --keys`, worked out from the members.
  std::map<std::string, std::string> const expected = {
      {"quantum", "16"},           {"split", "threshold"},        {"split_ratio", "1"},
      {"max_split_size", "unlimited"}, {"coalesce", "immediate"}, {"growth", "exact"},
      {"initial_region", "2MiB"},  {"backoff", "0"},              {"medium_request", "10MiB"},
      {"size_classes", "none"},    {"bin_count", "21"},           {"per_stream", "false"},
      {"mmap_threshold", "256KiB"}, {"auto_gc_limit", "1000GiB"},  {"reuse_limit", "10"}};
  for (auto const& [key, text] : expected) EXPECT_EQ(param_set{}.text(key), text) << key;
}

TEST(RuleParameters, ARuleReadsBackAsItWasRendered)
{
  threshold_split split;
  split.min_remainder = 1 << 20;
  split.ratio = 2.5;
  split.max_split_size = 3ull << 30;
  threshold_split const s = rule_from_params<threshold_split>(params_of_rule(split));
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.min_remainder, 1u << 20);
  EXPECT_EQ(s.ratio, 2.5);
  EXPECT_EQ(s.max_internal_fragmentation, threshold_split::unlimited);
  EXPECT_EQ(s.max_split_size, 3ull << 30);
  EXPECT_EQ(params_of_rule(split).text("max_split_size"), "3GiB");
  EXPECT_FALSE(rule_from_params<threshold_split>(params_of_rule(threshold_split::never())).enabled);

  growth_rule g;
  g.kind = growth_kind::proportional;
  g.backoff = 0.5;
  g.backoff_to_need = true;
  g.small_segment = 3 << 20;
  growth_rule const h = rule_from_params<growth_rule>(params_of_rule(g));
  EXPECT_EQ(h.kind, growth_kind::proportional);
  EXPECT_EQ(h.backoff, 0.5);
  EXPECT_TRUE(h.backoff_to_need);
  EXPECT_EQ(h.small_segment, 3u << 20);
  EXPECT_EQ(params_of_rule(g).text("growth"), "proportional");

  quantum_size_rule z;
  z.power_of_two_classes = true;
  z.header = 8;
  EXPECT_EQ(params_of_rule(z).text("size_classes"), "pow2");
  EXPECT_TRUE(rule_from_params<quantum_size_rule>(params_of_rule(z)).power_of_two_classes);
  EXPECT_EQ(rule_from_params<quantum_size_rule>(params_of_rule(z)).header, 8u);

  EXPECT_EQ(rule_from_params<coalescing>(params_of_rule(coalescing{coalesce_mode::buddy})).mode, coalesce_mode::buddy);
  EXPECT_EQ(rule_from_params<segregated_index_params>(params_of_rule(segregated_index_params{4, 128})).sli, 4u);
}

TEST(RuleParameters, AWordNotTheRulesIsRefusedNamingTheWords)
{
  param_set p;
  p.set("growth", "expnential");
  try {
    (void)rule_from_params<growth_rule>(p);
    FAIL() << "a misspelt growth kind was read";
  } catch (std::invalid_argument const& e) {
    EXPECT_EQ(std::string(e.what()),
              "parameter growth: expected one of fixed, doubling, exact, segments, proportional, got 'expnential'");
  }
  p = {};
  p.set("size_classes", "true");  // a bool with words takes only its words
  EXPECT_THROW((void)rule_from_params<quantum_size_rule>(p), std::invalid_argument);
  p = {};
  p.set("per_stream", "yes");  // a plain flag takes any of the flag words
  EXPECT_TRUE(rule_from_params<stream_pool_rule>(p).per_stream);
  p.set("size_class_pools", "true");
  EXPECT_THROW(rule_from_params<stream_pool_rule>(p).validate(), std::invalid_argument);
}

}  // namespace
}  // namespace fraglab
