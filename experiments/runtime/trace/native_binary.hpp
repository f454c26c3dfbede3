// The native binary trace format, version 1: compact, and read a batch at a time, so that
// replaying a trace of any length needs memory for its live blocks only.
//
// Header, 64 bytes, integers little-endian:
//
//   offset size field
//        0    8 magic "FLTRACE\0"
//        8    2 version (1)
//       10    2 header size in bytes (64; a reader skips what it does not know)
//       12    4 flags (0)
//       16    8 events
//       24    8 allocations
//       32    8 frees
//       40    8 slots: ids are recycled when freed, so this is the most ids ever live at
//                once (plus one for the never-live id below), not the number of allocations
//       48    8 recorded failures (allocations the recorded program saw fail)
//       56    8 reserved (0)
//
// Then one record per event, integers as unsigned LEB128 varints:
//
//   tag byte: bit 0  0 allocation, 1 free
//             bit 1  (allocation) an alignment byte follows: log2 of the alignment, < 64
//             bit 2  (allocation) a stream varint follows; absent means stream 0
//             bit 3  a release (the tag alone, 0x08): the program emptied the allocator's cache
//             other bits must be 0
//   allocation: tag, slot, size (> 0), [log2 alignment], [stream]
//   free:       tag, slot
//   release:    tag
//
// The header's events are its allocations, frees and releases.
//
// A typical allocation takes 5-7 bytes and a free 2-4. Frees of ids that are not live are
// kept (replay counts them): they name slot 0, which is never allocated.
#pragma once

#include <fraglab/runtime/trace/detail/native_binary_layout.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>
#include <fraglab/runtime/trace/trace.hpp>
#include <fraglab/runtime/trace/trace_writer.hpp>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

namespace fraglab::trace {

inline constexpr std::string_view native_binary_magic = detail::binary_magic;
inline constexpr std::uint16_t native_binary_version = detail::binary_version;

// True when the first bytes of a file are the binary magic.
bool has_native_binary_magic(std::string_view head) noexcept;

// Reads and checks the header; the events stay in the file (trace::streamed_from) and are
// decoded on each pass. Throws input_error naming FILE: byte OFFSET.
trace open_native_binary(std::string const& path);

// The decoder behind open_events() for a streamed trace. Each pass checks every record and,
// at the end, that the file held exactly the header's counts: a truncated or padded file is
// an error at the offset where it goes wrong.
std::unique_ptr<event_batches> decode_native_binary(trace const& t);

// Writes to a seekable stream, recycling slots so that a reader needs memory for the live
// ids only. The header's counts are patched in at finish().
std::unique_ptr<trace_writer> native_binary_writer(std::ostream& out);
void write_native_binary(std::ostream& out, trace const& t);

}  // namespace fraglab::trace
