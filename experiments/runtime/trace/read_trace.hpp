// Reads any trace fraglab understands, detecting the format from the content: the native
// binary format (by its magic), a pickle (a PyTorch memory snapshot), RMM's logging CSV (by
// its header), TensorFlow's log with its BFC allocator's lines (tf_bfc_log.hpp), or else the
// native text format.
#pragma once

#include <fraglab/runtime/trace/pytorch_snapshot.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab::trace {

enum class trace_format { native_text, native_binary, rmm_csv, pytorch_snapshot, tf_bfc_log };

std::string_view to_string(trace_format f) noexcept;

trace_format detect_format(std::string const& path);

// Which allocator of a recording that holds several: a PyTorch snapshot's device (N or
// cuda:N), or a TensorFlow log's allocator by its name (GPU_0_bfc, bfc_cpu_allocator_for_gpu).
struct allocator_choice {
  std::optional<int> device;
  std::string name;

  allocator_choice(int d) : device(d) {}  // NOLINT(google-explicit-constructor): a device number is a choice
  // N or cuda:N is a device; anything else a name. Throws std::invalid_argument for an empty text.
  static allocator_choice parse(std::string_view text);
  [[nodiscard]] bool matches(trace const& t) const noexcept;
  [[nodiscard]] std::string text() const;

 private:
  allocator_choice() = default;
};

// Every trace a file holds: one, or one per allocator, for a PyTorch snapshot per device
// (each device has an allocator of its own), named FILE@cuda:N when the recording covered
// several, and for a TF log per allocator named, FILE@NAME. `which` keeps only that one's.
// Throws input_error (FILE:LINE or FILE: byte OFFSET) on malformed input, and for a file
// without events. A native binary trace is opened, not loaded: its events are decoded on
// each pass (trace::streamed()).
std::vector<trace> read_traces(std::string const& path, std::optional<allocator_choice> which = std::nullopt);

// The one trace a file holds; a recording of several allocators needs `which`.
trace read_trace(std::string const& path, std::optional<allocator_choice> which = std::nullopt);

// A snapshot as plain traces, one per device, for replay under any policy: the blocks live
// when recording started become allocations at the start (in address order), then every
// alloc and free_completed follows, and an op::release where the program emptied the cache.
// The other segment events are the recorded allocator's decisions, not the program's, and are
// left out; `oom` entries are the trace's recorded_failures.
std::vector<trace> snapshot_traces(pytorch_snapshot const& s);

}  // namespace fraglab::trace
