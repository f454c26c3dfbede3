// Writing a trace in any writable format (native text, native binary, RMM logging CSV),
// atomically: for `fraglab convert` and `fraglab gen`.
#pragma once

#include "experiments/trace/read_trace.hpp"
#include "experiments/trace/trace.hpp"

#include <string>
#include <string_view>

namespace fraglab::trace {

// `requested` is text, binary or rmm-csv; empty: from OUT's extension (.fbin binary, .csv
// RMM CSV, anything else native text). Throws std::invalid_argument for an unknown name.
trace_format output_trace_format(std::string const& path, std::string_view requested);

// `comment` goes into the header of formats that have comments (native text).
void write_trace(std::string const& path, trace const& t, trace_format f, std::string const& comment = {});

}  // namespace fraglab::trace
