// Writing a trace file in any writable format (native text, native binary, RMM logging
// CSV), atomically and as the events come: for `fraglab convert` and `fraglab gen`.
#pragma once

#include <fraglab/runtime/trace/read_trace.hpp>
#include <fraglab/runtime/trace/trace.hpp>
#include <fraglab/runtime/trace/trace_writer.hpp>

#include <functional>
#include <iosfwd>
#include <memory>

#include <string>
#include <string_view>

namespace fraglab::trace {

// `requested` is text, binary or rmm-csv; empty: from OUT's extension (.fbin binary, .csv
// RMM CSV, anything else native text). Throws std::invalid_argument for an unknown name.
trace_format output_trace_format(std::string const& path, std::string_view requested);

// A writer of format `f` onto `out` (seekable: native binary patches its header).
// `comment` goes into the header of formats that have comments (native text).
std::unique_ptr<trace_writer> make_trace_writer(std::ostream& out, trace_format f, std::string const& comment = {});

// Writes the file at `path` as output_file does (nothing changes unless it all succeeds):
// `produce` writes the events to the writer and returns the trace's summary (name and
// counts), which finishes it.
void write_trace(std::string const& path, trace_format f, std::string const& comment,
                 std::function<trace(trace_writer&)> const& produce);

// Writes `t` (in memory or streamed).
void write_trace(std::string const& path, trace const& t, trace_format f, std::string const& comment = {});

}  // namespace fraglab::trace
