// Driving an any_allocator through a trace event by event, for tools that stop part-way and
// look at the allocator's state (fraglab dump). Same semantics as the replay loop: a free of
// an id that is not live is skipped; an allocation that fails leaves its id unserved.
#pragma once

#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/trace/trace.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

namespace fraglab {

inline constexpr std::uint64_t all_events = std::numeric_limits<std::uint64_t>::max();

// Applies the first `events` events of `t` to `a` (a fresh allocator). Returns how many ran.
// A start state the allocator restores counts as the events that allocate it.
std::uint64_t drive(any_allocator& a, trace::trace const& t, std::uint64_t events = all_events);
// The same, leaving in `blocks` the block each slot holds then (address 0: none).
std::uint64_t drive(any_allocator& a, trace::trace const& t, std::uint64_t events, std::vector<block_ref>& blocks);

// The same over every event, calling `after_each(n, blocks)` once n events have been applied
// (each restored one too): for tools that look at the allocator at chosen points.
// blocks[slot] is the block the slot holds, address 0 where it holds none.
void drive_each(any_allocator& a, trace::trace const& t,
                std::function<void(std::uint64_t, std::span<block_ref const>)> const& after_each);

// The number of events after which reserved bytes first reach their peak under `c`.
std::uint64_t events_to_peak_reserved(composition const& c, trace::trace const& t);

}  // namespace fraglab
