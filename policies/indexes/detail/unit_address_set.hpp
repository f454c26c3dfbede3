// Free chunks that all have one size, ordered by address: a bit per unit of address space
// (the largest power of two not above that size) in a four-level bitmap, and beside each
// bit a pointer to its chunk.
//
// Why: TF's bin 0 holds only 256-byte chunks, and on a program with many small blocks it
// holds tens of thousands of them (perl: up to 54,702). In a red-black tree every insert
// there descends a path of records scattered in memory, a cache miss a level
// (docs/performance.md, "Bins and address bitmaps"). Here an insert or an erase writes one
// pointer and one to four words, and the lowest address is four count-trailing-zeros away:
// the 64-ary hierarchy of summary words that TLSF uses for its free lists (Masmano et al.,
// ECRTS 2004), laid over addresses instead of size classes.
//
// Two chunks of one size never overlap, so floor(address / unit) differs for any two of
// them and keeps their order, whatever their alignment: that is a chunk's bit. Address
// space is covered by windows of 2^24 units (4 GiB at 256 bytes, 256 MiB at 16) made when a
// chunk first lands in one. A window's two large arrays are lazy_zero_arrays, so the
// operating system maps only the pages that free chunks touch: 8 bytes of pointer and 1/8
// byte of bitmap per unit of address span where such chunks lie. (Leaves holding a pointer
// per set bit halved that where chunks are spread thin, but cost a second dependent load
// per lookup: 14-37% slower.)
#pragma once

#include <fraglab/engine/detail/hot_cold.hpp>
#include <fraglab/engine/detail/lazy_zero_array.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace fraglab::detail {

template <class Chunk>
class unit_address_set {
  static constexpr unsigned levels = 4;
  static constexpr unsigned units_log2 = 24;  // units per window: 64^4 bits in four levels
  static constexpr std::size_t units = std::size_t{1} << units_log2;
  static constexpr std::size_t npos = ~std::size_t{0};

  struct window {
    std::uintptr_t number = 0;  // address >> (unit_log2 + units_log2)
    std::size_t count = 0;
    lazy_zero_array<std::uint64_t> bits0{units / 64};  // a bit per unit
    lazy_zero_array<Chunk*> chunks{units};              // the chunk at each set bit
    std::uint64_t bits1[units / 64 / 64] = {};           // a bit per word of bits0
    std::uint64_t bits2[units / 64 / 64 / 64] = {};
    std::uint64_t bits3 = 0;

    // The words of each level; level L's bit p says that word p of level L-1 is not zero.
    [[nodiscard]] std::uint64_t* level(unsigned l) noexcept
    {
      switch (l) {
        case 0: return bits0.get();
        case 1: return bits1;
        case 2: return bits2;
        default: return &bits3;
      }
    }
    [[nodiscard]] std::uint64_t const* level(unsigned l) const noexcept { return const_cast<window*>(this)->level(l); }
  };

 public:
  // Chunks of chunk_size bytes; a bit stands for the largest power of two not above it.
  explicit unit_address_set(std::size_t chunk_size) noexcept
      : chunk_size_(chunk_size), unit_log2_(static_cast<unsigned>(std::countr_zero(std::bit_floor(chunk_size | 1))))
  {
  }
  unit_address_set(unit_address_set&& o) noexcept
      : chunk_size_(o.chunk_size_), unit_log2_(o.unit_log2_), windows_(std::move(o.windows_)), last_(std::exchange(o.last_, nullptr)), size_(std::exchange(o.size_, 0))
  {
  }
  unit_address_set& operator=(unit_address_set&&) = delete;

  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t chunk_size() const noexcept { return chunk_size_; }

  // Adds c (of chunk_size(), not yet here); false, with nothing changed, when the window
  // that c's address needs cannot be allocated.
  [[nodiscard]] bool try_insert(Chunk& c) noexcept
  {
    window* w = window_for(c.address);
    if (w == nullptr) return false;
    std::size_t p = position(c.address);
    w->chunks.get()[p] = &c;
    ++w->count;
    ++size_;
    for (unsigned l = 0; l < levels; ++l, p /= 64) {
      std::uint64_t& word = w->level(l)[p / 64];
      bool const was_empty = word == 0;
      word |= bit(p % 64);
      if (!was_empty) break;
    }
    return true;
  }

  void erase(Chunk const& c) noexcept
  {
    window* w = find_window(c.address);
    std::size_t p = position(c.address);
    w->chunks.get()[p] = nullptr;
    --w->count;
    --size_;
    for (unsigned l = 0; l < levels; ++l, p /= 64) {
      std::uint64_t& word = w->level(l)[p / 64];
      word &= ~bit(p % 64);
      if (word != 0) break;
    }
  }

  // The chunk at the lowest address, or null.
  [[nodiscard]] Chunk* first() const noexcept { return first_in_windows_from(0); }

  // The chunk at the next higher address than c (which is here), or null.
  [[nodiscard]] Chunk* next(Chunk const& c) const noexcept
  {
    auto const it = window_iterator(c.address);
    std::size_t const p = first_from(**it, position(c.address) + 1);
    if (p != npos) return (*it)->chunks.get()[p];
    return first_in_windows_from(static_cast<std::size_t>(it - windows_.begin()) + 1);
  }

