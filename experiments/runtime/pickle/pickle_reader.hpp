// A reader for Python pickles (protocols 0-5) restricted to plain data.
//
// Only opcodes that build None, booleans, integers, floats, strings, bytes, lists, tuples,
// dicts and sets, and the memo and framing opcodes, are accepted. Any opcode that would
// import a name (GLOBAL, STACK_GLOBAL, INST), call something (REDUCE, OBJ, NEWOBJ,
// NEWOBJ_EX, BUILD), or reach outside the data (PERSID, BINPERSID, EXT*, out-of-band
// buffers) is refused with an input_error naming the byte offset; nothing is ever executed.
// Lengths are checked against the bytes that remain, integers must fit in 64 bits.
//
// A file is read through a bounded buffer, and an item_sink can take a list's items as they
// are completed, so that a list of millions of entries (a snapshot's device_traces) is never
// held: what stays is what the rest of the pickle can still refer to.
#pragma once

#include <fraglab/runtime/pickle/pickle_value.hpp>

#include <cstdint>
#include <span>
#include <string>

namespace fraglab::pickle {

// Offered every item of a list as it joins the list (at its APPEND or APPENDS), and a dict
// that is the first item of a batch (above a MARK whose owner is a list) as soon as the
// SETITEMS that fills it is read: the list, and the item's index in it, are known then. The
// sink keeps what it needs and says whether it took the item; a taken item that nothing else
// refers to (`exclusive`: not the memo either, but for its own slot, which forgets it) is not
// kept in the list, which only counts it (list_value::taken). Such an item used in any other
// way later (put in a tuple or a dict, fetched from the memo) makes the pickle refused.
class item_sink {
 public:
  virtual ~item_sink() = default;
  virtual bool take(value const& item, value const& list, std::uint64_t index, bool exclusive) = 0;
};

// Throws input_error("NAME: byte OFFSET: ...") on anything malformed or outside the subset.
value_ptr parse(std::span<std::uint8_t const> data, std::string const& name, item_sink* sink = nullptr);
// The same, reading the file (or any input open_input reads) a buffer at a time.
value_ptr parse_file(std::string const& path, item_sink* sink = nullptr);

}  // namespace fraglab::pickle
