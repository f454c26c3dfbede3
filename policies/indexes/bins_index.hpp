// Size-class bins, each an ordered set by (size, address), with a bitmap of non-empty
// bins: the shape of TensorFlow's BFC allocator (tsl/framework/bfc_allocator.h).
//
// With one bin per doubling (TF's bins, `bins_index`), bin b holds free chunks with size
// in [base * 2^b, base * 2^(b+1)); the last bin holds everything larger:
// bin(n) = min(count - 1, floor(log2(max(n, base) / base))). `basic_bins_index<j>` cuts
// each doubling into 2^j bins of equal width, as TLSF's second level cuts its classes
// (Masmano et al., ECRTS 2004). A best-fit search starts at bin(n), takes the first chunk
// of size >= n there, and otherwise the smallest chunk of the next non-empty bin, found
// through the bitmap: every chunk in a higher bin is larger than n. TF scans bins one by
// one; the bitmap gives the same answer without visiting empty bins.
//
// How finely the bins cut never changes a decision: every chunk sits in the one (size,
// address) order either way. It changes how tall each tree is, and so how many branches a
// descent mispredicts (docs/performance.md, "pytorch_caching's pools"). The cut is a template
// parameter, so that TF's one bin per doubling keeps its single bitmap word and formula.
//
// A bin's chunks of one size are ordered by address alone, and a bin of TF's holds few
// sizes: bin b holds the 2^b multiples of 256 in its range. While a bin of at most 64 sizes
// (multiples of `size_step`) holds many chunks (`address_bitmap_from`), they live in
// address bitmaps, one per size (detail/bin_address_bitmaps.hpp), where an insert costs no
// tree descent. The order, and so every decision, is the same either way
// (docs/performance.md, "Bins and address bitmaps"). Without AddressBitmaps each bin is
// its tree alone (detail/bin_tree_only.hpp): fine_bins_index's bins, whose sizes a bitmap
// each would map too much memory.
#pragma once

#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/engine/detail/hot_cold.hpp>
#include <fraglab/policies/indexes/detail/bin_address_bitmaps.hpp>
#include <fraglab/policies/indexes/detail/bin_bitmap.hpp>
#include <fraglab/policies/indexes/detail/bin_tree_only.hpp>
#include <fraglab/policies/indexes/size_address_order.hpp>
#include <fraglab/policies/rule_parameter.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace fraglab {

struct bins_index_params {
  std::size_t bin_base = 256;  // power of two: the lower bound of bin 0
  unsigned bin_count = 21;     // TF's 21 bins put everything >= 256 MiB in the last
  // A bin's chunks move to address bitmaps, one per size, at this many (0: never), where
  // the bin holds at most 64 sizes.
  std::size_t address_bitmap_from = 4096;
  // The sizes that have bitmaps are multiples of this (a power of two; 0: bin_base). The
  // registry sets it to the size rule's granule.
  std::size_t size_step = 0;

  static constexpr std::string_view part = "index";
  static constexpr auto parameters()
  {
    return std::tuple{
        parameter("bin_base", &bins_index_params::bin_base,
                  "bins: lower bound of bin 0 (power of two; fine_bins: the smallest chunk unless set)"),
        parameter("bin_count", &bins_index_params::bin_count, "bins: number of bins (1..64; fine_bins: 1..160, 160 unless set)"),
    };
  }
};

// 2^SubBinsLog2 bins per doubling of size, at most MaxBins bins; AddressBitmaps: whether
// a bin of few sizes may move to its address bitmaps (else each bin is its tree alone).
template <unsigned SubBinsLog2, unsigned MaxBins = 64, bool AddressBitmaps = true>
struct basic_bins_index {
  static constexpr const char* name = "bins";
  using params = bins_index_params;
  static constexpr unsigned bins_per_doubling = 1u << SubBinsLog2;
  using bitmap = detail::bin_bitmap<(MaxBins + 63) / 64>;

  template <class Chunk>
  using hook = detail::size_address_hook;

  template <class Chunk>
  class index {
    using set_type = detail::size_address_set<Chunk>;
    using bitmaps_type = std::conditional_t<AddressBitmaps, detail::bin_address_bitmaps<Chunk, set_type>,
                                            detail::bin_tree_only<Chunk, set_type>>;

