// The commands by name: what `fraglab COMMAND ARGS...` runs, for the executable and for the
// Python module's fraglab.run.
#include <fraglab/cli/commands.hpp>
#include <fraglab/runtime/params/closest_name.hpp>

#include <algorithm>
#include <iostream>
#include <string_view>

namespace fraglab::cli {

char const* const usage = R"(usage: fraglab COMMAND [ARGS]

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
  explain SNAPSHOT [--oom K]                 why it ran out of memory (or its peak), and what would have served it
  info TRACE...                              events, sizes, lifetimes and peak live bytes of a trace
  convert IN OUT [--to text|binary|rmm-csv]  rewrite a trace in another format (.fbin: native binary)
  export TRACE -p P --to pytorch-snapshot    a policy's replay as a PyTorch memory snapshot, for PyTorch's viewers
  report TRACE... -p P[,P...] -o R.html      the comparison with its figures and provenance, in one file (or R.md)
  view TRACE -p P[,Q...] -o V.html           an interactive memory map of each policy, side by side, in one file
  trace [-o DIR] -- PROGRAM [ARGS]           run PROGRAM with the malloc tracer: one PROGRAM.PID.fbin per process
  record-tf [-o FILE] -- PROGRAM [ARGS]      run a TensorFlow program with its BFC allocator's log: PROGRAM.tflog.zst
  gen KIND -o OUT [options]                  write a synthetic workload (KIND: phases, random, transformer, llm-serving)
  verify RECORDING...                        replay PyTorch snapshots or TF BFC logs and compare every decision
  dump TRACE -p POLICY [--at end|peak|N]     the allocator's state part-way: TF's memory log
                                             (bins, chunks, occupancy) or PyTorch's memory_stats

`fraglab help COMMAND` (or `fraglab COMMAND --help`) describes a command, with examples;
`fraglab --version` names the version and commit.
)";

namespace {

constexpr std::string_view commands[] = {"policies", "replay", "sweep",  "merge", "capacity", "plan", "tune", "explain", "export", "report", "view", "info",
                                         "convert",  "trace",  "record-tf", "gen",    "verify", "dump",    "help", "completion"};

}  // namespace

int run_command(std::string const& command, std::vector<std::string> const& args)
{
  if (command == "policies") return policies(args);
  if (command == "replay") return replay(args);
  if (command == "gen") return gen(args);
  if (command == "convert") return convert(args);
  if (command == "verify") return verify(args);
  if (command == "dump") return dump(args);
  if (command == "info") return info(args);
  if (command == "sweep") return sweep(args);
  if (command == "capacity") return capacity(args);
  if (command == "plan") return plan(args);
  if (command == "tune") return tune(args);
  if (command == "explain") return explain(args);
  if (command == "export") return export_trace(args);
  if (command == "report") return report(args);
  if (command == "view") return view(args);
  if (command == "merge") return merge(args);
  if (command == "trace") return trace_program(args);
  if (command == "record-tf") return record_tf(args);
  if (command == "completion") return completion(args);
  if (command == "help") {  // `fraglab help COMMAND` is `fraglab COMMAND --help`
    if (args.empty()) {
      std::cout << usage;
      return 0;
    }
    if (args.size() > 1 || std::find(std::begin(commands), std::end(commands), args[0]) == std::end(commands))
      return run_command(args[0], {});  // an unknown command's message, or its usage
    return run_command(args[0], {"--help"});
  }
  std::string const guess = closest_name(command, commands);
  std::cerr << "fraglab: unknown command '" << command << "'" << (guess.empty() ? "" : ": did you mean " + guess + "?") << "\n"
            << usage;
  return 2;
}

}  // namespace fraglab::cli
