// Best fit by (size, address) over fine size bins: four per doubling, as TLSF's second
// level cuts its classes with sli = 2 (Masmano et al., ECRTS 2004), each bin a
// (size, address) tree alone (bins_index.hpp, detail/bin_tree_only.hpp), behind an address
// bitmap for the chunks of the least size, as tree_index.hpp keeps them. The classic
// best_fit preset's index.
//
// Why not one tree: where a program's blocks span many sizes, one (size, address) tree of
// every free chunk is deep, and its descents mispredict: best fit over one tree on
// haskell-web-server (blocks of 8 B to 32 KiB) mispredicted 5.2 branches an operation under
// callgrind's model, 2.5 of them in descents. A bin holds a quarter of a doubling, so its
// tree is a few levels deep; a request whose bin is empty takes the next non-empty bin's
// first chunk, found through a bitmap and the tree's header, with no descent; and within
// its own bin a request needs none where the bin's least chunk fits or its greatest does
// not (lower_bound_in_bin). On haskell-web-server: 2.5 mispredictions an operation, 285
// instructions instead of 335 (docs/performance.md, "best_fit: fine bins behind the least
// size").
//
// Why the front: bins cost every operation a bin number and a bitmap update, which a
// program of many small blocks pays on nearly every operation (perl: 3.9 of 4.4 million
// inserts are of 16-byte chunks); through bins' own bitmaps per size, best
// fit on perl ran 1,340 million instructions where one tree and its front ran 1,015. While
// there are many chunks of the least size they live in one address bitmap
// (unit_address_set) outside the bins, one comparison away: 985 million. The bins' bitmaps
// per size stay off, since sizes a quarter of a doubling apart would each map their
// chunks' span: on the steady pattern at a million live blocks best fit peaked at 10.9 GB
// with them, 3.2 GB with the front alone.
//
// The order, and so every decision, is the one (size, address) order either way: the
// bitmap's chunks all have the least size and come first (the front moves back into the
// bins at once when a smaller chunk arrives), and every chunk of a higher bin is larger
// than every chunk of a lower one. The front's rules are least_size_front's: it takes the
// least-size chunks when the bins hold `least_size_bitmap_from` of them and none smaller,
// and gives them back under a quarter of that.
//
// Why from 1024 chunks, where tree_index's front starts at 64: the bitmap keeps a pointer
// per unit of address span (16 bytes here), in pages the kernel maps on first write, so
// each 8 KiB of span its chunks visit costs a page fault once per allocator (12-15 us on
// one instance of the development VM, 2-3 us on another). tree_index's front thins one
// tree of every size, whose descents it shortens for every request; here the least size
// has a bin of its own, whose tree of a thousand chunks is about ten levels deep. From 64,
// `fraglab replay` (a fresh allocator a run) of `fraglab gen phases` took 160-195 ns an
// operation on the slower instance, from 1024 81-84, and perl 85 -> 67; on an allocator
// kept warm all nine real traces stayed level, though perl runs 9% more instructions.
#pragma once

#include <fraglab/engine/detail/hot_cold.hpp>
#include <fraglab/policies/indexes/bins_index.hpp>
#include <fraglab/policies/indexes/detail/unit_address_set.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fraglab {

struct fine_bins_index_params : bins_index_params {
  fine_bins_index_params() : bins_index_params{16, 160} {}
  std::size_t least_size = 16;                // the smallest chunk the size rule makes; the registry sets it
  std::size_t least_size_bitmap_from = 1024;  // 0: never; above, why not tree_index's 64
};

struct fine_bins_index {
  using bins = basic_bins_index<2, 160, false>;  // from a base of 16 B, 160 bins reach 16 TiB
  static constexpr const char* name = "fine_bins";
  static constexpr unsigned bins_per_doubling = bins::bins_per_doubling;
  using params = fine_bins_index_params;

  template <class Chunk>
  using hook = bins::hook<Chunk>;

  template <class Chunk>
  class index {
   public:
    explicit index(params const& p = {})
        : bins_(p), least_(p.least_size), from_(p.least_size_bitmap_from), next_try_(from_ == 0 ? never : from_), front_(p.least_size)
    {
      if (p.least_size == 0) throw std::invalid_argument("least_size must be at least 1");
    }
    index(index&&) = default;

    void insert(Chunk& c)
    {
      if (active_) {
        if (c.size == least_) {
          if (front_.try_insert(c)) return;
          to_bins();  // out of memory for a window: not again before twice as many
          next_try_ = 2 * (least_in_bins_ + 1);
        } else if (c.size < least_) {
          to_bins();
        }
      }
      bins_.insert(c);
      if (c.size == least_ && ++least_in_bins_ >= next_try_) to_front();
    }

    void erase(Chunk& c) noexcept { leave(c, c.size); }

