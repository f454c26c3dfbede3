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

#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/policy_options.hpp>
#include <fraglab/policies/indexes/address_ordered_tree_index.hpp>
#include <fraglab/policies/indexes/fine_bins_index.hpp>
#include <fraglab/policies/indexes/index_for_size_rule.hpp>
#include <fraglab/policies/indexes/list_index.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>

namespace fraglab::presets::classic {

// Each preset's parts. Immediate coalescing is fixed in the type where the preset always
// coalesces and the speed table measures it (docs/performance.md, "Structure fixed in the
// type"); elsewhere the mode is read at run time, as a `compose:` of the same index and fit.
using immediate = coalesce_is<fixed_coalescing<coalesce_mode::immediate>>;
using first_fit_policy = policy_with<index_is<address_ordered_tree_index>, fit_is<first_fit>, immediate>;
using first_fit_lifo_policy = policy_with<index_is<lifo_list_index>, fit_is<first_fit>>;
using first_fit_fifo_policy = policy_with<index_is<fifo_list_index>, fit_is<first_fit>>;
using next_fit_policy = policy_with<index_is<address_ordered_tree_index>, fit_is<next_fit>>;
using best_fit_policy = policy_with<index_is<fine_bins_index>, fit_is<best_fit>, immediate>;
using worst_fit_policy = policy_with<index_is<tree_index>, fit_is<worst_fit>>;
// The buddy system as a part of its own: halving splits and buddy-only merges, fixed in the
// type (engine/detail/buddy.hpp).
using buddy_policy = policy_with<index_is<tree_index>, fit_is<best_fit>, coalesce_is<fixed_coalescing<coalesce_mode::buddy>>>;
using segregated_pow2_policy = policy_with<index_is<lifo_list_index>, fit_is<first_fit>>;

// J&W's model, as every classic preset has it: 16-byte alignment and minimum chunk, no
// header, a heap grown by exactly what a miss needs, immediate coalescing, any remainder
// split off.
template <class Policy, class Backend>
typename allocator<Policy, Backend>::config make_config()
{
  typename allocator<Policy, Backend>::config c;
  c.size.quantum = 16;
  c.size.min_size = 16;
  c.size.header = 0;
  c.growth.kind = growth_kind::exact;
  fit_index_to_size_rule(c.index, c.size);
  return c;
}

// Power-of-two size classes.
template <class Policy, class Backend>
typename allocator<Policy, Backend>::config make_power_of_two_config()
{
  auto c = make_config<Policy, Backend>();
  c.size.power_of_two_classes = true;
  fit_index_to_size_rule(c.index, c.size);
  return c;
}

// Binary buddy: power-of-two sizes, buddy-only merging (in the policy's type).
template <class Backend>
typename allocator<buddy_policy, Backend>::config make_buddy_config()
{
  return make_power_of_two_config<buddy_policy, Backend>();
}

// Simple segregated storage: power-of-two classes, each with pages of its own that it carves
// one block at a time (a split within the class's pool), never coalesced.
template <class Backend>
typename allocator<segregated_pow2_policy, Backend>::config make_segregated_pow2_config()
{
  auto c = make_power_of_two_config<segregated_pow2_policy, Backend>();
  c.coalesce.mode = coalesce_mode::never;
  c.pools.size_class_pools = true;
  return c;
}

}  // namespace fraglab::presets::classic
