// A PyTorch CUDA memory snapshot (torch.cuda.memory._dump_snapshot) as fraglab replays it:
// the allocator state when recording started, and the events recorded after it.
//
// Recording starts while the allocator already holds segments and live blocks; the pickle
// only has the state at the end (`segments`). The start state is recovered by walking the
// trace backwards from it: a segment_alloc means the segment did not exist before it, a
// segment_free that it did; an alloc that its block was not live before it, a
// free_completed that it was. A block live at the start whose size the snapshot does not
// record is given the rounded size PyTorch would have given it (under the recorded rounding
// settings), plus the tail PyTorch left unsplit behind it (up to 1 MiB in a large segment,
// 20 MiB behind an oversize block): up to the lowest allocation the trace places in that
// window while the block lives, else to the next live block when that is within it.
//
// PyTorch 2.0 recorded no block addresses: a block starts where the one before it in its
// segment's list ends, the first at the segment's address.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fraglab::trace {

struct snapshot_block {
  std::uint64_t address;
  std::uint64_t size;       // the block's size in the segment
  std::uint64_t requested;  // what the program asked for
  std::uint32_t site = 0;   // where it was allocated: device_snapshot::sites
};

struct snapshot_segment {
  std::uint64_t address;
  std::uint64_t size;
  std::uint64_t stream;
  bool small;  // PyTorch's small pool (2 MiB segments for requests <= 1 MiB)
  std::vector<snapshot_block> live;  // sorted by address
  // Expandable segments: the lowest address the snapshot shows mapped in this segment's
  // reservation at any time (the start, the end, in between), where it lies below the
  // segment; 0 where nothing does. PyTorch maps a reservation from its base, so that is
  // where its unmapped pages below the start state's first run begin.
  std::uint64_t reservation_base = 0;
};

// segment_map and segment_unmap: pages mapped into or unmapped from an expandable segment.
// oom: an allocation PyTorch could not serve; its address is the device's free bytes then
// and its size the rounded request, as PyTorch records them.
enum class snapshot_op : std::uint8_t { alloc, free, segment_alloc, segment_free, segment_map, segment_unmap, oom };

struct snapshot_event {
  snapshot_op op;
  std::uint64_t address;
  std::uint64_t size;  // requested bytes for alloc/free, segment bytes for segments
  std::uint64_t stream;
  std::uint32_t index = 0;  // its place in the device's list in device_traces, as PyTorch numbers it
  // Where the block was allocated (device_snapshot::sites), for alloc and free alike: PyTorch
  // records a free with the stack of its allocation.
  std::uint32_t site = 0;
};

// allocator_settings as the presets take them. A key that changes the allocator's decisions
// and is not modelled, at a value other than its default, is listed in `unmodelled` (KEY=VALUE)
// for the caller to refuse; keys that change nothing a replay decides (pinned host memory,
// locking) are ignored.
struct recorded_settings {
  std::int64_t max_split_size = -1;  // -1: unlimited
  // From the PYTORCH_CUDA_ALLOC_CONF text recorded beside the parsed values (it has no field of
  // its own): max_non_split_rounding_mb, in bytes; -1: PyTorch's default (20 MiB).
  std::int64_t max_non_split_rounding = -1;
  std::array<std::size_t, 16> roundup_power2_divisions{};  // [k]: sizes in [2^k, 2^(k+1)) MiB; [0] below 2 MiB
  double garbage_collection_threshold = 0.0;
  bool expandable_segments = false;
  std::vector<std::string> unmodelled;
};

struct device_snapshot {
  int device = 0;
  std::vector<snapshot_segment> initial_segments;  // sorted by address
  std::vector<snapshot_event> events;              // alloc, free_completed, segment_alloc/free/map/unmap
  std::size_t recorded_ooms = 0;                   // `oom` entries: allocations PyTorch could not serve
  // Entries of actions this reader does not know (a newer PyTorch's), by name, with their
  // count: left out of the replay, and said so (trace::notes).
  std::map<std::string, std::size_t> unknown_actions;
  // The call sites (call_site.hpp) of the recording's stack frames, [0] = "" for none; empty
  // where it recorded no frames.
  std::vector<std::string> sites;
  // The private pools (torch.cuda.MemPool, a CUDA graph's) its segments at the end belong to,
  // as segment_pool_id "(A, B)": PyTorch keeps their blocks apart from the default pools',
  // which no preset models yet, so a replay refuses them by name.
  std::vector<std::string> private_pools;
};

struct pytorch_snapshot {
  std::string name;
  // One per device that held segments or recorded events (each device has an allocator of
  // its own in PyTorch), in device order.
  std::vector<device_snapshot> devices;
  std::size_t recorded_devices = 0;  // devices the recording covers, those without memory included
  recorded_settings settings;
};

// Throws input_error naming the file and what was expected.
pytorch_snapshot read_pytorch_snapshot(std::string const& path);

// How results name a device's allocator: the file's name, with @cuda:N when the recording
// covered several devices.
inline std::string device_label(pytorch_snapshot const& s, int device)
{
  return s.recorded_devices <= 1 ? s.name : s.name + "@cuda:" + std::to_string(device);
}

}  // namespace fraglab::trace
