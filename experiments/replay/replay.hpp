// The replay loop, instantiated once per concrete allocator type so that the hot loop has
// no virtual call. A metrics pass observes every decision; timed passes (the median of
// `repeats`) run the same loop without observation, so ns_per_op measures the allocator.
#pragma once

#include "experiments/replay/replay_result.hpp"
#include "experiments/trace/input_error.hpp"
#include "experiments/trace/trace.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fraglab {
namespace detail {

enum class slot_state : std::uint8_t { empty, live, failed };

struct frag_observer {
  double ratio_sum = 0;
  std::uint64_t ratio_samples = 0;
  std::size_t peak_live = 0, peak_reserved = 0, reserved_at_peak_live = 0, live_at_peak_reserved = 0;
  std::uint64_t observation_steps = 0;  // index steps spent measuring, not deciding

  static double ratio(std::size_t reserved, std::size_t live)
  {
    return live == 0 ? 0.0 : static_cast<double>(reserved) / static_cast<double>(live) - 1.0;
  }
};

template <bool Observe, class Alloc>
std::uint64_t run_events(Alloc& a, trace::trace const& t, replay_options const& o, replay_result& r,
                         frag_observer& f)
{
  // One record per trace id: where its block lives and whether it is live.
  struct slot {
    std::uintptr_t address = 0;
    slot_state state = slot_state::empty;
  };
  std::vector<slot> slots(t.slots);
  std::uint64_t processed = 0;
  for (trace::event const& e : t.events) {
    ++processed;
    if (e.kind == trace::op::alloc) {
      if (slots[e.slot].state == slot_state::live) {
        if (o.strict) throw input_error(t.name + ": event " + std::to_string(processed) + ": allocation under an id that is still live");
        if constexpr (Observe) ++r.duplicate_allocs;
        continue;
      }
      allocation const got = a.allocate(e.size, e.alignment, e.stream);
      if (got) {
        slots[e.slot] = {got.address, slot_state::live};
      } else {
        slots[e.slot].state = slot_state::failed;
        if constexpr (Observe) ++r.failed_allocs;
        if (o.stop_on_failure) break;
      }
    } else {
      slot_state const s = slots[e.slot].state;
      if (s == slot_state::empty) {
        if (o.strict) throw input_error(t.name + ": event " + std::to_string(processed) + ": free of an id that is not live");
        if constexpr (Observe) ++r.unknown_frees;
        continue;
      }
      slots[e.slot].state = slot_state::empty;
      if (s == slot_state::live) a.deallocate(slots[e.slot].address);
    }
    if constexpr (Observe) {
      auto const& c = a.counters();
      if (c.live_bytes > 0) {
        f.ratio_sum += frag_observer::ratio(c.reserved_bytes, c.live_bytes);
        ++f.ratio_samples;
      }
      if (c.live_bytes > f.peak_live) {
        f.peak_live = c.live_bytes;
        f.reserved_at_peak_live = c.reserved_bytes;
      }
      if (c.reserved_bytes > f.peak_reserved) {
        f.peak_reserved = c.reserved_bytes;
        f.live_at_peak_reserved = c.live_bytes;
        std::size_t const free_bytes = c.reserved_bytes - c.allocated_bytes;
        std::uint64_t const steps_before = a.index_steps();
        std::size_t const largest = a.largest_free_bytes();
        f.observation_steps += a.index_steps() - steps_before;
        r.ext_frag_at_peak = free_bytes == 0 ? 0.0 : static_cast<double>(free_bytes - largest) / static_cast<double>(free_bytes);
        r.free_chunks_at_peak = a.free_chunk_count();
      }
    }
  }
  return processed;
}

}  // namespace detail

// `make` returns a std::unique_ptr to a fresh allocator; it is called once per pass.
template <class MakeAllocator>
replay_result replay_trace(MakeAllocator&& make, trace::trace const& t, replay_options const& o)
{
  replay_result r;
  r.trace = t.name;
  detail::frag_observer f;
  {
    auto a = make();
    r.events = detail::run_events<true>(*a, t, o, r, f);
    auto const& c = a->counters();
    r.allocs = c.allocations;
    r.frees = c.deallocations;
    r.peak_live_bytes = c.peak_live_bytes;
    r.peak_allocated_bytes = c.peak_allocated_bytes;
    r.peak_reserved_bytes = c.peak_reserved_bytes;
    r.acquisitions = c.acquisitions;
    r.releases = c.releases;
    std::uint64_t const decision_steps = a->index_steps() - f.observation_steps;
    r.index_steps_per_op = r.events == 0 ? 0.0 : static_cast<double>(decision_steps) / static_cast<double>(r.events);
  }
  r.frag1 = f.ratio_samples == 0 ? 0.0 : f.ratio_sum / static_cast<double>(f.ratio_samples);
  r.frag2 = detail::frag_observer::ratio(f.reserved_at_peak_live, f.peak_live);
  r.frag3 = detail::frag_observer::ratio(f.peak_reserved, f.live_at_peak_reserved);
  r.frag4 = detail::frag_observer::ratio(r.peak_reserved_bytes, r.peak_live_bytes);

  std::vector<double> ns;
  for (unsigned i = 0; i < o.repeats; ++i) {
    auto a = make();
    replay_result scratch;
    detail::frag_observer unused;
    auto const start = std::chrono::steady_clock::now();
    std::uint64_t const n = detail::run_events<false>(*a, t, o, scratch, unused);
    auto const stop = std::chrono::steady_clock::now();
    ns.push_back(n == 0 ? 0.0 : std::chrono::duration<double, std::nano>(stop - start).count() / static_cast<double>(n));
  }
  if (!ns.empty()) {
    std::sort(ns.begin(), ns.end());
    r.ns_per_op = ns[ns.size() / 2];
  }
  return r;
}

}  // namespace fraglab
