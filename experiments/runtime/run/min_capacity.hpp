// `fraglab capacity`: the least memory each policy serves each trace in, by bisection over
// the backend's capacity.
#pragma once

#include <fraglab/runtime/io/progress_meter.hpp>
#include <fraglab/runtime/run/results_table.hpp>
#include <fraglab/runtime/run/run_inputs.hpp>

#include <functional>

namespace fraglab {

// The least capacity, a whole number of `granularity`, that `serves`: bisection below `upper`
// bytes (doubled first while it does not serve), on the assumption, true of every policy here
// when memory is only added, that more capacity never causes a failure. `progress`, when
// set, is told of each step, and of the steps it comes to need (add_total).
std::size_t least_capacity(std::function<bool(std::size_t)> const& serves, std::size_t granularity, std::size_t upper,
                           progress_meter* progress = nullptr);

// Refuses (std::invalid_argument) a capacity given (the search sets it) and policies that
// cannot run together (make_compositions).
void check_min_capacity_inputs(run_inputs const& in);

// One row a (trace, policy): min_capacity_bytes (the smallest capacity with no failed
// allocation, to the backend's granularity), peak_reserved_unlimited, granularity and
// replays (the bisection's steps). Replays stop at their first failure; `stop`, when set,
// cancels them (replay_options::stop).
results_table min_capacities(run_inputs const& in, std::atomic<bool> const* stop = nullptr);

}  // namespace fraglab
