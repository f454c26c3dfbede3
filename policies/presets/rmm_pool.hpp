// RAPIDS Memory Manager's pool_memory_resource (rmm/mr/device/pool_memory_resource.hpp and
// detail/coalescing_free_list.hpp, RMM 24.x).
//
// Rules reproduced: requests round up to 256 B; the free list is address-ordered and best
// fit is a linear search (the smallest block, lowest address among equals: the tree index
// makes exactly that choice); the allocation takes the front of the block and any remainder
// goes back; free blocks merge with address neighbours, never across upstream blocks; on a
// miss the pool grows by max(request, current pool size) (the first time by
// `initial_region`, RMM's initial_pool_size) and, when upstream refuses, retries with half
// the size, and last with the request itself (`backoff=0.5`, `backoff_to_need`). Upstream
// memory is returned
// only at destruction.
//
// Left out: maximum_pool_size's max(request, remaining / 2) schedule (memory_limit caps the
// pool instead); per-stream free lists and stream-ordered reuse (one stream is modelled).
#pragma once

#include <string_view>

namespace fraglab::presets::rmm {

inline constexpr std::string_view defaults =
    "quantum=256,min_size=256,growth=proportional,initial_region=256MiB,growth_factor=1,backoff=0.5,"
    "backoff_to_need=true,coalesce=immediate";

}  // namespace fraglab::presets::rmm
