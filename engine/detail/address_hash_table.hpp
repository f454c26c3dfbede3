// The live-address map's fallback for blocks that leave its nursery: a hash table from a
// block's address to its chunk, for address spans too sparse for the radix tree
// (address_radix_tree.hpp) to stay within its memory bound.
//
// Open addressing with linear probing, Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4) and
// backward-shift deletion (Knuth's Algorithm R), kept at most half full. A lookup touches one
// or two adjacent entries of one cache line; no tombstones accumulate, so the steady state
// of a long replay never degrades. The table doubles when the number of blocks it holds
// reaches a new high, never in the steady state.
//
// A probe is a cache miss once the table outgrows the caches, so an insertion does not wait
// for it: it prefetches the block's home slot and places the block eight insertions later,
// when the line has arrived; until then lookups find it in that ring (tlsf on python3 -28%,
// perl -11%: docs/performance.md, "The address map").
//
// Against the Boost.Intrusive unordered_set this table replaced: that set's erase walks its
// singly linked bucket to find the predecessor, and its insert searches for a duplicate
// first; together they cost about 50 instructions per operation. A table with four-entry
// buckets, an address hash that keeps neighbouring blocks in one line, and Abseil's Swiss
// table (flat_hash_map, 50 more instructions per operation) bought nothing.
#pragma once

#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/engine/detail/hot_cold.hpp>

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace fraglab::detail {

template <class Chunk>
class address_hash_table {
 public:
  struct entry {
    std::uintptr_t address = 0;
    Chunk* chunk = nullptr;  // nullptr: an empty slot (any address, 0 included, may be live)

    // Whether it is occupied, by `a` (an empty entry's address means nothing).
    [[nodiscard]] bool holds(std::uintptr_t a) const noexcept { return address == a && chunk != nullptr; }
  };

  address_hash_table() : table_(initial_capacity), mask_(initial_capacity - 1), shift_(64 - std::countr_zero(initial_capacity)) {}
  address_hash_table(address_hash_table const&) = delete;
  address_hash_table& operator=(address_hash_table const&) = delete;

  // `e.address` must not be in the table.
  void insert(entry const& e)
  {
    if (2 * (size_ + 1) > mask_ + 1) [[unlikely]] grow();
    __builtin_prefetch(&table_[home(e.address)], 1);
    entry& oldest = in_flight_[in_flight_next_];
    if (oldest.chunk != nullptr) place(oldest);
    oldest = e;
    in_flight_next_ = (in_flight_next_ + 1) % in_flight_count;
    ++size_;
  }

  // Removes and returns the chunk at `address`; null when none is there.
  [[nodiscard]] Chunk* extract(std::uintptr_t address) noexcept
  {
    std::size_t const i = slot_of(address);
    Chunk* c = table_[i].chunk;
    if (c != nullptr) {
      remove_at(i);
    } else {
      std::size_t const k = in_flight_index(address);
      if (k == in_flight_count) return nullptr;
      c = in_flight_[k].chunk;
      in_flight_[k] = entry{};  // so it is never placed
    }
    --size_;
    return c;
  }

  [[nodiscard]] Chunk* find(std::uintptr_t address) const noexcept
  {
    if (Chunk* const c = table_[slot_of(address)].chunk) return c;
    std::size_t const k = in_flight_index(address);
    return k == in_flight_count ? nullptr : in_flight_[k].chunk;
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  void clear() noexcept
  {
    table_.assign(table_.size(), entry{});
    in_flight_.fill(entry{});
    size_ = 0;
  }

 private:
  static constexpr std::size_t initial_capacity = 64;
  // Insertions in flight: a block is placed in the table this many insertions later, once
  // the prefetch of its home slot has had time to arrive. 16 measured no better.
  static constexpr std::size_t in_flight_count = 8;

  std::size_t next(std::size_t i) const noexcept { return (i + 1) & mask_; }
  std::size_t home(std::uintptr_t address) const noexcept { return fibonacci_hash(address, 64 - shift_); }

  // The ring entry holding `address`, in_flight_count when none does; searched only when
  // the table has not got it.
  std::size_t in_flight_index(std::uintptr_t address) const noexcept
  {
    for (std::size_t k = 0; k < in_flight_count; ++k)
      if (in_flight_[k].holds(address)) return k;
    return in_flight_count;
  }

  // The slot holding `address`, or the empty slot that ends its probe sequence.
  std::size_t slot_of(std::uintptr_t address) const noexcept
  {
    std::size_t i = home(address);
    while (table_[i].chunk != nullptr && table_[i].address != address) i = next(i);
    return i;
  }

  void place(entry e) noexcept
  {
    std::size_t i = home(e.address);
    while (table_[i].chunk != nullptr) i = next(i);
    table_[i] = e;
  }

  // Empties slot `hole` and moves back every later entry of its run that may move there,
  // so that every entry stays reachable from its home slot without tombstones.
  void remove_at(std::size_t hole) noexcept
  {
    for (std::size_t j = next(hole); table_[j].chunk != nullptr; j = next(j)) {
      // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
      std::size_t const h = home(table_[j].address);
      if (((j - h) & mask_) >= ((j - hole) & mask_)) {
        table_[hole] = table_[j];
        hole = j;
      }
    }
    table_[hole] = entry{};
  }

  FRAGLAB_COLD void grow()
  {
    std::vector<entry> old(table_.size() * 2);
    old.swap(table_);
    mask_ = table_.size() - 1;
    --shift_;
    for (entry const& e : old)
      if (e.chunk != nullptr) place(e);
  }

  std::array<entry, in_flight_count> in_flight_{};  // insertions not yet placed
  std::size_t in_flight_next_ = 0;                   // the oldest, placed by the next insertion
  std::vector<entry> table_;  // a power of two
  std::size_t mask_;          // table_.size() - 1, kept so that a probe does not derive it
  unsigned shift_;            // 64 - log2(capacity), kept so that a probe does not derive it
  std::size_t size_ = 0;      // in the table and in flight
};

}  // namespace fraglab::detail
