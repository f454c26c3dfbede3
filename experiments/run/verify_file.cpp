#include "experiments/run/verify_file.hpp"

#include "experiments/trace/input_error.hpp"
#include "experiments/trace/read_trace.hpp"

#include <stdexcept>

namespace fraglab {

void check_is_snapshot(std::string const& path)
{
  // Another format read as a pickle would fail on a length its bytes happen to spell.
  if (trace::trace_format const f = trace::detect_format(path); f != trace::trace_format::pytorch_snapshot)
    throw input_error(path + ": " + std::string(trace::to_string(f)) +
                      ", not a PyTorch memory snapshot (torch.cuda.memory._snapshot(), pickled)");
}

void check_verify_policy(std::string const& policy)
{
  if (policy != "auto" && policy != "pytorch_caching" && policy != "pytorch_expandable")
    throw std::invalid_argument("-p: only pytorch_caching and pytorch_expandable can be verified against PyTorch snapshots, got '" +
                                policy + "'");
}

verified_file verify_file(std::string const& path, std::string const& policy, std::optional<int> device)
{
  check_verify_policy(policy);
  check_is_snapshot(path);
  trace::pytorch_snapshot s = trace::read_pytorch_snapshot(path);
  presets::pytorch::settings const settings = settings_for_verify(s);
  verified_file v{path, s.settings.expandable_segments ? "pytorch_expandable" : "pytorch_caching", settings.expandable_segments, {}, {}};
  if (policy != "auto" && policy != v.preset)
    throw std::invalid_argument(path + ": recorded with expandable_segments=" + (s.settings.expandable_segments ? "True" : "False") +
                                ", which is " + v.preset + ", not " + policy);
  if (device) {
    std::erase_if(s.devices, [&](trace::device_snapshot const& d) { return d.device != *device; });
    if (s.devices.empty()) throw input_error(path + ": no device cuda:" + std::to_string(*device) + " in it");
  }
  if (s.devices.empty()) throw input_error(path + ": no events: expected at least one allocation");
  try {
    v.results = verify_pytorch_snapshot(s, settings);
  } catch (std::invalid_argument const& e) {  // a start state the preset cannot hold
    throw input_error(path + ": " + e.what());
  }
  for (verify_result const& r : v.results) v.labels.push_back(trace::device_label(s, r.device));
  return v;
}

std::vector<std::string> verify_columns()
{
  return {"trace",      "preset",       "addresses_matched", "addresses_total", "segments_matched", "segments_total", "maps_matched",
          "maps_total", "ooms_matched", "ooms_total",        "restored_blocks", "restored_segments", "verdict",       "first_mismatch"};
}

std::vector<std::string> verify_row(verified_file const& v, std::size_t i)
{
  verify_result const& r = v.results[i];
  auto const n = [](std::uint64_t value) { return std::to_string(value); };
  return {v.labels[i],
          v.preset,
          n(r.addresses_matched),
          n(r.addresses_total),
          n(r.segments_matched),
          n(r.segments_total),
          n(r.maps_matched),
          n(r.maps_total),
          n(r.ooms_matched),
          n(r.ooms_total),
          n(r.restored_blocks),
          n(r.restored_segments),
          r.empty() ? "nothing to verify" : r.complete() ? "matched" : "mismatched",
          r.first_mismatches.empty() ? ""
                                     : "device_traces[" + n(static_cast<std::uint64_t>(r.device)) + "][" + n(r.first_mismatches.front().event) +
                                           "]: " + r.first_mismatches.front().what};
}

}  // namespace fraglab
