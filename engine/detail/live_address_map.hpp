// Address -> chunk lookup for live blocks, so deallocate() finds its chunk in O(1).
//
// Two levels. Most blocks die young (the median block of the traced g++, perl and python3
// lives 3-7 events; Barrett & Zorn, "Using lifetime predictors to improve memory allocation
// performance", PLDI 1993, report the same of C programs), so a block enters a
// direct-mapped nursery first, 16 KiB that stay in the first-level cache. It moves on only
// when a younger block needs its nursery slot; a block freed before that goes no further.
//
// Where it moves is a radix tree over address / granule (address_radix_tree.hpp): a lookup
// there is two dependent loads, where a hash table's is a probe sequence whose length and
// branches vary. Its memory is a page for each stretch of 512 granules that holds a block,
// so it is bounded: when the tree takes a new leaf and then holds more than
// `radix_bytes_free` and more than `radix_bytes_per_block` for each of its blocks, all of them
// move to a hash table (address_hash_table.hpp) for good, which takes 32-64 bytes a block
// whatever their addresses. So the tree never holds more than 256 bytes for each block at
// its peak (or 1 MiB), plus a leaf. Packed heaps keep the tree (tf_bfc and pytorch_caching
// on every traced program, tlsf and best_fit on all but perl and sqlite3); blocks far apart,
// such as a simulated pool's tensors or a million blocks of up to 8 KiB, fall back early.
//
// Measured (docs/performance.md, "The address map"): a zero-cost lookup would make the replays
// 14-43% faster, so the map is the largest single cost of a free. The nursery recovers up to
// half of that where blocks die young (tlsf on groff -22%, on g++ -18%). Behind it, the radix
// tree against the hash table costs 1-3% more instructions and misses the last-level cache
// 6-27% less; python3 10-24% faster, ssh and scp 2-12%, perl within the noise or up to 11%
// slower. TF keeps a per-region vector of chunk handles, one per 256-byte granule, instead;
// that costs memory in proportion to the reserved bytes, which a simulated 80 GiB pool cannot
// afford.
#pragma once

#include <fraglab/engine/detail/address_hash_table.hpp>
#include <fraglab/engine/detail/address_radix_tree.hpp>
#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/engine/detail/hot_cold.hpp>

#include <array>
#include <cstdint>

namespace fraglab::detail {

template <class Chunk>
class live_address_map {
  // 16 KiB: half of a 32 KiB first-level data cache. Larger nurseries measured no better, 256
  // entries a third of the gain.
  static constexpr unsigned nursery_log2 = 10;
  using entry = typename address_hash_table<Chunk>::entry;

 public:
  // The radix tree's bound: it may take this much per block it holds, and this much at any
  // rate. The hash table takes 32-64 bytes a block.
  static constexpr std::size_t radix_bytes_per_block = 256;
  static constexpr std::size_t radix_bytes_free = std::size_t{1} << 20;

  // `granule`: a power of two no larger than the distance between any two live blocks'
  // addresses (the allocator's quantum). Blocks closer than that are still found, through
  // the hash table.
  explicit live_address_map(std::size_t granule) : radix_(granule) {}
  live_address_map(live_address_map const&) = delete;
  live_address_map& operator=(live_address_map const&) = delete;

  // `c` must not be in the map.
  void insert(Chunk& c)
  {
    entry& slot = nursery_[nursery_slot(c.address)];
    if (slot.chunk != nullptr) promote(*slot.chunk);
    slot = {c.address, &c};
    ++size_;
  }

  // Removes and returns the chunk at `address`; null when none is live there. Freeing
  // needs one lookup, not a find and then an erase.
  [[nodiscard]] Chunk* extract(std::uintptr_t address) noexcept
  {
    entry& slot = nursery_[nursery_slot(address)];
    if (slot.holds(address)) {
      Chunk* const c = slot.chunk;
      slot = entry{};
      --size_;
      return c;
    }
    Chunk* const c = hashed_ ? hash_.extract(address) : radix_.extract(address);
    if (c != nullptr) --size_;
    return c;
  }

  [[nodiscard]] Chunk* find(std::uintptr_t address) const noexcept
  {
    entry const& slot = nursery_[nursery_slot(address)];
    if (slot.holds(address)) return slot.chunk;
    return hashed_ ? hash_.find(address) : radix_.find(address);
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  // How many of them have left the nursery (for tests of the nursery and the bound).
  [[nodiscard]] std::size_t table_size() const noexcept { return hashed_ ? hash_.size() : radix_.size(); }
  // Whether the blocks that left the nursery are in the hash table, the radix tree having
  // outgrown its bound.
  [[nodiscard]] bool hashed() const noexcept { return hashed_; }
  // The radix tree's resident bytes (0 once hashed).
  [[nodiscard]] std::size_t radix_memory() const noexcept { return radix_.memory(); }

  // Forgets every block; the next ones start in the radix tree again.
  void clear() noexcept
  {
    nursery_.fill(entry{});
    radix_.clear();
    hash_.clear();
    hashed_ = false;
    size_ = 0;
  }

 private:
  static std::size_t nursery_slot(std::uintptr_t address) noexcept { return fibonacci_hash(address, nursery_log2); }

  // The nursery's occupant `c` moves on, making room for a younger block.
  void promote(Chunk& c)
  {
    if (hashed_) return hash_.insert({c.address, &c});
    switch (radix_.insert(c)) {
      case radix_insert::placed: return;
      case radix_insert::placed_in_new_leaf:
        if (std::size_t const m = radix_.memory(); m > radix_bytes_free && m > radix_bytes_per_block * radix_.size()) fall_back();
        return;
      case radix_insert::taken:
        fall_back();
        hash_.insert({c.address, &c});
        return;
    }
  }

  // Moves every block of the radix tree to the hash table, for good (until clear()).
  FRAGLAB_COLD void fall_back()
  {
    radix_.for_each([&](Chunk& c) { hash_.insert({c.address, &c}); });
    radix_.clear();
    hashed_ = true;
  }

  std::array<entry, std::size_t{1} << nursery_log2> nursery_{};
  bool hashed_ = false;
  address_radix_tree<Chunk> radix_;
  address_hash_table<Chunk> hash_;
  std::size_t size_ = 0;  // live blocks, in the nursery and beyond
};

}  // namespace fraglab::detail
