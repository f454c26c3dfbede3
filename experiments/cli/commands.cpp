#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/cli/shard_option.hpp>

#include <fraglab/runtime/inspect/drive.hpp>
#include <fraglab/runtime/inspect/verify_snapshot.hpp>
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/io/output_file.hpp>
#include <fraglab/runtime/io/progress_meter.hpp>
#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/params/list_items.hpp>
#include <fraglab/runtime/params/param_set.hpp>
#include <fraglab/runtime/params/units.hpp>
#include <fraglab/runtime/plan/offline_gap.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/registry/policy_spec.hpp>
#include <fraglab/runtime/replay/run_cells.hpp>
#include <fraglab/runtime/run/replay_cells.hpp>
#include <fraglab/runtime/run/verify_file.hpp>
#include <fraglab/runtime/trace/pytorch_snapshot.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>
#include <fraglab/runtime/trace/write_trace.hpp>

#include <fraglab/policies/presets/pytorch_memory_stats.hpp>
#include <fraglab/policies/presets/tf_memory_dump.hpp>

#include <boost/program_options.hpp>

#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace fraglab::cli {

int policies(std::vector<std::string> const& args)
{
  po::options_description desc("fraglab policies [NAME] [--keys]\n\n"
                               "  fraglab policies                 every preset and composition\n"
                               "  fraglab policies tf_bfc          its parts, backend and every parameter it reads, as it runs\n"
                               "  fraglab policies tlsf:sli=4      the same with the spec's own settings\n\n"
                               "Options");
  desc.add_options()("name", po::value<std::string>(), "a policy spec")  //
      ("keys", "list every parameter with its default")  //
      ("names", "print only the policy names, one a line (presets, then compositions)");
  auto const parsed = parse_command(args, desc, "name", 1);
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (vm.count("name")) {
    std::string const spec = vm["name"].as<std::string>();
    policy_summary const s = describe_policy(spec);
    auto const c = make_composition(spec, {}, {});
    std::cout << s.name << ": " << s.description << "\nparts: " << s.parts << "\nbackend: " << c->backend().kind
              << " by default (granularity " << c->granularity() << " B; --backend chooses another)\n\n"
              << "parameters it reads, as it runs (-p " << parse_policy_spec(spec).base
              << ":KEY=VALUE or --set KEY=VALUE changes one):\n";
    std::vector<std::vector<std::string>> rows;
    for (std::string_view const key : s.keys) {
      if (!backend_reads(c->backend().kind, key)) continue;
      auto const& known = known_params();
      auto const spec_of = std::find_if(known.begin(), known.end(), [&](param_spec const& p) { return p.key == key; });
      std::string const value = key == "granularity" && !c->params().has(key) ? std::to_string(c->granularity()) : c->params().text(key);
      rows.push_back({std::string(key), value, value == spec_of->default_value ? "" : "(table: " + std::string(spec_of->default_value) + ")",
                      std::string(spec_of->help)});
    }
    std::cout << format_rows({"key", "value", "", "meaning"}, rows, output_format::table);
    return 0;
  }
  if (vm.count("names")) {
    for (auto const& p : preset_list()) std::cout << p.name << '\n';
    for (auto const& n : named_compositions()) std::cout << n.name << '\n';
    return 0;
  }
  if (vm.count("keys")) {
    std::vector<std::vector<std::string>> rows;
    for (auto const& p : known_params())
      rows.push_back({std::string(p.key), std::string(p.part), std::string(p.default_value), std::string(p.help)});
    std::cout << format_rows({"key", "part", "default", "meaning"}, rows, output_format::table);
    return 0;
  }
  std::vector<std::vector<std::string>> preset_rows;
  for (auto const& p : preset_list()) preset_rows.push_back({std::string(p.name), std::string(p.description)});
  std::cout << "Presets (reproduce real allocators):\n" << format_rows({"preset", "reproduces"}, preset_rows, output_format::table);
  std::cout << "\nCompositions:\n";
  std::vector<std::vector<std::string>> rows;
  for (auto const& n : named_compositions())
    rows.push_back({std::string(n.name), std::string(n.index), std::string(n.fit), std::string(n.description)});
  std::cout << format_rows({"policy", "index", "fit", "description"}, rows, output_format::table);
  std::cout << "\ncompose:index=I,fit=F[,KEY=VALUE...] builds any of these index/fit pairs:\n ";
  for (auto const& p : composable_pairs()) std::cout << ' ' << p.index << '/' << p.fit;
  std::cout << "\n(`fraglab policies --keys` lists the KEYs)\n";
  return 0;
}

