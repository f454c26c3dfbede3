// A bin of a few sizes (TF's bin b holds the 2^b multiples of 256 in its range), kept
// either as its (size, address)-ordered tree or, while it holds many chunks, as one address
// bitmap (unit_address_set) per size.
//
// Why: within one size the (size, address) order is the address order, which a bitmap keeps
// without a tree. On a program that frees many small blocks a bin holds thousands of chunks,
// and every insert into its tree descends a path of records scattered in memory: tf_bfc on
// perl, after bin 0 went to a bitmap, still paid 300,000 descents into bins 1-3
// (docs/performance.md, "Bins and address bitmaps"). In the bitmaps an insert or an erase
// writes a pointer and a few words; the best fit for a request of n bytes is the lowest
// address of the first non-empty size at or above n: a count-trailing-zeros on the word of
// non-empty sizes, then four on that size's bitmap.
//
// The invariant: while the bitmaps are in use they hold every chunk of the bin's sizes and
// the tree only larger ones, so the order is the bitmaps' (size by size), then the tree's.
// The chunks move to the bitmaps when the tree holds `from` chunks, all of the bin's sizes;
// back to the tree when the bitmaps fall under a quarter of that, or at once when a chunk
// arrives that is smaller than `least` or between two sizes (a size rule whose granule is
// finer than `step`). A move that finds such a chunk, or fewer than half of `from` of the
// bin's sizes, is not tried again before the tree doubles: each move costs O(n) and comes
// at most once per n/2 operations. Short bins stay in their trees, whose few nodes are in
// the cache where the bitmaps' words would not be.
//
// The count is the tree's own size, not a count of the bin's sizes kept on every update:
// that test would cost every insert, erase and exchange of every bin (6 instructions an
// operation on scp, where no bin ever reaches `from`).
//
// The owner keeps the tree and passes it to every call, so that the bins keep their trees
// in one array.
#pragma once

#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/engine/detail/hot_cold.hpp>
#include <fraglab/policies/indexes/detail/unit_address_set.hpp>
#include <fraglab/policies/indexes/size_address_order.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace fraglab::detail {

template <class Chunk, class Tree>
class bin_address_bitmaps {
 public:
  static constexpr unsigned max_sizes = 64;  // one word of non-empty sizes

  // The sizes least + k * step for k < count (step a power of two, count at most 64);
  // count == 0 or from == 0: the bin stays a tree.
  bin_address_bitmaps(std::size_t least, std::size_t step, unsigned count, std::size_t from)
      : step_log2_(log2_floor(step)), least_(least), last_(count == 0 ? 0 : least + (count - 1) * step),
        step_mask_(step - 1), from_(count == 0 ? 0 : from), leave_below_(from_ / 4)
  {
    next_try_ = from_ == 0 ? never : from_;
    if (!is_pow2(step)) throw std::invalid_argument("a bin's size step must be a power of two");
    if (count > max_sizes) throw std::invalid_argument("a bin in address bitmaps holds at most 64 sizes");
  }
  bin_address_bitmaps(bin_address_bitmaps&&) noexcept = default;

  [[nodiscard]] bool in_use() const noexcept { return active_; }
  [[nodiscard]] std::size_t size(Tree const& tree) const noexcept { return tree.size() + in_sets_; }
  [[nodiscard]] bool empty(Tree const& tree) const noexcept { return tree.empty() && nonempty_ == 0; }

  void insert(Tree& tree, Chunk& c) noexcept
  {
    if (active_) {
      std::size_t const d = c.size - least_;  // wraps below least_
      if (d <= last_ - least_ && (d & step_mask_) == 0) {
        if (try_put(c, static_cast<unsigned>(d >> step_log2_))) return;
        to_tree(tree);  // out of memory for a window: not again before twice as many
        next_try_ = 2 * (tree.size() + 1);
      } else if (c.size > last_) {
        tree.insert(c);
        return;
      } else {
        to_tree(tree);  // smaller than least_ or between two sizes
      }
    }
    tree.insert(c);
    if (tree.size() >= next_try_) to_bitmaps(tree);
  }

