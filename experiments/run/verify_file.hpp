// `fraglab verify` of one file: a PyTorch snapshot replayed under the preset its settings ask
// for, every recorded decision compared (experiments/replay/verify_snapshot.hpp), and the
// one row a device that `--format` and the Python module show.
#pragma once

#include "experiments/replay/verify_snapshot.hpp"

#include <optional>
#include <string>
#include <vector>

namespace fraglab {

struct verified_file {
  std::string path;
  std::string preset;        // pytorch_expandable when recorded with expandable segments, else pytorch_caching
  bool expandable = false;
  std::vector<std::string> labels;     // one a device, as rows name it
  std::vector<verify_result> results;  // one a device
};

// Throws std::invalid_argument unless `policy` is auto, pytorch_caching or pytorch_expandable.
void check_verify_policy(std::string const& policy);
// Throws input_error when `path` is not a PyTorch memory snapshot (checked before it is read).
void check_is_snapshot(std::string const& path);

// `policy`: auto, pytorch_caching or pytorch_expandable, which must be the one the snapshot's
// settings ask for; `device`: one device's allocator only. Throws std::invalid_argument for a
// policy other than these or not the snapshot's, input_error for a device not in it, a
// snapshot with no device, or a start state the preset cannot hold.
verified_file verify_file(std::string const& path, std::string const& policy = "auto", std::optional<int> device = std::nullopt);

std::vector<std::string> verify_columns();
// Device `i` of `v` under verify_columns(): the counts, the verdict (matched, mismatched or
// nothing to verify) and the first mismatch as device_traces[DEVICE][ENTRY]: WHAT.
std::vector<std::string> verify_row(verified_file const& v, std::size_t i);

}  // namespace fraglab
