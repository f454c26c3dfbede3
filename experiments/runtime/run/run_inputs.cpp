#include <fraglab/runtime/run/run_inputs.hpp>

#include <fraglab/runtime/params/closest_name.hpp>
#include <fraglab/runtime/registry/policy_spec.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <numeric>
#include <stdexcept>

namespace fraglab {

std::vector<trace::trace const*> addresses_of(std::vector<trace::trace> const& traces)
{
  std::vector<trace::trace const*> addresses;
  for (trace::trace const& t : traces) addresses.push_back(&t);
  return addresses;
}

std::vector<std::size_t> every_cell(std::size_t n)
{
  std::vector<std::size_t> cells(n);
  std::iota(cells.begin(), cells.end(), std::size_t{0});
  return cells;
}

void check_policy_specs(std::vector<std::string> const& specs)
{
  // `-p ,` names none; it would print an empty table and succeed.
  if (specs.empty()) throw std::invalid_argument("no policy given (-p NAME; `fraglab policies` lists them)");
  if (std::string const* twice = repeated(specs)) throw std::invalid_argument("policy " + *twice + " is given twice");
  std::vector<std::string> labels;
  for (auto const& spec : specs) labels.push_back(parse_policy_spec(spec).label);
  if (std::string const* twice = repeated(labels)) throw std::invalid_argument("two policies are labelled " + *twice);
}

param_set cell_parameters(std::string const& spec, param_set const& user, trace::trace const& t, bool recorded)
{
  param_set p = scoped_parameters(spec, user);
  if (!recorded || t.recorded_parameters.empty()) return p;
  auto const read = parameters_read(spec);
  param_set const own = parse_policy_spec(spec).params;
  bool const limited = p.has("memory_limit") || p.has("per_process_memory_fraction") || own.has("memory_limit") ||
                       own.has("per_process_memory_fraction");
  for (auto const& [key, value] : t.recorded_parameters) {
    if (std::find(read.begin(), read.end(), key) == read.end() || p.has(key) || own.has(key)) continue;
    if (key == "garbage_collection_threshold" && !limited) continue;
    p.set(key, value);
  }
  return p;
}

void note_recorded_settings(std::vector<trace::trace> const& traces, std::vector<std::string> const& specs, bool recorded)
{
  // The policies that read PyTorch's settings: those the recorded ones would apply to.
  std::vector<std::string> readers;
  for (auto const& spec : specs) {
    auto const read = parameters_read(spec);
    if (std::find(read.begin(), read.end(), "max_split_size_mb") != read.end()) readers.push_back(parse_policy_spec(spec).label);
  }
  if (readers.empty()) return;
  std::string who;
  for (auto const& r : readers) who.append(who.empty() ? "" : ", ").append(r);
  for (auto const& t : traces)
    if (!t.recorded_settings.empty())
      std::cerr << "fraglab: note: " << t.name << " was recorded with " << t.recorded_settings << "; " << who << " replay"
                << (readers.size() == 1 ? "s" : "") << " it "
                << (recorded ? "under those modelled (--set overrides one; --ignore-recorded-settings: under the defaults)"
                             : "under the defaults and --set (--ignore-recorded-settings)")
                << (t.recorded_expandable ? "; expandable segments are pytorch_expandable's: -p pytorch_expandable replays them as recorded"
                                          : "")
                << '\n';
}

void check_keys_read(std::vector<std::string> const& specs, std::vector<std::string> const& keys, std::string_view option)
{
  for (std::string const& key : keys) {
    std::vector<std::string> readers, others;
    std::vector<std::string_view> read_by_some;
    for (std::string const& spec : specs) {
      auto const read = parameters_read(spec);
      read_by_some.insert(read_by_some.end(), read.begin(), read.end());
      (std::find(read.begin(), read.end(), key) != read.end() ? readers : others).push_back(parse_policy_spec(spec).label);
    }
    auto const joined = [](std::vector<std::string> const& names) {
      std::string out;
      for (auto const& n : names) out += (out.empty() ? "" : ", ") + n;
      return out;
    };
    if (readers.empty()) {
      std::string const guess = closest_name(key, read_by_some);
      throw std::invalid_argument(std::string(option) + " " + key + ": no policy of this run reads it" +
                                  (guess.empty() ? "" : ": did you mean " + guess + "?") + " (" + joined(others) +
                                  "; `fraglab policies NAME` lists the keys a policy reads)");
    }
    if (!others.empty())
      std::cerr << "fraglab: note: " << option << ' ' << key << " applies to " << joined(readers) << " only; "
                << joined(others) << (others.size() == 1 ? " does" : " do") << " not read it\n";
  }
}

void check_one_backend(std::vector<std::unique_ptr<composition>> const& made)
{
  std::map<std::string, std::vector<std::string>> by_backend;
  for (auto const& c : made) by_backend[c->backend().kind].push_back(c->name());
  if (by_backend.size() <= 1) return;
  std::string which, choices;
  for (auto const& [kind, names] : by_backend) {
    which += (which.empty() ? "" : "; ") + kind + " for";
    for (auto const& n : names) which += " " + n;
    choices += (choices.empty() ? "" : " or ") + ("--backend " + kind);
  }
  throw std::invalid_argument("these policies run on different backends by default (" + which +
                              "), whose numbers do not compare: give " + choices +
                              " to run them all on one (simulated: separate segments, as a GPU's; heap: one contiguous "
                              "heap grown at its top, as sbrk)");
}

std::vector<std::unique_ptr<composition>> make_compositions(std::vector<std::string> const& specs,
                                                            allocator_options const& chosen)
{
  std::vector<std::string> keys;
  for (auto const& [key, value] : chosen.user.values()) keys.push_back(key);
  check_keys_read(specs, keys, "--set");
  std::vector<std::unique_ptr<composition>> made;
  for (auto const& spec : specs) made.push_back(make_composition(spec, scoped_parameters(spec, chosen.user), chosen.backend));
  check_one_backend(made);
  return made;
}

}  // namespace fraglab
