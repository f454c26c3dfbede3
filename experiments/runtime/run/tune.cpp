#include <fraglab/runtime/run/tune.hpp>

#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/io/progress_meter.hpp>
#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/output/table_view.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/replay/run_cells.hpp>
#include <fraglab/runtime/run/min_capacity.hpp>
#include <fraglab/runtime/run/run_inputs.hpp>

#include <algorithm>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace fraglab {
namespace {

// The values users try (PyTorch's docs suggest max_split_size_mb in the hundreds and
// roundup_power2_divisions of a few), from the default; max_split_size_mb must exceed 20.
constexpr char const* max_split_sizes[] = {"unlimited", "32", "64", "128", "256", "512", "1024"};
constexpr char const* divisions[] = {"0", "2", "4", "8"};
constexpr char const* gc_thresholds[] = {"0", "0.6", "0.8"};

struct cell_numbers {
  std::size_t peak_live = 0, peak_reserved = 0, least = 0;
  std::uint64_t failed = 0;
  double frag4 = 0;
};

}  // namespace

std::vector<tune_setting> tune_grid(bool limited)
{
  std::vector<tune_setting> grid;
  for (bool const expandable : {false, true})
    for (char const* split : max_split_sizes)
      for (char const* div : divisions)
        for (char const* gc : gc_thresholds) {
          bool const collects = std::string_view(gc) != "0";
          // Collection acts only under a memory fraction, and is not modelled with expandable segments.
          if (collects && (!limited || expandable)) continue;
          // The spec names only what differs from the defaults; the settings run with the
          // recording's own ignored (cell_parameters' `recorded` false), so none leaks in.
          tune_setting s;
          std::vector<std::string> conf, keys;
          auto set = [&](std::string const& key, char const* value) {
            conf.push_back(key + ":" + value);
            keys.push_back(key + "=" + value);
          };
          if (expandable) conf.emplace_back("expandable_segments:True");
          if (std::string_view(split) != "unlimited") set("max_split_size_mb", split);
          if (std::string_view(div) != "0") set("roundup_power2_divisions", div);
          if (collects) set("garbage_collection_threshold", gc);
          s.changed = static_cast<int>(conf.size());
          if (limited) keys.emplace_back("per_process_memory_fraction=1");
          auto const joined = [](std::vector<std::string> const& items, char const* first) {
            std::string out;
            for (auto const& i : items) out.append(out.empty() ? first : ",").append(i);
            return out;
          };
          s.conf = joined(conf, "");
          s.spec = std::string(expandable ? "pytorch_expandable" : "pytorch_caching") + joined(keys, ":");
          grid.push_back(std::move(s));
        }
  return grid;
}

