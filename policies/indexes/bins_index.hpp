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
// How finely the bins cut never changes a decision: every chunk sits in the one
// (size, address) order either way. It changes how tall each tree is, and so how many
// branches a descent mispredicts (docs/performance.md, fifth round). The cut is a template
// parameter, so that TF's one bin per doubling keeps its single bitmap word and formula.
//
// Bin 0 may hold only chunks of its lower bound's size (TF's 256-byte chunks: its sizes
// are multiples of 256), and then nothing but their addresses orders it. When it holds
// many (`address_bitmap_from`), they move to an address bitmap (detail/unit_address_set.hpp)
// where an insert costs no tree descent; they move back to the tree when they fall to a
// quarter of that, or when a chunk of another size arrives. The order, and so every
// decision, is the same either way; the tree stays for short bins, where its few nodes are
// in the cache and the bitmap's would not be (docs/performance.md, tenth round).
#pragma once

#include "engine/detail/bits.hpp"
#include "engine/detail/hot_cold.hpp"
#include "policies/indexes/detail/bin_bitmap.hpp"
#include "policies/indexes/detail/unit_address_set.hpp"
#include "policies/indexes/size_address_order.hpp"

#include <boost/intrusive/set.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>

namespace fraglab {

struct bins_index_params {
  std::size_t bin_base = 256;  // power of two: the lower bound of bin 0
  unsigned bin_count = 21;     // TF's 21 bins put everything >= 256 MiB in the last
  // Bin 0 moves to an address bitmap at this many chunks, all of size bin_base (0: never).
  std::size_t address_bitmap_from = 4096;
};

// 2^SubBinsLog2 bins per doubling of size, at most MaxBins bins.
template <unsigned SubBinsLog2, unsigned MaxBins = 64>
struct basic_bins_index {
  static constexpr const char* name = "bins";
  using params = bins_index_params;
  static constexpr unsigned bins_per_doubling = 1u << SubBinsLog2;
  using bitmap = detail::bin_bitmap<(MaxBins + 63) / 64>;

  template <class Chunk>
  using hook = boost::intrusive::set_member_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>>;

  template <class Chunk>
  class index {
    using set_type = boost::intrusive::multiset<
        Chunk, boost::intrusive::member_hook<Chunk, hook<Chunk>, &Chunk::free_hook>,
        boost::intrusive::compare<detail::size_address_less>>;

   public:
    explicit index(params const& p = {})
        : base_shift_(detail::log2_floor(p.bin_base)), last_bin_(p.bin_count - 1), bitmap_from_(p.address_bitmap_from),
          unit_bin_(p.bin_base)
    {
      if (!detail::is_pow2(p.bin_base)) throw std::invalid_argument("bin_base must be a power of two");
      if (p.bin_count == 0 || p.bin_count > bitmap::capacity)
        throw std::invalid_argument("bin_count must be in 1.." + std::to_string(bitmap::capacity));
      if (p.bin_base < bins_per_doubling)
        throw std::invalid_argument("bin_base must be at least the bins per doubling: no bin narrower than a byte");
      bins_ = std::make_unique<set_type[]>(p.bin_count);
    }
    index(index&&) = default;
    ~index()
    {
      if (bins_ != nullptr)
        for (unsigned b = 0; b <= last_bin_; ++b) bins_[b].clear();
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
      put(b, c);
      nonempty_.set(b);
      ++size_;
    }

    void erase(Chunk& c) noexcept
    {
      take(bin_of(c.size), c);
      --size_;
    }

    // fresh enters and old (indexed when it had size old_size) leaves, in one step
    // (`keyed_in_place_index`): fresh takes old's node where its key falls in old's bin
    // between old's neighbours there; every chunk of another bin is on one side of both.
    void exchange(Chunk& old, std::size_t old_size, Chunk& fresh) noexcept
    {
      unsigned const from = bin_of(old_size);
      unsigned const to = bin_of(fresh.size);
      if (from == to && !in_bitmap(from)) {
        auto& bin = bins_[from];
        auto const it = bin.iterator_to(old);
        detail::size_address_key const was{old_size, old.address};
        if (detail::fits_between_neighbours(bin, it, was, detail::size_address_less::key(fresh))) {
          if (&old != &fresh) bin.replace_node(it, fresh);
          return;
        }
      }
      take(from, old);
      put(to, fresh);
      nonempty_.set(to);
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }
    // Whether bin 0 is in its address bitmap now (for tests and diagnostics).
    [[nodiscard]] bool first_bin_in_bitmap() const noexcept { return bitmap_mode_; }

    Chunk* find_best(std::size_t n)
    {
      unsigned const first = bin_of(n);
      unsigned b = nonempty_.first_from(first);
      if (b == first) {
        ++steps_;
        if (in_bitmap(b)) {
          if (n <= unit_bin_.unit()) return unit_bin_.first();
        } else {
          auto& bin = bins_[b];
          auto it = bin.lower_bound(detail::size_address_key{n, 0}, detail::size_address_less{&steps_});
          if (it != bin.end()) return &*it;
        }
        b = nonempty_.first_after(first);
      }
      if (b == bitmap::none) return nullptr;
      ++steps_;
      return &*bins_[b].begin();
    }

