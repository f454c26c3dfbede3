// Best fit as a 64-bit boundary-tag malloc runs it (glibc's chunk layout: an 8-byte header,
// 16-byte alignment, 32-byte minimum chunk), on J&W's heap grown by exactly what a miss needs.
// Left out: glibc's bins, fastbins, tcache and mmap threshold.
#pragma once

#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/policy_options.hpp>
#include <fraglab/policies/indexes/fine_bins_index.hpp>
#include <fraglab/policies/indexes/index_for_size_rule.hpp>

namespace fraglab::presets::tagged_best_fit {

using policy = policy_with<index_is<fine_bins_index>, fit_is<best_fit>,
                           coalesce_is<fixed_coalescing<coalesce_mode::immediate>>>;

template <class Backend>
typename allocator<policy, Backend>::config make_config()
{
  typename allocator<policy, Backend>::config c;
  c.size.quantum = 16;
  c.size.min_size = 32;
  c.size.header = 8;
  c.growth.kind = growth_kind::exact;
  fit_index_to_size_rule(c.index, c.size);
  return c;
}

}  // namespace fraglab::presets::tagged_best_fit
