// docs/adding-a-policy.md, compiled and run: the fit its walkthrough writes
// (policies/fits/exact_or_worst_fit.hpp beside this file), the tests of its step 3, the
// typed suites of step 3 over its composition, the registry row of step 4, and the preset of
// step 7 (policies/presets/tagged_best_fit.hpp beside this file). The
// walkthrough's C++ in step 2 is compose_example.cpp, built and run as a test of its own.
// tests/docs/check_doc_code.py checks that every C++ block of the document is text of
// these files, so that the document shows code that compiles and passes.
#include <fraglab/backends/heap_backend.hpp>
#include <fraglab/policies/policy.hpp>
#include "engine/conformance_suite.hpp"
#include "engine/randomized_invariants_suite.hpp"
#include <fraglab/policies/fits/exact_or_worst_fit.hpp>
#include <fraglab/policies/presets/tagged_best_fit.hpp>
#include <fraglab/runtime/registry/composition_impl.hpp>
#include <fraglab/runtime/registry/config_from_params.hpp>
#include <fraglab/runtime/registry/instantiations.hpp>
#include "support/scenarios.hpp"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>
#include <vector>

namespace fraglab::testing {
namespace {

// Step 3.1: the decisions, worked out by hand.
TEST(FitDecisions, ExactOrWorstFitPrefersExactChunks)
{
  EXPECT_EQ((two_choices<policy<tree_index, exact_or_worst_fit>>()), (choice{0, 1280}));
}

TEST(FitDecisions, ExactOrWorstFitTakesTheLargestChunkWhenNoneIsExact)
{
  // Free after the two frees: 512@0, 1024@768 and the pool's tail, 2048@2048.
  auto a = fixed_pool<policy<tree_index, exact_or_worst_fit>>(4096);
  auto const at = [&](std::size_t n) { return a->allocate(n).address - sim_base; };
  std::uintptr_t const first = at(512);
  ASSERT_EQ(at(256), 512u);
  std::uintptr_t const second = at(1024);
  ASSERT_EQ(at(256), 1792u);
  a->deallocate(sim_base + first);
  a->deallocate(sim_base + second);
  EXPECT_EQ(at(256), 2048u);  // no 256-byte chunk: the largest, not best fit's 512@0
  EXPECT_EQ(at(1024), 768u);  // an exact one
}

}  // namespace

// Step 3.2: the pair, in a list like those of policies/compositions.hpp, and the conformance
// contract and the randomized invariants on it, as tests/support/compositions.hpp gives them
// to every composition there.
using walkthrough_list = composition_list<policy<tree_index, exact_or_worst_fit>>;
using walkthrough_compositions = as_gtest_types<walkthrough_list>::type;
INSTANTIATE_TYPED_TEST_SUITE_P(Walkthrough, Conformance, walkthrough_compositions, composition_names);
INSTANTIATE_TYPED_TEST_SUITE_P(Walkthrough, RandomizedInvariants, walkthrough_compositions, composition_names);

}  // namespace fraglab::testing

namespace fraglab::registry_detail {
namespace {

// Step 4.1: the registry's row for the pair, made as experiments/runtime/registry/instantiate_*.cpp
// make theirs from policies/compositions.hpp's lists.
TEST(Walkthrough, TheRegistryRowBuildsTheComposition)
{
  static constexpr auto table = instantiations_of(testing::walkthrough_list{});
  ASSERT_EQ(table[0].index, "tree");
  ASSERT_EQ(table[0].fit, "exact_or_worst");
  auto const c = table[0].make("compose:index=tree,fit=exact_or_worst", param_set{}, backend_choice{"simulated"});
  auto const a = c->make();
  allocation const got = a->allocate(1000);
  EXPECT_TRUE(got);
  EXPECT_EQ(a->deallocate(got.block()), free_status::ok);
  EXPECT_EQ(a->check_invariants(), "");
}

}  // namespace
}  // namespace fraglab::registry_detail

namespace fraglab {
namespace {

// Step 7.2: the preset's defaults for its row in experiments/runtime/registry/registry.cpp.
param_set tagged_best_fit_defaults()
{
  return registry_detail::preset_defaults(presets::tagged_best_fit::make_config<any_backend>());
}

// Step 7.2: its row, as it reads in registry.cpp's `names`.
constexpr named_composition row{"tagged_best_fit", "fine_bins", "best", &tagged_best_fit_defaults,
                                "best fit with glibc's 8-byte header and 32-byte minimum chunk"};

// Step 7.3: built from C++ alone, the preset decides as its row does through the registry.
TEST(Walkthrough, ThePresetDecidesAsItsRow)
{
  EXPECT_EQ(row.defaults().values(), (std::map<std::string, std::string>{{"header", "8"}, {"min_size", "32"}}));
  namespace preset = presets::tagged_best_fit;
  allocator<preset::policy, heap_backend> direct(heap_backend{}, preset::make_config<heap_backend>());
  // What make_composition(row.name, ...) builds once the row is in the table.
  auto const named = make_composition("compose:index=fine_bins,fit=best", row.defaults(), {})->make();
  std::vector<std::uintptr_t> live;
  for (std::size_t i = 1; i <= 3000; ++i) {
    if (i % 3 == 0) {
      std::size_t const k = (i * 7919) % live.size();
      ASSERT_EQ(direct.deallocate(live[k]), named->deallocate(live[k]));
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      continue;
    }
    std::size_t const size = 1 + (i * 2654435761u) % 3000;
    auto const a = direct.allocate(size);
    ASSERT_EQ(a.address, named->allocate(size).address) << "allocation " << i;
    EXPECT_EQ(a.size % 16, 0u);
    live.push_back(a.address);
  }
  EXPECT_EQ(direct.stats().peak_reserved_bytes, named->stats().peak_reserved_bytes);
}

}  // namespace
}  // namespace fraglab
