// What to give back to the backend on a miss, beyond the growth rule's release of every
// wholly free region (empty_cache).
//
// A reclaim rule is an optional policy part. The engine calls whichever of these it has:
//
// | expression                               | when                                  | meaning                                   |
// |------------------------------------------|---------------------------------------|-------------------------------------------|
// | r.on_search(key)                         | every allocate, before the search     | advances the rule's clock (ages)          |
// | r.clock()                                | a region's last live block is freed   | stamped on the region (free_region::since)|
// | r.after_free(view, size, last, base)     | every free, after coalescing          | the free chunk's size, whether it ends    |
// |                                          |                                       | its region, the region's base (dlmalloc's |
// |                                          |                                       | trim of the top)                          |
// | r.before_growth(view, key, need)         | a miss, before growing                | release what the rule wants (PyTorch GC)  |
// | r.after_failed_growth(view, key, need)   | growing failed                        | release; true: grow once more             |
//
// `view` lists wholly free regions (for_each_free_region) and releases them by base
// address (release). Ages are the rule's business: the engine only stamps the clock.
#pragma once

#include <fraglab/engine/part_interface.hpp>

#include <cstddef>
#include <cstdint>

namespace fraglab {

// The default: nothing beyond the growth rule.
struct no_reclaim {};

}  // namespace fraglab
