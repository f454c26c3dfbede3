// `fraglab tune`: which PYTORCH_CUDA_ALLOC_CONF serves a recorded program best. Its trace is
// replayed under PyTorch's allocator (policies/presets/pytorch_caching.hpp, exact on
// recordings) across a grid of the settings users tune by hand, and the one with the lowest
// peak reserved bytes, or with --capacity the one that fits with the most memory to spare,
// is recommended with the numbers that chose it.
#pragma once

#include <fraglab/runtime/run/results_table.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace fraglab {

struct tune_setting {
  std::string conf;   // as PYTORCH_CUDA_ALLOC_CONF spells it; empty: PyTorch's defaults
  std::string spec;   // the preset and every tuned key, explicitly (a recorded value never leaks in)
  int changed = 0;    // keys away from their defaults: fewer wins a tie
};

// expandable_segments x max_split_size_mb x roundup_power2_divisions, and with a memory
// limit (`limited`) garbage_collection_threshold for the segments it is modelled with.
std::vector<tune_setting> tune_grid(bool limited);

struct tune_result {
  results_table table;       // a row a (device, setting), the recorded settings first
  std::string recommended;   // the conf recommended; empty: the defaults
  bool fits = true;          // some setting serves every device within the capacity
  std::string reasoning;     // lines a user can check, ending with the command that does
};

// One program's recording (a trace a device); `capacity`, when given, is each device's
// memory. Throws std::invalid_argument when a device's recording holds settings the presets
// do not model, whose effect no replay could show. `stop` cancels (replay_options::stop).
tune_result tune(std::vector<trace::trace const*> const& devices, std::optional<std::size_t> capacity, unsigned jobs,
                 std::atomic<bool> const* stop = nullptr);

}  // namespace fraglab
