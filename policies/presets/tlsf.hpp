// TLSF, Two-Level Segregated Fit: Masmano, Ripoll, Crespo & Real, "TLSF: a New Dynamic
// Memory Allocator for Real-Time Systems" (ECRTS 2004), and the reference implementation
// tlsf 2.4.6 / Conte's tlsf 3.1 for the 64-bit constants.
//
// Rules reproduced: first level floor(log2 size), second level the next SLI bits (SLI = 5:
// 32 lists per power of two, configurable as `sli`); sizes below 256 B in linear classes
// 8 B apart; a search rounds the request up to the next list boundary and takes the head of
// the first non-empty list at or above it (bitmaps: O(1)); lists are LIFO; immediate
// coalescing; any remainder of at least the minimum block splits. With sli 5 and the 256 B
// linear limit, the registry builds it on tlsf_segregated_index, whose mapping is constants
// as in TLSF's code; any other sli or linear_limit on the general index.
//
// Left out: TLSF's in-band block header (8 B per block) unless `header=8` is given; its
// single pool is modelled with exact growth on the heap backend.
#pragma once

#include <string_view>

namespace fraglab::presets::tlsf {

inline constexpr std::string_view defaults = "quantum=16,min_size=16,sli=5,linear_limit=256,growth=exact,coalesce=immediate";

}  // namespace fraglab::presets::tlsf
