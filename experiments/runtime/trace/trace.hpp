// A trace for replay: allocation and free events with trace ids mapped to dense slots at
// read time, so the replay loop indexes a vector instead of hashing ids. The events are
// either held in memory or, for a native binary file, read a batch at a time on every pass
// (event_batches.hpp), so that replay memory grows with live blocks, not trace length.
#pragma once

#include <fraglab/engine/concepts.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fraglab::trace {

// release: the program gave the allocator's cache back (torch.cuda.empty_cache(), or
// PyTorch's last resort before it reports out of memory): every region without a live block
// goes back to the backend. A release names a slot that no allocation names (native binary's
// slot 0, else one more than the ids use: give_releases_a_slot), so that the replay loop
// tells it from a free only where a free finds its slot empty.
enum class op : std::uint8_t { alloc, free, release };

struct event {
  op kind;
  std::uint32_t slot;          // dense id: the n-th distinct trace id seen
  std::size_t size = 0;        // requested bytes (allocations)
  std::size_t alignment = 1;   // power of two (allocations)
  std::uint64_t stream = 0;
};

// A recording's start (a snapshot's segments when recording began): regions of `size` bytes
// with the blocks then live in them, at offsets from the region's start. The trace's first
// events allocate the same blocks (start_events of them), so that any policy can replay it;
// a policy that can hold these regions (PyTorch's presets, whose segments they are) restores
// them instead and skips those events.
struct start_block {
  std::uint64_t offset;
  std::uint64_t size;       // the block's size in the segment
  std::uint64_t requested;
  std::uint32_t slot;
};
struct start_segment {
  std::uint64_t size;
  std::uint64_t stream;
  bool small;  // PyTorch's small pool
  std::vector<start_block> live;
};

// A streamed file held open from the moment it was read, so that every pass decodes what was
// there then: a file renamed over its name later is not read, and one written in place (its
// size or modification time moved) is refused. (Not the change time: unlinking the name moves it.)
struct pinned_file {
  int fd = -1;
  std::uint64_t size = 0;
  std::int64_t changed_ns = 0;  // st_mtim
  pinned_file() = default;
  pinned_file(pinned_file const&) = delete;
  pinned_file& operator=(pinned_file const&) = delete;
  ~pinned_file();  // closes fd
};

// An allocation the recorded program saw fail (a snapshot's `oom` entry): where, what it
// asked, and what the device had free then. Not an event: the replay never makes it.
struct recorded_failure {
  std::uint64_t before_event;  // the number of the trace's events before it
  std::uint64_t size;          // the request, rounded as the allocator rounded it
  std::uint64_t stream;
  std::uint64_t device_free;   // bytes free on the device, as the allocator asked the driver
  std::uint64_t entry;         // its place in the recording (device_traces[D][entry])
};

struct trace {
  std::string name;  // file name without directories, for result rows
  std::vector<event> events;  // in memory, unless streamed_from names a file
  std::string streamed_from;  // a native binary file, decoded a batch at a time per pass
  std::shared_ptr<pinned_file const> pinned;  // streamed_from held open since it was read, where it is a plain file
  std::string source_format;  // the format it was read from, as `fraglab info` names it
  std::uint64_t streamed_events = 0;
  std::size_t slots = 0;
  std::size_t allocs = 0;
  std::size_t frees = 0;
  std::size_t releases = 0;           // op::release events
  std::size_t recorded_failures = 0;  // allocations the recorded program saw fail (not replayed)
  std::vector<recorded_failure> failures;  // each, where the recording says where (a snapshot's)
  int device = 0;                     // the device a snapshot's trace was recorded on
  std::string allocator;              // the TF allocator a BFC log's trace was recorded from (GPU_0_bfc, ...)
  std::vector<start_segment> start_segments;  // empty but for a snapshot's trace
  std::uint64_t start_events = 0;             // the first events, which allocate start_segments' blocks
  // A snapshot's segments at the addresses the allocator got them at, in the order it got
  // them: those of the start state, then each segment_alloc. A replay under the allocator
  // that made them has its backend follow them (simulated_backend::follow), so that best
  // fit's ties between equal free blocks fall by the recorded addresses.
  std::vector<planned_segment> recorded_segments;
  // A snapshot's allocator settings that differ from PyTorch's defaults, as KEY=VALUE, ...:
  // what a PyTorch preset replays under its own settings instead (verify applies them).
  std::string recorded_settings;
  // The same as the PyTorch presets' parameters (KEY, VALUE), those they model: what a replay
  // under them applies unless told to ignore them.
  std::vector<std::pair<std::string, std::string>> recorded_parameters;
  bool recorded_expandable = false;  // a snapshot recorded with expandable_segments:True
  // Where each allocation came from, for a snapshot recorded with stack frames
  // (call_site.hpp): event_sites[i] indexes `sites` for events[i], 0 ("") where unknown.
  // Both empty for a trace without frames.
  std::vector<std::string> sites;
  std::vector<std::uint32_t> event_sites;
  // Its settings at values other than their defaults that the presets do not model, as
  // KEY=VALUE: a replay cannot say what they changed (verify and tune refuse them).
  std::vector<std::string> recorded_unmodelled;
  // A snapshot's private pools, as segment_pool_id "(A, B)": every replay refuses them, as no
  // preset keeps their blocks apart from the default pools' as PyTorch does.
  std::vector<std::string> private_pools;

  // What the reader left out or cannot vouch for, in sentences (`fraglab info` prints them):
  // a snapshot's entries of unknown actions, a TF log that starts mid-run.
  std::vector<std::string> notes;

  [[nodiscard]] bool streamed() const noexcept { return !streamed_from.empty(); }
  [[nodiscard]] std::uint64_t event_count() const noexcept { return streamed() ? streamed_events : events.size(); }
};

// Points every release of an in-memory trace at a slot of its own, one past the slots its
// ids use (call once, after the last event).
inline void give_releases_a_slot(trace& t)
{
  if (t.releases == 0) return;
  for (event& e : t.events)
    if (e.kind == op::release) e.slot = static_cast<std::uint32_t>(t.slots);
  ++t.slots;
}

// The file name without its directories: how result rows name a trace.
inline std::string file_base_name(std::string const& path)
{
  std::size_t const slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A text file's first line without the UTF-8 byte-order mark that editors on Windows (and
// spreadsheets saving CSV) put in front of it: invisible in a message, it made an RMM CSV
// read as native text and refused at its header.
inline std::string_view without_utf8_bom(std::string_view first_line) noexcept
{
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  return first_line.substr(0, bom.size()) == bom ? first_line.substr(bom.size()) : first_line;
}

}  // namespace fraglab::trace
