// Address -> chunk lookup for live blocks, so deallocate() finds its chunk in O(1).
//
// A Boost.Intrusive unordered_set over the chunks' own hooks: inserting and erasing never
// allocate. The bucket array is owned here and doubled when the load factor passes 1,
// which allocates only while the number of live blocks reaches a new high, never in the
// steady state. TF instead keeps a per-region vector of chunk handles, one per 256-byte
// granule; that costs memory proportional to the reserved bytes, which a simulated 80 GiB
// pool cannot afford on a small host.
#pragma once

#include "engine/detail/bits.hpp"

#include <boost/intrusive/unordered_set.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace fraglab::detail {

template <class Chunk>
class live_address_map {
  struct address_of {
    using type = std::uintptr_t;
    type operator()(Chunk const& c) const noexcept { return c.address; }
  };
  struct address_hash {
    std::size_t operator()(std::uintptr_t a) const noexcept { return static_cast<std::size_t>(mix64(a)); }
  };
  using hook_option = boost::intrusive::member_hook<Chunk, decltype(Chunk::live_hook), &Chunk::live_hook>;
  using set_type = boost::intrusive::unordered_set<Chunk, hook_option, boost::intrusive::key_of_value<address_of>,
                                                   boost::intrusive::hash<address_hash>,
                                                   boost::intrusive::power_2_buckets<true>,
                                                   boost::intrusive::constant_time_size<true>>;
  using bucket_type = typename set_type::bucket_type;
  using bucket_traits = typename set_type::bucket_traits;

  static constexpr std::size_t initial_buckets = 64;

 public:
  live_address_map()
      : buckets_(std::make_unique<bucket_type[]>(initial_buckets)),
        bucket_count_(initial_buckets),
        set_(bucket_traits(buckets_.get(), bucket_count_))
  {
  }
  live_address_map(live_address_map const&) = delete;
  live_address_map& operator=(live_address_map const&) = delete;
  ~live_address_map() { set_.clear(); }

  void insert(Chunk& c)
  {
    if (set_.size() + 1 > bucket_count_) grow();
    set_.insert(c);
  }

  void erase(Chunk& c) noexcept { set_.erase(set_.iterator_to(c)); }

  [[nodiscard]] Chunk* find(std::uintptr_t address) noexcept
  {
    auto it = set_.find(address);
    return it == set_.end() ? nullptr : &*it;
  }

  [[nodiscard]] std::size_t size() const noexcept { return set_.size(); }

  void clear() noexcept { set_.clear(); }

 private:
  void grow()
  {
    std::size_t const n = bucket_count_ * 2;
    auto fresh = std::make_unique<bucket_type[]>(n);
    set_.rehash(bucket_traits(fresh.get(), n));
    buckets_ = std::move(fresh);
    bucket_count_ = n;
  }

  std::unique_ptr<bucket_type[]> buckets_;
  std::size_t bucket_count_;
  set_type set_;
};

}  // namespace fraglab::detail
