// What the benchmarks measure, each behind the same replay loop: a fraglab policy over the
// host backend, the process's malloc, or the floor (bump_allocator.hpp).
#pragma once

#include "experiments/replay/pass_runner.hpp"
#include "experiments/trace/trace.hpp"

#include <functional>
#include <memory>
#include <string>

namespace fraglab::bench {

struct subject {
  std::string name;  // the policy's name, glibc/jemalloc/mimalloc/tcmalloc, or bump
  std::function<std::unique_ptr<pass_runner>(trace::trace const&)> runner;
  bool scans = false;  // a classic list policy: its cost grows with the free list by definition
};

subject policy_subject(std::string const& name);  // throws std::invalid_argument on an unknown name
subject malloc_subject();
subject floor_subject();

// A trace with every event in memory, named by its file name up to the first dot: no
// benchmark pass decodes a file.
trace::trace load_in_memory(std::string const& path);

}  // namespace fraglab::bench
