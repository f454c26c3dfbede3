// TLSF, Two-Level Segregated Fit: Masmano, Ripoll, Crespo & Real, "TLSF: a New Dynamic
// Memory Allocator for Real-Time Systems" (ECRTS 2004), and the reference implementation
// tlsf 2.4.6 / Conte's tlsf 3.1 for the 64-bit constants.
//
// Rules reproduced: first level floor(log2 size), second level the next SLI bits (SLI = 5:
// 32 lists per power of two, configurable as `sli`); sizes below 256 B in linear classes
// 8 B apart; a search rounds the request up to the next list boundary and takes the head of
// the first non-empty list at or above it (bitmaps: O(1)); lists are LIFO; immediate
// coalescing; any remainder of at least the minimum block splits. `policy` below fixes sli 5
// and the 256 B linear limit in tlsf_segregated_index, whose mapping is constants as in TLSF's
// code; the registry builds any other sli or linear_limit on the general index.
//
// Left out: TLSF's in-band block header (8 B per block) unless `header=8` is given; its
// single pool is modelled with exact growth on the heap backend.
#pragma once

#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/policy_options.hpp>
#include <fraglab/policies/indexes/segregated_index.hpp>

namespace fraglab::presets::tlsf {

// TLSF's own mapping (sli 5, linear classes below 256 B) and its immediate coalescing, fixed
// in the type.
using policy = policy_with<index_is<tlsf_segregated_index>, fit_is<good_fit>,
                           coalesce_is<fixed_coalescing<coalesce_mode::immediate>>>;

// 16-byte alignment and minimum block, no header, one pool grown by exactly what a miss
// needs; any remainder of at least the minimum block splits.
template <class Backend>
typename allocator<policy, Backend>::config make_config()
{
  typename allocator<policy, Backend>::config c;
  c.index = {5, 256};
  c.size.quantum = 16;
  c.size.min_size = 16;
  c.growth.kind = growth_kind::exact;
  return c;
}

}  // namespace fraglab::presets::tlsf
