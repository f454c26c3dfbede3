// One row of results: a trace replayed under one allocator. Metric definitions are in
// docs/metrics.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fraglab {

struct replay_options {
  bool strict = false;           // a free of an unknown id or a reused live id is fatal
  bool stop_on_failure = false;  // stop at the first allocation that cannot be served
  unsigned repeats = 1;          // timed runs; ns_per_op is their median (0: no timing)
};

struct replay_result {
  std::string trace;
  std::string policy;
  std::uint64_t events = 0;
  std::uint64_t allocs = 0;
  std::uint64_t frees = 0;
  std::uint64_t failed_allocs = 0;
  std::uint64_t unknown_frees = 0;     // frees of ids not live (never allocated, or freed already)
  std::uint64_t duplicate_allocs = 0;  // allocations under an id that is still live (skipped)
  std::size_t peak_live_bytes = 0;
  std::size_t peak_allocated_bytes = 0;
  std::size_t peak_reserved_bytes = 0;
  double frag1 = 0;  // time-average of reserved/live - 1
  double frag2 = 0;  // reserved/live - 1 when live peaks
  double frag3 = 0;  // reserved/live - 1 when reserved peaks
  double frag4 = 0;  // peak reserved / peak live - 1
  double ext_frag_at_peak = 0;  // TF's (free - largest free) / free when reserved peaks
  std::size_t free_chunks_at_peak = 0;
  std::uint64_t acquisitions = 0;
  std::uint64_t releases = 0;
  double index_steps_per_op = 0;
  double ns_per_op = 0;
};

}  // namespace fraglab
