// What the benchmarks measure, each behind the same replay loop: a fraglab policy over the
// host backend (or a CUDA backend), the process's malloc, the floor (bump_allocator.hpp),
// or CUDA's own allocators (cuda_runtime_allocators.hpp).
#pragma once

#include <fraglab/runtime/replay/pass_runner.hpp>
#include <fraglab/runtime/replay/replay_result.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fraglab::bench {

struct subject {
  std::string name;  // the policy's name (with @address when freed by address), glibc/jemalloc/mimalloc/tcmalloc, or bump
  std::function<std::unique_ptr<pass_runner>(trace::trace const&)> runner;
  bool scans = false;  // a classic list policy: its cost grows with the free list by definition
};

// A fraglab policy, freed by the reference its allocation returned (as `fraglab replay`
// frees) or by address (as a program plugged in by pointer frees; named NAME@address).
// Throws std::invalid_argument on an unknown name or backend.
subject policy_subject(std::string const& name, std::string const& backend = "host", free_by frees = free_by::reference);
subject malloc_subject();
subject floor_subject();
// cudaMalloc and cudaMallocAsync; throws where there is no device or no CUDA Toolkit.
std::vector<subject> cuda_runtime_subjects();
// The device the CUDA subjects run on, for the benchmark's context.
std::string cuda_device_name();

// A trace with every event in memory, named by its file name up to the first dot: no
// benchmark pass decodes a file.
trace::trace load_in_memory(std::string const& path);

}  // namespace fraglab::bench
