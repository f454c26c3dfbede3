#include <fraglab/cli/options.hpp>

#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/io/output_file.hpp>
#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/output/table_view.hpp>
#include <fraglab/runtime/params/closest_name.hpp>
#include <fraglab/runtime/params/list_items.hpp>
#include <fraglab/runtime/params/units.hpp>
#include <fraglab/runtime/registry/policy_spec.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <map>
#include <stdexcept>

namespace fraglab::cli {
namespace {

po::variables_map parse(std::vector<std::string> const& args, po::options_description const& desc,
                        po::positional_options_description const& positional)
{
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).positional(positional).style(exact_option_names).run(), vm);
  po::notify(vm);
  return vm;
}

}  // namespace

std::optional<po::variables_map> parse_command(std::vector<std::string> const& args, po::options_description& desc,
                                               char const* positional, int positional_count)
{
  desc.add_options()("help,h", "this help");
  po::positional_options_description bare;
  if (*positional != '\0') bare.add(positional, positional_count);
  auto vm = parse(args, desc, bare);
  if (vm.count("help")) {
    std::cout << desc;
    return std::nullopt;
  }
  if (vm.count("format")) (void)parse_output_format(vm["format"].as<std::string>());
  return vm;
}

namespace {
std::atomic<std::size_t> skipped{0};
}  // namespace

std::size_t skipped_traces() noexcept { return skipped.load(); }

void add_trace_and_policy_options(po::options_description& desc)
{
  desc.add_options()                                                                                                //
      ("trace", po::value<std::vector<std::string>>()->multitoken(),
       "trace files (native text or binary, RMM logging CSV, PyTorch snapshot; gzip or zstd; `-` for standard input)")  //
      ("policy,p", po::value<std::vector<std::string>>()->multitoken(), "policy names or compose: specs")  //
      ("keep-going", "leave out a trace that cannot be read, with a warning, run the rest, and exit 1 at the end");
  add_trace_selection_options(desc);
  add_recorded_settings_option(desc);
}

void add_trace_selection_options(po::options_description& desc)
{
  desc.add_options()  //
      ("device", po::value<std::string>(), "N: of a PyTorch snapshot, the allocator of device cuda:N only (each device "
                                           "has its own; without this, one row per device); NAME: of a TensorFlow BFC log, "
                                           "that allocator only (GPU_0_bfc, bfc_cpu_allocator_for_gpu)")  //
      ("ignore-releases", "leave out the trace's cache releases (empty_cache): the what-if of a program that never "
                          "empties its cache");
}

std::optional<trace::allocator_choice> device_option(po::variables_map const& vm)
{
  if (!vm.count("device")) return std::nullopt;
  return trace::allocator_choice::parse(vm["device"].as<std::string>());
}

void apply_trace_selection(po::variables_map const& vm, trace::trace& t)
{
  if (!vm.count("ignore-releases") || t.releases == 0) return;
  if (t.streamed()) {  // the binary decoder hands every event over: keep them, less the releases
    trace::trace kept = t;
    kept.streamed_from.clear();
    trace::for_each_event(t, [&](trace::event const& e) {
      if (e.kind != trace::op::release) kept.events.push_back(e);
    });
    t = std::move(kept);
  } else {
    std::erase_if(t.events, [](trace::event const& e) { return e.kind == trace::op::release; });
  }
  t.releases = 0;
}

void check_distinct_names(std::vector<std::string> const& paths)
{
  // Standard input can be read once: a second name for it would read as an empty file.
  auto const standard_input = [](std::string const& p) { return p == "-" || p == "/dev/stdin" || p == "/dev/fd/0" || p == "/proc/self/fd/0"; };
  std::string first_stdin;
  for (auto const& path : paths)
    if (standard_input(path)) {
      if (!first_stdin.empty())
        throw std::invalid_argument(first_stdin + " and " + path + " both name standard input, which can be read once: give it once");
      first_stdin = path;
    }
  std::map<std::string, std::string> path_of_name;
  for (auto const& path : paths)
    if (auto const [at, fresh] = path_of_name.emplace(trace::file_base_name(path), path); !fresh)
      throw std::invalid_argument(at->second == path ? "trace " + path + " is given twice"
                                                     : "traces " + at->second + " and " + path + " have the same file name, " +
                                                           at->first + ", which labels their rows: rename one");
}

