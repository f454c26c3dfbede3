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
// of the address-ordered list scans (tests/engine/test_equivalence.cpp proves it); the LIFO
// and FIFO variants are the list scans themselves.
//
// buddy: the binary buddy system (coalesce=buddy: power-of-two chunks aligned to their size
// within a region, halving splits, merging only with the buddy), best fit over the free
// chunks (the smallest free power of two that holds the request, lowest address first),
// one region per growth of the request's power of two (at least a page).
// segregated_pow2: simple segregated storage: power-of-two classes, each class with its own
// free list (LIFO) and its own pages, carved one block at a time, never split for another
// class nor coalesced.
//
// Left out: the double buddy system and the 2^n / 3x2^n class variant of simple segregated
// storage.
#pragma once

#include <string_view>

namespace fraglab::presets::classic {

// Defaults every classic preset shares (KEY=VALUE, as `--set` takes them).
inline constexpr std::string_view defaults = "quantum=16,min_size=16,header=0,growth=exact,coalesce=immediate";
inline constexpr std::string_view buddy_defaults =
    "quantum=16,min_size=16,header=0,size_classes=pow2,growth=exact,coalesce=buddy";
inline constexpr std::string_view segregated_pow2_defaults =
    "quantum=16,min_size=16,header=0,size_classes=pow2,growth=exact,coalesce=never,size_class_pools=true";

}  // namespace fraglab::presets::classic
