// What made an output, for the outputs that carry it (report, view): the command line, the
// commit fraglab was built from, the machine and the date.
#pragma once

#include <string>
#include <vector>

namespace fraglab::cli {

// "`fraglab COMMAND ARGS...`, fraglab commit C, on HOST (OS, machine), N cores, DATE UTC".
std::string made_by(std::string const& command, std::vector<std::string> const& args);

}  // namespace fraglab::cli