std::vector<trace::trace> read_traces(po::variables_map const& vm)
{
  if (!vm.count("trace")) throw std::invalid_argument("no trace given");
  auto const& paths = vm["trace"].as<std::vector<std::string>>();
  check_distinct_names(paths);
  bool const keep_going = vm.count("keep-going") != 0;
  std::vector<trace::trace> traces;
  std::optional<trace::allocator_choice> const device = device_option(vm);
  for (auto const& path : paths) {
    try {
      std::vector<trace::trace> read = trace::read_traces(path, device);
      // A binary trace's records are checked as a pass decodes them: with --keep-going, one
      // pass here finds a bad record before any cell runs, so the trace can be left out.
      if (keep_going)
        for (trace::trace const& t : read)
          if (t.streamed()) trace::for_each_batch(t, [](std::span<trace::event const>) {});
      for (trace::trace& t : read) {
        apply_trace_selection(vm, t);
        traces.push_back(std::move(t));
      }
    } catch (input_error const& e) {
      if (!keep_going) throw;
      std::cerr << "fraglab: warning: left out: " << e.what() << '\n';
      ++skipped;
    }
  }
  if (traces.empty()) throw input_error("no trace could be read (every one was left out)");
  return traces;
}

void add_recorded_settings_option(po::options_description& desc)
{
  desc.add_options()("ignore-recorded-settings",
                     "replay a PyTorch snapshot under the PyTorch presets' defaults and --set, not under the allocator "
                     "settings it was recorded with (max_split_size_mb, roundup_power2_divisions, "
                     "garbage_collection_threshold)");
}

bool recorded_settings_applied(po::variables_map const& vm) { return vm.count("ignore-recorded-settings") == 0; }

std::vector<std::string> policy_specs(po::variables_map const& vm)
{
  std::vector<std::string> specs;
  if (vm.count("policy")) specs = split_policy_list(vm["policy"].as<std::vector<std::string>>());
  check_policy_specs(specs);
  return specs;
}

std::size_t size_option(std::string const& name, std::string const& text)
{
  auto const n = parse_size(text);
  if (!n) throw std::invalid_argument("--" + name + ": expected a size such as 4096, 512MiB or 80GiB, got '" + text + "'");
  return *n;
}

void add_offline_options(po::options_description& desc)
{
  desc.add_options()                                                                                             //
      ("offline", "add offline_best_bytes and gap_to_offline (peak reserved / offline best - 1): the distance of "
                  "each cell to the best placement of its trace's buffers that `fraglab plan` finds")  //
      ("offline-time-limit", po::value<std::string>()->default_value("10"), "S: seconds of planning for each trace");
}

std::optional<double> offline_option(po::variables_map const& vm)
{
  if (!vm.count("offline")) {
    if (!vm["offline-time-limit"].defaulted()) throw std::invalid_argument("--offline-time-limit is for --offline, which is not given");
    return std::nullopt;
  }
  return seconds_option("offline-time-limit", vm["offline-time-limit"].as<std::string>());
}

double seconds_option(std::string const& name, std::string const& text)
{
  double seconds = 0;
  auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc{} || end != text.data() + text.size() || !(seconds > 0) || seconds > 1e9)
    throw std::invalid_argument("--" + name + ": expected a positive number of seconds, got " + fraglab::quoted(text));
  return seconds;
}

std::uint64_t count_option(std::string const& name, std::string const& text, std::uint64_t least, std::uint64_t most)
{
  return parse_count("--" + name, text, least, most);
}

void add_jobs_option(po::options_description& desc, char const* help)
{
  desc.add_options()("jobs,j", po::value<std::string>()->default_value("1"), help);
}

unsigned jobs_option(po::variables_map const& vm)
{
  return static_cast<unsigned>(count_option("jobs", vm["jobs"].as<std::string>(), 1, std::numeric_limits<unsigned>::max()));
}

