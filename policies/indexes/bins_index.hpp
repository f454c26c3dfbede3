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
// Bin 0's chunks of its lower bound's size (all of TF's bin 0: its sizes are multiples of
// 256) come first in its order and are ordered by address alone. While there are many
// (`address_bitmap_from`) and none smaller, they live in an address bitmap
// (detail/least_size_front.hpp) where an insert costs no tree descent. The order, and so
// every decision, is the same either way (docs/performance.md, tenth round).
#pragma once

#include "engine/detail/bits.hpp"
#include "engine/detail/hot_cold.hpp"
#include "policies/indexes/detail/bin_bitmap.hpp"
#include "policies/indexes/detail/least_size_front.hpp"
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
  // Bin 0's chunks of size bin_base move to an address bitmap at this many (0: never).
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
        : base_shift_(detail::log2_floor(p.bin_base)), last_bin_(p.bin_count - 1), front_(p.bin_base, p.address_bitmap_from)
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
      take(bin_of(c.size), c, c.size);
      --size_;
    }

    // fresh enters and old (indexed when it had size old_size) leaves, in one step
    // (`keyed_in_place_index`): fresh takes old's node where its key falls in old's bin
    // between old's neighbours there; every chunk of another bin is on one side of both.
    void exchange(Chunk& old, std::size_t old_size, Chunk& fresh) noexcept
    {
      unsigned const from = bin_of(old_size);
      unsigned const to = bin_of(fresh.size);
      if (from == to) {
        bool const in_place = from == 0 ? front_.exchange_in_place(bins_[0], old, old_size, fresh)
                                        : detail::exchange_in_place(bins_[from], old, old_size, fresh);
        if (in_place) return;
      }
      take(from, old, old_size);
      put(to, fresh);
      nonempty_.set(to);
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }
    // Whether bin 0's chunks of size bin_base are in their address bitmap now (for tests).
    [[nodiscard]] bool least_size_in_bitmap() const noexcept { return front_.in_bitmap(); }

    Chunk* find_best(std::size_t n)
    {
      unsigned const first = bin_of(n);
      unsigned b = nonempty_.first_from(first);
      if (b == first) {
        ++steps_;
        if (b == 0) {
          if (Chunk* c = front_.lower_bound(bins_[0], n, &steps_)) return c;
        } else {
          auto& bin = bins_[b];
          auto it = bin.lower_bound(detail::size_address_key{n, 0}, detail::size_address_less{&steps_});
          if (it != bin.end()) return &*it;
        }
        b = nonempty_.first_after(first);
      }
      if (b == bitmap::none) return nullptr;
      ++steps_;
      return &*bins_[b].begin();  // b > 0: bin 0's front is never reached from below
    }

    // The chunk after c in (size, address) order, or null: c's successor in its bin, else
    // the smallest chunk of the next non-empty bin.
    Chunk* successor(Chunk& c)
    {
      ++steps_;
      unsigned const b = bin_of(c.size);
      if (b == 0) {
        if (Chunk* after = front_.next(bins_[0], c)) return after;
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
      if (nonempty_.highest() == 0) return front_.largest(bins_[0], &steps_);
      auto& bin = bins_[nonempty_.highest()];
      std::size_t const top = std::prev(bin.end())->size;
      return &*bin.lower_bound(detail::size_address_key{top, 0}, detail::size_address_less{&steps_});
    }

    [[nodiscard]] bool contains(Chunk const& c) const
    {
      if (bin_of(c.size) == 0) return front_.contains(bins_[0], c);
      auto const& bin = bins_[bin_of(c.size)];
      auto it = bin.find(detail::size_address_key{c.size, c.address}, detail::size_address_less{});
      return it != bin.end() && &*it == &c;
    }

    [[nodiscard]] std::string check() const
    {
      std::size_t total = 0;
      if (std::string const e = nonempty_.check(); !e.empty()) return e;
      if (std::string const e = front_.check(bins_[0]); !e.empty()) return e;
      for (unsigned b = 0; b < bitmap::capacity; ++b) {
        bool const flagged = nonempty_.test(b);
        if (b > last_bin_) {
          if (flagged) return "bitmap flags bin " + std::to_string(b) + ", past the last";
          continue;
        }
        bool const empty = b == 0 ? front_.empty(bins_[0]) : bins_[b].empty();
        if (flagged == empty) return "bitmap disagrees with bin " + std::to_string(b);
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
      if (b == 0) front_.for_each(bins_[0], f);
      else for (auto const& c : bins_[b]) f(c);
    }

   private:
    void put(unsigned b, Chunk& c) noexcept
    {
      if (b == 0) front_.insert(bins_[0], c);
      else bins_[b].insert(c);
    }

    // c, indexed when it had size `indexed_size`, leaves bin b.
    void take(unsigned b, Chunk& c, std::size_t indexed_size) noexcept
    {
      bool empty;
      if (b == 0) {
        front_.erase(bins_[0], c, indexed_size);
        empty = front_.empty(bins_[0]);
      } else {
        auto& bin = bins_[b];
        bin.erase(bin.iterator_to(c));
        empty = bin.empty();
      }
      if (empty) nonempty_.reset(b);
    }

    unsigned base_shift_;
    unsigned last_bin_;  // a bound kept beside the array: no size() division per lookup
    std::unique_ptr<set_type[]> bins_;
    detail::least_size_front<Chunk, set_type> front_;  // bin 0's chunks of size bin_base
    bitmap nonempty_;
    std::size_t size_ = 0;
    std::uint64_t steps_ = 0;
  };
};

// TensorFlow's bins: one per doubling.
using bins_index = basic_bins_index<0>;

}  // namespace fraglab
