// fraglab: replay allocation traces under swappable allocator policies.
#include "experiments/cli/commands.hpp"
#include "experiments/cli/options.hpp"
#include "experiments/params/closest_name.hpp"
#include "experiments/trace/input_error.hpp"
#include "version.hpp"

#include <boost/program_options/errors.hpp>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr char const* usage = R"(usage: fraglab COMMAND [ARGS]

commands:
  policies [NAME] [--keys]                   list policies; of NAME its parts and the parameters it reads
  help COMMAND                               a command's options, with examples
  completion bash                            a bash completion script: `source <(fraglab completion bash)`
  replay TRACE... -p P[,P...] [options]      replay traces under policies and print the metrics
  sweep TRACE... -p P --vary KEY=V1,V2,...   replay over a parameter grid (--jobs N, --shard I/N)
  merge PART.csv... [-o OUT]                 join the CSV parts of a sharded sweep into one table
  capacity TRACE... -p P[,P...]              smallest capacity with no failed allocation (bisection)
  plan INPUT... [--capacity C]               the best offline placement of every buffer, and its proven bound
  tune SNAPSHOT... [--capacity SIZE]         the PYTORCH_CUDA_ALLOC_CONF that serves a recording best
  info TRACE...                              events, sizes, lifetimes and peak live bytes of a trace
  convert IN OUT [--to text|binary|rmm-csv]  rewrite a trace in another format (.fbin: native binary)
  trace [-o DIR] -- PROGRAM [ARGS]           run PROGRAM with the malloc tracer: one PROGRAM.PID.fbin per process
  gen KIND -o OUT [options]                  write a synthetic workload (KIND: phases, random, transformer, llm-serving)
  verify SNAPSHOT...                         replay PyTorch snapshots and compare every decision
  dump TRACE -p POLICY [--at end|peak|N]     the allocator's state part-way: TF's memory log
                                             (bins, chunks, occupancy) or PyTorch's memory_stats

`fraglab help COMMAND` (or `fraglab COMMAND --help`) describes a command, with examples;
`fraglab --version` names the version and commit.
)";

}  // namespace

namespace {

constexpr std::string_view commands[] = {"policies", "replay", "sweep",  "merge", "capacity", "plan", "tune", "info",
                                         "convert",  "trace",  "gen",    "verify", "dump",    "help", "completion"};

int run_command(std::string const& command, std::vector<std::string> const& args)
{
  if (command == "policies") return fraglab::cli::policies(args);
  if (command == "replay") return fraglab::cli::replay(args);
  if (command == "gen") return fraglab::cli::gen(args);
  if (command == "convert") return fraglab::cli::convert(args);
  if (command == "verify") return fraglab::cli::verify(args);
  if (command == "dump") return fraglab::cli::dump(args);
  if (command == "info") return fraglab::cli::info(args);
  if (command == "sweep") return fraglab::cli::sweep(args);
  if (command == "capacity") return fraglab::cli::capacity(args);
  if (command == "plan") return fraglab::cli::plan(args);
  if (command == "tune") return fraglab::cli::tune(args);
  if (command == "merge") return fraglab::cli::merge(args);
  if (command == "trace") return fraglab::cli::trace_program(args);
  if (command == "completion") return fraglab::cli::completion(args);
  if (command == "help") {  // `fraglab help COMMAND` is `fraglab COMMAND --help`
    if (args.empty()) {
      std::cout << usage;
      return 0;
    }
    if (args.size() > 1 || std::find(std::begin(commands), std::end(commands), args[0]) == std::end(commands))
      return run_command(args[0], {});  // an unknown command's message, or its usage
    return run_command(args[0], {"--help"});
  }
  std::string const guess = fraglab::closest_name(command, commands);
  std::cerr << "fraglab: unknown command '" << command << "'" << (guess.empty() ? "" : ": did you mean " + guess + "?") << "\n"
            << usage;
  return 2;
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::cout << usage;
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::cout << "fraglab " << FRAGLAB_VERSION << " (commit " << FRAGLAB_COMMIT << ")\n";
    return 0;
  }
  std::string const command = argv[1];
  std::vector<std::string> const args(argv + 2, argv + argc);
  try {
    int status = run_command(command, args);
    // A result printed to a full disk or a closed pipe is a result lost: `replay T > /dev/full`
    // must not exit 0.
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("standard output: write failed");
    if (std::size_t const skipped = fraglab::cli::skipped_traces(); skipped != 0 && status == 0) {
      std::cerr << "fraglab " << command << ": " << skipped << " trace" << (skipped == 1 ? " was" : "s were")
                << " left out (--keep-going)\n";
      status = 1;
    }
    return status;
  } catch (fraglab::input_error const& e) {
    std::cerr << "fraglab: " << e.what() << '\n';
    return 2;
  } catch (std::invalid_argument const& e) {
    std::cerr << "fraglab " << command << ": " << e.what() << '\n';
    return 2;
  } catch (boost::program_options::error const& e) {
    std::cerr << "fraglab " << command << ": " << e.what() << '\n';
    return 2;
  } catch (std::exception const& e) {
    std::cerr << "fraglab " << command << ": " << e.what() << '\n';
    return 1;
  }
}
