// The allocator benchmark suite (Google Benchmark): every subject runs through the replay
// loop of `fraglab replay` (experiments/runtime/replay/replay.hpp), over events parsed beforehand.
//
//   bench_allocators [--benchmark_* flags] [--policies P,P...] [--policy SPEC]... [--backend B]
//                    [--free-by F] [--malloc] [--floor] [--cuda-baselines] [--patterns steady,lifo,shuffled] [--live 1000,...]
//                    [--iterations N] [TRACE...]
//
// Subjects: fraglab policies over the host backend (real memory, as a program would use
// them) or another backend (--backend cuda: device memory), freed by the reference their
// allocation returned, as `fraglab replay` frees, or by address (--free-by address: named
// POLICY@address), as a program plugged in by pointer frees; --policy adds one more, a name or
// a whole `compose:` spec, commas included, named by that spec (a configuration a sweep
// would run, such as TLSF's lists with sli=4); the process's malloc (--malloc:
// glibc, or whichever allocator LD_PRELOAD put in front of it), the bump allocator that
// never reuses memory (--floor), and CUDA's cudaMalloc and cudaMallocAsync
// (--cuda-baselines; the context names the device).
// Benchmarks, one per subject:
//   replay/TRACE/SUBJECT        one pass over each TRACE per iteration
//   PATTERN/SUBJECT/LIVE        alloc_patterns.hpp at LIVE live blocks; the set-up that
//                               builds the live set is run outside the clock
// Counters: ns_per_op (allocator time per timed event), failed_allocs per pass. Each
// subject runs one untimed warm-up pass first and then keeps its allocator warm, freeing
// the blocks a pass leaves live outside the clock (pass_runner.hpp).
#include <fraglab/benchmarks/alloc_patterns.hpp>
#include <fraglab/benchmarks/subjects.hpp>
#include <fraglab/cli/options.hpp>

#include <benchmark/benchmark.h>
#include <boost/algorithm/string/split.hpp>
#include <boost/program_options.hpp>

#include <algorithm>
#include <deque>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace fraglab::bench {
namespace {

namespace po = boost::program_options;

struct options {
  std::vector<std::string> policies, traces, patterns;
  std::vector<std::string> extra_policies;  // --policy: whole specs, not split at commas
  std::string backend = "host";
  free_by frees = free_by::reference;
  std::vector<std::size_t> live;
  std::size_t scan_live_max = 100'000;
  std::uint64_t pattern_events = 1 << 19;
  std::int64_t iterations = 0;  // 0: Google Benchmark decides from --benchmark_min_time
  std::uint64_t min_events = 0; // with iterations: more passes where a pass is short
  bool with_malloc = false, with_floor = false, with_cuda = false;
};

constexpr char default_policies[] =
    "tf_bfc,pytorch_caching,tlsf,dlmalloc,best_fit,first_fit,next_fit,bins_best,seg_best,buddy,list_ao_first";

std::vector<std::string> split_commas(std::string const& s)
{
  std::vector<std::string> parts;
  if (s != "none") boost::split(parts, s, [](char c) { return c == ','; });
  return parts;
}

options parse(int argc, char** argv)
{
  options o;
  // Counts are read as text and parsed by count_option: Boost's own parsing of an unsigned
  // option reads "-1" as 2^64 - 1, a pattern of that many events.
  std::string policies, patterns, live, frees, scan_live_max, pattern_events, iterations, min_events;
  po::options_description named("bench_allocators options (Google Benchmark's --benchmark_* flags also apply)");
  named.add_options()
      ("help,h", "this help")
      ("policies", po::value(&policies)->default_value(default_policies), "fraglab policies, comma-separated, or none")
      ("policy", po::value(&o.extra_policies),
       "one more fraglab policy, taken whole (a compose: spec with its commas); repeatable, after --policies")
      ("backend", po::value(&o.backend)->default_value(o.backend), "the policies' backend: host, or cuda, cuda_async, cuda_vmm")
      ("free-by", po::value(&frees)->default_value("reference"),
       "how the policies' blocks are freed: reference (as fraglab replay frees) or address (as a program plugged in by pointer)")
      ("cuda-baselines", po::bool_switch(&o.with_cuda), "also cudaMalloc and cudaMallocAsync (needs a device)")
      ("malloc", po::bool_switch(&o.with_malloc), "also the process's malloc (glibc, or what LD_PRELOAD provides)")
      ("floor", po::bool_switch(&o.with_floor), "also the bump allocator that never reuses memory")
      ("patterns", po::value(&patterns)->default_value("steady,lifo,shuffled"), "synthetic patterns, comma-separated, or none")
      ("live", po::value(&live)->default_value("1000,10000,100000,1000000"), "live blocks of the patterns")
      ("scan-live-max", po::value(&scan_live_max)->default_value(std::to_string(o.scan_live_max)), "largest live count for list scans")
      ("pattern-events", po::value(&pattern_events)->default_value(std::to_string(o.pattern_events)), "timed events per pattern pass")
      ("iterations", po::value(&iterations)->default_value("0"),
       "timed passes per benchmark (0: as many as --benchmark_min_time needs); each benchmark also runs one warm-up pass")
      ("min-events", po::value(&min_events)->default_value("0"),
       "with --iterations: at least this many timed events per benchmark, in more passes where a pass is shorter");
  po::options_description hidden;
  hidden.add_options()("trace", po::value(&o.traces));
  po::positional_options_description positional;
  positional.add("trace", -1);
  po::options_description all;
  all.add(named).add(hidden);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(all).positional(positional).style(cli::exact_option_names).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << "usage: bench_allocators [options] [TRACE...]\n" << named;
    std::exit(0);
  }
  using cli::count_option;
  o.scan_live_max = count_option("scan-live-max", scan_live_max);
  o.pattern_events = count_option("pattern-events", pattern_events, 1);  // ns per op of none is 0/0
  o.iterations = static_cast<std::int64_t>(count_option("iterations", iterations, 0, std::numeric_limits<std::int64_t>::max()));
  o.min_events = count_option("min-events", min_events);
  o.frees = parse_free_by(frees);
  o.policies = split_commas(policies);
  o.policies.insert(o.policies.end(), o.extra_policies.begin(), o.extra_policies.end());
  o.patterns = split_commas(patterns);
  for (auto const& n : split_commas(live)) o.live.push_back(count_option("live", n, 1));
  // A benchmark is named by its subject and its trace, or its pattern and live count: a
  // repeat would register a second benchmark of the same name, which a reader of the JSON
  // output (speed_table.py) cannot tell from the first.
  auto const once = [](char const* option, auto const& values) {
    if (auto const* twice = repeated(values)) {
      std::ostringstream text;
      text << option << ": " << *twice << " is given twice";
      throw std::invalid_argument(text.str());
    }
  };
  once("--policies/--policy", o.policies);
  once("--patterns", o.patterns);
  once("--live", o.live);
  cli::check_distinct_names(o.traces);
  return o;
}

