// TensorFlow's BFC allocator as its own log records it (TF_CPP_VMODULE=bfc_allocator=4; docs/
// tensorflow.md): every allocation and free with its address, and every region the allocator
// acquired, for each allocator the log names (bfc_cpu_allocator_for_gpu, GPU_0_bfc, XLA's).
//
// The lines read, by their text (TF's source line numbers change between versions):
//   [mem-debug] AllocateRaw,NAME,BYTES,PTR,STACK     after an allocation (PTR null: it failed)
//   [mem-debug] DeallocateRaw,NAME,BYTES,PTR,STACK   before a free
//   Extending allocation by SIZE bytes for NAME.     a region is about to be acquired ...
//   Allocated memory at X to Y                       ... and here it is
//   Deallocate region with ptr = X                   garbage collection gave a region back
//   Returning: PTR  /  F: OCCUPANCY                   written under the allocator's lock
// STACK spans lines from "*** Begin stack trace ***" to "*** End stack trace ***"; every other
// line (the program's output, TF's other logging) is skipped.
//
// Order. TF writes the allocation line after releasing its lock and the free line before
// taking it, so with several threads the two can appear out of the allocator's order. At
// verbosity 4 each event also writes a line under the lock (Returning: after an allocation, F:
// after a free, on the same thread: the glog prefix names it), and the reader places each
// event there: the order of those lines is the order of the lock. A log without them is the
// allocator's order only if one thread allocated and freed (`order_known()`).
#pragma once

#include <fraglab/runtime/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab::trace {

enum class tf_op : std::uint8_t { alloc, failed_alloc, free, region, region_free };

struct tf_event {
  tf_op op;
  std::uint64_t address = 0;  // the block returned or freed; the region's base
  std::uint64_t size = 0;     // requested bytes (alloc, failed_alloc); the region's bytes
  std::size_t line = 0;       // the log's line that records it, for messages
  std::uint32_t site = 0;     // where it was allocated: tf_bfc_log::sites
};

struct tf_allocator_log {
  std::string name;
  std::vector<tf_event> events;  // in the allocator's order (see above)
  std::size_t threads = 0;       // threads that allocated or freed through it
  bool lock_ordered = true;      // every event placed by a line written under the lock
  // A log that starts mid-run: frees of blocks allocated before its first line (dropped),
  // and allocations outside every region it shows acquired.
  std::size_t unknown_frees = 0;
  std::size_t outside_regions = 0;

  [[nodiscard]] bool order_known() const noexcept { return lock_ordered || threads <= 1; }
  [[nodiscard]] bool starts_mid_run() const noexcept { return unknown_frees > 0 || outside_regions > 0; }
};

struct tf_bfc_log {
  std::string name;                          // the file's name, without directories
  std::vector<tf_allocator_log> allocators;  // in the order the log first names them
  std::vector<std::string> sites{""};        // call sites (tf_call_site), [0] = none
  // The CPU allocator's limit, where the log says it (fraglab record-tf writes
  // `fraglab record-tf: TF_CPU_BFC_MEM_LIMIT_IN_MB=N` first): TF's default is 64 GiB.
  std::optional<std::uint64_t> cpu_memory_limit;
  std::size_t cut_at_line = 0;  // the log ends inside an entry (its last line is incomplete); 0: it does not
};

// Whether a file's first bytes are TF's logging with the BFC allocator's lines in them.
bool looks_like_tf_bfc_log(std::string_view head) noexcept;

// Throws input_error (FILE:LINE: what was expected) on a BFC line that does not parse, on an
// address returned again while the log still has it live (an order no allocator can have),
// and on a log without a single allocation.
tf_bfc_log read_tf_bfc_log(std::string const& path);

// Where a TF allocation came from, from its stack's frames (innermost first): the innermost op
// kernel (`...::Compute`, `...::ComputeAsync`), else the innermost frame outside the allocator
// and the tensor machinery that wraps it; the function's name without its parameter list.
std::string tf_call_site(std::vector<std::string_view> const& frames);

// One trace per allocator, named FILE@NAME when the log holds several: its allocations and
// frees (those of blocks allocated before the log began left out), its regions as
// recorded_segments, its failed allocations as recorded_failures.
std::vector<trace> tf_log_traces(tf_bfc_log const& log);

// What a replay of this allocator's log can and cannot stand for, in a sentence; empty when
// the log is complete and in the allocator's order.
std::string tf_log_caveats(tf_bfc_log const& log, tf_allocator_log const& a);

}  // namespace fraglab::trace
