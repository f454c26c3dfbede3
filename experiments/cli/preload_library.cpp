#include "experiments/cli/preload_library.hpp"

#include <cstdlib>
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

void prepend_preload(fs::path const& library)
{
  std::string preload = library.string();
  if (char const* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
}

}  // namespace fraglab::cli
