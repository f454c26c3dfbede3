// Typed outcomes of allocator operations.
//
// Failing to allocate is a normal result, never an exception: sweeps over capacities
// expect thousands of failures. Misuse (a free the allocator cannot account for, an
// alignment that is not a power of two, a size that overflows when rounded) is reported
// with its own status and leaves the allocator exactly as it was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fraglab {

enum class alloc_status : std::uint8_t {
  ok,               // served (a zero-byte request is served with a null address)
  capacity,         // the backend has no room left for a region that would serve it
  limit,            // the growth rule's memory limit forbids acquiring more
  backend_refused,  // the backend refused an acquisition below its stated capacity
  no_growth,        // the growth rule acquires nothing more (a fixed pool is full)
  bad_alignment,    // misuse: alignment is zero or not a power of two
  size_overflow,    // misuse: the size overflows when rounded, padded or aligned
};

enum class free_status : std::uint8_t {
  ok,                // released (freeing the null address is a no-op, as with free(NULL))
  unknown_pointer,   // misuse: the address lies in no region of this allocator
  double_free,       // misuse: the address lies in memory that is already free
  interior_pointer,  // misuse: the address lies inside a live block but is not its start
};

constexpr std::string_view to_string(alloc_status s) noexcept
{
  switch (s) {
    case alloc_status::ok: return "ok";
    case alloc_status::capacity: return "capacity";
    case alloc_status::limit: return "limit";
    case alloc_status::backend_refused: return "backend_refused";
    case alloc_status::no_growth: return "no_growth";
    case alloc_status::bad_alignment: return "bad_alignment";
    case alloc_status::size_overflow: return "size_overflow";
  }
  return "?";
}

constexpr std::string_view to_string(free_status s) noexcept
{
  switch (s) {
    case free_status::ok: return "ok";
    case free_status::unknown_pointer: return "unknown_pointer";
    case free_status::double_free: return "double_free";
    case free_status::interior_pointer: return "interior_pointer";
  }
  return "?";
}

constexpr bool is_misuse(alloc_status s) noexcept
{
  return s == alloc_status::bad_alignment || s == alloc_status::size_overflow;
}

// A live block as deallocate(block_ref) takes it back: its address and the allocator's own
// record of it. With the record a free needs no lookup of the address, as a malloc that
// keeps its header in front of the block needs none; the address is checked against the
// record, so a stale reference is reported as a double free. A null record means "look
// the address up", as deallocate(address) does.
struct block_ref {
  std::uintptr_t address = 0;
  void* record = nullptr;  // opaque: what allocation::record said, from the same allocator
};

struct allocation {
  std::uintptr_t address = 0;  // 0 for a zero-byte request and on failure
  std::size_t size = 0;        // bytes of the chunk handed out (rounding and unsplit tail included)
  alloc_status status = alloc_status::ok;
  void* record = nullptr;      // the allocator's record of the block, for block(); null when it keeps none
  [[nodiscard]] block_ref block() const noexcept { return {address, record}; }

  [[nodiscard]] explicit operator bool() const noexcept { return status == alloc_status::ok; }
  [[nodiscard]] void* pointer() const noexcept { return reinterpret_cast<void*>(address); }
};

}  // namespace fraglab