    // The chunk after c in (size, address) order, or null: c's successor in its bin, else
    // the smallest chunk of the next non-empty bin.
    Chunk* successor(Chunk& c)
    {
      ++steps_;
      unsigned const b = bin_of(c.size);
      if (in_bitmap(b)) {
        if (Chunk* after = unit_bin_.next(c)) return after;
      } else {
        auto& bin = bins_[b];
        auto it = std::next(bin.iterator_to(c));
        if (it != bin.end()) return &*it;
      }
      unsigned const above = nonempty_.first_after(b);
      return above == bitmap::none ? nullptr : &*bins_[above].begin();
    }

    Chunk* largest()
    {
      if (nonempty_.empty()) return nullptr;
      if (in_bitmap(nonempty_.highest())) return unit_bin_.first();  // one size: the lowest address
      auto& bin = bins_[nonempty_.highest()];
      std::size_t const top = std::prev(bin.end())->size;
      return &*bin.lower_bound(detail::size_address_key{top, 0}, detail::size_address_less{&steps_});
    }

    [[nodiscard]] bool contains(Chunk const& c) const
    {
      if (in_bitmap(bin_of(c.size))) return unit_bin_.contains(c);
      auto const& bin = bins_[bin_of(c.size)];
      auto it = bin.find(detail::size_address_key{c.size, c.address}, detail::size_address_less{});
      return it != bin.end() && &*it == &c;
    }

    [[nodiscard]] std::string check() const
    {
      std::size_t total = 0;
      if (std::string const e = nonempty_.check(); !e.empty()) return e;
      if (bitmap_mode_) {
        if (std::string const e = unit_bin_.check(); !e.empty()) return e;
        if (!bins_[0].empty()) return "bin 0's tree holds chunks while its address bitmap is in use";
        if (nonempty_.test(0) == unit_bin_.empty()) return "bitmap disagrees with bin 0's address bitmap";
        total += unit_bin_.size();
      }
      for (unsigned b = 0; b < bitmap::capacity; ++b) {
        bool const flagged = nonempty_.test(b);
        if (b > last_bin_) {
          if (flagged) return "bitmap flags bin " + std::to_string(b) + ", past the last";
          continue;
        }
        if (b == 0 && bitmap_mode_) continue;
        if (flagged == bins_[b].empty()) return "bitmap disagrees with bin " + std::to_string(b);
        for (auto const& c : bins_[b]) {
          if (bin_of(c.size) != b) return "chunk of size " + std::to_string(c.size) + " in bin " + std::to_string(b);
          ++total;
        }
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
      if (in_bitmap(b)) unit_bin_.for_each(f);
      else for (auto const& c : bins_[b]) f(c);
    }

   private:
    [[nodiscard]] bool in_bitmap(unsigned b) const noexcept { return b == 0 && bitmap_mode_; }

    void put(unsigned b, Chunk& c) noexcept
    {
      if (!in_bitmap(b)) {
        bins_[b].insert(c);
        if (b == 0 && bitmap_from_ != 0 && bins_[0].size() >= bitmap_from_) to_bitmap();
        return;
      }
      if (c.size == unit_bin_.unit() && unit_bin_.try_insert(c)) return;
      to_tree();
      bins_[0].insert(c);
    }

    void take(unsigned b, Chunk& c) noexcept
    {
      if (!in_bitmap(b)) {
        auto& bin = bins_[b];
        bin.erase(bin.iterator_to(c));
        if (bin.empty()) nonempty_.reset(b);
        return;
      }
      unit_bin_.erase(c);
      if (unit_bin_.empty()) nonempty_.reset(0);
      if (unit_bin_.size() < bitmap_from_ / 4) to_tree();
    }

    // Bin 0's chunks move to the address bitmap if they all have its unit size (the tree's
    // ends, by its order) and every window they need can be had.
    FRAGLAB_COLD void to_bitmap() noexcept
    {
      auto& bin = bins_[0];
      if (bin.begin()->size != unit_bin_.unit() || std::prev(bin.end())->size != unit_bin_.unit()) return;
      for (auto it = bin.begin(); it != bin.end();) {
        Chunk& c = *it;
        it = bin.erase(it);
        if (!unit_bin_.try_insert(c)) {
          bin.insert(c);
          bitmap_mode_ = true;
          to_tree();
          return;
        }
      }
      bitmap_mode_ = true;
    }

    // Back to the tree, in address order, so that each insert goes to the tree's end.
    FRAGLAB_COLD void to_tree() noexcept
    {
      auto& bin = bins_[0];
      while (Chunk* c = unit_bin_.first()) {
        unit_bin_.erase(*c);
        bin.insert(bin.end(), *c);
      }
      bitmap_mode_ = false;
    }

    unsigned base_shift_;
    unsigned last_bin_;  // a bound kept beside the array: no size() division per lookup
    std::size_t bitmap_from_;
    bool bitmap_mode_ = false;
    detail::unit_address_set<Chunk> unit_bin_;  // bin 0 while bitmap_mode_
    std::unique_ptr<set_type[]> bins_;
    bitmap nonempty_;
    std::size_t size_ = 0;
    std::uint64_t steps_ = 0;
  };
};

// TensorFlow's bins: one per doubling.
using bins_index = basic_bins_index<0>;

}  // namespace fraglab