  // c, indexed when it had size `indexed_size`, leaves.
  void erase(Tree& tree, Chunk& c, std::size_t indexed_size) noexcept
  {
    if (active_ && indexed_size <= last_) return take(tree, c, slot(indexed_size));
    tree.erase(tree.iterator_to(c));
  }

  // fresh takes the node of old (indexed with old_size) where its key falls in old's place
  // and neither of them is the bitmaps'; false, with nothing changed, otherwise.
  bool exchange_in_place(Tree& tree, Chunk& old, std::size_t old_size, Chunk& fresh) noexcept
  {
    if (active_ && (old_size <= last_ || fresh.size <= last_)) return false;
    return detail::exchange_in_place(tree, old, old_size, fresh);
  }

  // The first chunk of size >= n in the order, or null; `steps` counts the tree's
  // comparisons, or one for an answer from the bitmaps.
  Chunk* lower_bound(Tree& tree, std::size_t n, std::uint64_t* steps) noexcept
  {
    if (active_ && n <= last_) {
      ++*steps;
      unsigned const k = n <= least_ ? 0 : static_cast<unsigned>((n - least_ + step_mask_) >> step_log2_);
      if (std::uint64_t const above = nonempty_ >> k; above != 0) return sets_[k + lowest(above)].first();
      return tree.empty() ? nullptr : &*tree.begin();  // every chunk there is larger than last_
    }
    return detail::lower_bound_in_bin(tree, n, steps);
  }

  // The first chunk in the order, or null.
  Chunk* first(Tree& tree) noexcept
  {
    if (nonempty_ != 0) return first_in_bitmaps();
    return tree.empty() ? nullptr : &*tree.begin();
  }

  // The chunk after c in the order, or null.
  Chunk* next(Tree& tree, Chunk& c) noexcept
  {
    if (holds(c)) {
      unsigned const k = slot(c.size);
      if (Chunk* after = sets_[k].next(c)) return after;
      if (std::uint64_t const above = k + 1 < max_sizes ? nonempty_ >> (k + 1) : 0; above != 0)
        return sets_[k + 1 + lowest(above)].first();
      return tree.empty() ? nullptr : &*tree.begin();
    }
    auto const it = std::next(tree.iterator_to(c));
    return it == tree.end() ? nullptr : &*it;
  }

  // The largest chunk, lowest address among equals, or null.
  Chunk* largest(Tree& tree, std::uint64_t* steps) noexcept
  {
    if (!tree.empty()) return lower_bound(tree, std::prev(tree.end())->size, steps);
    if (nonempty_ == 0) return nullptr;
    ++*steps;
    return sets_[63 - static_cast<unsigned>(std::countl_zero(nonempty_))].first();
  }

  [[nodiscard]] bool contains(Tree const& tree, Chunk const& c) const
  {
    if (holds(c)) return sets_[slot(c.size)].contains(c);
    auto const it = tree.find(size_address_key{c.size, c.address}, size_address_less{});
    return it != tree.end() && &*it == &c;
  }

  template <class F>
  void for_each(Tree const& tree, F&& f) const
  {
    for (auto const& s : sets_) s.for_each(f);
    for (auto const& c : tree) f(c);
  }

  // Empty, or what is broken.
  [[nodiscard]] std::string check(Tree const& tree) const
  {
    std::size_t held = 0;
    for (unsigned k = 0; k < sets_.size(); ++k) {
      if (sets_[k].empty() == ((nonempty_ & bit(k)) != 0))
        return "the word of non-empty sizes disagrees with size " + std::to_string(sets_[k].chunk_size());
      if (std::string const e = sets_[k].check(); !e.empty()) return e;
      held += sets_[k].size();
    }
    if (held != in_sets_) return "the address bitmaps' sizes do not add up to their count";
    if (!active_) return held == 0 ? std::string{} : "an address bitmap not in use holds chunks";
    if (!tree.empty() && tree.begin()->size <= last_)
      return "a chunk of size " + std::to_string(tree.begin()->size) + " in the tree beside the address bitmaps up to " +
             std::to_string(last_);
    return {};
  }

 private:
  static constexpr std::size_t never = ~std::size_t{0};
  static constexpr std::uint64_t bit(unsigned k) noexcept { return std::uint64_t{1} << k; }
  static unsigned lowest(std::uint64_t x) noexcept { return static_cast<unsigned>(std::countr_zero(x)); }

