// The least of each part: an archetype that offers exactly the required expressions of
// docs/concepts.md and nothing else, composed into an allocator over an archetype backend
// and run. If the engine used anything a part's table does not list, this file would not
// compile; if it misread a listed expression, the decisions below would differ.
#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/fits.hpp>
#include <fraglab/policies/policy.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab::testing {
namespace {

// Backend: an address space that only grows (no reuse of released ranges).
struct archetype_backend {
  std::uintptr_t top = std::uintptr_t{1} << 32;
  std::size_t held = 0;
  acquisition acquire(std::size_t n, std::size_t alignment)
  {
    std::size_t const align = std::max<std::size_t>(alignment, 64);
    std::uintptr_t const base = (top + align - 1) / align * align;
    std::size_t const size = (n + 63) / 64 * 64;
    top = base + size;
    held += size;
    return {base, size};
  }
  bool release(std::uintptr_t, std::size_t n)
  {
    held -= n;
    return true;
  }
  std::size_t capacity() const { return std::size_t{1} << 40; }
  std::size_t granularity() const { return 64; }
  std::size_t acquired_bytes() const { return held; }
  bool supports_merging() const { return false; }
  std::string_view name() const { return "archetype"; }
};
static_assert(backend<archetype_backend>);

// Free index: the free chunks in a vector, searched in full; serves best fit alone.
struct archetype_index {
  struct params {};
  template <class C>
  struct hook {};
  template <class C>
  class index {
   public:
    explicit index(params = {}) {}
    void insert(C& c) { free_.push_back(&c); }
    void erase(C& c) { free_.erase(std::find(free_.begin(), free_.end(), &c)); }
    std::size_t size() const { return free_.size(); }
    C* largest()
    {
      C* best = nullptr;
      for (C* c : free_)
        if (best == nullptr || c->size > best->size || (c->size == best->size && c->address < best->address)) best = c;
      return best;
    }
    bool contains(C const& c) const { return std::find(free_.begin(), free_.end(), &c) != free_.end(); }
    std::string check() const { return {}; }
    std::uint64_t steps() const { return steps_; }
    template <class F>
    void for_each(F&& f) const
    {
      for (C const* c : free_) f(*c);
    }
    C* find_best(std::size_t n)
    {
      C* best = nullptr;
      for (C* c : free_) {
        ++steps_;
        if (c->size >= n && (best == nullptr || c->size < best->size || (c->size == best->size && c->address < best->address)))
          best = c;
      }
      return best;
    }

   private:
    std::vector<C*> free_;
    std::uint64_t steps_ = 0;
  };
};

struct archetype_split {
  bool should_split(std::size_t chunk, std::size_t rounded) const { return chunk - rounded >= 64; }
};

struct archetype_coalesce {
  coalesce_mode mode = coalesce_mode::immediate;
};

// Growth: regions of 4 KiB, or the request when larger; never gives back.
struct archetype_growth {
  void validate() const {}
  growth_decision acquisition(growth_context const& ctx) { return {std::max<std::size_t>(ctx.need, 4096)}; }
  void on_acquired(std::size_t) {}
  std::size_t on_refused(growth_context const&, std::size_t) { return 0; }
  bool release_free_regions = false;
  bool release_would_help(growth_context const&, std::size_t) const { return false; }
};

struct archetype_size {
  std::optional<std::size_t> round(std::size_t n) const
  {
    if (n > (std::size_t{1} << 62)) return std::nullopt;
    return (std::max<std::size_t>(n, 1) + 63) / 64 * 64;
  }
  std::size_t granule() const { return 64; }
  void validate() const {}

};

// One pool for every stream and size.
struct archetype_pools {
  int pool_key(std::uint64_t, std::size_t) const { return 0; }
};

struct archetype_reclaim {};  // declares no hooks

using archetype_policy = policy<archetype_index, best_fit, archetype_split, archetype_coalesce, archetype_growth,
                                archetype_size, archetype_pools, archetype_reclaim>;
using archetype_allocator = allocator<archetype_policy, archetype_backend>;

constexpr std::uintptr_t base = std::uintptr_t{1} << 32;

TEST(PartArchetypes, ComposeIntoAnAllocatorThatDecidesAsTheirRulesSay)
{
  archetype_allocator a{archetype_backend{}};
  allocation const x = a.allocate(100);  // 128 of a 4 KiB region
  allocation const y = a.allocate(1000);  // 1024 after it
  allocation const z = a.allocate(64);
  ASSERT_TRUE(x && y && z);
  EXPECT_EQ(x.address, base);
  EXPECT_EQ(y.address, base + 128);
  EXPECT_EQ(z.address, base + 1152);
  EXPECT_EQ(a.deallocate(x.address), free_status::ok);
  // Best fit: the 128-byte hole, not the 2880 bytes at the end.
  EXPECT_EQ(a.allocate(120).address, base);
  // 2880 free at the end: a 2860-byte request takes 2880 whole (a 0-byte remainder is not
  // split off), and the next request grows a region of its own.
  EXPECT_EQ(a.allocate(2860).address, base + 1216);
  allocation const w = a.allocate(5000);
  EXPECT_EQ(w.address, base + 4096);
  EXPECT_EQ(w.size, 5056u);
  EXPECT_EQ(a.counters().acquisitions, 2u);
  EXPECT_EQ(a.allocate(64, 3).status, alloc_status::bad_alignment);
  EXPECT_EQ(a.deallocate(base + 8), free_status::interior_pointer);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(PartArchetypes, KeepEveryInvariantOnRandomSequences)
{
  archetype_allocator a{archetype_backend{}};
  std::mt19937_64 rng(3);
  std::vector<std::uintptr_t> live;
  for (int step = 0; step < 3000; ++step) {
    if (rng() % 2 == 0 || live.empty()) {
      allocation const got = a.allocate(1 + rng() % 3000, std::size_t{1} << (rng() % 8));
      ASSERT_TRUE(got);
      live.push_back(got.address);
    } else {
      std::size_t const i = rng() % live.size();
      ASSERT_EQ(a.deallocate(live[i]), free_status::ok);
      live[i] = live.back();
      live.pop_back();
    }
    if (step % 50 == 0) {
      ASSERT_EQ(a.check_invariants(), "") << "step " << step;
    }
  }
  for (auto p : live) ASSERT_EQ(a.deallocate(p), free_status::ok);
  EXPECT_EQ(a.counters().allocated_bytes, 0u);
  EXPECT_EQ(a.check_invariants(), "");
}

}  // namespace
}  // namespace fraglab::testing
