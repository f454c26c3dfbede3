// The offline placement problem of an input: a MiniMalloc CSV as it is, or a trace's
// allocations as buffers whose lifetimes the trace tells (policies/offline/, docs/offline.md).
#pragma once

#include <fraglab/policies/offline/problem.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fraglab::plan {

// How a CSV's upper column counts a buffer's last step: MiniMalloc's `upper` is the first step
// a buffer is no longer live; IREE's and MindSpore SOMAS's exports give the last step it is
// live, as MiniMalloc's older `end` column does (docs/offline.md, "Lifetimes as their writers
// mean them").
enum class lifetimes { half_open, inclusive };
// "half-open" or "inclusive"; throws std::invalid_argument naming `option` otherwise.
lifetimes lifetimes_named(std::string const& option, std::string const& name);

struct offline_input {
  std::string name;             // as result rows name the input
  offline::problem problem;
  std::vector<std::string> ids;  // per buffer, the CSV's id; empty for a trace, whose ids are the buffers' lower ends
  // A CSV's times as it wrote them, for the placement written back: the time step the
  // problem's 0 stands for (its earliest lower, which may be negative), the name of its last
  // column of time (`upper` or `end`) and whether that counts the last step live.
  std::int64_t time_origin = 0;
  std::string upper_column = "upper";
  bool inclusive = false;
};

// A trace's allocations: the n-th event is time step n (and the id of a buffer allocated
// there); a buffer lives from its allocation
// to its free, or to the end when never freed. A free of an id not live is left out (as
// replay leaves it out); cache releases take no time and change nothing.
offline_input offline_problem(trace::trace const& t);

// Whether the file is meant as MiniMalloc's CSV: its first line begins with one of
// MiniMalloc's column names and a comma.
bool is_minimalloc_csv(std::string const& path);

// MiniMalloc's CSV, a buffer a row, its columns named by the header in any order, as
// MiniMalloc's converter reads them: `id` (or `buffer`, `buffer_id`), `lower` (or `start`,
// `begin`), `upper` (the buffer lives over [lower, upper), or [lower, upper] when read as
// lifetimes::inclusive) or `end` (the last step it lives, as MiniMalloc's older files give
// it), `size`; optionally `alignment` (a power of two), `gaps` and `offset`. Times are any
// 64-bit integers, negative too. Gaps (steps within its lifetime when a buffer need not hold
// its place) and offsets are read and left out: a placement of the buffers live throughout is
// one of the buffers with gaps too. Throws input_error(FILE:LINE: what was expected).
offline_input read_minimalloc_csv(std::string const& path, lifetimes read_as = lifetimes::half_open);

// The same CSV with an `offset` column: the planner's placement of every buffer, its times
// as the input gave them (the same columns, origin and convention).
std::string minimalloc_csv(offline_input const& in, std::vector<std::uint64_t> const& offsets);

}  // namespace fraglab::plan
