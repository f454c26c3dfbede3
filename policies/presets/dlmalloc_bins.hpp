// dlmalloc 2.8.6's free structures and its search order (Doug Lea, malloc.c, 2.8.6, 2012):
// exact small bins, size-ordered tree bins, the designated victim ("dv") and the top chunk,
// as one fraglab free index.
//
// - Small bins: one LIFO list per chunk size below 256 bytes (sizes are multiples of 16),
//   with a bitmap of the non-empty ones.
// - Tree bins: chunks of 256 bytes and more, by size; among equal sizes the oldest first
//   (dlmalloc keeps equal sizes in a ring behind the tree node that arrived first, and takes
//   the node). dlmalloc's bitwise tries give exactly this best-fit order.
// - dv: the remainder of the last split that served a small request from a larger bin, or
//   what is left of the dv itself; a freed neighbour merges into it.
// - top: the free chunk at the end of the heap; split for any remainder; new heap memory
//   extends it; a freed neighbour merges into it.
//
// find(nb), dlmalloc's malloc(): a small request (nb < 256) takes its exact small bin; else,
// if the dv cannot hold it, the smallest chunk of the next non-empty larger small bin, else
// the smallest tree chunk, and the split's remainder becomes the new dv (the old dv is
// binned). A large request takes the best-fitting tree chunk if the dv cannot hold it or the
// tree chunk leaves less over than the dv would; its remainder is binned. Then, for either:
// the dv if it holds nb (its remainder stays the dv), the top if it is larger than nb (its
// remainder stays the top), otherwise a miss (sys_alloc).
//
// The index learns what a chunk is from the engine's calls: the chunk find() returned is
// erased and its tail remainder inserted (the remainder then takes the role find() chose);
// on a free, the dv or top erased as a neighbour makes the merged chunk inserted next the dv
// or top; a chunk inserted at the end of a region with no role is the new top (heap growth).
#pragma once

#include <fraglab/engine/part_traits.hpp>

#include <boost/intrusive/set.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

namespace fraglab::presets::dlmalloc {

inline constexpr std::size_t min_chunk = 32;        // MIN_CHUNK_SIZE on 64-bit
inline constexpr std::size_t min_large_size = 256;  // MIN_LARGE_SIZE: smaller chunks live in small bins
inline constexpr std::size_t small_bin_count = min_large_size / 16;

// A chunk is in one small bin or in the tree, so one set hook serves both; `arrival` orders
// equal sizes (and the small bins' LIFO).
struct hook : boost::intrusive::set_member_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>> {
  std::uint64_t arrival = 0;
};

struct bins_index {
  static constexpr const char* name = "dlmalloc_bins";
  struct params {};
  template <class Chunk>
  using hook = dlmalloc::hook;

  template <class Chunk>
  class index {
   public:
    static constexpr part_hook hooks = part_hook::split_override;

   private:
    struct by_size_then_arrival {
      bool operator()(Chunk const& a, Chunk const& b) const noexcept
      {
        return std::tie(a.size, a.free_hook.arrival) < std::tie(b.size, b.free_hook.arrival);
      }
    };
    struct size_key_less {
      bool operator()(Chunk const& a, std::size_t n) const noexcept { return a.size < n; }
      bool operator()(std::size_t n, Chunk const& a) const noexcept { return n < a.size; }
    };
    struct newest_first {
      bool operator()(Chunk const& a, Chunk const& b) const noexcept { return a.free_hook.arrival > b.free_hook.arrival; }
    };
    using member = boost::intrusive::member_hook<Chunk, dlmalloc::hook, &Chunk::free_hook>;
    using list_type = boost::intrusive::multiset<Chunk, member, boost::intrusive::compare<newest_first>>;
    using tree_type = boost::intrusive::multiset<Chunk, member, boost::intrusive::compare<by_size_then_arrival>>;

    enum class role : std::uint8_t { binned, dv, top };
    struct range {
      std::uintptr_t lo = 0, hi = 0;
      [[nodiscard]] bool overlaps(Chunk const& c) const noexcept { return hi > lo && c.address < hi && lo < c.end(); }
    };

   public:
    explicit index(params const& = {}) {}
    index(index&&) = default;
    ~index()
    {
      for (auto& b : small_) b.clear();
      tree_.clear();
    }

    void insert(Chunk& c)
    {
      ++size_;
      c.free_hook.arrival = ++arrivals_;
      bool const is_remainder = chosen_erased_ && c.address > chosen_.lo && c.end() == chosen_.hi;
      // An aligned allocation first gives back a front piece of the chosen chunk; its tail
      // remainder follows and must still be recognised.
      bool const front_piece = chosen_erased_ && c.address == chosen_.lo && c.end() < chosen_.hi;
      role const r = is_remainder                  ? chosen_role_
                     : absorbed_top_.overlaps(c)   ? role::top
                     : absorbed_dv_.overlaps(c)    ? role::dv
                     : c.next == nullptr           ? role::top
                                                   : role::binned;
      if (!front_piece) forget();
      switch (r) {
        case role::top:
          if (top_ != nullptr) bin(*top_);  // a new, non-contiguous top: the old one is binned
          top_ = &c;
          break;
        case role::dv:
          if (dv_ != nullptr) bin(*dv_);  // replace_dv: the old dv goes to its bin
          dv_ = &c;
          break;
        case role::binned: bin(c); break;
      }
    }

