// The presets written as C++ types (policies/presets/classic.hpp, tlsf.hpp, rmm_pool.hpp),
// built from C++ alone with their make_config, make every decision their names make through
// the registry, on a randomized sequence of allocations and frees; and the registry's
// defaults for those names are their configs'.
#include <fraglab/policies/presets/classic.hpp>
#include <fraglab/policies/presets/rmm_pool.hpp>
#include <fraglab/policies/presets/tlsf.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/registry/config_from_params.hpp>
#include "support/fixtures.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

namespace fraglab::testing {
namespace {

namespace classic = presets::classic;

template <class Policy>
void same_decisions(std::string const& name, typename allocator<Policy, heap_backend>::config const& config)
{
  SCOPED_TRACE(name);
  allocator<Policy, heap_backend> direct(heap_backend{}, config);
  auto named = make_composition(name, {}, {})->make();
  std::mt19937_64 rng(7);
  std::vector<std::uintptr_t> live;
  for (int op = 0; op < 4000; ++op) {
    if (live.empty() || rng() % 5 < 3) {
      // Mostly small, some pages, a few large: every size class and region path.
      std::size_t const kind = rng() % 20;
      std::size_t const size = kind < 14 ? 1 + rng() % 512 : kind < 19 ? 1 + rng() % (64 * KiB) : 1 + rng() % (4 * MiB);
      auto const a = direct.allocate(size);
      auto const b = named->allocate(size);
      ASSERT_EQ(a.address, b.address) << "allocation " << op << " of " << size;
      ASSERT_EQ(a.size, b.size);
      live.push_back(a.address);
    } else {
      std::size_t const k = rng() % live.size();
      ASSERT_EQ(direct.deallocate(live[k]), named->deallocate(live[k]));
      live[k] = live.back();
      live.pop_back();
    }
  }
  EXPECT_EQ(direct.stats().reserved_bytes, named->stats().reserved_bytes);
  EXPECT_EQ(direct.stats().peak_reserved_bytes, named->stats().peak_reserved_bytes);
  EXPECT_EQ(direct.check_invariants(), "");
}

TEST(PresetsAsTypes, BuiltFromCppAloneTheyDecideAsTheirNames)
{
  same_decisions<classic::first_fit_policy>("first_fit", classic::make_config<classic::first_fit_policy, heap_backend>());
  same_decisions<classic::first_fit_lifo_policy>("first_fit_lifo",
                                                 classic::make_config<classic::first_fit_lifo_policy, heap_backend>());
  same_decisions<classic::first_fit_fifo_policy>("first_fit_fifo",
                                                 classic::make_config<classic::first_fit_fifo_policy, heap_backend>());
  same_decisions<classic::next_fit_policy>("next_fit", classic::make_config<classic::next_fit_policy, heap_backend>());
  same_decisions<classic::best_fit_policy>("best_fit", classic::make_config<classic::best_fit_policy, heap_backend>());
  same_decisions<classic::worst_fit_policy>("worst_fit", classic::make_config<classic::worst_fit_policy, heap_backend>());
  same_decisions<classic::buddy_policy>("buddy", classic::make_buddy_config<heap_backend>());
  same_decisions<classic::segregated_pow2_policy>("segregated_pow2", classic::make_segregated_pow2_config<heap_backend>());
  same_decisions<presets::tlsf::policy>("tlsf", presets::tlsf::make_config<heap_backend>());
  same_decisions<presets::rmm::policy>("rmm_pool", presets::rmm::make_config<heap_backend>());
}

// What the registry applies for a name is its preset's config, where it differs from the
// table: RMM's pool as pool_memory_resource is configured, TLSF and first fit nothing.
TEST(PresetsAsTypes, ANamesDefaultsAreItsPresetsConfig)
{
  using values = std::map<std::string, std::string>;
  EXPECT_EQ(registry_detail::preset_defaults(presets::rmm::make_config<heap_backend>()).values(),
            (values{{"backoff", "0.5"},
                    {"backoff_to_need", "true"},
                    {"growth", "proportional"},
                    {"growth_factor", "1"},
                    {"initial_region", "256MiB"},
                    {"min_size", "256"},
                    {"quantum", "256"}}));
  EXPECT_EQ(registry_detail::preset_defaults(classic::make_segregated_pow2_config<heap_backend>()).values(),
            (values{{"coalesce", "never"}, {"size_class_pools", "true"}, {"size_classes", "pow2"}}));
  EXPECT_EQ(registry_detail::preset_defaults(classic::make_buddy_config<heap_backend>()).values(),
            (values{{"coalesce", "buddy"}, {"size_classes", "pow2"}}));
  EXPECT_TRUE(registry_detail::preset_defaults(presets::tlsf::make_config<heap_backend>()).values().empty());
  auto finer_tlsf = presets::tlsf::make_config<heap_backend>();
  finer_tlsf.index.sli = 4;  // an index parameter is a default too where it differs
  EXPECT_EQ(registry_detail::preset_defaults(finer_tlsf).values(), (values{{"sli", "4"}}));
  EXPECT_TRUE(
      registry_detail::preset_defaults(classic::make_config<classic::first_fit_policy, heap_backend>()).values().empty());
  EXPECT_EQ(make_composition("rmm_pool", {}, {})->params().text("initial_region"), "256MiB");
}

}  // namespace
}  // namespace fraglab::testing
