// `fraglab info`: what a trace holds, one (statistic, value) a line, in the order printed.
#pragma once

#include <fraglab/runtime/trace/trace.hpp>

#include <string>
#include <utility>
#include <vector>

namespace fraglab {

// trace, format, events, allocs, frees, releases, recorded_failures, peak_live_bytes,
// peak_live_blocks, live_at_end_bytes, never_freed, streams, aligned_above_16, the size
// quantiles and the lifetime quantiles in events (docs/metrics.md).
std::vector<std::pair<std::string, std::string>> trace_statistics(trace::trace const& t);

}  // namespace fraglab
