// fraglab plan: the best offline placement of every buffer of a trace or a MiniMalloc CSV,
// with its proven lower bound (policies/offline/planner.hpp, docs/offline.md).
#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/policies/offline/planner.hpp>
#include <fraglab/runtime/io/output_file.hpp>
#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/plan/offline_problem.hpp>
#include <fraglab/runtime/plan/plan_table.hpp>
#include <fraglab/runtime/replay/run_cells.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>

#include <iostream>
#include <stdexcept>

namespace fraglab::cli {

int plan(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab plan INPUT... [--time-limit S] [--capacity C] [--placement OUT.csv] [options]\n\n"
      "  fraglab plan run.trace                          the lowest placement of its allocations, and how far it can be from the best\n"
      "  fraglab plan B.1048576.csv --capacity 1048576 --placement B.out.csv   MiniMalloc's problem and output\n\n"
      "INPUT: any trace fraglab reads (a buffer lives from its allocation to its free, or to the end), or a MiniMalloc\n"
      "CSV (id,lower,upper,size: live over [lower, upper), or [lower, upper] with --lifetimes inclusive; times any\n"
      "integers; any order, MiniMalloc's other names and its optional alignment column too: docs/offline.md).\n"
      "Every placement is checked before it is reported.\n"
      "Columns: height_bytes (the placement's), lower_bound_bytes (proven: none is lower; LOAD or raised by the search),\n"
      "optimal (the two meet), gap_to_lower (height / lower bound - 1), found_by (a heuristic, or the search).\n"
      "Exit: 0 planned; 1 no placement within --capacity was found (nothing is written); 2 bad input.\n\n"
      "Options");
  desc.add_options()                                                                                                 //
      ("input", po::value<std::vector<std::string>>()->multitoken(), "traces or MiniMalloc CSV files")                 //
      ("time-limit", po::value<std::string>()->default_value("10"), "S: seconds of search for each input")          //
      ("capacity", po::value<std::string>(), "SIZE: the height no placement may exceed (e.g. 1048576, 80GiB)")      //
      ("placement", po::value<std::string>(), "OUT.csv: the placement of one input's buffers as MiniMalloc's CSV with "
                                              "an offset column, its times as the input gave them")  //
      ("lifetimes", po::value<std::string>()->default_value("half-open"),
       "how a CSV's upper column counts: half-open (MiniMalloc's: [lower, upper)) or inclusive (IREE's and SOMAS's: "
       "[lower, upper], the last step live)")  //
      ("node-budget", po::value<std::string>(),
       "N: at most N buffers placed by the search for each input; where the time limit never binds, the same plan on "
       "every machine");
  add_trace_selection_options(desc);
  add_jobs_option(desc, "inputs planned in parallel");
  add_output_options(desc);
  auto const parsed = parse_command(args, desc, "input");
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (!vm.count("input")) throw std::invalid_argument("no input given");
  check_output_options(vm, {"output", "placement"});
  double const seconds = seconds_option("time-limit", vm["time-limit"].as<std::string>());
  std::uint64_t const capacity = vm.count("capacity") ? size_option("capacity", vm["capacity"].as<std::string>()) : offline::no_capacity;
  unsigned const jobs = jobs_option(vm);
  auto const& paths = vm["input"].as<std::vector<std::string>>();
  check_distinct_names(paths);

  plan::lifetimes const read_as = plan::lifetimes_named("--lifetimes", vm["lifetimes"].as<std::string>());

  std::vector<plan::offline_input> inputs;
  for (auto const& path : paths) {
    if (plan::is_minimalloc_csv(path)) {
      inputs.push_back(plan::read_minimalloc_csv(path, read_as));
      continue;
    }
    for (trace::trace& t : trace::read_traces(path, device_option(vm))) {
      apply_trace_selection(vm, t);
      inputs.push_back(plan::offline_problem(t));
    }
  }
  if (vm.count("placement") && inputs.size() != 1)
    throw std::invalid_argument("--placement writes one input's placement, and " + std::to_string(inputs.size()) +
                                " were given (a snapshot of several devices is one a device: choose with --device N)");
  for (auto& in : inputs) in.problem.capacity = capacity;

  offline::plan_options options;
  options.time_limit_seconds = seconds;
  if (vm.count("node-budget")) options.node_budget = count_option("--node-budget", vm["node-budget"].as<std::string>());
  auto const results = run_cells<offline::plan_result>(inputs.size(), jobs, [&](std::size_t i) { return offline::plan(inputs[i].problem, options); });

  bool all_fit = true;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!results[i].fits) {
      all_fit = false;
      std::cerr << "fraglab: " << plan::no_fit_reason(inputs[i], results[i], capacity, seconds) << '\n';
    }
    rows.push_back(plan::plan_row(inputs[i], results[i], capacity));
  }
  if (!all_fit) return 1;
  if (vm.count("placement")) write_output_file(vm["placement"].as<std::string>(), plan::minimalloc_csv(inputs[0], results[0].offsets));
  write_rows(vm, plan::plan_columns(), rows);
  return 0;
}

}  // namespace fraglab::cli
