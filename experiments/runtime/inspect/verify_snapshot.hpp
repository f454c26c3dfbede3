// Replays a PyTorch memory snapshot under the pytorch_caching preset (pytorch_expandable when
// it was recorded with expandable segments) and compares every decision with the one PyTorch
// recorded: each allocation's address, each new segment (taken from the trace's own
// segment_alloc at the moment the preset asks for one, and matched when the preset asks for
// exactly that size then), each segment_free (matched when the preset holds that segment
// wholly free at that point and releases it), and in expandable segments each segment_map
// (matched when the preset maps exactly those pages then) and each segment_unmap (matched
// when emptying the preset's cache there unmaps exactly those pages); and each `oom` (matched
// when the preset, given no more memory than the device had free then, fails too).
#pragma once

#include <fraglab/policies/presets/pytorch_caching.hpp>
#include <fraglab/runtime/trace/pytorch_snapshot.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fraglab {

struct verify_mismatch {
  std::size_t event;  // the entry's index in the device's list in device_traces
  std::string what;
};

// One device's allocator, checked. The denominators: every `alloc` recorded after recording
// started (blocks already live then are restored, not checked), and every segment_alloc and
// segment_free.
struct verify_result {
  int device = 0;
  std::uint64_t addresses_matched = 0;
  std::uint64_t addresses_total = 0;
  std::uint64_t segments_matched = 0;
  std::uint64_t segments_total = 0;
  std::uint64_t maps_matched = 0;  // expandable segments: segment_map and segment_unmap entries
  std::uint64_t maps_total = 0;
  std::uint64_t restored_blocks = 0;     // live when recording started
  std::uint64_t restored_segments = 0;   // held when recording started
  std::uint64_t ooms_matched = 0;  // `oom` entries where the preset fails too, given what the device had free
  std::uint64_t ooms_total = 0;
  std::vector<verify_mismatch> first_mismatches;  // up to 10, for the report

  // Records a mismatch at `where` (a snapshot's entry, a log's line) among the first ten.
  void mismatch(std::size_t where, std::string what)
  {
    if (first_mismatches.size() < 10) first_mismatches.push_back({where, std::move(what)});
  }

  // Nothing was recorded after the start state: there is no decision to compare.
  [[nodiscard]] bool empty() const noexcept
  {
    return addresses_total == 0 && segments_total == 0 && maps_total == 0 && ooms_total == 0;
  }
  [[nodiscard]] bool complete() const noexcept
  {
    return addresses_matched == addresses_total && segments_matched == segments_total && maps_matched == maps_total &&
           ooms_matched == ooms_total;
  }
};

// The preset's settings from the snapshot's allocator_settings (expandable_segments: the
// pytorch_expandable preset); throws std::invalid_argument naming a setting that changes
// decisions and is not modelled here, at a value other than its default.
presets::pytorch::settings settings_for_verify(trace::pytorch_snapshot const& s);

// One result per device, in the snapshot's order.
std::vector<verify_result> verify_pytorch_snapshot(trace::pytorch_snapshot const& s,
                                                   presets::pytorch::settings const& settings = {});

}  // namespace fraglab
