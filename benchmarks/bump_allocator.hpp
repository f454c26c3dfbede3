// The floor of the benchmark harness: an allocator that hands out addresses from an
// unbounded range and never reuses them. What remains of its ns/op is the replay loop's own
// cost (decoding events, the slot table, the clock), which every other allocator pays too.
// It touches no memory: the addresses are never dereferenced.
#pragma once

#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/engine/results.hpp>

#include <cstdint>

namespace fraglab::bench {

class bump_allocator {
 public:
  allocation allocate(std::size_t size, std::size_t alignment = 1, std::uint64_t /*stream*/ = 0) noexcept
  {
    std::uintptr_t const address = detail::align_up_address(next_, alignment < 16 ? 16 : alignment);
    next_ = address + (size == 0 ? 1 : size);
    return {address, size, alloc_status::ok};
  }

  free_status deallocate(std::uintptr_t /*address*/) noexcept { return free_status::ok; }

 private:
  std::uintptr_t next_ = 4096;
};

}  // namespace fraglab::bench
