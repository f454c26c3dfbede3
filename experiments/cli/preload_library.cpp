#include <fraglab/cli/preload_library.hpp>

#include <fraglab/runtime/io/write_fully.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace fraglab::cli {

namespace fs = std::filesystem;

fs::path find_preload_library(std::string_view file, std::string const& given, char const* env, std::string_view option)
{
  if (!given.empty()) {
    if (!fs::is_regular_file(given)) throw std::invalid_argument(std::string(option) + ": no such file: " + given);
    return fs::absolute(given);
  }
  if (char const* value = std::getenv(env); value && *value) {
    if (!fs::is_regular_file(value)) throw std::invalid_argument(std::string(env) + " names no file: " + value);
    return fs::absolute(value);
  }
  std::error_code ec;
  fs::path const here = fs::read_symlink("/proc/self/exe", ec).parent_path();
  std::vector<fs::path> candidates{here / "tracer" / file, here / file, here.parent_path() / "lib" / file};
  if (fs::is_directory(here.parent_path() / "lib", ec))
    for (auto const& entry : fs::directory_iterator(here.parent_path() / "lib", ec)) candidates.push_back(entry.path() / file);
  for (auto const& c : candidates)
    if (fs::is_regular_file(c, ec)) return c;
  return {};
}

program_invocation split_at_dashes(std::vector<std::string> const& args)
{
  auto const dashes = std::find(args.begin(), args.end(), "--");
  return {{args.begin(), dashes}, {dashes == args.end() ? dashes : dashes + 1, args.end()}};
}

void exec_program(std::vector<std::string> const& command, std::string_view who)
{
  std::vector<char*> argv;
  for (auto const& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::string const msg = std::string(who) + ": cannot run " + command[0] + ": " + std::strerror(errno) + "\n";
  (void)write_fully(STDERR_FILENO, reinterpret_cast<unsigned char const*>(msg.data()), msg.size());
  ::_exit(127);
}

void prepend_preload(fs::path const& library)
{
  std::string preload = library.string();
  if (char const* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
}

}  // namespace fraglab::cli