int replay(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab replay TRACE... -p P[,P...] [options]\n\n"
      "  fraglab replay run.trace -p best_fit,tlsf,dlmalloc           one row per (trace, policy)\n"
      "  fraglab replay snap.pickle -p tf_bfc,pytorch_caching --explain   with a legend of the columns\n"
      "  fraglab replay run.trace -p tlsf,tlsf:sli=3@coarse --sort frag4  a policy's own setting, and a label\n"
      "  fraglab replay run.trace -p best_fit,tf_bfc --backend simulated  policies of different default backends\n"
      "  fraglab replay run.trace -p best_fit -o out.csv                   every column, raw, as CSV\n"
      "  fraglab replay *.pickle -p tf_bfc,pytorch_caching --shard 2/8 -o part2.csv   (then `fraglab merge`)\n\n"
      "P: a name from `fraglab policies`, NAME:KEY=VALUE,... for its own settings, compose:index=I,fit=F,..., and\n"
      "@LABEL at the end to name its rows. --set KEY=VALUE applies to the policies that read KEY.\n"
      "The table shows trace, policy, backend, peak live and reserved bytes, frag4 (peak reserved / peak live\n"
      "- 1), external fragmentation at the peak, failed allocations and ns/op; --all or --columns for more.\n\n"
      "Options");
  add_trace_and_policy_options(desc);
  add_jobs_option(desc, "cells run in parallel (results identical to --jobs 1 apart from timing)");
  add_shard_option(desc, "(trace, policy) pairs");
  add_list_cells_option(desc);
  desc.add_options()                                                                                          //
      ("strict", "a free of an unknown id or a reused live id is an error")                                   //
      ("stop-on-failure", "stop a replay at its first failed allocation")  //
      ("timeseries", po::value<std::string>(), "FILE: write live, allocated, reserved, largest free and free chunks "
                                               "at 4096 evenly spaced events of each replay (CSV)");
  add_timing_options(desc);
  add_allocator_options(desc);
  add_offline_options(desc);
  add_output_options(desc);
  auto const parsed = parse_command(args, desc, "trace");
  if (!parsed) return 0;
  auto const& vm = *parsed;
  check_output_options(vm, {"output", "timeseries"});
  unsigned const jobs = jobs_option(vm);
  shard const part = shard_option(vm);
  std::optional<double> const offline = offline_option(vm);
  allocator_options const chosen = read_allocator_options(vm);
  replay_options options;
  options.strict = vm.count("strict") != 0;
  options.stop_on_failure = vm.count("stop-on-failure") != 0;
  read_timing_options(vm, options);

  // Build every composition and read every trace before running anything.
  std::vector<std::string> const specs = policy_specs(vm);
  (void)make_compositions(specs, chosen);
  std::vector<trace::trace> const traces = read_traces(vm);
  bool const recorded = recorded_settings_applied(vm);
  note_recorded_settings(traces, specs, recorded);
  options.timeseries = vm.count("timeseries") != 0;
  run_inputs const in{addresses_of(traces), specs, chosen, recorded, jobs, offline};
  std::size_t const cells = replay_cell_count(in);
  std::vector<std::size_t> const mine = part.cells(cells);
  if (vm.count("list-cells")) {
    std::vector<std::vector<std::string>> rows;
    for (std::size_t cell : mine) {
      trace::trace const& t = traces[cell / specs.size()];
      rows.push_back({std::to_string(cell), t.name, specs[cell % specs.size()], std::to_string(t.event_count())});
    }
    write_all_columns(vm, {"cell", "trace", "policy", "events"}, rows);
    return 0;
  }
  replay_run run = run_replay(in, options, mine);
  // The time series first: a failure to write it leaves no results table either.
  if (options.timeseries) {
    std::vector<std::vector<std::string>> series;
    for (replay_result const& r : run.results) append_timeseries_rows(r, series);
    write_output_file(vm["timeseries"].as<std::string>(), format_rows(timeseries_columns(), series, output_format::csv));
  }
  write_cell_rows(vm, part, replay_part, cells, part.given ? run_id("replay", traces, specs, {}, chosen.user, chosen.backend, options) : "",
                  std::move(run.table.columns), std::move(run.table.rows));
  return 0;
}

