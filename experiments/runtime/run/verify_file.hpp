// `fraglab verify` of one file: a PyTorch snapshot replayed under the preset its settings ask
// for, or a TensorFlow BFC log under tf_bfc, every recorded decision compared
// (experiments/runtime/inspect/verify_snapshot.hpp, verify_tf_bfc.hpp), and the one row an allocator
// that `--format` and the Python module show.
#pragma once

#include <fraglab/runtime/inspect/verify_snapshot.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fraglab {

struct verified_file {
  std::string path;
  std::string preset;        // pytorch_expandable when recorded with expandable segments, else pytorch_caching; tf_bfc
  bool expandable = false;
  bool tf_log = false;       // a TF BFC log: mismatches are numbered by its lines, segments are regions
  std::vector<std::string> labels;     // one an allocator (a device's, a TF allocator's), as rows name it
  std::vector<verify_result> results;  // one an allocator
  std::vector<std::string> caveats;    // one an allocator: what its log cannot stand for (tf_log_caveats), or ""
};

// Throws std::invalid_argument unless `policy` is auto, pytorch_caching, pytorch_expandable or tf_bfc.
void check_verify_policy(std::string const& policy);
// Throws input_error when `path` is neither a PyTorch memory snapshot nor a TF BFC log
// (checked before it is read); returns which it is.
trace::trace_format check_is_verifiable(std::string const& path);

// `policy`: auto, or the preset the recording's allocator is (pytorch_caching or
// pytorch_expandable, as a snapshot's settings say; tf_bfc for a TF log); `which`: one
// allocator only. Throws std::invalid_argument for another policy, input_error for an
// allocator not in it, a recording with no allocator, a start state the preset cannot hold,
// or a TF log that starts mid-run.
verified_file verify_file(std::string const& path, std::string const& policy = "auto",
                          std::optional<trace::allocator_choice> which = std::nullopt);

// Where a mismatch is: device_traces[DEVICE][ENTRY] of a snapshot, line N of a TF log.
std::string mismatch_place(verified_file const& v, verify_result const& r, verify_mismatch const& m);

std::vector<std::string> verify_columns();
// Allocator `i` of `v` under verify_columns(): the counts, the verdict (matched, mismatched or
// nothing to verify) and the first mismatch as device_traces[DEVICE][ENTRY]: WHAT, or for a TF
// log line N: WHAT.
std::vector<std::string> verify_row(verified_file const& v, std::size_t i);

}  // namespace fraglab
