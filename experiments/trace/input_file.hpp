// An input file opened for reading, or an input_error that says why not.
#pragma once

#include "experiments/trace/input_error.hpp"

#include <filesystem>
#include <fstream>
#include <ios>
#include <string>
#include <string_view>
#include <system_error>

namespace fraglab {

// A directory is named as one: opening it succeeds on Linux, and its reads then fail as
// if it were an empty file. `expected` says what the path should have been ("a trace file").
inline std::ifstream open_input(std::string const& path, std::string_view expected, std::ios::openmode mode = std::ios::in)
{
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    throw input_error(path + ": a directory; expected " + std::string(expected));
  std::ifstream in(path, mode);
  if (!in) throw input_error(path + ": cannot open for reading");
  return in;
}

}  // namespace fraglab
