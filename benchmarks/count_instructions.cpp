// Instructions per operation, for a record of cost that machine noise cannot blur. Run it
// under callgrind with collection off at the start:
//
//   valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=OUT
//       count_instructions (--policy P [--free-by address] | --malloc | --floor) TRACE
//
// It replays TRACE once untimed to warm the allocator, exactly as the benchmarks do, then
// once more with callgrind collecting, and prints the operations of that pass: its events
// plus the frees of the blocks it left live. OUT's `totals:` line divided by `ops` is the
// cost per operation. experiments/scripts/reproduce/speed_table.py does both. --warm-passes 0 counts what a
// fresh allocator pays; more than one counts a later pass, for a cost that settles only after
// the second (a policy whose address map is still growing in the second pass). A policy's
// blocks are freed by reference, as `fraglab replay` frees them; --free-by address frees them
// as a program plugged in by pointer does, paying for the address map.
#include <fraglab/benchmarks/subjects.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/runtime/io/input_error.hpp>

#include <boost/program_options.hpp>
#include <valgrind/callgrind.h>

#include <iostream>
#include <string>

int main(int argc, char** argv)
{
  namespace po = boost::program_options;
  using namespace fraglab::bench;
  try {
    std::string policy, trace_path, frees;
    bool with_malloc = false, with_floor = false;
    int warm_passes = 1;
    po::options_description named("count_instructions options");
    named.add_options()
        ("help,h", "this help")
        ("policy", po::value(&policy), "a fraglab policy over the host backend")
        ("free-by", po::value(&frees)->default_value("reference"), "how the policy's blocks are freed: reference or address")
        ("malloc", po::bool_switch(&with_malloc), "the process's malloc")
        ("floor", po::bool_switch(&with_floor), "the bump allocator that never reuses memory")
        ("warm-passes", po::value(&warm_passes)->default_value(warm_passes), "untimed passes before the counted one");
    po::options_description all;
    all.add(named).add_options()("trace", po::value(&trace_path)->required());
    po::positional_options_description positional;
    positional.add("trace", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).style(fraglab::cli::exact_option_names).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: count_instructions (--policy P [--free-by F] | --malloc | --floor) [--warm-passes N] TRACE\n" << named;
      return 0;
    }
    po::notify(vm);
    if (policy.empty() + !with_malloc + !with_floor != 2)
      throw std::invalid_argument("give exactly one of --policy, --malloc and --floor");
    if (warm_passes < 0) throw std::invalid_argument("--warm-passes: expected a count of at least 0");
    fraglab::free_by const by = fraglab::parse_free_by(frees);
    if (policy.empty() && !vm["free-by"].defaulted()) throw std::invalid_argument("--free-by applies to --policy only");
    subject const s = with_malloc ? malloc_subject() : with_floor ? floor_subject() : policy_subject(policy, "host", by);
    auto const t = load_in_memory(trace_path);
    auto runner = s.runner(t);
    for (int i = 0; i < warm_passes; ++i) (void)runner->run();
    CALLGRIND_TOGGLE_COLLECT;
    auto const pass = runner->run();
    CALLGRIND_TOGGLE_COLLECT;
    std::cout << "subject " << s.name << "\ntrace " << t.name << "\nops " << pass.events + pass.leftover_frees
              << "\nfailed_allocs " << pass.failed << "\n";
  } catch (std::exception const& e) {
    std::cerr << "count_instructions: " << e.what() << "\n";
    return 2;
  }
}
