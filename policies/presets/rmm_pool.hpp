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

#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/policy_options.hpp>
#include <fraglab/policies/indexes/index_for_size_rule.hpp>
#include <fraglab/policies/indexes/tree_index.hpp>

namespace fraglab::presets::rmm {

using policy = policy_with<index_is<tree_index>, fit_is<best_fit>>;

// pool_memory_resource's defaults, with initial_pool_size 256 MiB.
template <class Backend>
typename allocator<policy, Backend>::config make_config()
{
  typename allocator<policy, Backend>::config c;
  c.size.quantum = 256;
  c.size.min_size = 256;
  c.growth.kind = growth_kind::proportional;
  c.growth.initial = std::size_t{256} << 20;
  c.growth.factor = 1.0;
  c.growth.backoff = 0.5;
  c.growth.backoff_to_need = true;
  fit_index_to_size_rule(c.index, c.size);
  return c;
}

}  // namespace fraglab::presets::rmm
