// fraglab.replay, sweep, capacity, info, verify and plan: the command line's runs, checked
// and computed by the same code (experiments/runtime/run/), returned as DataFrames.
#include <fraglab/python/bindings.hpp>

#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/params/list_items.hpp>
#include <fraglab/runtime/params/units.hpp>
#include <fraglab/runtime/plan/offline_problem.hpp>
#include <fraglab/runtime/plan/plan_table.hpp>
#include <fraglab/runtime/registry/policy_spec.hpp>
#include <fraglab/runtime/replay/run_cells.hpp>
#include <fraglab/runtime/run/min_capacity.hpp>
#include <fraglab/runtime/run/replay_cells.hpp>
#include <fraglab/runtime/run/sweep_grid.hpp>
#include <fraglab/runtime/run/trace_statistics.hpp>
#include <fraglab/runtime/run/tune.hpp>
#include <fraglab/runtime/run/verify_file.hpp>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <limits>
#include <thread>
#include <stdexcept>

namespace fraglab::python {
namespace {

// A parameter's value as the command line spells it: True is true, 2.5 is 2.5.
std::string value_text(py::handle value)
{
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
  return py::str(value);
}

std::vector<std::string> policy_list(py::handle policies)
{
  std::vector<std::string> given;
  if (py::isinstance<py::str>(policies)) given.push_back(policies.cast<std::string>());
  else
    for (py::handle p : py::iter(policies)) given.push_back(py::str(p));
  std::vector<std::string> specs = split_policy_list(given);
  check_policy_specs(specs);
  return specs;
}

unsigned jobs_value(py::handle jobs)
{
  return static_cast<unsigned>(whole_value("jobs", jobs, 1, std::numeric_limits<unsigned>::max()));
}

std::size_t size_value(char const* name, py::handle value)
{
  if (py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value)) {
    std::string const text = py::str(value);
    if (text.starts_with("-")) throw std::invalid_argument(std::string(name) + ": expected a size, got " + text);
    return whole_value(name, value, 0, std::numeric_limits<std::uint64_t>::max());
  }
  std::string const text = py::str(value);
  auto const n = parse_size(text);
  if (!n) throw std::invalid_argument(std::string(name) + ": expected a size such as 4096, 512MiB or 80GiB, got '" + text + "'");
  return *n;
}

allocator_options allocator_choice(std::optional<std::string> const& backend, py::handle capacity, py::handle params)
{
  allocator_options o;
  if (!params.is_none())
    for (auto const& [key, value] : params.cast<py::dict>()) {
      std::string const k = py::str(key);
      try {
        o.user.set_assignment(k + "=" + value_text(value));
      } catch (std::invalid_argument const& e) {
        throw std::invalid_argument(std::string("params: ") + e.what());
      }
    }
  if (backend) o.backend.kind = *backend;
  if (!capacity.is_none()) {
    o.backend.capacity = size_value("capacity", capacity);
    if (o.backend.capacity == 0)
      throw std::invalid_argument("capacity: expected at least one byte, got 0 (leave it out for an unlimited backend)");
  }
  return o;
}

replay_options timing(unsigned repeat, bool warm, std::string const& free_by_text)
{
  replay_options o;
  o.repeats = repeat;
  o.warm = warm;
  o.frees = parse_free_by(free_by_text);
  return o;
}

std::optional<double> offline_seconds(py::handle offline)
{
  if (offline.is_none() || (py::isinstance<py::bool_>(offline) && !offline.cast<bool>())) return std::nullopt;
  if (py::isinstance<py::bool_>(offline)) return 10.0;
  double const seconds = offline.cast<double>();
  if (!(seconds > 0) || seconds > 1e9) throw std::invalid_argument("offline: expected True or a positive number of seconds");
  return seconds;
}

// The samples of every replay, one column an array, no Python object a sample.
py::object timeseries_frame(std::vector<replay_result> const& results)
{
  std::size_t n = 0;
  for (auto const& r : results) n += r.timeseries.size();
  auto const columns = timeseries_columns();
  py::list trace_names(n), policies(n);
  std::vector<py::array_t<std::int64_t>> values;
  for (std::size_t c = 2; c < columns.size(); ++c) values.emplace_back(static_cast<py::ssize_t>(n));
  std::size_t at = 0;
  for (auto const& r : results) {
    py::str const t(r.trace), p(r.policy);
    for (timeseries_sample const& s : r.timeseries) {
      trace_names[at] = t;
      policies[at] = p;
      std::uint64_t const fields[] = {s.event,       s.live_bytes,     s.allocated_bytes, s.reserved_bytes,
                                      s.largest_free_bytes, s.free_chunks, s.max_live_bytes, s.max_reserved_bytes};
      for (std::size_t f = 0; f < values.size(); ++f) values[f].mutable_data()[at] = static_cast<std::int64_t>(fields[f]);
      ++at;
    }
  }
  py::dict frame;
  frame[py::str(columns[0])] = trace_names;
  frame[py::str(columns[1])] = policies;
  for (std::size_t f = 0; f < values.size(); ++f) frame[py::str(columns[f + 2])] = values[f];
  return py::module_::import("pandas").attr("DataFrame")(frame);
}

// The arguments and errors every run shares, in the Google style help() and editors show.
constexpr char const* traces_doc = R"(
    traces: a Trace, a path of any format `fraglab` reads, or a list of them (every device of a
        snapshot's path).
    policies: presets, composition names or compose: specs, as -p takes them: a list, or one
        comma-separated str ('tlsf:sli=3@coarse,tf_bfc').)";
constexpr char const* allocator_doc = R"(
    backend: 'heap', 'simulated', 'host' or a CUDA backend (default: the policies' own, which
        must agree).
    params: {KEY: VALUE} for every policy that reads KEY (fraglab.parameters(); --set).
    jobs: cells run in parallel, on threads.
    ignore_recorded_settings: replay a PyTorch snapshot under the presets' defaults and params,
        not under the allocator settings it was recorded with.)";
