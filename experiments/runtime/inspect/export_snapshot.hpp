// Any policy's replay of a trace as a PyTorch memory snapshot (torch.cuda.memory._snapshot()'s
// dict, pickled): what PyTorch's viewers (pytorch.org/memory_viz, torch.cuda._memory_viz)
// draw, for every policy, and what `fraglab verify` and every reader here read back.
//
// The snapshot has PyTorch's shape: `segments` is the state at the end, `device_traces` the
// decisions from the start, so that a reader walks back from the end to the start as it does
// for a recording. A start state the allocator restores (a PyTorch preset replaying a real
// snapshot) is therefore not recorded as allocations, as PyTorch did not record it either.
// - alloc (addr, size: the block handed out, requested_size), free_requested and
//   free_completed;
// - segment_alloc and segment_free for each region the policy acquires and releases,
//   segment_map and segment_unmap where a region grows or shrinks where it is (an expandable
//   segment, a heap's top);
// - oom for an allocation the policy could not serve, with the memory the backend had free.
// Stack frames are empty lists; segment_type is small for a region of 2 MiB (PyTorch's small
// pool's segments), else large.
#pragma once

#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <ostream>

namespace fraglab {

// Writes the pickle (protocol 4) to `out` as the replay goes. `expandable_segments`: the
// policy is pytorch_expandable, as allocator_settings then says (with max_split_size when the
// policy sets max_split_size_mb).
void export_pytorch_snapshot(composition const& c, trace::trace const& t, bool expandable_segments, std::ostream& out);

}  // namespace fraglab
