// Size-class bins, each an ordered set by (size, address), with a bitmap of non-empty
// bins: the shape of TensorFlow's BFC allocator (tsl/framework/bfc_allocator.h).
//
// Bin b holds free chunks with size in [base * 2^b, base * 2^(b+1)); the last bin holds
// everything larger. bin(n) = min(count - 1, floor(log2(max(n, base) / base))). A best-fit
// search starts at bin(n), takes the first chunk of size >= n there, and otherwise the
// smallest chunk of the next non-empty bin, found through the bitmap: every chunk in a
// higher bin is larger than n. TF scans bins one by one; the bitmap gives the same answer
// without visiting empty bins.
#pragma once

#include "engine/detail/bits.hpp"
#include "policies/indexes/size_address_order.hpp"

#include <boost/intrusive/set.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>

namespace fraglab {

struct bins_index_params {
  std::size_t bin_base = 256;  // power of two: the lower bound of bin 0
  unsigned bin_count = 21;     // 1..64; TF's 21 bins put everything >= 256 MiB in the last
};

struct bins_index {
  static constexpr const char* name = "bins";
  using params = bins_index_params;

  template <class Chunk>
  using hook = boost::intrusive::set_member_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>>;

  template <class Chunk>
  class index {
    using set_type = boost::intrusive::multiset<
        Chunk, boost::intrusive::member_hook<Chunk, hook<Chunk>, &Chunk::free_hook>,
        boost::intrusive::compare<detail::size_address_less>>;

   public:
    explicit index(params const& p = {}) : base_shift_(detail::log2_floor(p.bin_base)), last_bin_(p.bin_count - 1)
    {
      if (!detail::is_pow2(p.bin_base)) throw std::invalid_argument("bin_base must be a power of two");
      if (p.bin_count == 0 || p.bin_count > 64) throw std::invalid_argument("bin_count must be in 1..64");
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
      return std::min(detail::log2_floor(scaled), last_bin_);
    }
    [[nodiscard]] unsigned bin_count() const noexcept { return last_bin_ + 1; }
    [[nodiscard]] std::size_t bin_lower_bound(unsigned b) const noexcept { return std::size_t{1} << (base_shift_ + b); }

    void insert(Chunk& c)
    {
      unsigned const b = bin_of(c.size);
      bins_[b].insert(c);
      nonempty_ |= std::uint64_t{1} << b;
      ++size_;
    }

    void erase(Chunk& c) noexcept
    {
      unsigned const b = bin_of(c.size);
      auto& bin = bins_[b];
      bin.erase(bin.iterator_to(c));
      if (bin.empty()) nonempty_ &= ~(std::uint64_t{1} << b);
      --size_;
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }

    Chunk* find_best(std::size_t n)
    {
      unsigned const first = bin_of(n);
      std::uint64_t candidates = nonempty_ & (~std::uint64_t{0} << first);
      while (candidates != 0) {
        unsigned const b = static_cast<unsigned>(std::countr_zero(candidates));
        candidates &= candidates - 1;
        ++steps_;
        auto& bin = bins_[b];
        auto it = b == first ? bin.lower_bound(detail::size_address_key{n, 0}, detail::size_address_less{&steps_})
                             : bin.begin();
        if (it != bin.end()) return &*it;
      }
      return nullptr;
    }

    // The chunk after c in (size, address) order, or null: c's successor in its bin, else
    // the smallest chunk of the next non-empty bin.
    Chunk* successor(Chunk& c)
    {
      ++steps_;
      unsigned const b = bin_of(c.size);
      auto& bin = bins_[b];
      auto it = std::next(bin.iterator_to(c));
      if (it != bin.end()) return &*it;
      std::uint64_t const above = b == 63 ? 0 : nonempty_ & (~std::uint64_t{0} << (b + 1));
      return above == 0 ? nullptr : &*bins_[std::countr_zero(above)].begin();
    }

    Chunk* largest()
    {
      if (nonempty_ == 0) return nullptr;
      unsigned const b = 63u - static_cast<unsigned>(std::countl_zero(nonempty_));
      auto& bin = bins_[b];
      std::size_t const top = std::prev(bin.end())->size;
      return &*bin.lower_bound(detail::size_address_key{top, 0}, detail::size_address_less{&steps_});
    }

    [[nodiscard]] bool contains(Chunk const& c) const
    {
      auto const& bin = bins_[bin_of(c.size)];
      auto it = bin.find(detail::size_address_key{c.size, c.address}, detail::size_address_less{});
      return it != bin.end() && &*it == &c;
    }

    [[nodiscard]] std::string check() const
    {
      std::size_t total = 0;
      for (unsigned b = 0; b <= last_bin_; ++b) {
        bool const flagged = (nonempty_ >> b) & 1u;
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
      for (unsigned b = 0; b <= last_bin_; ++b)
        for (auto const& c : bins_[b]) f(c);
    }

    template <class F>
    void for_each_in_bin(unsigned b, F&& f) const
    {
      for (auto const& c : bins_[b]) f(c);
    }

   private:
    unsigned base_shift_;
    unsigned last_bin_;                   // a bound kept beside the array: no size() division per lookup
    std::unique_ptr<set_type[]> bins_;
    std::uint64_t nonempty_ = 0;
    std::size_t size_ = 0;
    std::uint64_t steps_ = 0;
  };
};

}  // namespace fraglab