int convert(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab convert IN OUT [--to text|binary|rmm-csv]\n\n"
      "  fraglab convert run.csv run.fbin            RMM CSV to native binary (from the extension)\n"
      "  fraglab convert snap.pickle --device 1 d1.trace   one device of a snapshot as native text\n\n"
      "Options");
  desc.add_options()                                                                                              //
      ("files", po::value<std::vector<std::string>>()->multitoken(), "IN (any readable format) and OUT")           //
      ("to", po::value<std::string>()->default_value(""), "OUT's format: text, binary or rmm-csv; default from OUT's "
                                                          "extension (.fbin native binary, .csv RMM CSV, otherwise text)");
  add_trace_selection_options(desc);
  auto const parsed = parse_command(args, desc, "files");
  if (!parsed) return 0;
  auto const& vm = *parsed;
  auto const files = vm.count("files") ? vm["files"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (files.size() != 2) throw std::invalid_argument("expected IN and OUT, got " + std::to_string(files.size()) + " files");
  check_output_file(files[1], {files[0]});
  auto const to = trace::output_trace_format(files[1], vm["to"].as<std::string>());
  trace::trace t = trace::read_trace(files[0], device_option(vm));
  apply_trace_selection(vm, t);
  trace::write_trace(files[1], t, to, "converted by fraglab convert from " + t.name);
  std::cerr << "wrote " << t.event_count() << " events as " << trace::to_string(to) << " to " << files[1] << '\n';
  return 0;
}

namespace {

// A TF log's allocator, verified: its counts, what its log cannot stand for, its first mismatches.
void report_tf_verify(std::ostream& report, verified_file const& v, std::size_t i)
{
  verify_result const& r = v.results[i];
  report << "addresses matched: " << r.addresses_matched << '/' << r.addresses_total << '\n';
  report << "regions matched: " << r.segments_matched << '/' << r.segments_total << '\n';
  if (r.ooms_total != 0) report << "failed allocations matched: " << r.ooms_matched << '/' << r.ooms_total << '\n';
  report << "  (under tf_bfc, with the regions TF acquired: addresses, each allocation the log records; regions, each region "
            "acquired or given back; failed allocations, each that TF could not serve, which the preset under the same limit "
            "must fail too)\n";
  if (!v.caveats[i].empty()) report << "  note: " << v.caveats[i] << '\n';
  for (auto const& m : r.first_mismatches) report << "  " << mismatch_place(v, r, m) << ": " << m.what << '\n';
}

}  // namespace

