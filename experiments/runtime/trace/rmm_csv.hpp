// RMM's logging_resource_adaptor CSV (rmm/mr/device/logging_resource_adaptor.hpp):
//
//   Thread,Time,Action,Pointer,Size,Stream
//   140204,08:00:00.000001,allocate,0x7f5a10000000,1024,0x0
//
// Time is the time of day HH:MM:SS.ffffff; Action is allocate, free or "allocate failure";
// Pointer as printed by %p ("(nil)" on failure); Size in bytes; Stream in hex. A recorded
// failure is not replayed (the replayed allocator makes its own decision); it is counted.
#pragma once

#include <fraglab/runtime/trace/trace.hpp>
#include <fraglab/runtime/trace/trace_writer.hpp>

#include <iosfwd>
#include <memory>
#include <string>

namespace fraglab::trace {

inline constexpr char const* rmm_csv_header = "Thread,Time,Action,Pointer,Size,Stream";

trace read_rmm_csv(std::istream& in, std::string const& file_name);
// RMM's log has no column for an alignment: an allocation that asks for one above 1 is
// refused (std::invalid_argument naming the event) rather than written without it.
// A writer of RMM logging CSV: pointers are made up from the slots, times are one
// microsecond per event; an alignment above 1 is refused (the format has no column for it).
std::unique_ptr<trace_writer> rmm_csv_writer(std::ostream& out);
void write_rmm_csv(std::ostream& out, trace const& t);

}  // namespace fraglab::trace
