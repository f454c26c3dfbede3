#include <fraglab/runtime/run/verify_file.hpp>

#include <fraglab/runtime/inspect/verify_tf_bfc.hpp>
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>
#include <fraglab/runtime/trace/tf_bfc_log.hpp>

#include <stdexcept>

namespace fraglab {

trace::trace_format check_is_verifiable(std::string const& path)
{
  // Another format read as a pickle would fail on a length its bytes happen to spell.
  trace::trace_format const f = trace::detect_format(path);
  if (f != trace::trace_format::pytorch_snapshot && f != trace::trace_format::tf_bfc_log)
    throw input_error(path + ": " + std::string(trace::to_string(f)) +
                      ", not a PyTorch memory snapshot (torch.cuda.memory._snapshot(), pickled) nor a TensorFlow BFC log "
                      "(fraglab record-tf): verify compares a real allocator's recorded decisions");
  return f;
}

void check_verify_policy(std::string const& policy)
{
  if (policy != "auto" && policy != "pytorch_caching" && policy != "pytorch_expandable" && policy != "tf_bfc")
    throw std::invalid_argument("-p: only pytorch_caching and pytorch_expandable (against PyTorch snapshots) and tf_bfc (against "
                                "TensorFlow BFC logs) can be verified, got '" +
                                policy + "'");
}

namespace {

verified_file verify_tf_log(std::string const& path, std::string const& policy, std::optional<trace::allocator_choice> const& which)
{
  if (policy != "auto" && policy != "tf_bfc")
    throw std::invalid_argument(path + ": a TensorFlow BFC log, which is tf_bfc's, not " + policy + "'s");
  trace::tf_bfc_log log = trace::read_tf_bfc_log(path);
  verified_file v{path, "tf_bfc", false, true, {}, {}, {}};
  if (which) {
    if (which->device) throw std::invalid_argument("--device: a TensorFlow log's allocators are chosen by name, got " + which->text());
    std::string names;
    for (auto const& a : log.allocators) names += (names.empty() ? "" : ", ") + a.name;
    std::erase_if(log.allocators, [&](trace::tf_allocator_log const& a) { return a.name != which->name; });
    if (log.allocators.empty()) throw input_error(path + ": no allocator " + which->name + " in it (it holds " + names + ")");
  }
  for (auto const& a : log.allocators) {
    std::string const label = log.allocators.size() == 1 && !which ? log.name : log.name + "@" + a.name;
    if (a.starts_mid_run()) throw input_error(label + ": " + trace::tf_log_caveats(log, a));
    v.results.push_back(verify_tf_allocator(a, settings_for_verify(log, a)));
    v.labels.push_back(label);
    v.caveats.push_back(trace::tf_log_caveats(log, a));
  }
  return v;
}

}  // namespace

verified_file verify_file(std::string const& path, std::string const& policy, std::optional<trace::allocator_choice> which)
{
  check_verify_policy(policy);
  if (check_is_verifiable(path) == trace::trace_format::tf_bfc_log) return verify_tf_log(path, policy, which);
  if (policy == "tf_bfc") throw std::invalid_argument(path + ": a PyTorch memory snapshot, which tf_bfc did not record");
  if (which && !which->device) throw std::invalid_argument("--device: a PyTorch snapshot's allocators are devices (N or cuda:N), got " + which->name);
  std::optional<int> const device = which ? which->device : std::nullopt;
  trace::pytorch_snapshot s = trace::read_pytorch_snapshot(path);
  presets::pytorch::settings const settings = settings_for_verify(s);
  verified_file v{path, s.settings.expandable_segments ? "pytorch_expandable" : "pytorch_caching", settings.expandable_segments, false, {}, {}, {}};
  if (policy != "auto" && policy != v.preset)
    throw std::invalid_argument(path + ": recorded with expandable_segments=" + (s.settings.expandable_segments ? "True" : "False") +
                                ", which is " + v.preset + ", not " + policy);
  if (device) {
    std::erase_if(s.devices, [&](trace::device_snapshot const& d) { return d.device != *device; });
    if (s.devices.empty()) throw input_error(path + ": no device cuda:" + std::to_string(*device) + " in it");
  } else {  // the devices that recorded something: one row each
    std::erase_if(s.devices, [](trace::device_snapshot const& d) {
      return d.initial_segments.empty() && d.events.empty() && d.recorded_ooms == 0;
    });
  }
  if (s.devices.empty()) throw input_error(path + ": no events: expected at least one allocation");
  try {
    v.results = verify_pytorch_snapshot(s, settings);
  } catch (std::invalid_argument const& e) {  // a start state the preset cannot hold
    throw input_error(path + ": " + e.what());
  }
  for (verify_result const& r : v.results) v.labels.push_back(trace::device_label(s, r.device));
  v.caveats.resize(v.results.size());
  return v;
}

std::string mismatch_place(verified_file const& v, verify_result const& r, verify_mismatch const& m)
{
  if (v.tf_log) return "line " + std::to_string(m.event);
  return "device_traces[" + std::to_string(r.device) + "][" + std::to_string(m.event) + "]";
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
                                     : mismatch_place(v, r, r.first_mismatches.front()) + ": " + r.first_mismatches.front().what};
}

}  // namespace fraglab
