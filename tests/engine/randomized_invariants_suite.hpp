// Randomized invariants: thousands of random alloc/free sequences through every
// composition, on the simulated backend (separate and merging acquisitions) and the heap
// backend, with immediate, deferred and no coalescing, varied size distributions,
// alignments, streams and capacities. check_invariants() runs after every step. Seeds are
// fixed and printed on failure (SCOPED_TRACE in drive()). A type-parameterised suite,
// instantiated by test_compositions_trees.cpp and test_compositions_lists.cpp: one
// translation unit each, so that the build compiles the halves in parallel.
#pragma once

#include "support/compositions.hpp"
#include "support/fixtures.hpp"
#include "support/random_driver.hpp"

#include <gtest/gtest.h>

namespace fraglab::testing {

template <class P>
class RandomizedInvariants : public ::testing::Test {};
TYPED_TEST_SUITE_P(RandomizedInvariants);

constexpr coalesce_mode modes[] = {coalesce_mode::immediate, coalesce_mode::deferred, coalesce_mode::never};

inline sequence_spec spec_for(std::uint64_t seed)
{
  sequence_spec s;
  s.seed = seed;
  s.steps = 250;
  s.shape = static_cast<size_shape>(seed % 3);
  s.aligned_percent = seed % 4 == 0 ? 15 : 0;
  s.streams = seed % 5 == 0 ? 3 : 1;
  return s;
}

template <class P, class B>
typename alloc_t<P, B>::config config_for(std::uint64_t seed, coalesce_mode mode)
{
  typename alloc_t<P, B>::config c;
  c.coalesce.mode = mode;
  c.size.quantum = seed % 2 == 0 ? 16 : 256;
  c.size.min_size = c.size.quantum;
  c.pools.per_stream = seed % 10 == 0;
  if (seed % 3 == 1) {
    c.growth.kind = growth_kind::doubling;
    c.growth.initial = 256 * KiB;
  }
  if (seed % 7 == 3) {
    c.split.ratio = 2.0;
    c.split.max_internal_fragmentation = 4 * KiB;
  }
  if (seed % 6 == 5) c.growth.release_free_regions = true;
  return c;
}

constexpr std::uint64_t seeds_per_setting = 40;

TYPED_TEST_P(RandomizedInvariants, SimulatedBackend)
{
  for (coalesce_mode mode : modes)
    for (std::uint64_t seed = 1; seed <= seeds_per_setting; ++seed) {
      simulated_backend_params bp;
      bp.merging = seed % 2 == 1;
      bp.capacity = seed % 4 == 2 ? 512 * KiB : bp.capacity;  // some sequences run out
      alloc_t<TypeParam> a(simulated_backend(bp), config_for<TypeParam, simulated_backend>(seed, mode));
      drive(a, spec_for(seed));
      if (::testing::Test::HasFailure()) return;
    }
}

TYPED_TEST_P(RandomizedInvariants, HeapBackend)
{
  for (coalesce_mode mode : modes)
    for (std::uint64_t seed = 101; seed <= 100 + seeds_per_setting; ++seed) {
      heap_backend_params hp;
      hp.capacity = seed % 4 == 2 ? 768 * KiB : hp.capacity;
      auto cfg = config_for<TypeParam, heap_backend>(seed, mode);
      alloc_t<TypeParam, heap_backend> a(heap_backend(hp), cfg);
      drive(a, spec_for(seed));
      if (::testing::Test::HasFailure()) return;
    }
}

REGISTER_TYPED_TEST_SUITE_P(RandomizedInvariants, SimulatedBackend, HeapBackend);

}  // namespace fraglab::testing