constexpr char const* capacity_doc = R"(
    capacity: the backend's bytes, an int or a size such as '512MiB' (default: unlimited).)";
constexpr char const* timing_doc = R"(
    warm: time the runs on one allocator kept warm after the metrics pass, not each on a
        fresh one.
    free_by: 'reference' (a free names the block its allocation returned) or 'address' (by
        its address, as a program plugged in by pointer does; the decisions are the same).
    offline: True, or seconds, to plan each trace's buffers offline for gap_to_offline.)";
constexpr char const* run_raises_doc = R"(
Raises:
    fraglab.InputError: a malformed trace file; the message names the file and place.
    ValueError: an unknown policy, key or backend, a bad value, or a missing file, in the
        command line's words.
    TypeError: an argument of the wrong type.
    KeyboardInterrupt: Ctrl-C, which stops the run within one batch of events.)";

}  // namespace

void bind_runs(py::module_& m)
{
  m.def(
      "replay",
      [](py::handle traces, py::handle policies, std::optional<std::string> const& backend, py::handle capacity, py::handle params,
         unsigned repeat, bool warm, std::string const& free_by, bool strict, bool stop_on_failure, bool timeseries,
         py::handle offline, py::handle jobs, bool ignore_recorded_settings) -> py::object {
        std::vector<std::shared_ptr<trace::trace const>> owners;
        run_inputs in{traces_argument(traces, owners), policy_list(policies), allocator_choice(backend, capacity, params),
                      !ignore_recorded_settings, jobs_value(jobs), offline_seconds(offline)};
        replay_options options = timing(repeat, warm, free_by);
        options.strict = strict;
        options.stop_on_failure = stop_on_failure;
        options.timeseries = timeseries;
        replay_run run = without_lock([&](std::atomic<bool> const* stop) {
          replay_options o = options;
          o.stop = stop;
          return run_replay(in, o, every_cell(replay_cell_count(in)));
        });
        // The columns of an unsharded `fraglab replay`: no cell numbers, which only a shard's part needs.
        run.table.columns.erase(run.table.columns.begin());
        for (auto& row : run.table.rows) row.erase(row.begin());
        py::object results = data_frame(run.table);
        if (!timeseries) return results;
        return py::make_tuple(results, timeseries_frame(run.results));
      },
      py::arg("traces"), py::arg("policies"), py::kw_only(), py::arg("backend") = py::none(), py::arg("capacity") = py::none(),
      py::arg("params") = py::none(), py::arg("repeat") = 1, py::arg("warm") = false, py::arg("free_by") = "reference",
      py::arg("strict") = false, py::arg("stop_on_failure") = false, py::arg("timeseries") = false,
      py::arg("offline") = py::none(), py::arg("jobs") = 1, py::arg("ignore_recorded_settings") = false,
      (std::string("Replays every trace under every policy, as `fraglab replay` does.\n\nArgs:") + traces_doc + allocator_doc + capacity_doc +
       R"(
    repeat: timed runs of each cell; ns_per_op is their median (0: none).)" + timing_doc + R"(
    strict: a free of an unknown block or a second allocation of a live id is an error, not
        counted and skipped.
    stop_on_failure: a cell stops at its first failed allocation.
    timeseries: also return the samples of live, allocated and reserved bytes over the run.

Returns:
    A DataFrame of `fraglab replay`'s columns (docs/metrics.md), a row a (trace, policy); with
    timeseries=True, (that DataFrame, the samples' DataFrame).
)" + run_raises_doc)
          .c_str());

  m.def(
      "sweep",
      [](py::handle traces, py::handle policies, py::dict vary, std::optional<std::string> const& backend, py::handle capacity,
         py::handle params, unsigned repeat, bool warm, std::string const& free_by, py::handle offline, py::handle jobs,
         bool ignore_recorded_settings) {
        sweep_axes axes;
        for (auto const& [key, values] : vary) {
          std::vector<std::string> listed;
          if (py::isinstance<py::str>(values)) {
            std::string const text = values.cast<std::string>();
            for (std::string_view v : list_items(text)) listed.emplace_back(v);
          } else
            for (py::handle v : py::iter(values)) listed.push_back(value_text(v));
          axes.emplace_back(py::str(key), std::move(listed));
        }
        std::vector<std::shared_ptr<trace::trace const>> owners;
        run_inputs in{traces_argument(traces, owners), policy_list(policies), allocator_choice(backend, capacity, params),
                      !ignore_recorded_settings, jobs_value(jobs), offline_seconds(offline)};
        sweep_grid const grid(in, std::move(axes));
        replay_options const options = timing(repeat, warm, free_by);
        results_table const table = without_lock([&](std::atomic<bool> const* stop) {
          replay_options o = options;
          o.stop = stop;
          return grid.run(o, every_cell(grid.size()));
        });
        return data_frame(table);
      },
      py::arg("traces"), py::arg("policies"), py::arg("vary"), py::kw_only(), py::arg("backend") = py::none(),
      py::arg("capacity") = py::none(), py::arg("params") = py::none(), py::arg("repeat") = 0, py::arg("warm") = false,
      py::arg("free_by") = "reference", py::arg("offline") = py::none(), py::arg("jobs") = 1,
      py::arg("ignore_recorded_settings") = false,
      (std::string("Each policy over a grid of parameter values, on every trace, as `fraglab sweep` does.\n\nArgs:") +
       traces_doc + R"(
    vary: the axes, {KEY: [V1, V2, ...]} (or a comma-separated str of values), the first
        outermost; a policy runs over the axes it reads.)" +
       allocator_doc + capacity_doc + R"(
    repeat: timed runs of each cell (default 0: none).)" + timing_doc + R"(

Returns:
    A DataFrame of `fraglab sweep`'s columns, a row a cell: a (trace, policy, values).
)" + run_raises_doc)
          .c_str());

  m.def(
      "capacity",
      [](py::handle traces, py::handle policies, std::optional<std::string> const& backend, py::handle params, py::handle jobs,
         bool ignore_recorded_settings) {
        std::vector<std::shared_ptr<trace::trace const>> owners;
        run_inputs const in{traces_argument(traces, owners), policy_list(policies), allocator_choice(backend, py::none(), params),
                            !ignore_recorded_settings, jobs_value(jobs), std::nullopt};
        return data_frame(without_lock([&](std::atomic<bool> const* stop) { return min_capacities(in, stop); }));
      },
      py::arg("traces"), py::arg("policies"), py::kw_only(), py::arg("backend") = py::none(), py::arg("params") = py::none(),
      py::arg("jobs") = 1, py::arg("ignore_recorded_settings") = false,
      (std::string("The least memory each policy serves each trace in, as `fraglab capacity` finds it (a search over "
                   "replays).\n\nArgs:") +
       traces_doc + allocator_doc + R"(

Returns:
    A DataFrame, a row a (trace, policy): min_capacity_bytes, peak_reserved_unlimited,
    granularity (the step searched), replays.
)" + run_raises_doc)
          .c_str());

  m.def(
      "tune",
      [](py::handle recording, py::handle capacity, py::handle jobs) {
        std::vector<std::shared_ptr<trace::trace const>> owners;
        auto const devices = traces_argument(recording, owners);
        std::optional<std::size_t> limit;
        if (!capacity.is_none()) {
          limit = size_value("capacity", capacity);
          if (*limit == 0) throw std::invalid_argument("capacity: expected at least one byte, got 0");
        }
        unsigned const threads = jobs.is_none() ? std::max(1u, std::thread::hardware_concurrency()) : jobs_value(jobs);
        tune_result const r = without_lock([&](std::atomic<bool> const* stop) { return tune(devices, limit, std::max(1u, threads), stop); });
        py::dict recommendation;
        recommendation["conf"] = r.recommended;
        recommendation["fits"] = r.fits;
        recommendation["reasoning"] = r.reasoning;
        return py::make_tuple(data_frame(r.table), recommendation);
      },
      py::arg("recording"), py::kw_only(), py::arg("capacity") = py::none(), py::arg("jobs") = py::none(),
      (std::string(R"(Which PYTORCH_CUDA_ALLOC_CONF serves a recorded program best, as `fraglab tune` finds it.

Args:
    recording: a PyTorch snapshot's path (every device), or the Traces of one program.
    capacity: the device's bytes, an int or a size such as '80GiB' (default: none; the least
        reserved memory wins).
    jobs: settings replayed in parallel (default: one a core).

Returns:
    (table, recommendation): a DataFrame with a row a (device, setting) tried, and
    {'conf': the setting ('' for the defaults), 'fits': whether it fits capacity,
    'reasoning': the lines `fraglab tune` prints}.
)") + run_raises_doc)
          .c_str());

  m.def(
      "info",
      [](py::handle traces) {
        std::vector<std::shared_ptr<trace::trace const>> owners;
        auto const read = traces_argument(traces, owners);
        results_table table;
        {
          py::gil_scoped_release unlocked;
          for (trace::trace const* t : read) {
            auto const stats = trace_statistics(*t);
            table.columns.clear();
            auto& row = table.rows.emplace_back();
            for (auto const& [key, value] : stats) {
              table.columns.push_back(key);
              row.push_back(value);
            }
          }
        }
        return data_frame(table);
      },
      py::arg("traces"),
      R"(What each trace holds, as `fraglab info` says it.

Args:
    traces: a Trace, a path of any format `fraglab` reads, or a list of them.

Returns:
    A DataFrame, a row a trace: events, allocations, frees, peak live bytes and blocks, sizes
    and lifetimes (their mean, median and 99th percentile), streams.

Raises:
    fraglab.InputError: a malformed trace file; the message names the file and place.
    ValueError: a missing file.
    TypeError: an argument of the wrong type.)");

  m.def(
      "verify",
      [](py::handle snapshots, std::string const& policy, py::handle device) {
        std::optional<trace::allocator_choice> const which = allocator_argument(device);
        std::vector<std::string> paths;
        if (is_path(snapshots)) paths.push_back(path_text(snapshots));
        else
          for (py::handle p : py::iter(snapshots)) paths.push_back(path_text(p));
        if (paths.empty()) throw std::invalid_argument("no snapshot given");
        check_verify_policy(policy);
        for (auto const& path : paths) check_is_verifiable(path);
        results_table table{verify_columns(), {}};
        py::gil_scoped_release unlocked;
        for (auto const& path : paths) {
          verified_file const v = verify_file(path, policy, which);
          for (std::size_t i = 0; i < v.results.size(); ++i) table.rows.push_back(verify_row(v, i));
        }
        py::gil_scoped_acquire locked;
        return data_frame(table);
      },
      py::arg("snapshots"), py::arg("policy") = "auto", py::arg("device") = py::none(),
      R"(Every decision a real allocator recorded, compared with its preset's, as `fraglab verify` does.

Args:
    snapshots: a path or a list of paths: PyTorch memory snapshots (compared with
        pytorch_caching or pytorch_expandable, whichever the recording's settings name) or
        TensorFlow BFC allocator logs (compared with tf_bfc).
    policy: 'auto' (as above) or the preset to compare with.
    device: N, one device of a snapshot, or 'NAME', one allocator of a TF log (default: all).

Returns:
    A DataFrame, a row an allocator: addresses, segments, maps and OOMs matched of those
    recorded, and verdict: 'matched', 'mismatched' or 'nothing to verify' (first_mismatch
    says where).

Raises:
    fraglab.InputError: a malformed file; the message names the file and place.
    ValueError: a file that is neither a snapshot nor a TF log, an unknown policy or device.
    TypeError: an argument of the wrong type.)");

  m.def(
      "plan",
      [](py::handle inputs, double time_limit, py::handle capacity, py::handle jobs, bool placements, std::string const& lifetimes,
         py::handle node_budget) -> py::object {
        if (!(time_limit > 0) || time_limit > 1e9) throw std::invalid_argument("time_limit: expected a positive number of seconds");
        plan::lifetimes const read_as = plan::lifetimes_named("lifetimes", lifetimes);
        std::uint64_t const limit = capacity.is_none() ? offline::no_capacity : size_value("capacity", capacity);
        std::vector<plan::offline_input> problems;
        auto const add = [&](py::handle one) {
          if (is_path(one)) {
            std::string const path = path_text(one);
            if (plan::is_minimalloc_csv(path)) {
              problems.push_back(plan::read_minimalloc_csv(path, read_as));
              return;
            }
          }
          std::vector<std::shared_ptr<trace::trace const>> owners;
          for (trace::trace const* t : traces_argument(one, owners)) problems.push_back(plan::offline_problem(*t));
        };
        if (py::isinstance<trace::trace>(inputs) || is_path(inputs)) add(inputs);
        else
          for (py::handle one : py::iter(inputs)) add(one);
        if (problems.empty()) throw std::invalid_argument("no input given");
        for (auto& p : problems) p.problem.capacity = limit;
        offline::plan_options options;
        options.time_limit_seconds = time_limit;
        if (!node_budget.is_none()) options.node_budget = whole_value("node_budget", node_budget, 0, offline::unlimited_nodes);
        unsigned const threads = jobs_value(jobs);  // read while the interpreter's lock is held
        auto const results = without_lock([&](std::atomic<bool> const*) {
          return run_cells<offline::plan_result>(problems.size(), threads,
                                                 [&](std::size_t i) { return offline::plan(problems[i].problem, options); });
        });
        results_table table{plan::plan_columns(), {}};
        for (std::size_t i = 0; i < problems.size(); ++i) {
          if (!results[i].fits)
            PyErr_WarnEx(PyExc_RuntimeWarning, plan::no_fit_reason(problems[i], results[i], limit, time_limit).c_str(), 1);
          table.rows.push_back(plan::plan_row(problems[i], results[i], limit));
        }
        py::object frame = data_frame(table);
        if (!placements) return frame;
        py::list placed;
        for (std::size_t i = 0; i < problems.size(); ++i) {
          auto const& buffers = problems[i].problem.buffers;
          std::size_t const n = buffers.size();
          py::array_t<std::int64_t> lower(static_cast<py::ssize_t>(n)), upper(static_cast<py::ssize_t>(n)),
              size(static_cast<py::ssize_t>(n)), offset(static_cast<py::ssize_t>(n));
          py::list ids(n);
          for (std::size_t b = 0; b < n; ++b) {
            ids[b] = problems[i].ids.empty() ? py::str(std::to_string(buffers[b].lower)) : py::str(problems[i].ids[b]);
            // The input's own times (a CSV's may start below 0), [lower, upper) whichever way it counted them.
            auto const origin = static_cast<std::uint64_t>(problems[i].time_origin);
            lower.mutable_data()[b] = static_cast<std::int64_t>(buffers[b].lower + origin);
            upper.mutable_data()[b] = static_cast<std::int64_t>(buffers[b].upper + origin);
            size.mutable_data()[b] = static_cast<std::int64_t>(buffers[b].size);
            offset.mutable_data()[b] = results[i].fits ? static_cast<std::int64_t>(results[i].offsets[b]) : -1;
          }
          placed.append(py::module_::import("pandas").attr("DataFrame")(
              columns_of({{"id", ids}, {"lower", lower}, {"upper", upper}, {"size", size}, {"offset", offset}})));
        }
        return py::make_tuple(frame, placed);
      },
      py::arg("inputs"), py::arg("time_limit") = 10.0, py::kw_only(), py::arg("capacity") = py::none(), py::arg("jobs") = 1,
      py::arg("placements") = false, py::arg("lifetimes") = "half-open", py::arg("node_budget") = py::none(),
      R"(The lowest offline placement of each input's buffers, every lifetime known, as `fraglab plan` finds it.

Args:
    inputs: a Trace, a trace file, MiniMalloc's CSV (id, lower, upper, size), or a list of them.
    time_limit: seconds of planning an input.
    capacity: the bytes a placement must fit in, an int or a size such as '512MiB' (default:
        none).
    jobs: inputs planned in parallel.
    placements: also return each input's placement.
    lifetimes: how a CSV's upper column counts, 'half-open' (MiniMalloc's: the first step no
        longer live) or 'inclusive' (IREE's and SOMAS's: the last step live).
    node_budget: at most that many buffers placed by the search an input; where the time limit
        never binds, the same plan on every machine (default: none).

Returns:
    A DataFrame of `fraglab plan`'s columns, a row an input: height_bytes, lower_bound_bytes,
    optimal, gap_to_lower, found_by, times. With placements=True, (that DataFrame, a list of
    DataFrames of id, lower, upper, size, offset, one an input, live over [lower, upper) in the
    input's own times); an input with no placement within capacity warns (RuntimeWarning) and
    its offsets are -1.

Raises:
    fraglab.InputError: a malformed input file; the message names the file and place.
    ValueError: a bad time limit, capacity, node budget or lifetimes, or a missing file.
    TypeError: an argument of the wrong type.)");
}

}  // namespace fraglab::python
