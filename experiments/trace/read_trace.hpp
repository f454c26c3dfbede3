// Reads any trace fraglab understands, detecting the format from the content: the native
// binary format (by its magic), a pickle (a PyTorch memory snapshot), RMM's logging CSV (by
// its header), or else the native text format.
#pragma once

#include "experiments/trace/pytorch_snapshot.hpp"
#include "experiments/trace/trace.hpp"

#include <string>
#include <string_view>

namespace fraglab::trace {

enum class trace_format { native_text, native_binary, rmm_csv, pytorch_snapshot };

std::string_view to_string(trace_format f) noexcept;

trace_format detect_format(std::string const& path);

// Throws input_error (FILE:LINE or FILE: byte OFFSET) on malformed input. A native binary
// trace is opened, not loaded: its events are decoded on each pass (trace::streamed()).
trace read_trace(std::string const& path);

// A snapshot as a plain trace, for replay under any policy: the blocks live when recording
// started become allocations at the start (in address order), then every alloc and
// free_completed follows. Segment events are the recorded allocator's decisions, not the
// program's, and are left out.
trace snapshot_to_trace(pytorch_snapshot const& s);

}  // namespace fraglab::trace
