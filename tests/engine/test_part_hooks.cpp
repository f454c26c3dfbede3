// A part that offers every optional hook of its kind, composed and run: the engine calls each
// declared hook where engine/concepts.hpp says it does (engine/part_traits.hpp resolves them).
// tests/engine/check_part_hooks.py checks the other side: a hook declared but misspelt, or
// defined but not declared, does not compile.
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>
#include <fraglab/policies/policy.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace fraglab {
namespace {

constexpr std::size_t KiB = 1024;

// Counts every call; before_growth and after_failed_growth release what is idle, as
// PyTorch's rule may.
struct counting_reclaim {
  static constexpr part_hook hooks = part_hook::on_search | part_hook::after_free | part_hook::clock |
                                     part_hook::before_growth | part_hook::after_failed_growth;
  int searches = 0, frees = 0, clocks = 0, before = 0, after_failed = 0;
  std::size_t last_free_size = 0;

  template <class Key>
  void on_search(Key const&) { ++searches; }
  template <class View>
  void after_free(View&, std::size_t size, bool, std::uintptr_t)
  {
    ++frees;
    last_free_size = size;
  }
  std::uint64_t clock() { return static_cast<std::uint64_t>(++clocks); }
  template <class View, class Key>
  void before_growth(View&, Key const&, std::size_t) { ++before; }
  template <class View, class Key>
  bool after_failed_growth(View& view, Key const&, std::size_t)
  {
    ++after_failed;
    std::vector<std::uintptr_t> idle;
    view.for_each_free_region([&](auto const& r) { idle.push_back(r.base); });
    bool released = false;
    for (std::uintptr_t base : idle) released = view.release(base) || released;
    return released;
  }
};

// A pool rule that offers all three of its hooks: requests of 64 KiB or more get a mapping of
// their own; no pool is expandable (reservation is empty); size classes are off.
struct full_pool_rule {
  static constexpr part_hook hooks = part_hook::reservation | part_hook::mapping_size | part_hook::size_class_pools;
  bool size_class_pools = false;
  mutable int reservations = 0;
  [[nodiscard]] std::uint64_t pool_key(stream_id, std::size_t) const noexcept { return 0; }
  [[nodiscard]] std::optional<reservation_spec> reservation(std::uint64_t) const noexcept
  {
    ++reservations;
    return std::nullopt;
  }
  [[nodiscard]] std::size_t mapping_size(std::size_t need, bool) const noexcept { return need >= 64 * KiB ? need : 0; }
};

using hooked = policy<tree_index, best_fit, threshold_split, coalescing, growth_rule, quantum_size_rule, full_pool_rule,
                      counting_reclaim>;

TEST(PartHooks, EveryDeclaredHookOfAReclaimAndAPoolRuleIsCalled)
{
  using A = allocator<hooked, simulated_backend>;
  A::config cfg;
  cfg.growth.memory_limit = 64 * KiB;  // the heap holds one 64 KiB region at most
  cfg.growth.kind = growth_kind::exact;
  A a(simulated_backend{}, cfg);
  auto const first = a.allocate(48 * KiB);
  ASSERT_TRUE(first);
  EXPECT_EQ(a.configuration().reclaim.searches, 1);
  EXPECT_EQ(a.configuration().reclaim.before, 1);  // the first allocation is a miss
  EXPECT_EQ(a.configuration().pools.reservations, 1);  // asked once, when the pool is made

  // Freed, the region is idle: the clock is stamped on it, and after_free sees the chunk.
  EXPECT_EQ(a.deallocate(first.block()), free_status::ok);
  EXPECT_EQ(a.configuration().reclaim.frees, 1);
  EXPECT_EQ(a.configuration().reclaim.clocks, 1);
  EXPECT_EQ(a.configuration().reclaim.last_free_size, 48 * KiB);

  // 60 KiB does not fit the idle 48 KiB region, and growing past the limit fails: the rule
  // releases the idle region and the engine grows once more.
  auto const second = a.allocate(60 * KiB);
  ASSERT_TRUE(second);
  EXPECT_EQ(a.configuration().reclaim.after_failed, 1);
  EXPECT_EQ(a.stats().regions, 1u);

  // A request of the mapping size gets a mapping of its own, a region beside the heap's.
  auto const mapped = a.allocate(64 * KiB);
  ASSERT_TRUE(mapped);
  EXPECT_EQ(a.stats().regions, 2u);
  EXPECT_EQ(a.deallocate(mapped.block()), free_status::ok);
  EXPECT_EQ(a.stats().regions, 1u);  // a mapping goes back as soon as its block is freed
  EXPECT_EQ(a.deallocate(second.block()), free_status::ok);
  EXPECT_EQ(a.check_invariants(), "");
}

}  // namespace
}  // namespace fraglab