int verify(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab verify RECORDING... [-p auto|pytorch_caching|pytorch_expandable|tf_bfc]\n\n"
      "  fraglab verify snap.pickle                 every address, segment and map PyTorch recorded, compared\n"
      "  fraglab verify run.tflog.zst               every address and region TensorFlow's BFC allocator logged, compared\n"
      "  fraglab verify *.pickle --format json      one row per allocator: the counts and the first mismatch\n\n"
      "Exit: 0 every decision matched; 1 one differs; 3 nothing was recorded to compare; 2 bad input.\n\n"
      "Options");
  desc.add_options()                                                                              //
      ("snapshot", po::value<std::vector<std::string>>()->multitoken(),
       "PyTorch memory snapshots, TensorFlow BFC logs (fraglab record-tf)")  //
      ("policy,p", po::value<std::string>()->default_value("auto"),
       "the preset to verify: auto, the one the recording's allocator is (a snapshot's settings ask for pytorch_expandable "
       "with expandable_segments:True, else pytorch_caching; a TF log is tf_bfc's)")  //
      ("device", po::value<std::string>(), "N: the allocator of device cuda:N only (default: each device's); NAME: of a "
                                           "TF log, that allocator only (default: each)")  //
      ("format", po::value<std::string>(), "csv, json, md or table: one row per device, the counts and the first "
                                           "mismatch (default: the report)");
  auto const parsed = parse_command(args, desc, "snapshot");
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (!vm.count("snapshot")) throw std::invalid_argument("no recording given");
  bool const as_rows = vm.count("format") != 0 || table_sink() != nullptr;  // fraglab.run takes the rows
  std::vector<std::vector<std::string>> rows;
  std::ostream& report = as_rows ? std::cerr : std::cout;  // the rows alone on standard output
  std::string const policy = vm["policy"].as<std::string>();
  check_verify_policy(policy);
  auto const& paths = vm["snapshot"].as<std::vector<std::string>>();
  check_distinct_names(paths);
  for (auto const& path : paths) check_is_verifiable(path);  // every file checked before any is replayed
  bool mismatched = false, vacuous = false;
  std::optional<trace::allocator_choice> const device = device_option(vm);
  for (auto const& path : paths) {
    verified_file const v = verify_file(path, policy, device);
    for (std::size_t i = 0; i < v.results.size(); ++i) {
      verify_result const& r = v.results[i];
      rows.push_back(verify_row(v, i));
      if (as_rows) {
        mismatched = mismatched || (!r.empty() && !r.complete());
        vacuous = vacuous || r.empty();
        continue;
      }
      report << v.labels[i] << '\n';
      if (v.tf_log) {
        report_tf_verify(report, v, i);
        mismatched = mismatched || !r.complete();
        vacuous = vacuous || r.empty();
        continue;
      }
      if (r.empty()) {
        report << "nothing to verify: no alloc, segment_alloc or segment_free was recorded after the start state ("
               << r.restored_blocks << " live blocks in " << r.restored_segments << " segments, restored)\n";
        vacuous = true;
        continue;
      }
      report << "addresses matched: " << r.addresses_matched << '/' << r.addresses_total << '\n';
      report << "segments matched: " << r.segments_matched << '/' << r.segments_total << '\n';
      if (v.expandable) report << "maps matched: " << r.maps_matched << '/' << r.maps_total << '\n';
      report << "  (under " << v.preset << ". addresses: each alloc recorded after the start; the " << r.restored_blocks
             << " blocks live at the start are restored, not counted. segments: each segment_alloc and segment_free"
             << (v.expandable ? "; maps: each segment_map and segment_unmap" : "")
             << (r.ooms_total != 0 ? "; out-of-memory errors: each `oom`, where the preset given what the device had free must fail too" : "")
             << ")\n";
      if (r.ooms_total != 0) report << "out-of-memory errors matched: " << r.ooms_matched << '/' << r.ooms_total << '\n';
      for (auto const& m : r.first_mismatches) report << "  " << mismatch_place(v, r, m) << ": " << m.what << '\n';
      mismatched = mismatched || !r.complete();
    }
  }
  if (as_rows && table_sink() != nullptr) *table_sink() = {verify_columns(), rows};
  else if (as_rows) std::cout << format_rows(verify_columns(), rows, parse_output_format(vm["format"].as<std::string>()));
  // 0: every decision matched; 1: one differs; 3: some device recorded no decision to compare
  // (not a pass); 2 (from main): bad input.
  return mismatched ? 1 : vacuous ? 3 : 0;
}

