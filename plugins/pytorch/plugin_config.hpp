// How the PyTorch plug-in is configured: environment variables read once, before the first
// allocation, because torch.cuda.memory.CUDAPluggableAllocator passes nothing but the two
// entry points.
//
// | variable          | default          | meaning                                                   |
// |-------------------|------------------|-----------------------------------------------------------|
// | FRAGLAB_POLICY    | pytorch_caching  | a preset or composition (`fraglab policies`)              |
// | FRAGLAB_SET       | (none)           | KEY=VALUE[;KEY=VALUE...] parameters, as `--set` takes      |
// | FRAGLAB_BACKEND   | cuda             | cuda, cuda_async or cuda_vmm (host: tests without a GPU)  |
// | FRAGLAB_CAPACITY  | the device       | a memory limit in bytes, e.g. 8GiB                        |
// | FRAGLAB_STATS     | 0                | 1: print each device's statistics to stderr at exit       |
#pragma once

#include <fraglab/runtime/params/param_set.hpp>

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>

namespace fraglab::plugin {

struct plugin_config {
  std::string policy = "pytorch_caching";
  param_set params;
  std::string backend = "cuda";
  std::size_t capacity = std::numeric_limits<std::size_t>::max();
  bool print_stats = false;
};

using environment = std::function<std::optional<std::string>(char const* name)>;

// The process's environment.
environment process_environment();

// Throws std::invalid_argument naming the variable and what it expected.
plugin_config read_config(environment const& env);

// Throws std::invalid_argument when the policy or a parameter is unknown, or a parameter
// does not apply to the policy: checked once at start, without a device, so that a typo
// stops the program instead of surfacing as "out of memory" at its first allocation.
void validate(plugin_config const& c);

}  // namespace fraglab::plugin