    void erase(Chunk& c) noexcept
    {
      --size_;
      if (&c == chosen_chunk_) chosen_erased_ = true;
      else if (&c == dv_) absorbed_dv_ = {c.address, c.end()};
      else if (&c == top_) absorbed_top_ = {c.address, c.end()};
      if (&c == dv_) dv_ = nullptr;
      else if (&c == top_) top_ = nullptr;
      else unbin(c);
    }

    // dlmalloc's malloc() over the free structures; null means sys_alloc.
    Chunk* find_dlmalloc(std::size_t nb)
    {
      forget();
      role r = role::binned;
      Chunk* c = choose(nb, r);
      if (c != nullptr) {
        chosen_chunk_ = c;
        chosen_ = {c->address, c->end()};
        chosen_role_ = r;
      }
      return c;
    }

    // The top splits for any remainder; everything else only for a remainder that can be a
    // chunk (dlmalloc hands out the whole chunk otherwise).
    [[nodiscard]] std::optional<bool> split_override(Chunk const& c, std::size_t nb) const noexcept
    {
      if (c.size <= nb) return false;
      if (&c == chosen_chunk_ && chosen_role_ == role::top) return true;
      return c.size - nb >= min_chunk;
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }
    [[nodiscard]] Chunk const* dv() const noexcept { return dv_; }
    [[nodiscard]] Chunk const* top() const noexcept { return top_; }

    Chunk* largest()
    {
      Chunk* best = tree_.empty() ? nullptr : &*std::prev(tree_.end());
      if (best == nullptr && smallmap_ != 0) best = &*small_[std::bit_width(smallmap_) - 1].begin();
      for (Chunk* c : {dv_, top_})
        if (c != nullptr && (best == nullptr || c->size > best->size)) best = c;
      return best;
    }

    [[nodiscard]] bool contains(Chunk const& c) const
    {
      if (&c == dv_ || &c == top_) return true;
      if (c.size < min_large_size) {
        for (Chunk const& x : small_[c.size / 16])
          if (&x == &c) return true;
        return false;
      }
      auto it = tree_.find(c);
      return it != tree_.end() && &*it == &c;
    }

    [[nodiscard]] std::string check() const
    {
      for (std::size_t b = 0; b < small_bin_count; ++b) {
        if (small_[b].empty() == ((smallmap_ >> b) & 1u)) return "dlmalloc small-bin map disagrees with bin " + std::to_string(b);
        for (Chunk const& c : small_[b])
          if (c.size / 16 != b) return "chunk of " + std::to_string(c.size) + " B in small bin " + std::to_string(b);
      }
      for (Chunk const& c : tree_)
        if (c.size < min_large_size) return "small chunk in a tree bin";
      if (dv_ != nullptr && dv_ == top_) return "dv and top are the same chunk";
      return {};
    }

    template <class F>
    void for_each(F&& f) const
    {
      for (auto const& b : small_)
        for (auto const& c : b) f(c);
      for (auto const& c : tree_) f(c);
      if (dv_ != nullptr) f(*dv_);
      if (top_ != nullptr) f(*top_);
    }

   private:
    Chunk* choose(std::size_t nb, role& r)
    {
      std::size_t const dv_size = dv_ != nullptr ? dv_->size : 0;
      ++steps_;
      if (nb < min_large_size) {
        std::size_t const b = nb / 16;
        if ((smallmap_ >> b) & 1u) return &*small_[b].begin();
        if (nb > dv_size) {
          r = role::dv;
          std::uint32_t const larger = smallmap_ & ~((std::uint32_t{2} << b) - 1);
          if (larger != 0) return &*small_[std::countr_zero(larger)].begin();
          if (!tree_.empty()) return &*tree_.begin();
        }
      } else if (!tree_.empty()) {
        auto it = tree_.lower_bound(nb, size_key_less{});
        if (it != tree_.end() && (dv_size < nb || it->size - nb < dv_size - nb)) {
          r = role::binned;
          return &*it;
        }
      }
      if (dv_ != nullptr && nb <= dv_size) {
        r = role::dv;
        return dv_;
      }
      if (top_ != nullptr && nb < top_->size) {
        r = role::top;
        return top_;
      }
      return nullptr;
    }

    void bin(Chunk& c)
    {
      if (c.size < min_large_size) {
        std::size_t const b = c.size / 16;
        small_[b].insert(small_[b].begin(), c);  // LIFO: the newest is taken first
        smallmap_ |= std::uint32_t{1} << b;
      } else {
        tree_.insert(c);
      }
    }

    void unbin(Chunk& c) noexcept
    {
      if (c.size < min_large_size) {
        std::size_t const b = c.size / 16;
        small_[b].erase(small_[b].iterator_to(c));
        if (small_[b].empty()) smallmap_ &= ~(std::uint32_t{1} << b);
      } else {
        tree_.erase(tree_.iterator_to(c));
      }
    }

    void forget() noexcept
    {
      chosen_chunk_ = nullptr;
      chosen_erased_ = false;
      chosen_ = {};
      absorbed_dv_ = {};
      absorbed_top_ = {};
    }

    std::array<list_type, small_bin_count> small_;
    std::uint32_t smallmap_ = 0;
    tree_type tree_;
    Chunk* dv_ = nullptr;
    Chunk* top_ = nullptr;
    std::size_t size_ = 0;
    std::uint64_t arrivals_ = 0;
    std::uint64_t steps_ = 0;

    Chunk* chosen_chunk_ = nullptr;  // what find() returned, until the next call
    bool chosen_erased_ = false;
    range chosen_;
    role chosen_role_ = role::binned;
    range absorbed_dv_, absorbed_top_;  // the dv / top erased as a free's neighbour
  };
};

}  // namespace fraglab::presets::dlmalloc