tune_result tune(std::vector<trace::trace const*> const& devices, std::optional<std::size_t> capacity, unsigned jobs,
                 std::atomic<bool> const* stop)
{
  if (devices.empty()) throw std::invalid_argument("no trace given");
  for (trace::trace const* t : devices)
    if (!t->recorded_unmodelled.empty())
      throw std::invalid_argument(t->name + ": recorded with allocator settings the PyTorch presets do not model (" +
                                  listed(t->recorded_unmodelled) +
                                  "): no replay can say what they change, so no other setting can be compared with them");
  std::vector<tune_setting> const grid = tune_grid(capacity.has_value());
  // Setting 0 is the recording's own: its preset, under the settings it was recorded with.
  std::vector<std::string> specs;
  specs.push_back(devices.front()->recorded_expandable ? "pytorch_expandable" : "pytorch_caching");
  if (capacity) specs.front() += ":per_process_memory_fraction=1";
  for (auto const& s : grid) specs.push_back(s.spec);

  replay_options options;
  options.repeats = 0;
  options.stop = stop;
  replay_options bisecting = options;
  bisecting.stop_on_failure = true;
  std::size_t const cells = devices.size() * specs.size();
  progress_meter progress(cells, "bisection steps", progress_meter::stderr_is_terminal());
  auto const numbers = run_cells<cell_numbers>(cells, jobs, [&](std::size_t c) {
    trace::trace const& t = *devices[c / specs.size()];
    std::string const& spec = specs[c % specs.size()];
    param_set const p = cell_parameters(spec, {}, t, c % specs.size() == 0);  // the recorded settings for the recorded row only
    auto const run = [&](std::size_t limit, replay_options const& o) {
      return make_composition(spec, p, backend_choice{"simulated", limit})->replay(t, o);
    };
    // With a capacity every setting runs under a memory fraction of 1, which needs a device
    // size: "no limit" is then a device of 2^60 bytes.
    std::size_t const unlimited = capacity ? std::size_t{1} << 60 : std::numeric_limits<std::size_t>::max();
    replay_result const r = run(capacity.value_or(unlimited), options);
    progress.add(1);
    cell_numbers n{r.peak_live_bytes, r.peak_reserved_bytes, 0, r.failed_allocs, r.frag4};
    // A setting that fails with no limit at all runs in no memory (n.least stays 0: none).
    if (capacity && r.failed_allocs != 0 && run(unlimited, bisecting).failed_allocs != 0) return n;
    if (!capacity && r.failed_allocs != 0) return n;
    std::size_t const granularity = make_composition(spec, p, backend_choice{"simulated", capacity.value_or(unlimited)})->make()->backend_granularity();
    n.least = least_capacity([&](std::size_t limit) { return run(limit, bisecting).failed_allocs == 0; }, granularity,
                             std::max(r.peak_reserved_bytes, granularity), &progress);
    return n;
  });
  progress.finish();

  // Each setting's totals over the devices: one PYTORCH_CUDA_ALLOC_CONF serves them all.
  struct totals {
    std::size_t reserved = 0, least = 0;
    std::uint64_t failed = 0;
    bool runs = true;  // some memory serves every device
  };
  std::vector<totals> of(specs.size());
  for (std::size_t c = 0; c < cells; ++c) {
    auto& t = of[c % specs.size()];
    t.reserved += numbers[c].peak_reserved;
    t.least = std::max(t.least, numbers[c].least);
    t.runs = t.runs && numbers[c].least != 0;
    t.failed += numbers[c].failed;
  }
  std::vector<std::size_t> order(grid.size());
  std::iota(order.begin(), order.end(), std::size_t{1});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    // Settings that run in no memory last; then the fewest failures, the lowest peak, the fewest changes.
    auto const key = [&](std::size_t s) { return std::tuple(!of[s].runs, of[s].failed, of[s].reserved, grid[s - 1].changed); };
    return key(a) < key(b);
  });
  std::size_t const best = order.front();
  std::size_t const fitting = static_cast<std::size_t>(std::count_if(order.begin(), order.end(), [&](std::size_t s) { return of[s].failed == 0; }));

  tune_result out;
  out.recommended = grid[best - 1].conf;
  out.fits = of[best].failed == 0;
  out.table.columns = {"trace", "setting", "policy", "peak_live_bytes", "peak_reserved_bytes", "reserved_vs_recorded",
                       "min_capacity_bytes", "capacity_bytes", "failed_allocs", "frag4", "recommended"};
  for (std::size_t d = 0; d < devices.size(); ++d) {
    std::size_t const recorded_reserved = numbers[d * specs.size()].peak_reserved;
    auto row_of = [&](std::size_t s, std::string const& setting) {
      cell_numbers const& n = numbers[d * specs.size() + s];
      out.table.rows.push_back({devices[d]->name, setting, specs[s], std::to_string(n.peak_live), std::to_string(n.peak_reserved),
                                recorded_reserved == 0 ? "" : fixed(static_cast<double>(n.peak_reserved) / static_cast<double>(recorded_reserved) - 1.0, 4),
                                n.least == 0 ? "" : std::to_string(n.least), capacity ? std::to_string(*capacity) : "", std::to_string(n.failed),
                                fixed(n.frag4, 4), s == best ? "yes" : "no"});
    };
    row_of(0, devices[d]->recorded_settings.empty() ? "recorded (defaults)" : "recorded");
    for (std::size_t s : order) row_of(s, grid[s - 1].conf.empty() ? "(defaults)" : grid[s - 1].conf);
  }

  // Lines of at most 120 columns, as every table a reader sees.
  std::ostringstream why;
  std::string const where = devices.size() == 1 ? "" : " over its " + std::to_string(devices.size()) + " devices";
  auto const change = [&](std::size_t now, std::size_t before) {
    return before == 0 ? std::string() : " (" + fixed(100.0 * (static_cast<double>(now) / static_cast<double>(before) - 1.0), 1) + "%)";
  };
  std::string const line = out.recommended.empty() ? "PYTORCH_CUDA_ALLOC_CONF unset (PyTorch's defaults)" : "PYTORCH_CUDA_ALLOC_CONF=" + out.recommended;
  if (capacity && !out.fits) {
    why << "no setting of the " << grid.size() << " tried serves it" << where << " within " << human_size(*capacity) << "\n"
        << "  the fewest failed allocations: " << of[best].failed << " under " << line << " (as recorded: " << of[0].failed << ")\n"
        << "  the least memory that setting runs in: " << human_size(of[best].least) << '\n';
  } else {
    why << "recommended: " << line << '\n';
    std::string const& recorded = devices.front()->recorded_settings;
    if (!recorded.empty()) why << "  recorded with " << recorded << '\n';
    why << "  peak reserved " << human_size(of[best].reserved) << where << ", as recorded " << human_size(of[0].reserved)
        << change(of[best].reserved, of[0].reserved) << "\n  the least memory it runs in: " << human_size(of[best].least)
        << ", as recorded " << human_size(of[0].least) << '\n';
    if (capacity)
      why << "  within " << human_size(*capacity) << " it leaves " << human_size(*capacity - std::min(*capacity, of[best].least))
          << " to spare; " << fitting << " of " << grid.size() << " settings fit; as recorded " << of[0].failed << " allocations fail\n";
    if (out.recommended.find("garbage_collection") != std::string::npos)
      why << "  garbage collection acts only under a memory fraction: torch.cuda.set_per_process_memory_fraction(F),\n"
             "  F the share of the device the capacity is\n";
  }
  why << "  tried: expandable_segments False/True x max_split_size_mb unlimited,32,...,1024 x roundup_power2_divisions 0,2,4,8\n"
      << (capacity ? "  x garbage_collection_threshold 0,0.6,0.8 (not with expandable segments); " : "  ")
      << "ties go to fewer settings changed\n";
  // A snapshot's trace is named FILE@cuda:N; the command reads FILE and takes the device apart.
  std::string const& name = devices.front()->name;
  std::size_t const at = name.rfind("@cuda:");
  why << "  check: fraglab replay " << name.substr(0, at)
      << (at == std::string::npos ? "" : " --device " + std::to_string(devices.front()->device))
      << " --ignore-recorded-settings \\\n      --backend simulated" << (capacity ? " --capacity " + std::to_string(*capacity) : "")
      << " \\\n      -p '" << specs[best] << "'\n";
  out.reasoning = why.str();
  return out;
}

}  // namespace fraglab
