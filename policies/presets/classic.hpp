// The classic policy set of Wilson, Johnstone, Neely & Boles, "Dynamic Storage Allocation:
// A Survey and Critical Review" (IWMM 1995), as measured by Johnstone & Wilson, "The Memory
// Fragmentation Problem: Solved?" (ISMM 1998).
//
// Their model: one heap growing at its top (the heap backend, exact growth, so the
// footprint is the break's high-water mark); immediate coalescing; a chunk splits when the
// remainder can hold a minimum block. Policy fragmentation is separated from implementation
// overhead by the `header` (per-block boundary tag) and `quantum` (alignment) parameters:
// header=0 and quantum=8 approximate the "policy only" columns; header=8, quantum=16 a real
// 64-bit malloc.
//
// first_fit, next_fit and best_fit use the O(log n) indexes that make exactly the decisions
// of the address-ordered list scans (tests/engine/test_property.cpp proves it); the LIFO
// and FIFO variants are the list scans themselves.
//
// Left out here: binary and double buddy systems and simple segregated storage need parts
// of their own (power-of-two splitting with buddy-only merging; no splitting or coalescing
// per class) and are not yet built.
#pragma once

#include <string_view>

namespace fraglab::presets::classic {

// Defaults every classic preset shares (KEY=VALUE, as `--set` takes them).
inline constexpr std::string_view defaults = "quantum=16,min_size=16,header=0,growth=exact,coalesce=immediate";

}  // namespace fraglab::presets::classic