    // A bin: its tree, and its address bitmaps beside it. What an operation reads of both
    // shares the first cache line; a tree alone is half a line.
    struct alignas(AddressBitmaps ? 64 : 32) bin {
      set_type tree;
      [[no_unique_address]] bitmaps_type bitmaps;
    };

   public:
    explicit index(params const& p = {}) : base_shift_(detail::log2_floor(p.bin_base)), last_bin_(p.bin_count - 1)
    {
      if (!detail::is_pow2(p.bin_base)) throw std::invalid_argument("bin_base must be a power of two");
      if (p.bin_count == 0 || p.bin_count > MaxBins)
        throw std::invalid_argument("bin_count must be in 1.." + std::to_string(MaxBins));
      if (p.bin_base < bins_per_doubling)
        throw std::invalid_argument("bin_base must be at least the bins per doubling: no bin narrower than a byte");
      // Bin b starts at bin_base x 2^(b / bins_per_doubling) or a little above: the last bin
      // must start below 2^64, where sizes end.
      if (std::size_t const most = (std::size_t{64} - base_shift_) * bins_per_doubling; p.bin_count > most)
        throw std::invalid_argument("bin_count " + std::to_string(p.bin_count) + " puts bins above 2^64: from bin_base " +
                                    std::to_string(p.bin_base) + ", at most " + std::to_string(most));
      std::size_t const step = p.size_step == 0 ? p.bin_base : p.size_step;
      if (!detail::is_pow2(step)) throw std::invalid_argument("size_step must be a power of two");
      bins_.reserve(p.bin_count);
      for (unsigned b = 0; b <= last_bin_; ++b) {
        // The multiples of step in [lower bound, next bin's lower bound), where there are at
        // most 64 (TF's bins 0-6); the last bin is open.
        std::size_t const least = (bin_lower_bound(b) + step - 1) & ~(step - 1);
        std::size_t sizes = b == last_bin_ || least >= bin_lower_bound(b + 1) ? 0 : (bin_lower_bound(b + 1) - 1 - least) / step + 1;
        if (sizes > bitmaps_type::max_sizes) sizes = 0;
        bins_.push_back(bin{set_type{}, bitmaps_type{least, step, static_cast<unsigned>(sizes), p.address_bitmap_from}});
      }
    }
    index(index&&) = default;
    ~index()
    {
      for (auto& b : bins_) b.tree.clear();
    }

    [[nodiscard]] unsigned bin_of(std::size_t n) const noexcept
    {
      std::size_t const scaled = n >> base_shift_;
      if (scaled == 0) return 0;
      unsigned const doubling = detail::log2_floor(scaled);
      if constexpr (SubBinsLog2 == 0) {
        return std::min(doubling, last_bin_);
      } else {
        // n's top 1 + SubBinsLog2 bits: bins_per_doubling plus n's step within its doubling.
        auto const top = static_cast<unsigned>(n >> (base_shift_ + doubling - SubBinsLog2));
        return std::min((doubling << SubBinsLog2) + top - bins_per_doubling, last_bin_);
      }
    }
    [[nodiscard]] unsigned bin_count() const noexcept { return last_bin_ + 1; }
    [[nodiscard]] std::size_t bin_lower_bound(unsigned b) const noexcept
    {
      std::size_t const top = bins_per_doubling + (b % bins_per_doubling);
      return top << (base_shift_ + b / bins_per_doubling - SubBinsLog2);
    }

    void insert(Chunk& c)
    {
      unsigned const b = bin_of(c.size);
      bins_[b].bitmaps.insert(bins_[b].tree, c);
      nonempty_.set(b);
      ++size_;
    }

    void erase(Chunk& c) noexcept { erase(c, c.size); }

    // c, indexed when it had size `indexed_size`, leaves.
    void erase(Chunk& c, std::size_t indexed_size) noexcept
    {
      take(bin_of(indexed_size), c, indexed_size);
      --size_;
    }

