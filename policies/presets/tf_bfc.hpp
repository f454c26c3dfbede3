// TensorFlow's BFC allocator ("best-fit with coalescing"): tsl/framework/bfc_allocator.{h,cc}
// as in TensorFlow 2.12-2.17 and xla/tsl/framework/bfc_allocator.{h,cc} since, expressed as
// fraglab parts. Verified address for address against TensorFlow 2.21.0's own log of its CPU
// BFC allocator (docs/tensorflow.md; tests/tensorflow).
//
// Rules reproduced:
// - rounding: requests round up to a multiple of 256 bytes (minimum 256); 0 bytes -> null.
// - bins: 21 bins, bin b for sizes in [256 * 2^b, 256 * 2^(b+1)), the last for >= 256 MiB,
//   each ordered by (size, address); search from bin(rounded) upward for the first chunk
//   of size >= rounded: global best fit, lowest address on ties.
// - split: iff chunk >= 2 x rounded, or chunk - rounded >= max_internal_fragmentation
//   (128 MiB by default); the allocation keeps the low part.
// - free: merge with the next chunk if free, then with the previous; within a region.
// - growth: nothing at construction. With allow_growth the first region is
//   min(limit, 2 MiB); otherwise the whole limit. On a miss: fail if rounded > limit -
//   acquired; double the region size until it holds the request; acquire min(size, what the
//   limit leaves); on the first refusal ever, back off by 0.9x while that still holds the
//   request; after a growth that did not need enlarging, double for next time.
// - garbage collection (option): after a failed growth, if regions without live chunks
//   could make room under the limit, release all of them and grow again.
// - memory limit: bytes, or per_process_gpu_memory_fraction x the device (--capacity).
//
// Left out: the timestamped (deferred, stream-safe) coalescing option; the sub-allocator's
// SupportsCoalescing merging of adjacent regions (neither TF's GPU nor its CPU sub-allocator
// merges); fragmentation_fraction as a split threshold; the alignment argument, which TF's BFC
// ignores (every chunk is a multiple of 256 B from its region's start).
//
// TF's stats (under TF's names), bin debug info, occupancy rendering and memory log:
// tf_memory_dump.hpp, for this or any other policy.
#pragma once

#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/fits.hpp>
#include <fraglab/policies/indexes/bins_index.hpp>
#include <fraglab/policies/policy.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>

namespace fraglab::presets::tf {

inline constexpr std::size_t min_allocation = 256;
inline constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

// Fixed at compile time, as TF has no option for them: immediate coalescing, no header, no
// size classes.
using policy = fraglab::policy<bins_index, best_fit, threshold_split, fixed_coalescing<coalesce_mode::immediate>, growth_rule,
                               plain_quantum_size_rule>;

// BFCAllocator::Options' defaults. TF's GPU device configures it otherwise (GPUBFCAllocator:
// allow_growth false unless GPUOptions ask, garbage collection on unless
// TF_ENABLE_GPU_GARBAGE_COLLECTION=false), and so does the tf_bfc preset of the command line.
struct settings {
  std::size_t memory_limit = unlimited;
  bool allow_growth = true;
  bool garbage_collection = false;
  std::size_t max_internal_fragmentation = std::size_t{128} << 20;
  double split_ratio = 2.0;  // not a TF option: TF splits at 2x; varied in split-ratio studies
};

template <class Backend>
typename allocator<policy, Backend>::config make_config(settings const& s = {})
{
  typename allocator<policy, Backend>::config c;
  c.index = {min_allocation, 21};
  c.size = {.quantum = min_allocation, .min_size = min_allocation};
  c.split.ratio = s.split_ratio;
  c.split.max_internal_fragmentation = s.max_internal_fragmentation;
  c.growth.kind = growth_kind::doubling;
  std::size_t const limit = s.memory_limit / min_allocation * min_allocation;
  c.growth.initial = s.allow_growth ? std::min(limit, std::size_t{2} << 20) : limit;
  c.growth.factor = 2.0;
  c.growth.memory_limit = s.memory_limit;
  c.growth.backoff = 0.9;
  c.growth.backoff_once = true;
  c.growth.release_free_regions = s.garbage_collection;
  c.growth.release_only_if_it_helps = true;
  return c;
}

}  // namespace fraglab::presets::tf