int dump(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab dump TRACE -p POLICY [--at end|peak|N] [options]\n\n"
      "  fraglab dump run.trace -p tf_bfc --at peak            TF's memory log where reserved bytes peak\n"
      "  fraglab dump snap.pickle -p pytorch_caching           torch.cuda.memory_stats() at the end\n"
      "  fraglab dump run.trace -p best_fit --format csv       every chunk: address, size, requested, in use\n\n"
      "Options");
  desc.add_options()                                                                                          //
      ("trace", po::value<std::string>(), "trace file")                                                      //
      ("policy,p", po::value<std::string>(), "one policy name or compose: spec")                            //
      ("at", po::value<std::string>()->default_value("end"), "end, peak (first peak of reserved bytes) or N events")  //
      ("style", po::value<std::string>(), "tf (TF BFC's memory log) or pytorch (torch.cuda.memory_stats); "
                                          "default pytorch for pytorch_caching, tf otherwise")  //
      ("format", po::value<std::string>(), "csv, json, md or table: instead of a style, one row per chunk (address, size, "
                                           "requested, in_use, stream, region, pool)")  //
      ("output,o", po::value<std::string>(), "write to FILE instead of standard output (`-`: standard output); a file is replaced only when the run succeeds");
  add_one_trace_options(desc);
  auto const parsed = parse_command(args, desc, "trace", 1);
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (!vm.count("trace")) throw std::invalid_argument("no trace given");
  if (!vm.count("policy")) throw std::invalid_argument("no policy given (-p NAME)");
  check_output_options(vm, {"output"});
  auto const [user, backend] = read_allocator_options(vm);
  std::string const spec = vm["policy"].as<std::string>();
  (void)make_composition(spec, user, backend);  // a bad policy or key fails before the trace is read
  trace::trace t = trace::read_trace(vm["trace"].as<std::string>(), device_option(vm));
  apply_trace_selection(vm, t);
  note_recorded_settings({t}, {spec}, recorded_settings_applied(vm));
  param_set const as_run = cell_parameters(spec, user, t, recorded_settings_applied(vm));
  auto const c = make_composition(spec, as_run, backend);

  if (vm.count("format") && vm.count("style")) throw std::invalid_argument("--format and --style: give one");
  std::string const style = vm.count("style") ? vm["style"].as<std::string>()
                            : spec.rfind("pytorch", 0) == 0 ? "pytorch"
                                                            : "tf";
  if (style != "tf" && style != "pytorch") throw std::invalid_argument("--style: expected tf or pytorch, got '" + style + "'");
  std::string const at = vm["at"].as<std::string>();
  std::uint64_t events = all_events;
  if (at == "peak") events = events_to_peak_reserved(*c, t);
  else if (at != "end") {
    auto const n = parse_size(at);
    if (!n || at.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("--at: expected end, peak or a number of events, got '" + at + "'");
    // The dump's first line would say where it stopped, but a number past the end is a
    // mistake about the trace, not a request for its end.
    if (*n > t.event_count())
      throw std::invalid_argument("--at: " + at + " events, but " + t.name + " has " + std::to_string(t.event_count()));
    events = *n;
  }
  auto a = c->make();
  std::uint64_t const done = drive(*a, t, events);
  std::ostringstream out;
  auto const heading = [&] {
    out << "# " << t.name << " under " << c->name() << " after " << done << " of " << t.event_count() << " events\n";
  };
  if (vm.count("format")) {
    std::vector<std::vector<std::string>> rows;
    a->visit_chunks([&](chunk_view const& v) {
      rows.push_back({std::to_string(v.address), std::to_string(v.size), std::to_string(v.requested), v.in_use ? "1" : "0",
                      std::to_string(v.stream), std::to_string(v.region_serial), std::to_string(v.pool)});
    });
    out << format_rows({"address", "size", "requested", "in_use", "stream", "region", "pool"}, rows,
                       parse_output_format(vm["format"].as<std::string>()));
  } else if (style == "tf") {
    heading();
    std::size_t const limit = user.has("memory_limit") ? user.size("memory_limit") : backend.capacity;
    presets::tf::dump_memory_log(*a, limit, out);
  } else {
    heading();
    std::size_t max_split_size = std::numeric_limits<std::size_t>::max();
    if (as_run.has("max_split_size_mb")) max_split_size = as_run.size("max_split_size_mb") << 20;
    std::vector<std::vector<std::string>> rows;
    auto cell = [](std::optional<std::uint64_t> v) { return v ? std::to_string(*v) : std::string("-"); };
    for (auto const& s : presets::pytorch::memory_stats(*a, max_split_size))
      rows.push_back({std::string(s.name), std::to_string(s.current), cell(s.peak), cell(s.allocated), cell(s.freed)});
    out << format_rows({"stat", "current", "peak", "allocated", "freed"}, rows, output_format::table);
  }
  if (vm.count("output")) write_output_file(vm["output"].as<std::string>(), out.str());
  else std::cout << out.str();
  return 0;
}

}  // namespace fraglab::cli
