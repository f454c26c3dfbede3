// A PyTorch CUDA memory snapshot (torch.cuda.memory._dump_snapshot) as fraglab replays it:
// the allocator state when recording started, and the events recorded after it.
//
// Recording starts while the allocator already holds segments and live blocks; the pickle
// only has the state at the end (`segments`). The start state is recovered by walking the
// trace backwards from it: a segment_alloc means the segment did not exist before it, a
// segment_free that it did; an alloc that its block was not live before it, a
// free_completed that it was. A block live at the start whose size the snapshot does not
// record is given the rounded size PyTorch would have given it, plus any tail too small to
// have been split off (<= 1 MiB in a large segment).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fraglab::trace {

struct snapshot_block {
  std::uint64_t address;
  std::uint64_t size;       // the block's size in the segment
  std::uint64_t requested;  // what the program asked for
};

struct snapshot_segment {
  std::uint64_t address;
  std::uint64_t size;
  std::uint64_t stream;
  bool small;  // PyTorch's small pool (2 MiB segments for requests <= 1 MiB)
  std::vector<snapshot_block> live;  // sorted by address
};

enum class snapshot_op : std::uint8_t { alloc, free, segment_alloc, segment_free };

struct snapshot_event {
  snapshot_op op;
  std::uint64_t address;
  std::uint64_t size;  // requested bytes for alloc/free, segment bytes for segments
  std::uint64_t stream;
};

struct device_snapshot {
  int device = 0;
  std::vector<snapshot_segment> initial_segments;  // sorted by address
  std::vector<snapshot_event> events;              // alloc, free_completed, segment_alloc, segment_free
};

struct pytorch_snapshot {
  std::string name;
  std::vector<device_snapshot> devices;
  bool expandable_segments = false;
  std::int64_t max_split_size = -1;  // as recorded in allocator_settings; -1: unlimited
};

// Throws input_error naming the file and what was expected.
pytorch_snapshot read_pytorch_snapshot(std::string const& path);

}  // namespace fraglab::trace
