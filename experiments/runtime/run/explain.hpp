// `fraglab explain`: why a recorded PyTorch program ran out of memory, or what its peak was
// made of. The recording is replayed under the preset that reproduces it (its own settings,
// the replay `verify` checks) up to the failed request, and the allocator's state there is
// read: the memory the program could have had (the allocator's reserved bytes plus what the
// device still had free, as the `oom` entry records it), the live blocks, and the free blocks
// stranded inside segments that live blocks keep from being given back. The verdict follows:
//   real demand        the live blocks and the request exceed that memory: no allocator serves it;
//   fragmentation      they fit, but the allocator as recorded fails within it: no free block of
//                      the request's pool is large enough, and no more could be reserved;
//   not the allocator  the allocator as recorded serves the request within that memory: the
//                      device's free bytes were not all its to take.
// Then, as `fraglab tune` searches, the settings users tune (expandable_segments,
// max_split_size_mb, roundup_power2_divisions, garbage_collection_threshold) are each replayed
// up to the request, with the request itself, within that memory: those that serve it.
#pragma once

#include <fraglab/runtime/run/results_table.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace fraglab {

struct explain_options {
  // Which recorded out-of-memory error (0: the first); without one in the recording, the
  // first peak of reserved bytes is explained.
  std::size_t failure = 0;
  unsigned jobs = 1;
};

struct explanation {
  std::string text;          // the answer, in lines of at most 120 columns
  results_table stranded;    // a row a free block in a segment that holds live blocks, the request's pool first
  results_table what_if;     // a row a setting: served or not, within the memory there was
  std::string recommended;   // the PYTORCH_CUDA_ALLOC_CONF that serves it with the fewest changes; empty: none does
  std::string preset;        // the recorded preset's spec, as replayed
  std::uint64_t events = 0;  // the moment explained: after this many of the trace's events
  bool out_of_memory = false;  // an OOM was explained (else the peak)
  bool fragmentation = false;  // the verdict, for an OOM: fragmentation (else real demand, or not the allocator)
};

// Throws std::invalid_argument for a trace not recorded by PyTorch's allocator (a snapshot's),
// one whose settings the presets do not model, and a failure number past the recorded ones.
explanation explain(trace::trace const& t, explain_options const& o);

}  // namespace fraglab
