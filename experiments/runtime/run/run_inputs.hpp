// What a run of many cells (replay, sweep, capacity) is made from, checked the same way
// whether the command line or the Python module asks: the traces, the policy specs, the
// parameters and backend given for all of them, and how each cell's parameters follow.
#pragma once

#include <fraglab/runtime/params/param_set.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <algorithm>
#include <concepts>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab {

// The parameters given for every policy (--set) and the backend they run on.
struct allocator_options {
  param_set user;
  backend_choice backend;
};

struct run_inputs {
  std::vector<trace::trace const*> traces;  // read before the run, never copied by it; rows name them
  std::vector<std::string> specs;                      // checked by check_policy_specs
  allocator_options chosen;
  bool recorded = true;  // a snapshot's recorded allocator settings applied (cell_parameters)
  unsigned jobs = 1;     // cells run in parallel
  std::optional<double> offline;  // seconds of planning a trace: adds the offline columns
};

// The first of `values` equal to an earlier one, or null: a policy, a grid value or a live
// count given twice, whose rows no reader could tell apart.
template <std::equality_comparable T>
T const* repeated(std::vector<T> const& values)
{
  for (auto it = values.begin(); it != values.end(); ++it)
    if (std::find(values.begin(), it, *it) != it) return &*it;
  return nullptr;
}

// The addresses of `traces`, as run_inputs holds them.
std::vector<trace::trace const*> addresses_of(std::vector<trace::trace> const& traces);

// 0, 1, ..., n - 1: every cell of a run of n.
std::vector<std::size_t> every_cell(std::size_t n);

// Refuses (std::invalid_argument) no spec, a spec given twice, and two specs of one label:
// rows are labelled by them, and such rows no reader could tell apart.
void check_policy_specs(std::vector<std::string> const& specs);

// The parameters `spec` runs with on `t`: `user`'s keys the policy reads, and when `recorded`,
// the allocator settings `t` was recorded under (a PyTorch snapshot's) where the policy reads
// them and neither its spec nor `user` gives them. A recorded garbage_collection_threshold is
// left out without a memory limit, under which PyTorch never collects.
param_set cell_parameters(std::string const& spec, param_set const& user, trace::trace const& t, bool recorded);
// Says on standard error what the PyTorch presets among `specs` do with the traces' recorded
// settings: applied (or ignored, as asked), and those they do not model.
void note_recorded_settings(std::vector<trace::trace> const& traces, std::vector<std::string> const& specs, bool recorded);

// Refuses (std::invalid_argument) a key of `keys` that no policy of `specs` reads, and says on
// standard error which policies read a key that only some do: `option` (--set, --vary)
// applies each key to the policies that read it.
void check_keys_read(std::vector<std::string> const& specs, std::vector<std::string> const& keys, std::string_view option);
// A table compares like with like only on one backend: refuses compositions whose backends
// differ (their policies' defaults, no backend given), naming the choice.
void check_one_backend(std::vector<std::unique_ptr<composition>> const& made);
// Every policy of `specs`, each given the keys of `chosen.user` it reads, checked as above.
std::vector<std::unique_ptr<composition>> make_compositions(std::vector<std::string> const& specs,
                                                            allocator_options const& chosen);

}  // namespace fraglab
