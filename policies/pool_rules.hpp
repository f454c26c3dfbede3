// Which free index (pool) a request searches and a new region joins.
//
// With one shared pool, the stream is only a tag on each block. With per-stream pools a
// chunk is only ever reused by its own stream and regions belong to the stream that
// acquired them, as in PyTorch's caching allocator (where blocks are ordered by stream
// first). Pools never share regions, so coalescing never crosses pools.
//
// With size_class_pools each rounded size has its own pool and its own regions: simple
// segregated storage (Wilson et al. 1995, section 3.6), whose blocks of one class are never
// reused for another. Streams are then only tags.
#pragma once

#include <fraglab/engine/chunk.hpp>
#include <fraglab/engine/part_traits.hpp>
#include <fraglab/policies/rule_parameter.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <tuple>

namespace fraglab {

// What a pool rule's reservation(key) returns for an expandable pool: the address space to
// reserve for the pool and the page size it maps at a time.
struct reservation_spec {
  std::size_t size;
  std::size_t page;
};

struct stream_pool_rule {
  static constexpr part_hook hooks = part_hook::size_class_pools;
  bool per_stream = false;
  bool size_class_pools = false;

  void validate() const
  {
    if (per_stream && size_class_pools) throw std::invalid_argument("per_stream and size_class_pools cannot be combined");
  }

  static constexpr std::string_view part = "pools";
  static constexpr auto parameters()
  {
    return std::tuple{
        parameter("per_stream", &stream_pool_rule::per_stream, "one free index per stream: blocks are reused by their own stream only"),
        parameter("size_class_pools", &stream_pool_rule::size_class_pools,
                  "one free index and its own regions per rounded size (simple segregated storage)"),
    };
  }

  [[nodiscard]] std::uint64_t pool_key(stream_id stream, std::size_t rounded) const noexcept
  {
    if (size_class_pools) return rounded;
    return per_stream ? stream : 0;
  }
};

}  // namespace fraglab
