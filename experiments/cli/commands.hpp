// The subcommands of the fraglab command. Each takes its arguments after the subcommand
// name and returns the process exit status; errors for the user are thrown as
// std::invalid_argument / input_error and reported by main().
#pragma once

#include <string>
#include <vector>

namespace fraglab::cli {

// `fraglab` with no command: every command in a line.
extern char const* const usage;
// Runs COMMAND with ARGS (`help COMMAND` included); an unknown command prints the usage and
// returns 2. Errors for the user are thrown, as each command throws them.
int run_command(std::string const& command, std::vector<std::string> const& args);

int policies(std::vector<std::string> const& args);
int replay(std::vector<std::string> const& args);
int gen(std::vector<std::string> const& args);
int convert(std::vector<std::string> const& args);
int verify(std::vector<std::string> const& args);
int dump(std::vector<std::string> const& args);
int info(std::vector<std::string> const& args);
int sweep(std::vector<std::string> const& args);
int capacity(std::vector<std::string> const& args);
int plan(std::vector<std::string> const& args);
int tune(std::vector<std::string> const& args);
int explain(std::vector<std::string> const& args);
int export_trace(std::vector<std::string> const& args);
int report(std::vector<std::string> const& args);
int view(std::vector<std::string> const& args);
int merge(std::vector<std::string> const& args);
int trace_program(std::vector<std::string> const& args);
int record_tf(std::vector<std::string> const& args);
int completion(std::vector<std::string> const& args);


}  // namespace fraglab::cli
