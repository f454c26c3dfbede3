// The native text trace format.
//
//   trace   := line*
//   line    := ws* (event ws*)? ('#' anything)? '\n'
//   event   := 'a' ws+ ID ws+ SIZE (ws+ ALIGN (ws+ STREAM)?)?
//            | 'f' ws+ ID
//            | 'r'                       (release: the program emptied the allocator's cache)
//   ID      := integer                  (the program's pointer or any unique number)
//   SIZE    := integer > 0              (requested bytes)
//   ALIGN   := integer, a power of two  (default 1: the allocator's natural alignment)
//   STREAM  := integer                  (default 0)
//   integer := decimal digits | '0x' hex digits, at most 2^64 - 1
//
// An id may be reused after it is freed. Whether a free names a live id is replay's
// concern, not the reader's.
#pragma once

#include <fraglab/runtime/trace/trace.hpp>
#include <fraglab/runtime/trace/trace_writer.hpp>

#include <iosfwd>
#include <memory>
#include <string>

namespace fraglab::trace {

// Throws input_error naming FILE:LINE and what was expected.
trace read_native_text(std::istream& in, std::string const& file_name);
trace read_native_text_file(std::string const& path);

// A writer of native text; `header_comment` becomes a comment line under the format line.
std::unique_ptr<trace_writer> native_text_writer(std::ostream& out, std::string const& header_comment = {});
void write_native_text(std::ostream& out, trace const& t, std::string const& header_comment = {});

}  // namespace fraglab::trace
