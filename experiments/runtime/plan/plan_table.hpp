// The rows of `fraglab plan`: one an input, its placement's height, its proven bound and how
// they were found.
#pragma once

#include <fraglab/policies/offline/planner.hpp>
#include <fraglab/runtime/plan/offline_problem.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fraglab::plan {

std::vector<std::string> plan_columns();
// `capacity`: offline::no_capacity when none was given (an empty cell).
std::vector<std::string> plan_row(offline_input const& in, offline::plan_result const& r, std::uint64_t capacity);
// Why `r` does not fit `capacity`: proven, or none found in `seconds`.
std::string no_fit_reason(offline_input const& in, offline::plan_result const& r, std::uint64_t capacity, double seconds);

}  // namespace fraglab::plan