std::vector<subject> subjects(options const& o)
{
  std::vector<subject> out;
  for (auto const& name : o.policies) out.push_back(policy_subject(name, o.backend, o.frees));
  if (o.with_malloc) out.push_back(malloc_subject());
  if (o.with_floor) out.push_back(floor_subject());
  if (o.with_cuda) {
    for (auto& s : cuda_runtime_subjects()) out.push_back(std::move(s));
    benchmark::AddCustomContext("cuda_device", cuda_device_name());
  }
  return out;
}

void time_passes(benchmark::State& state, subject const& s, trace::trace const& t, std::uint64_t setup_events)
{
  auto runner = s.runner(t);
  (void)runner->run(setup_events);  // warm-up
  double ns = 0;
  std::uint64_t timed = 0, failed = 0, events = 0;
  for (auto _ : state) {
    pass_timing const p = runner->run(setup_events);
    state.SetIterationTime(p.allocator_ns * 1e-9);
    ns += p.allocator_ns;
    timed += p.timed_events;
    failed += p.failed;
    events = p.events;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(timed));
  state.counters["ns_per_op"] = timed == 0 ? 0.0 : ns / static_cast<double>(timed);
  state.counters["failed_allocs"] = static_cast<double>(failed) / static_cast<double>(state.iterations());
  state.counters["events"] = static_cast<double>(events);
}

// A fixed number of passes, raised for short passes so that every benchmark times at least
// --min-events events: two passes over a 4k-event snapshot time well under a millisecond,
// which a shared machine's noise swamps.
template <class F>
void add(options const& o, std::string const& name, std::uint64_t timed_events_per_pass, F&& body)
{
  auto* b = benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(body))->UseManualTime()->Unit(benchmark::kMillisecond);
  if (o.iterations == 0) return;
  std::uint64_t const per_pass = std::max<std::uint64_t>(timed_events_per_pass, 1);
  std::uint64_t const needed = (o.min_events + per_pass - 1) / per_pass;
  b->Iterations(std::max<std::int64_t>(o.iterations, static_cast<std::int64_t>(needed)));
}

// The registrations refer to `all`, `traces` and `patterns`: they must outlive the run.
void register_all(options const& o, std::vector<subject> const& all, std::deque<trace::trace>& traces,
                  std::deque<pattern_trace>& patterns)
{
  for (auto const& path : o.traces) {
    trace::trace const& t = traces.emplace_back(load_in_memory(path));
    for (subject const& s : all)
      add(o, "replay/" + t.name + "/" + s.name, t.event_count(), [&s, &t](benchmark::State& st) { time_passes(st, s, t, 0); });
  }
  for (auto const& name : o.patterns) {
    pattern const p = pattern_from_string(name);
    for (std::size_t live : o.live) {
      pattern_trace const& pt = patterns.emplace_back(make_pattern_trace(p, live, o.pattern_events));
      for (subject const& s : all) {
        if (s.scans && live > o.scan_live_max) continue;
        add(o, std::string(to_string(p)) + "/" + s.name + "/" + std::to_string(live),
            pt.events.event_count() - pt.setup_events, [&s, &pt](benchmark::State& st) { time_passes(st, s, pt.events, pt.setup_events); });
      }
    }
  }
}

}  // namespace
}  // namespace fraglab::bench

int main(int argc, char** argv)
{
  benchmark::Initialize(&argc, argv);  // takes its own flags out of argv
  try {
    auto const o = fraglab::bench::parse(argc, argv);
    auto const subjects = fraglab::bench::subjects(o);
    std::deque<fraglab::trace::trace> traces;
    std::deque<fraglab::bench::pattern_trace> patterns;
    fraglab::bench::register_all(o, subjects, traces, patterns);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (std::exception const& e) {  // input_error, invalid_argument, program_options' errors
    std::cerr << "bench_allocators: " << e.what() << "\n";
    return 2;
  }
}