    // fresh enters and old (indexed when it had size old_size) leaves, in one step
    // (`keyed_in_place_index`): fresh takes old's node where its key falls in old's bin
    // between old's neighbours there; every chunk of another bin is on one side of both.
    void exchange(Chunk& old, std::size_t old_size, Chunk& fresh) noexcept
    {
      unsigned const from = bin_of(old_size);
      unsigned const to = bin_of(fresh.size);
      if (from == to && bins_[from].bitmaps.exchange_in_place(bins_[from].tree, old, old_size, fresh)) return;
      take(from, old, old_size);
      bins_[to].bitmaps.insert(bins_[to].tree, fresh);
      nonempty_.set(to);
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }
    // Whether bin b is in its address bitmaps now (for tests).
    [[nodiscard]] bool in_address_bitmaps(unsigned b) const noexcept { return bins_[b].bitmaps.in_use(); }

    Chunk* find_best(std::size_t n)
    {
      unsigned const first = bin_of(n);
      unsigned b = nonempty_.first_from(first);
      if (b == first) {
        ++steps_;
        if (Chunk* c = bins_[b].bitmaps.lower_bound(bins_[b].tree, n, &steps_)) return c;
        b = nonempty_.first_after(first);
      }
      if (b == bitmap::none) return nullptr;
      ++steps_;
      return bins_[b].bitmaps.first(bins_[b].tree);
    }

    // The chunk after c in (size, address) order, or null: c's successor in its bin, else
    // the smallest chunk of the next non-empty bin.
    Chunk* successor(Chunk& c)
    {
      ++steps_;
      unsigned const b = bin_of(c.size);
      if (Chunk* after = bins_[b].bitmaps.next(bins_[b].tree, c)) return after;
      unsigned const above = nonempty_.first_after(b);
      return above == bitmap::none ? nullptr : bins_[above].bitmaps.first(bins_[above].tree);
    }

    Chunk* largest()
    {
      if (nonempty_.empty()) return nullptr;
      auto& top = bins_[nonempty_.highest()];
      return top.bitmaps.largest(top.tree, &steps_);
    }

    [[nodiscard]] bool contains(Chunk const& c) const
    {
      auto const& b = bins_[bin_of(c.size)];
      return b.bitmaps.contains(b.tree, c);
    }

    [[nodiscard]] std::string check() const
    {
      std::size_t total = 0;
      if (std::string const e = nonempty_.check(); !e.empty()) return e;
      for (unsigned b = 0; b < bitmap::capacity; ++b) {
        bool const flagged = nonempty_.test(b);
        if (b > last_bin_) {
          if (flagged) return "bitmap flags bin " + std::to_string(b) + ", past the last";
          continue;
        }
        if (std::string const e = bins_[b].bitmaps.check(bins_[b].tree); !e.empty()) return "bin " + std::to_string(b) + ": " + e;
        if (flagged == bins_[b].bitmaps.empty(bins_[b].tree)) return "bitmap disagrees with bin " + std::to_string(b);
        std::string wrong;
        for_each_in_bin(b, [&](Chunk const& c) {
          if (bin_of(c.size) != b && wrong.empty()) wrong = "chunk of size " + std::to_string(c.size) + " in bin " + std::to_string(b);
          ++total;
        });
        if (!wrong.empty()) return wrong;
      }
      return total == size_ ? std::string{} : "bin sizes do not add up to the index size";
    }

    template <class F>
    void for_each(F&& f) const
    {
      for (unsigned b = 0; b <= last_bin_; ++b) for_each_in_bin(b, f);
    }

    template <class F>
    void for_each_in_bin(unsigned b, F&& f) const
    {
      bins_[b].bitmaps.for_each(bins_[b].tree, f);
    }

   private:
    // c, indexed when it had size `indexed_size`, leaves bin b.
    void take(unsigned b, Chunk& c, std::size_t indexed_size) noexcept
    {
      auto& here = bins_[b];
      here.bitmaps.erase(here.tree, c, indexed_size);
      if (here.bitmaps.empty(here.tree)) nonempty_.reset(b);
    }

    unsigned base_shift_;
    unsigned last_bin_;  // a bound kept beside the array: no size() division per lookup
    std::vector<bin> bins_;
    bitmap nonempty_;
    std::size_t size_ = 0;
    std::uint64_t steps_ = 0;
  };
};

// TensorFlow's bins: one per doubling.
using bins_index = basic_bins_index<0>;

}  // namespace fraglab
