// Replays a PyTorch memory snapshot under the pytorch_caching preset and compares every
// decision with the one PyTorch recorded: each allocation's address, each new segment
// (taken from the trace's own segment_alloc at the moment the preset asks for one, and
// matched when the preset asks for exactly that size then), and each segment_free (matched
// when the preset holds that segment wholly free at that point and releases it).
#pragma once

#include "experiments/trace/pytorch_snapshot.hpp"
#include "policies/presets/pytorch_caching.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace fraglab {

struct verify_mismatch {
  std::size_t event;  // index in the device's event list
  std::string what;
};

struct verify_result {
  std::uint64_t addresses_matched = 0;
  std::uint64_t addresses_total = 0;
  std::uint64_t segments_matched = 0;
  std::uint64_t segments_total = 0;
  std::vector<verify_mismatch> first_mismatches;  // up to 10, for the report

  [[nodiscard]] bool complete() const noexcept
  {
    return addresses_matched == addresses_total && segments_matched == segments_total;
  }
};

verify_result verify_pytorch_snapshot(trace::pytorch_snapshot const& s, presets::pytorch::settings const& settings = {});

}  // namespace fraglab
