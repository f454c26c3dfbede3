// Synthetic alloc/free patterns at a chosen number of live blocks, written as traces so that
// they run through the same replay loop as the real traces, for presets, system allocators
// and the floor alike. Sizes are log-uniform from 16 B to 8 KiB (a program's small objects),
// drawn from a fixed seed.
#pragma once

#include <fraglab/runtime/trace/trace.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab::bench {

enum class pattern {
  steady,    // N live blocks with N free holes between them, then pairs: free a random live
             // block, allocate a random size in its place (a long run's steady state)
  lifo,      // allocate N, free them newest first, repeated (a stack)
  shuffled,  // allocate N, free them in a random order, repeated (a batch's lifetime)
};

std::string_view to_string(pattern p) noexcept;
pattern pattern_from_string(std::string_view name);  // throws std::invalid_argument
std::vector<pattern> all_patterns();

struct pattern_trace {
  trace::trace events;
  std::uint64_t setup_events = 0;  // the prefix that builds the live set, run outside the clock
};

// At least `min_timed_events` timed events (whole rounds of lifo and shuffled).
pattern_trace make_pattern_trace(pattern p, std::size_t live, std::uint64_t min_timed_events, std::uint64_t seed = 1);

}  // namespace fraglab::bench
