// The locking wrapper under 8 threads allocating and freeing, with half the frees made by
// a thread other than the allocating one. Run under ThreadSanitizer by `.ci/run`.
#include <fraglab/backends/host_backend.hpp>
#include <fraglab/engine/locked_allocator.hpp>
#include <fraglab/policies/policy.hpp>
#include <fraglab/runtime/gen/rng.hpp>
#include "support/compositions.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace fraglab {
namespace {

TEST(LockedAllocator, EightThreadsWithCrossThreadFreesKeepTheHeapConsistent)
{
  using A = allocator<policy<tree_index, best_fit>, host_backend>;
  A::config c;
  c.growth.kind = growth_kind::doubling;
  c.growth.initial = 1 << 20;
  locked_allocator<A> shared(host_backend{}, c);
  constexpr int threads = 8, ops = 4000;
  std::mutex handoff_mutex;
  std::vector<std::uintptr_t> handoff;  // blocks one thread allocated for another to free
  std::atomic<int> bad{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      gen::rng r(static_cast<std::uint64_t>(t) + 1);
      std::vector<std::pair<std::uintptr_t, std::size_t>> mine;
      for (int i = 0; i < ops; ++i) {
        if (mine.empty() || r.chance(55)) {
          std::size_t const size = r.log_uniform(3, 12);
          auto got = shared.allocate(size);
          if (!got) {
            ++bad;
            continue;
          }
          std::memset(got.pointer(), t, size);  // real memory: writes must not collide
          if (r.chance(50)) {
            std::lock_guard lock(handoff_mutex);
            handoff.push_back(got.address);
          } else {
            mine.emplace_back(got.address, size);
          }
        } else {
          auto [address, size] = mine.back();
          mine.pop_back();
          auto const* bytes = reinterpret_cast<unsigned char const*>(address);
          for (std::size_t k = 0; k < size; ++k)
            if (bytes[k] != static_cast<unsigned char>(t)) {
              ++bad;
              break;
            }
          if (shared.deallocate(address) != free_status::ok) ++bad;
        }
        if (r.chance(10)) {
          std::uintptr_t victim = 0;
          {
            std::lock_guard lock(handoff_mutex);
            if (!handoff.empty()) {
              victim = handoff.back();
              handoff.pop_back();
            }
          }
          if (victim != 0 && shared.deallocate(victim) != free_status::ok) ++bad;
        }
      }
      for (auto [address, size] : mine)
        if (shared.deallocate(address) != free_status::ok) ++bad;
    });
  }
  for (auto& th : pool) th.join();
  for (std::uintptr_t a : handoff) EXPECT_EQ(shared.deallocate(a), free_status::ok);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(shared.check_invariants(), "");
  auto const s = shared.stats();
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.allocations, s.deallocations);
  EXPECT_EQ(s.free_chunks, s.regions);
}

}  // namespace
}  // namespace fraglab
