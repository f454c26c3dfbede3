// fraglab trace -- PROGRAM ARGS: runs PROGRAM with the malloc tracer preloaded and reports
// the trace files its processes wrote (one per process, named PROGRAM.PID.fbin).
#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/cli/preload_library.hpp>

#include <fraglab/runtime/trace/read_trace.hpp>

#include <boost/program_options.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace fraglab::cli {
namespace {

namespace fs = std::filesystem;

constexpr char const* tracer_file = "libfraglab_tracer.so";

fs::path find_tracer(std::string const& given)
{
  fs::path const found = find_preload_library(tracer_file, given, "FRAGLAB_TRACER", "--tracer");
  if (found.empty())
    throw std::invalid_argument(std::string("cannot find ") + tracer_file + " beside this fraglab (sanitizer builds and the Python wheel leave it out); give --tracer PATH");
  return found;
}

std::set<fs::path> trace_files_in(fs::path const& dir)
{
  std::set<fs::path> files;
  for (auto const& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".fbin") files.insert(entry.path());
  return files;
}

[[noreturn]] void exec_traced(std::vector<std::string> const& command, fs::path const& tracer, fs::path const& dir,
                              std::string const& only)
{
  if (only.empty()) ::unsetenv("FRAGLAB_TRACE_ONLY");
  else ::setenv("FRAGLAB_TRACE_ONLY", only.c_str(), 1);
  prepend_preload(tracer);
  ::setenv("FRAGLAB_TRACE_DIR", dir.c_str(), 1);
  exec_program(command, "fraglab trace");
}

}  // namespace

int trace_program(std::vector<std::string> const& args)
{
  auto const [options, command] = split_at_dashes(args);
  po::options_description desc(
      "fraglab trace [-o DIR] [--only NAME] [--tracer LIB] -- PROGRAM [ARGS...]\n\n"
      "  fraglab trace -- sqlite3 :memory: \".read q.sql\"        one PROGRAM.PID.fbin per process, here\n"
      "  fraglab trace --only cc1plus -o traces/ -- g++ -c x.cpp  the compiler proper alone\n\n"
      "Options");
  desc.add_options()                                                                                       //
      ("output,o", po::value<std::string>()->default_value("."), "directory for the trace files (made if absent)")  //
      ("only", po::value<std::string>()->default_value(""),
       "write traces only of processes whose executable is named NAME (e.g. python3.11 behind a pyenv shim); "
       "the others run untraced but pass the tracer on")  //
      ("tracer", po::value<std::string>()->default_value(""), "the tracer library (default: beside fraglab)");
  auto const parsed = parse_command(options, desc);
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (command.empty()) throw std::invalid_argument("no program given (fraglab trace -- PROGRAM ARGS)");
  std::string const out = vm["output"].as<std::string>();
  if (out.empty()) throw std::invalid_argument("--output: the directory name is empty");
  if (std::error_code ec; fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw std::invalid_argument("--output: " + out + " is not a directory");
  fs::path const tracer = find_tracer(vm["tracer"].as<std::string>());
  fs::create_directories(out);
  fs::path const dir = fs::canonical(out);
  auto const before = trace_files_in(dir);

  pid_t const child = ::fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  std::string const only = vm["only"].as<std::string>();
  if (only.find('/') != std::string::npos)
    throw std::invalid_argument("--only: expected an executable's file name, without directories, got '" + only + "'");
  if (child == 0) exec_traced(command, tracer, dir, only);
  // Like time(1): a ^C is for the program, and the summary still follows.
  auto const old_int = std::signal(SIGINT, SIG_IGN), old_quit = std::signal(SIGQUIT, SIG_IGN);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::signal(SIGINT, old_int);
  std::signal(SIGQUIT, old_quit);

  std::vector<fs::path> written;
  for (auto const& f : trace_files_in(dir))
    if (!before.count(f)) written.push_back(f);
  std::cerr << "fraglab trace: " << written.size() << " trace file" << (written.size() == 1 ? "" : "s") << " in "
            << dir.string() << '\n';
  for (auto const& f : written) {
    try {
      trace::trace const t = trace::read_trace(f.string());
      std::cerr << "  " << f.filename().string() << ": " << t.event_count() << " events, " << t.allocs << " allocations\n";
    } catch (std::exception const& e) {  // a process killed before its last flush
      std::cerr << "  " << f.filename().string() << ": incomplete (" << e.what() << ")\n";
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace fraglab::cli
