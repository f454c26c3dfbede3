// A reader for Python pickles (protocols 0-5) restricted to plain data.
//
// Only opcodes that build None, booleans, integers, floats, strings, bytes, lists, tuples,
// dicts and sets, and the memo and framing opcodes, are accepted. Any opcode that would
// import a name (GLOBAL, STACK_GLOBAL, INST), call something (REDUCE, OBJ, NEWOBJ,
// NEWOBJ_EX, BUILD), or reach outside the data (PERSID, BINPERSID, EXT*, out-of-band
// buffers) is refused with an input_error naming the byte offset; nothing is ever executed.
// Lengths are checked against the bytes that remain, integers must fit in 64 bits.
#pragma once

#include "experiments/pickle/pickle_value.hpp"

#include <cstdint>
#include <span>
#include <string>

namespace fraglab::pickle {

// Throws input_error("NAME: byte OFFSET: ...") on anything malformed or outside the subset.
value_ptr parse(std::span<std::uint8_t const> data, std::string const& name);
value_ptr parse_file(std::string const& path);

}  // namespace fraglab::pickle