  [[nodiscard]] bool on_step(std::size_t s) const noexcept { return s >= least_ && ((s - least_) & step_mask_) == 0; }
  [[nodiscard]] unsigned slot(std::size_t s) const noexcept { return static_cast<unsigned>((s - least_) >> step_log2_); }

  // Whether c, indexed, is in a bitmap.
  [[nodiscard]] bool holds(Chunk const& c) const noexcept { return active_ && c.size <= last_; }

  // The lowest chunk of the lowest non-empty size. Out of line, as are take and try_put:
  // inlined into every bin's path through allocate and deallocate, the bitmaps' code cost
  // the bins that never use them 1-2% more instructions (register pressure).
  [[gnu::noinline]] Chunk* first_in_bitmaps() const noexcept { return sets_[lowest(nonempty_)].first(); }

  // c leaves the bitmap of size k.
  [[gnu::noinline]] void take(Tree& tree, Chunk& c, unsigned k) noexcept
  {
    auto& set = sets_[k];
    set.erase(c);
    if (set.empty()) nonempty_ &= ~bit(k);
    if (--in_sets_ < leave_below_) to_tree(tree);
  }

  // c joins the bitmap of size k.
  [[nodiscard, gnu::noinline]] bool try_put(Chunk& c, unsigned k) noexcept
  {
    if (!sets_[k].try_insert(c)) return false;
    nonempty_ |= bit(k);
    ++in_sets_;
    return true;
  }

  // The tree's chunks of the bin's sizes (its front, by its order) move to the bitmaps; the
  // move is undone where a chunk is smaller or between two sizes, where memory for a
  // bitmap cannot be had, or where fewer than half of `from` moved.
  FRAGLAB_COLD void to_bitmaps(Tree& tree) noexcept
  {
    if (!on_step(tree.begin()->size) || (sets_.empty() && !make_sets())) {
      next_try_ = 2 * tree.size();
      return;
    }
    active_ = true;
    for (auto it = tree.begin(); it != tree.end() && it->size <= last_;) {
      Chunk& c = *it;
      if (!on_step(c.size)) return back_to_tree(tree);
      it = tree.erase(it);
      if (!try_put(c, slot(c.size))) {
        tree.insert(c);
        return back_to_tree(tree);
      }
    }
    if (in_sets_ < from_ / 2) back_to_tree(tree);
  }

  // The bitmaps, made when first used: a bin that never uses them costs no memory.
  FRAGLAB_COLD bool make_sets() noexcept
  {
    try {
      std::size_t const count = ((last_ - least_) >> step_log2_) + 1;
      sets_.reserve(count);
      for (std::size_t k = 0; k < count; ++k) sets_.emplace_back(least_ + (k << step_log2_));
      return true;
    } catch (std::bad_alloc const&) {
      sets_.clear();
      return false;
    }
  }

  FRAGLAB_COLD void back_to_tree(Tree& tree) noexcept
  {
    to_tree(tree);
    next_try_ = std::max(from_, 2 * tree.size());
  }

  // Back to the tree's front, in (size, address) order, so that each insert goes before the rest.
  FRAGLAB_COLD void to_tree(Tree& tree) noexcept
  {
    auto const rest = tree.begin();
    for (auto& s : sets_) {
      while (Chunk* c = s.first()) {
        s.erase(*c);
        tree.insert(rest, *c);
      }
    }
    nonempty_ = 0;
    in_sets_ = 0;
    active_ = false;
    next_try_ = from_;
  }

  // First what an operation reads while the bitmaps are not in use, so that with the bin's
  // tree header it fills one cache line.
  std::uint64_t nonempty_ = 0;  // bit k: size least_ + k * step has chunks in its bitmap
  std::size_t next_try_;        // the tree's size at which to_bitmaps is tried
  bool active_ = false;
  unsigned step_log2_;
  std::size_t least_;
  std::size_t last_;  // the largest of the bin's sizes
  std::size_t step_mask_;
  std::size_t from_;
  std::size_t leave_below_;  // from_ / 4
  std::size_t in_sets_ = 0;  // chunks in the bitmaps
  std::vector<unit_address_set<Chunk>> sets_;
};

}  // namespace fraglab::detail
