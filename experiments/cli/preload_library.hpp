// The libraries fraglab preloads into a program it runs (the malloc tracer, TF's stack
// capture): found where the build or an installation puts them, and put first in LD_PRELOAD.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab::cli {

// `given` (an option's value), then the environment variable `env`, then beside this
// executable: the build tree keeps a library in tracer/ under fraglab's directory, an
// installation in ../lib[/ARCH]. Throws std::invalid_argument naming `option` where a given
// path names no file; returns an empty path where none is found.
std::filesystem::path find_preload_library(std::string_view file, std::string const& given, char const* env, std::string_view option);

// Puts `library` in front of the LD_PRELOAD this process passes on (in a child before exec).
void prepend_preload(std::filesystem::path const& library);

// `fraglab COMMAND OPTIONS... -- PROGRAM ARGS...`: the options, and the program to run.
struct program_invocation {
  std::vector<std::string> options;
  std::vector<std::string> command;
};
program_invocation split_at_dashes(std::vector<std::string> const& args);

// In a child: runs `command` in place of this process, or says why it cannot (as `who`) and
// exits 127, as a shell does.
[[noreturn]] void exec_program(std::vector<std::string> const& command, std::string_view who);

}  // namespace fraglab::cli