void add_allocator_options(po::options_description& desc)
{
  desc.add_options()                                                                              //
      ("set", po::value<std::vector<std::string>>(), "KEY=VALUE parameter, repeatable")           //
      ("capacity", po::value<std::string>(), "backend capacity (default unlimited), e.g. 512MiB")  //
      ("backend", po::value<std::string>(), "simulated, heap, host, cuda, cuda_async, cuda_vmm or cuda_pinned (default: heap for compositions, simulated for GPU presets)");
}

void add_one_trace_options(po::options_description& desc)
{
  add_allocator_options(desc);
  add_trace_selection_options(desc);
  add_recorded_settings_option(desc);
}

allocator_options read_allocator_options(po::variables_map const& vm)
{
  allocator_options o;
  if (vm.count("set"))
    for (auto const& kv : vm["set"].as<std::vector<std::string>>()) {
      try {
        o.user.set_assignment(kv);
      } catch (std::invalid_argument const& e) {
        throw std::invalid_argument(std::string("--set: ") + e.what());
      }
    }
  if (vm.count("backend")) o.backend.kind = vm["backend"].as<std::string>();
  if (vm.count("capacity")) {
    o.backend.capacity = size_option("capacity", vm["capacity"].as<std::string>());
    // A backend of no bytes fails every allocation: read as "unlimited", which some tools
    // spell 0, it would be a table of failures that looks like a result.
    if (o.backend.capacity == 0)
      throw std::invalid_argument("--capacity: expected at least one byte, got 0 (leave --capacity out for an unlimited backend)");
  }
  return o;
}

void add_timing_options(po::options_description& desc, char const* repeats)
{
  desc.add_options()                                                                                      //
      ("repeat", po::value<std::string>()->default_value(repeats),
       "timed runs per cell after the metrics pass; ns_per_op is their median (0: none, ns_per_op 0 and no ns/op "
       "column in the table; below ~100,000 events one run is mostly noise)")  //
      ("warm", "time the runs on one allocator kept warm after the metrics pass (records, address map and "
               "regions grown, as in bench_allocators), not each on a fresh allocator")  //
      ("free-by", po::value<std::string>()->default_value("reference"),
       "free each block by the reference its allocation returned, or by its address, as a program plugged in by "
       "pointer does (the engine then keeps an address map; the decisions are the same)");
}

void read_timing_options(po::variables_map const& vm, replay_options& o)
{
  o.repeats = static_cast<unsigned>(count_option("repeat", vm["repeat"].as<std::string>(), 0, std::numeric_limits<unsigned>::max()));
  o.warm = vm.count("warm") != 0;
  o.frees = parse_free_by(vm["free-by"].as<std::string>());
}

void check_output_options(po::variables_map const& vm, std::initializer_list<char const*> names)
{
  (void)chosen_output_format(vm);  // a --format that contradicts -o is refused before any work
  // The inputs are every file the command reads, under whichever name its positional
  // arguments have: `replay T -o T`, `plan A.csv --placement A.csv` and `tune S -o S` would
  // replace the input with their own results.
  std::vector<std::string> inputs;
  for (char const* input : {"trace", "part", "input", "snapshot"}) {
    if (!vm.count(input)) continue;
    if (auto const* many = boost::any_cast<std::vector<std::string>>(&vm[input].value()))
      inputs.insert(inputs.end(), many->begin(), many->end());
    else if (auto const* one = boost::any_cast<std::string>(&vm[input].value()))
      inputs.push_back(*one);
  }
  std::vector<std::pair<char const*, std::string>> seen;
  for (char const* name : names) {
    if (!vm.count(name)) continue;
    std::string const path = vm[name].as<std::string>();
    try {
      check_output_file(path, inputs);
    } catch (std::invalid_argument const& e) {
      throw std::invalid_argument(std::string("--") + name + ": " + e.what());
    }
    for (auto const& [other, other_path] : seen)
      if (same_output(path, other_path))
        throw std::invalid_argument(std::string("--") + other + " and --" + name + " name the same file, " + path);
    seen.emplace_back(name, path);
  }
}

