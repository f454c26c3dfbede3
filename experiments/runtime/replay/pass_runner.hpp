// One allocator kept across repeated passes over one trace, for benchmarks. A long-running
// program's allocator is warm: its regions are acquired and its index is populated. A
// benchmark that built a fresh allocator per pass would time the first acquisitions from
// the OS instead, and would flatter the system allocators, whose heaps outlive any pass.
#pragma once

#include <cstdint>

namespace fraglab {

struct pass_timing {
  std::uint64_t events = 0;          // events of the pass
  std::uint64_t timed_events = 0;    // events after the untimed prefix
  std::uint64_t failed = 0;          // allocations that could not be served
  std::uint64_t leftover_frees = 0;  // blocks still live at the end, freed outside the clock
  double allocator_ns = 0;           // the timed events' allocator work
};

class pass_runner {
 public:
  virtual ~pass_runner() = default;
  // One pass through the replay loop (replay.hpp): the first `untimed_prefix` events (a
  // benchmark's set-up) outside the clock, then the rest timed; then every block still live
  // is freed, outside the clock, so that the next pass starts from the same kind of state.
  virtual pass_timing run(std::uint64_t untimed_prefix = 0) = 0;
};

}  // namespace fraglab
