// Live blocks by address: an open-addressing hash table with linear probing and
// backward-shift deletion (Knuth, TAOCP vol. 3, 6.4 Algorithm R), so that no tombstones
// accumulate over millions of malloc/free pairs. Its memory comes from mmap.
#pragma once

#include <fraglab/tracer/detail/raw_memory.hpp>

#include <cstddef>
#include <cstdint>

namespace fraglab::tracer::detail {

struct live_block {
  std::uintptr_t address = 0;  // 0: empty
  std::uint64_t size = 0;
  std::uint32_t slot = 0;
  std::uint8_t log2_alignment = 0;
};

class pointer_table {
 public:
  // Inserts or overwrites; false only when no memory can be mapped for growth.
  bool insert(live_block const& b) noexcept
  {
    if (2 * (count_ + 1) > capacity_ && !grow()) return false;
    std::size_t i = home(b.address);
    while (table_[i].address != 0 && table_[i].address != b.address) i = (i + 1) & (capacity_ - 1);
    if (table_[i].address == 0) ++count_;
    table_[i] = b;
    return true;
  }

  // Removes the block at `address` into `out`; false when it is not live.
  bool take(std::uintptr_t address, live_block& out) noexcept
  {
    if (capacity_ == 0) return false;
    std::size_t i = home(address);
    while (table_[i].address != address) {
      if (table_[i].address == 0) return false;
      i = (i + 1) & (capacity_ - 1);
    }
    out = table_[i];
    // Shift later members of the probe run back into the hole when their home allows it.
    for (std::size_t j = (i + 1) & (capacity_ - 1);; j = (j + 1) & (capacity_ - 1)) {
      if (table_[j].address == 0) break;
      std::size_t const h = home(table_[j].address);
      bool const movable = i <= j ? (h <= i || h > j) : (h <= i && h > j);
      if (movable) {
        table_[i] = table_[j];
        i = j;
      }
    }
    table_[i] = live_block{};
    --count_;
    return true;
  }

  template <class F>
  void for_each(F f) const noexcept
  {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (table_[i].address != 0) f(table_[i]);
  }

  // `f` may change anything but the address, which places the block in the table.
  template <class F>
  void for_each_mutable(F f) noexcept
  {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (table_[i].address != 0) f(table_[i]);
  }

  std::size_t size() const noexcept { return count_; }

 private:
  std::size_t home(std::uintptr_t a) const noexcept
  {
    return static_cast<std::size_t>(((a >> 4) * 0x9e3779b97f4a7c15ull) >> 20) & (capacity_ - 1);
  }

  bool grow() noexcept
  {
    std::size_t const capacity = capacity_ ? 2 * capacity_ : 1 << 14;
    auto* table = static_cast<live_block*>(map_zeroed(capacity * sizeof(live_block)));
    if (!table) return false;
    live_block* old = table_;
    std::size_t const old_capacity = capacity_;
    table_ = table;
    capacity_ = capacity;
    count_ = 0;
    for (std::size_t i = 0; i < old_capacity; ++i)
      if (old[i].address != 0) insert(old[i]);
    unmap(old, old_capacity * sizeof(live_block));
    return true;
  }

  live_block* table_ = nullptr;
  std::size_t capacity_ = 0, count_ = 0;
};

}  // namespace fraglab::tracer::detail