void add_output_options(po::options_description& desc)
{
  desc.add_options()                                                                 //
      ("format", po::value<std::string>(), "table, csv, json or md (default: from -o's extension, .csv, .json or .md; else table)")  //
      ("output,o", po::value<std::string>(), "write to FILE instead of standard output (`-`: standard output); a file is replaced only when the run succeeds")  //
      ("columns", po::value<std::string>(), "C1,C2,...: these columns, in this order, in any format (default: the table and "
                                            "md show the few a reader needs, in units; csv and json every column, raw)")  //
      ("all", "the table and md show every column, raw")  //
      ("sort", po::value<std::string>(), "COLUMN or COLUMN:desc: sort the rows (numbers as numbers)")  //
      ("explain", "after the table, one line per column saying what it measures (docs/metrics.md)");
}

namespace {

// The format -o's extension names; `fallback` for any other name.
output_format format_of_extension(std::string const& path, output_format fallback)
{
  if (path.ends_with(".csv")) return output_format::csv;
  if (path.ends_with(".json")) return output_format::json;
  if (path.ends_with(".md")) return output_format::md;
  return fallback;
}

}  // namespace

output_format chosen_output_format(po::variables_map const& vm)
{
  if (!vm.count("format"))
    return vm.count("output") ? format_of_extension(vm["output"].as<std::string>(), output_format::table) : output_format::table;
  output_format const given = parse_output_format(vm["format"].as<std::string>());
  if (vm.count("output") && format_of_extension(vm["output"].as<std::string>(), given) != given)
    throw std::invalid_argument("--format " + vm["format"].as<std::string>() + " contradicts -o " +
                                vm["output"].as<std::string>() + ", whose extension says otherwise: give one");
  return given;
}

namespace {

// --columns, --all and --sort.
view_choice view_option(po::variables_map const& vm)
{
  view_choice v;
  if (vm.count("columns")) {
    for (std::string_view const c : list_items(vm["columns"].as<std::string>()))
      if (!c.empty()) v.columns.emplace_back(c);
    if (v.columns.empty()) throw std::invalid_argument("--columns: expected C1,C2,...");
    if (vm.count("all")) throw std::invalid_argument("--columns and --all: give one");
  }
  v.all = vm.count("all") != 0;
  if (vm.count("sort")) v.sort = vm["sort"].as<std::string>();
  return v;
}

}  // namespace

rows_table*& table_sink() noexcept
{
  thread_local rows_table* sink = nullptr;
  return sink;
}

void write_all_columns(po::variables_map const& vm, std::vector<std::string> const& columns,
                       std::vector<std::vector<std::string>> const& rows)
{
  if (rows_table* sink = table_sink()) {
    *sink = {columns, rows};
    return;
  }
  std::string const out = format_rows(columns, rows, chosen_output_format(vm));
  if (vm.count("output")) write_output_file(vm["output"].as<std::string>(), out);
  else std::cout << out;
}

void write_rows(po::variables_map const& vm, std::vector<std::string> const& columns,
                std::vector<std::vector<std::string>> const& rows)
{
  view_choice const v = view_option(vm);
  if (rows_table* sink = table_sink()) {  // every column raw, as CSV has them, chosen and sorted as asked
    *sink = viewed({columns, rows}, v, false);
    return;
  }
  output_format const format = chosen_output_format(vm);
  bool const readable = format == output_format::table || format == output_format::md;
  rows_table const t = viewed({columns, rows}, v, readable);
  std::string const out = format_rows(t.columns, t.rows, format);
  bool const to_file = vm.count("output") && vm["output"].as<std::string>() != "-";
  if (to_file) write_output_file(vm["output"].as<std::string>(), out);
  else std::cout << out;
  if (vm.count("explain")) {
    std::vector<std::string> const shown = v.all ? columns : !v.columns.empty() ? v.columns
                                                  : readable ? default_columns({columns, rows}) : columns;
    (readable && !to_file ? std::cout : std::cerr) << "\n" << legend(shown);
  }
}

}  // namespace fraglab::cli
