#include <fraglab/cli/provenance.hpp>

#include "version.hpp"

#include <sys/utsname.h>

#include <chrono>
#include <ctime>
#include <thread>

namespace fraglab::cli {

std::string made_by(std::string const& command, std::vector<std::string> const& args)
{
  std::string line = "fraglab " + command;
  for (auto const& a : args) line += " " + a;
  utsname u{};
  std::string const host =
      uname(&u) == 0 ? std::string(u.nodename) + " (" + u.sysname + " " + u.release + ", " + u.machine + ")" : std::string("unknown");
  std::time_t const now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
  return "`" + line + "`, fraglab commit " + FRAGLAB_COMMIT + ", on " + host + ", " + std::to_string(std::thread::hardware_concurrency()) +
         " cores, " + date;
}

}  // namespace fraglab::cli