    // fresh enters and old (indexed when it had size old_size) leaves, in one step
    // (`keyed_in_place_index`); through the bins where neither is the front's.
    void exchange(Chunk& old, std::size_t old_size, Chunk& fresh) noexcept
    {
      if (!active_ || (old_size != least_ && fresh.size > least_)) {
        bins_.exchange(old, old_size, fresh);
        if (old_size == least_ || fresh.size == least_) [[unlikely]]
          least_in_bins_ += static_cast<std::size_t>(fresh.size == least_) - static_cast<std::size_t>(old_size == least_);
        return;
      }
      leave(old, old_size);
      insert(fresh);
    }

    [[nodiscard]] std::size_t size() const noexcept { return bins_.size() + front_.size(); }
    [[nodiscard]] std::uint64_t steps() const noexcept { return bins_.steps() + front_steps_; }
    // Whether the chunks of the least size are in their address bitmap now (for tests).
    [[nodiscard]] bool least_size_in_bitmap() const noexcept { return active_; }

    Chunk* find_best(std::size_t n)
    {
      if (active_ && n <= least_ && !front_.empty()) {
        ++front_steps_;
        return front_.first();
      }
      return bins_.find_best(n);
    }

    // The chunk after c in (size, address) order, or null.
    Chunk* successor(Chunk& c)
    {
      if (!holds(c)) return bins_.successor(c);
      ++front_steps_;
      if (Chunk* after = front_.next(c)) return after;
      return bins_.find_best(0);
    }

    // The largest chunk, lowest address among equals.
    Chunk* largest()
    {
      if (bins_.size() != 0) return bins_.largest();
      ++front_steps_;
      return front_.first();
    }

    [[nodiscard]] bool contains(Chunk const& c) const { return holds(c) ? front_.contains(c) : bins_.contains(c); }

    [[nodiscard]] std::string check() const
    {
      if (std::string const e = bins_.check(); !e.empty()) return e;
      std::size_t least_here = 0, smallest = ~std::size_t{0};
      bins_.for_each([&](Chunk const& c) {
        least_here += c.size == least_ ? 1 : 0;
        smallest = c.size < smallest ? c.size : smallest;
      });
      if (least_here != least_in_bins_) return "the count of least-size chunks in the bins is off";
      if (!active_) return front_.empty() ? std::string{} : "an address bitmap not in use holds chunks";
      if (smallest <= least_)
        return "a chunk of size " + std::to_string(smallest) + " in the bins beside the address bitmap of " + std::to_string(least_);
      return front_.check();
    }

    template <class F>
    void for_each(F&& f) const
    {
      if (active_) front_.for_each(f);
      bins_.for_each(f);
    }

   private:
    static constexpr std::size_t never = ~std::size_t{0};

    // Whether c, indexed, is in the front's bitmap.
    [[nodiscard]] bool holds(Chunk const& c) const noexcept { return active_ && c.size == least_; }

    // c, indexed when it had size `indexed_size`, leaves.
    void leave(Chunk& c, std::size_t indexed_size) noexcept
    {
      if (indexed_size == least_) {
        if (active_) {
          front_.erase(c);
          if (front_.size() < from_ / 4) to_bins();
          return;
        }
        --least_in_bins_;
      }
      bins_.erase(c, indexed_size);
    }

    // The bins' chunks of the least size move to the bitmap, if none is smaller and every
    // window they need can be had.
    FRAGLAB_COLD void to_front() noexcept
    {
      Chunk* c = bins_.find_best(0);
      if (c == nullptr || c->size != least_) {
        next_try_ = 2 * least_in_bins_;
        return;
      }
      active_ = true;
      for (; c != nullptr && c->size == least_; c = bins_.find_best(0)) {
        bins_.erase(*c);
        if (!front_.try_insert(*c)) {  // out of memory: back, and not again before twice as many
          bins_.insert(*c);
          to_bins();
          next_try_ = 2 * least_in_bins_;
          return;
        }
        --least_in_bins_;
      }
    }

    // Back into the bins, in address order.
    FRAGLAB_COLD void to_bins() noexcept
    {
      least_in_bins_ += front_.size();
      while (Chunk* c = front_.first()) {
        front_.erase(*c);
        bins_.insert(*c);
      }
      active_ = false;
      next_try_ = from_ == 0 ? never : from_;
    }

    bins::index<Chunk> bins_;
    std::size_t least_;
    std::size_t from_;
    std::size_t next_try_;           // least_in_bins_ at which to_front is tried
    std::size_t least_in_bins_ = 0;  // chunks of the least size in the bins
    bool active_ = false;
    std::uint64_t front_steps_ = 0;
    detail::unit_address_set<Chunk> front_;
  };
};

}  // namespace fraglab
