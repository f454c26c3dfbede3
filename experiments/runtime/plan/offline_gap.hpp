// The distance of a replay to the best offline placement of its trace: the columns that
// `replay --offline` and `sweep --offline` add (docs/offline.md).
#pragma once

#include <fraglab/runtime/trace/trace.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fraglab::plan {

struct offline_best {
  std::uint64_t best_bytes = 0;   // the lowest placement the planner found (validated)
  std::uint64_t lower_bytes = 0;  // proven: no placement is lower
  bool optimal = false;
};

// The planner on the trace's allocations, for at most `seconds`.
offline_best offline_best_of(trace::trace const& t, double seconds);

// The same for each trace that `needed` marks (a shard needs only its cells' traces), `jobs`
// at a time; the others are left empty.
std::vector<offline_best> offline_bests(std::vector<trace::trace const*> const& traces, std::vector<bool> const& needed, double seconds,
                                        unsigned jobs);

// offline_best_bytes, offline_lower_bytes, offline_optimal, gap_to_offline.
std::vector<std::string> offline_columns();
// gap_to_offline: the replay's peak reserved bytes over the offline best, minus 1.
std::vector<std::string> offline_cells(offline_best const& best, std::uint64_t peak_reserved_bytes);

}  // namespace fraglab::plan
