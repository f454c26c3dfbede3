// Command-line pieces the fraglab subcommands share (Boost.Program_options).
#pragma once

#include "experiments/params/param_set.hpp"
#include "experiments/registry/composition.hpp"

#include <boost/program_options.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fraglab::cli {

namespace po = boost::program_options;

po::variables_map parse(std::vector<std::string> const& args, po::options_description const& desc,
                        po::positional_options_description const& positional);

// Parses with TRACE... as the positional arguments; empty after printing the help for -h.
std::optional<po::variables_map> parse_traces_command(std::vector<std::string> const& args,
                                                      po::options_description& desc);

// TRACE... and -p P[,P...].
void add_trace_and_policy_options(po::options_description& desc);

// A size with units; throws std::invalid_argument naming the option.
std::size_t size_option(std::string const& name, std::string const& text);

// The options that say which allocator runs: --set, --capacity, --backend.
void add_allocator_options(po::options_description& desc);

struct allocator_options {
  param_set user;
  backend_choice backend;
};
allocator_options read_allocator_options(po::variables_map const& vm);

// --format, --output/-o: write `rows` under `columns` to the file (atomically) or stdout.
void add_output_options(po::options_description& desc);
void write_rows(po::variables_map const& vm, std::vector<std::string> const& columns,
                std::vector<std::vector<std::string>> const& rows);

}  // namespace fraglab::cli
