// Synthetic workloads, deterministic per seed.
//
// - phases: the behaviour Wilson et al. (1995, section 2.4) found in real programs and
//   synthetic models miss: ramps (memory accumulates), peaks (a burst allocated and then
//   freed), plateaus (a steady population turning over), with a few dominant sizes per
//   phase and long-lived objects outliving the phase that made them.
// - random: i.i.d. sizes and lifetimes, the model Wilson et al. warn misleads ("the
//   randomization of the request stream destroys the regularities of real programs");
//   provided as a contrast, not as a stand-in for programs.
#pragma once

#include <fraglab/runtime/trace/trace.hpp>
#include <fraglab/runtime/trace/trace_writer.hpp>

#include <cstdint>

namespace fraglab::gen {

struct phases_params {
  std::uint64_t seed = 1;
  std::size_t phases = 24;
  std::size_t objects_per_phase = 4000;
};

struct random_params {
  std::uint64_t seed = 1;
  std::size_t allocations = 100000;
  unsigned min_size_log2 = 4;   // sizes log-uniform in [2^min, 2^max)
  unsigned max_size_log2 = 14;
  std::size_t mean_lifetime = 1000;  // in allocations; uniform in [1, 2 * mean]
};

// Without `out` the events are in the returned trace; with it they go to `out` as they are
// made and the returned trace holds the name and counts only.
trace::trace generate_phases(phases_params const& p, trace::trace_writer* out = nullptr);
trace::trace generate_random(random_params const& p, trace::trace_writer* out = nullptr);

}  // namespace fraglab::gen
