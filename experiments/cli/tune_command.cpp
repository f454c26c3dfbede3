// fraglab tune: which PYTORCH_CUDA_ALLOC_CONF serves a recorded program best
// (experiments/runtime/run/tune.hpp).
#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/runtime/run/tune.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>

#include <iostream>
#include <thread>

namespace fraglab::cli {

int tune(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab tune SNAPSHOT... [--capacity SIZE] [options]\n\n"
      "  fraglab tune snap.pickle                   the setting with the lowest peak reserved bytes\n"
      "  fraglab tune snap.pickle --capacity 24GiB  the one that fits a 24 GiB device with the most to spare\n\n"
      "Replays the recording under PyTorch's allocator across expandable_segments, max_split_size_mb,\n"
      "roundup_power2_divisions and, with --capacity, garbage_collection_threshold; a row a (device, setting), the\n"
      "recorded settings first and the recommended one marked, then the recommendation with its numbers. A snapshot's\n"
      "devices are tuned together: one PYTORCH_CUDA_ALLOC_CONF serves them all.\n"
      "Exit: 0 recommended; 1 no setting fits --capacity (nothing is written); 2 bad input, or settings the presets do\n"
      "not model.\n\n"
      "Options");
  desc.add_options()                                                                                     //
      ("snapshot", po::value<std::vector<std::string>>()->multitoken(), "PyTorch memory snapshots (or any trace)")  //
      ("capacity", po::value<std::string>(), "SIZE: each device's memory (e.g. 24GiB): failed allocations count, "
                                             "and garbage collection is tried")                          //
      ("device", po::value<std::string>(), "N: the allocator of device cuda:N only")                    //
      ("jobs,j", po::value<std::string>(), "settings replayed in parallel (default: every core)");
  add_output_options(desc);
  auto const parsed = parse_command(args, desc, "snapshot");
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (!vm.count("snapshot")) throw std::invalid_argument("no snapshot given");
  check_output_options(vm, {"output"});
  std::optional<std::size_t> capacity;
  if (vm.count("capacity")) {
    capacity = size_option("capacity", vm["capacity"].as<std::string>());
    if (*capacity == 0) throw std::invalid_argument("--capacity: expected at least one byte, got 0");
  }
  unsigned const jobs = vm.count("jobs") ? static_cast<unsigned>(count_option("jobs", vm["jobs"].as<std::string>(), 1, 1u << 16))
                                         : std::max(1u, std::thread::hardware_concurrency());
  auto const& paths = vm["snapshot"].as<std::vector<std::string>>();
  check_distinct_names(paths);
  std::vector<std::vector<trace::trace>> recordings;
  for (auto const& path : paths) recordings.push_back(trace::read_traces(path, device_option(vm)));

  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::string reasoning;
  bool all_fit = true;
  for (auto const& devices : recordings) {
    tune_result r = fraglab::tune(addresses_of(devices), capacity, jobs);
    columns = r.table.columns;
    for (auto& row : r.table.rows) rows.push_back(std::move(row));
    reasoning += devices.front().name + (devices.size() > 1 ? " and its other devices" : "") + ":\n" + r.reasoning;
    all_fit = all_fit && r.fits;
  }
  // Nothing fits: no table (a file is written only when the run succeeds), only why.
  if (!all_fit) {
    std::cerr << reasoning;
    return 1;
  }
  write_rows(vm, columns, rows);
  // The table alone on standard output when it is data (CSV, JSON) or goes to a file.
  bool const as_data = vm.count("output") || (vm.count("format") && chosen_output_format(vm) != output_format::table);
  (as_data ? std::cerr : std::cout) << '\n' << reasoning;
  return 0;
}

}  // namespace fraglab::cli
