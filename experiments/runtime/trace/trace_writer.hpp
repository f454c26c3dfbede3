// Writing a trace as its events come, a batch at a time, in any writable format: `gen`
// hands events over as it makes them and `convert` as it reads them, so that either needs
// memory for the ids live at once, not for the trace.
#pragma once

#include <fraglab/runtime/trace/event_batches.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <span>

namespace fraglab::trace {

class trace_writer {
 public:
  virtual ~trace_writer() = default;
  // The next events, in order; slots are trace::event's dense ids (recycled or not).
  virtual void write(std::span<event const> events) = 0;
  // After the last event: what only the end knows (native binary's header counts).
  // `summary` is the trace's name and counts; its events are not read.
  virtual void finish(trace const& summary) = 0;
};

// Writes every event of `t` (in memory or streamed), then finishes.
inline void write_events(trace_writer& w, trace const& t)
{
  for_each_batch(t, [&](std::span<event const> batch) { w.write(batch); });
  w.finish(t);
}

}  // namespace fraglab::trace
