// Address -> chunk lookup for live blocks, so deallocate() finds its chunk in O(1).
//
// Two levels. Most blocks die young (the median block of the traced g++, perl and python3
// lives 3-7 events; Barrett & Zorn, "Using lifetime predictors to improve memory allocation
// performance", PLDI 1993, report the same of C programs), so a block enters a
// direct-mapped nursery first, 16 KiB that stay in the first-level cache. It moves to the
// table only when a younger block needs its nursery slot; a block freed before that never
// touches the table. The table is large (16 bytes a slot, two to four slots a live block)
// and a probe into it is a cache miss once it outgrows the caches. So a promotion does not
// wait for the table either: it prefetches the block's home slot and places the block eight
// promotions later, when the line has arrived.
//
// The table: open addressing with linear probing, Fibonacci hashing (Knuth, TAOCP vol. 3,
// 6.4) and backward-shift deletion (Knuth's Algorithm R), kept at most half full. A
// lookup touches one or two adjacent entries of one cache line; no tombstones accumulate,
// so the steady state of a long replay never degrades. The table doubles when the number of
// blocks it holds reaches a new high, never in the steady state.
//
// Measured (docs/performance.md, seventh round): a zero-cost lookup would make the replays
// 14-43% faster, so the map is the largest single cost of a free. The nursery recovers up
// to half of that where blocks die young (tlsf on groff -22%, on g++ -18%), the deferred
// promotion another part where many live long (tlsf on python3 -28%, perl -11%); a table with
// four-entry buckets, an address hash that keeps neighbouring blocks in one line, and
// Abseil's Swiss table (flat_hash_map, 50 more instructions per operation) bought nothing.
// Against the Boost.Intrusive unordered_set the table replaced: that set's erase walks its
// singly linked bucket to find the predecessor, and its insert searches for a duplicate
// first; together they cost about 50 instructions per operation. TF keeps a per-region
// vector of chunk handles, one per 256-byte granule, instead; that costs memory
// proportional to the reserved bytes, which a simulated 80 GiB pool cannot afford. A radix
// tree over address / granule with lazily mapped leaves (twelfth round) was 8-23% faster on
// ssh, where two frees in five miss the nursery, and 2-10% slower on scp, where none do;
// behind the nursery, 7-16% faster on ssh and up to 5% slower on perl. Either way a
// million live blocks at a 16-byte granule took 4.48 GB resident against 2.33 GB, so it
// would need a bound on its leaves and a fallback to this table.
#pragma once

#include "engine/detail/hot_cold.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace fraglab::detail {

template <class Chunk>
class live_address_map {
  struct entry {
    std::uintptr_t address = 0;
    Chunk* chunk = nullptr;  // nullptr: an empty slot (any address, 0 included, may be live)
  };

  static constexpr std::size_t initial_capacity = 64;
  // 16 KiB: half of a 32 KiB first-level data cache. Larger nurseries measured no better, 256
  // entries a third of the gain (docs/performance.md).
  static constexpr unsigned nursery_log2 = 10;
  // Promotions in flight: a promoted block is placed in the table this many promotions
  // later, once the prefetch of its home slot has had time to arrive. 16 measured no better.
  static constexpr std::size_t in_flight_count = 8;

 public:
  live_address_map() : table_(initial_capacity), mask_(initial_capacity - 1), shift_(64 - std::countr_zero(initial_capacity)) {}
  live_address_map(live_address_map const&) = delete;
  live_address_map& operator=(live_address_map const&) = delete;

  // `c` must not be in the map.
  void insert(Chunk& c)
  {
    entry& slot = nursery_[nursery_slot(c.address)];
    if (slot.chunk != nullptr) promote(slot);
    slot = {c.address, &c};
    ++size_;
  }

  // Removes and returns the chunk at `address`; null when none is live there. Freeing
  // needs one probe sequence, not a find and then an erase.
  [[nodiscard]] Chunk* extract(std::uintptr_t address) noexcept
  {
    entry& slot = nursery_[nursery_slot(address)];
    if (holds(slot, address)) {
      Chunk* const c = slot.chunk;
      slot = entry{};
      --size_;
      return c;
    }
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
    --table_size_;
    return c;
  }

  [[nodiscard]] Chunk* find(std::uintptr_t address) const noexcept
  {
    entry const& slot = nursery_[nursery_slot(address)];
    if (holds(slot, address)) return slot.chunk;
    if (Chunk* const c = table_[slot_of(address)].chunk) return c;
    std::size_t const k = in_flight_index(address);
    return k == in_flight_count ? nullptr : in_flight_[k].chunk;
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  // How many of them have left the nursery for the table, or are on their way to it (for
  // tests of the nursery).
  [[nodiscard]] std::size_t table_size() const noexcept { return table_size_; }

  void clear() noexcept
  {
    table_.assign(table_.size(), entry{});
    nursery_.fill(entry{});
    in_flight_.fill(entry{});
    size_ = 0;
    table_size_ = 0;
  }

 private:
  std::size_t mask() const noexcept { return mask_; }
  std::size_t next(std::size_t i) const noexcept { return (i + 1) & mask(); }
  // Whether `e` is occupied, by `address` (an empty entry's address means nothing).
  static bool holds(entry const& e, std::uintptr_t address) noexcept { return e.address == address && e.chunk != nullptr; }
  static std::uint64_t fibonacci(std::uintptr_t address) noexcept
  {
    return static_cast<std::uint64_t>(address) * 0x9E3779B97F4A7C15ull;
  }
  std::size_t home(std::uintptr_t address) const noexcept { return static_cast<std::size_t>(fibonacci(address) >> shift_); }
  static std::size_t nursery_slot(std::uintptr_t address) noexcept
  {
    return static_cast<std::size_t>(fibonacci(address) >> (64 - nursery_log2));
  }

  // The nursery's occupant of `slot` moves to the table, making room for a younger block.
  // Placing it at once would stall on its home slot, a cache miss once the table outgrows
  // the caches: instead its home slot is prefetched and the block waits in a small ring,
  // to be placed when the ring comes round to it again. Until then lookups find it there.
  void promote(entry const& slot)
  {
    if (2 * (table_size_ + 1) > mask_ + 1) [[unlikely]] grow();
    __builtin_prefetch(&table_[home(slot.address)], 1);
    entry& oldest = in_flight_[in_flight_next_];
    if (oldest.chunk != nullptr) place(oldest);
    oldest = slot;
    in_flight_next_ = (in_flight_next_ + 1) % in_flight_count;
    ++table_size_;
  }

  // The ring entry holding `address`, in_flight_count when none does; searched only when
  // the table has not got it.
  std::size_t in_flight_index(std::uintptr_t address) const noexcept
  {
    for (std::size_t k = 0; k < in_flight_count; ++k)
      if (holds(in_flight_[k], address)) return k;
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
      if (((j - h) & mask()) >= ((j - hole) & mask())) {
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

  std::array<entry, std::size_t{1} << nursery_log2> nursery_{};
  std::array<entry, in_flight_count> in_flight_{};  // promotions not yet placed
  std::size_t in_flight_next_ = 0;                   // the oldest, placed by the next promotion
  std::vector<entry> table_;  // a power of two
  std::size_t mask_;          // table_.size() - 1, kept so that a probe does not derive it
  unsigned shift_;            // 64 - log2(capacity): the hash's top bits index the table
  std::size_t size_ = 0;       // live blocks, in the nursery and the table
  std::size_t table_size_ = 0;
};

}  // namespace fraglab::detail