  [[nodiscard]] bool contains(Chunk const& c) const noexcept
  {
    auto const it = window_iterator(c.address);
    return it != windows_.end() && (*it)->number == window_number(c.address) &&
           (*it)->chunks.get()[position(c.address)] == &c;
  }

  // In address order.
  template <class F>
  void for_each(F&& f) const
  {
    for (auto const& w : windows_)
      for (std::size_t p = first_from(*w, 0); p != npos; p = first_from(*w, p + 1)) f(*w->chunks.get()[p]);
  }

  // Empty, or what is broken: a chunk of another size, a chunk whose bit is elsewhere, a
  // count that disagrees with the bits reachable from the top.
  [[nodiscard]] std::string check() const
  {
    std::size_t total = 0;
    for (auto const& w : windows_) {
      std::size_t here = 0;
      for (std::size_t p = first_from(*w, 0); p != npos; p = first_from(*w, p + 1), ++here) {
        Chunk const* c = w->chunks.get()[p];
        if (c == nullptr) return "address bitmap: a set bit without a chunk";
        if (c->size != chunk_size_) return "address bitmap: a chunk of size " + std::to_string(c->size) + " among chunks of " + std::to_string(chunk_size_);
        if (window_number(c->address) != w->number || position(c->address) != p) return "address bitmap: a chunk under another address's bit";
      }
      if (here != w->count) return "address bitmap: a window's count disagrees with its bits";
      total += here;
    }
    return total == size_ ? std::string{} : "address bitmap: the windows' counts do not add up to its size";
  }

 private:
  static constexpr std::uint64_t bit(std::size_t i) noexcept { return std::uint64_t{1} << i; }
  static unsigned lowest(std::uint64_t x) noexcept { return static_cast<unsigned>(std::countr_zero(x)); }

  [[nodiscard]] std::uintptr_t window_number(std::uintptr_t a) const noexcept { return a >> (unit_log2_ + units_log2); }
  [[nodiscard]] std::size_t position(std::uintptr_t a) const noexcept { return (a >> unit_log2_) & (units - 1); }

  // The first window whose number is not below a's.
  [[nodiscard]] auto window_iterator(std::uintptr_t a) const noexcept
  {
    std::uintptr_t const n = window_number(a);
    return std::lower_bound(windows_.begin(), windows_.end(), n, [](auto const& w, std::uintptr_t k) { return w->number < k; });
  }

  // a's window, which exists because a chunk at a is here. The last window used is
  // remembered: a program's small chunks lie in one or two windows.
  [[nodiscard]] window* find_window(std::uintptr_t a) noexcept
  {
    if (last_ != nullptr && last_->number == window_number(a)) return last_;
    return last_ = window_iterator(a)->get();
  }

  // a's window, made if there is none; null when it cannot be allocated.
  [[nodiscard]] window* window_for(std::uintptr_t a) noexcept
  {
    if (last_ != nullptr && last_->number == window_number(a)) return last_;
    auto const it = window_iterator(a);
    if (it != windows_.end() && (*it)->number == window_number(a)) return last_ = it->get();
    return last_ = new_window(it, a);
  }

  // A window for a inserted before `it`, or null (and no change) when it cannot be had.
  FRAGLAB_COLD window* new_window(typename std::vector<std::unique_ptr<window>>::const_iterator it, std::uintptr_t a) noexcept
  {
    try {
      auto w = std::make_unique<window>();
      w->number = window_number(a);
      return windows_.insert(it, std::move(w))->get();
    } catch (std::bad_alloc const&) {
      return nullptr;
    }
  }

  // The first set bit of w at position p or after, or npos: climb while the words from p on
  // are empty, then descend by the lowest set bit of each level.
  static std::size_t first_from(window const& w, std::size_t p) noexcept
  {
    unsigned l = 0;
    for (;; ++l) {
      if (p >= (units >> (6 * l))) return npos;
      std::uint64_t const here = w.level(l)[p / 64] & (~std::uint64_t{0} << (p % 64));
      if (here != 0) {
        p = (p / 64) * 64 + lowest(here);
        break;
      }
      if (l == levels - 1) return npos;
      p = p / 64 + 1;
    }
    return descend(w, p, l);
  }

  // The lowest set bit of w, which has one: four loads down from the top, where climbing
  // from position 0 as first_from does would test the words on the way up first (best_fit
  // on perl: 259.0 -> 248.8 instructions/op).
  static std::size_t lowest_in(window const& w) noexcept { return descend(w, lowest(w.bits3), levels - 1); }

  // From set bit p of level l down the lowest set bit of each level below to level 0.
  static std::size_t descend(window const& w, std::size_t p, unsigned l) noexcept
  {
    for (; l > 0; --l) p = p * 64 + lowest(w.level(l - 1)[p]);
    return p;
  }

  [[nodiscard]] Chunk* first_in_windows_from(std::size_t i) const noexcept
  {
    for (; i < windows_.size(); ++i)
      if (windows_[i]->count != 0) return windows_[i]->chunks.get()[lowest_in(*windows_[i])];
    return nullptr;
  }

  std::size_t chunk_size_;
  unsigned unit_log2_;
  std::vector<std::unique_ptr<window>> windows_;  // by number; never given back before the set is destroyed
  window* last_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace fraglab::detail
