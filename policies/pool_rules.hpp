// Which free index (pool) a request searches and a new region joins.
//
// With one shared pool, the stream is only a tag on each block. With per-stream pools a
// chunk is only ever reused by its own stream and regions belong to the stream that
// acquired them, as in PyTorch's caching allocator (where blocks are ordered by stream
// first). Pools never share regions, so coalescing never crosses pools.
#pragma once

#include "engine/chunk.hpp"

#include <cstddef>
#include <cstdint>

namespace fraglab {

struct stream_pool_rule {
  bool per_stream = false;

  [[nodiscard]] std::uint64_t pool_key(stream_id stream, std::size_t /*rounded*/) const noexcept
  {
    return per_stream ? stream : 0;
  }
};

}  // namespace fraglab
