// alloc+free pairs per index at 1e3 .. 1e6 live chunks, with as many free chunks spread
// between them (every other block freed, so nothing coalesces). Each iteration frees a
// random live block and allocates a random size in its place: the steady state of a long
// replay. O(log n) and O(1) indexes should stay flat; the address-ordered list is a scan by
// definition, so it runs only up to 1e5.
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/fits.hpp>
#include <fraglab/policies/indexes/address_ordered_tree_index.hpp>
#include <fraglab/policies/indexes/bins_index.hpp>
#include <fraglab/policies/indexes/list_index.hpp>
#include <fraglab/policies/indexes/segregated_index.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>
#include <fraglab/policies/policy.hpp>
#include <fraglab/runtime/gen/rng.hpp>

#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

namespace fraglab {
namespace {

template <class P>
void alloc_free_pairs(benchmark::State& state)
{
  using A = allocator<P, simulated_backend>;
  typename A::config c;
  c.growth.kind = growth_kind::doubling;
  c.growth.initial = std::size_t{64} << 20;
  A a(simulated_backend{}, c);
  auto const live_target = static_cast<std::size_t>(state.range(0));
  gen::rng r(1);
  std::vector<std::uintptr_t> live;
  live.reserve(live_target);
  for (std::size_t i = 0; i < 2 * live_target; ++i) {
    auto got = a.allocate(r.log_uniform(4, 12));
    if (i % 2 == 0) live.push_back(got.address);
    else a.deallocate(got.address);
  }
  std::vector<std::size_t> sizes(4096);
  for (auto& s : sizes) s = r.log_uniform(4, 12);
  std::vector<std::size_t> victims(4096);
  for (auto& v : victims) v = r.uniform(0, live.size() - 1);
  std::size_t k = 0;
  for (auto _ : state) {
    std::size_t const i = victims[k % victims.size()];
    a.deallocate(live[i]);
    live[i] = a.allocate(sizes[k % sizes.size()]).address;
    ++k;
  }
  state.counters["free_chunks"] = static_cast<double>(a.stats().free_chunks);
  state.counters["steps_per_pair"] = static_cast<double>(a.index_steps()) / static_cast<double>(2 * live_target + k);
}

using bins_best = policy<bins_index, best_fit>;
using tree_best = policy<tree_index, best_fit>;
using ao_first = policy<address_ordered_tree_index, first_fit>;
using ao_next = policy<address_ordered_tree_index, next_fit>;
using seg_good = policy<segregated_index, good_fit>;
using seg_best = policy<segregated_index, best_fit>;
using list_ao_first = policy<address_ordered_list_index, first_fit>;

BENCHMARK_TEMPLATE(alloc_free_pairs, bins_best)->Name("bins/best")->RangeMultiplier(10)->Range(1000, 1000000);
BENCHMARK_TEMPLATE(alloc_free_pairs, tree_best)->Name("tree/best")->RangeMultiplier(10)->Range(1000, 1000000);
BENCHMARK_TEMPLATE(alloc_free_pairs, ao_first)->Name("ao_tree/first")->RangeMultiplier(10)->Range(1000, 1000000);
BENCHMARK_TEMPLATE(alloc_free_pairs, ao_next)->Name("ao_tree/next")->RangeMultiplier(10)->Range(1000, 1000000);
BENCHMARK_TEMPLATE(alloc_free_pairs, seg_good)->Name("seglist/good")->RangeMultiplier(10)->Range(1000, 1000000);
BENCHMARK_TEMPLATE(alloc_free_pairs, seg_best)->Name("seglist/best")->RangeMultiplier(10)->Range(1000, 1000000);
BENCHMARK_TEMPLATE(alloc_free_pairs, list_ao_first)->Name("list_ao/first")->RangeMultiplier(10)->Range(1000, 100000);

}  // namespace
}  // namespace fraglab

BENCHMARK_MAIN();
