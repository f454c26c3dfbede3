// One doubly linked free list, kept in LIFO, FIFO or address order: the classic
// sequential-fit structures of Wilson, Johnstone, Neely & Boles, "Dynamic Storage
// Allocation: A Survey and Critical Review" (IWMM 1995), section 3.5. Every search is a
// scan, by definition of these policies; address-ordered insertion is a scan too. The
// augmented address-ordered tree makes the same first-fit and next-fit decisions in
// O(log n).
//
// Ties go to the chunk met first in list order (for the address-ordered list, the lowest
// address, which is what the trees choose).
//
// Next fit: over an address-ordered list the rover is an address (the search resumes at the
// first free chunk at or above the last allocation, as over the tree); over LIFO and FIFO
// lists it is a list position, moved to the successor when its chunk leaves the list.
#pragma once

#include <boost/intrusive/list.hpp>

#include <cstdint>
#include <string>

namespace fraglab {

enum class list_order { lifo, fifo, address };

template <list_order Order>
struct list_index {
  static constexpr const char* name = Order == list_order::lifo   ? "list_lifo"
                                      : Order == list_order::fifo ? "list_fifo"
                                                                  : "list_ao";
  struct params {};

  template <class Chunk>
  using hook = boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>>;

  template <class Chunk>
  class index {
    using list_type = boost::intrusive::list<Chunk, boost::intrusive::member_hook<Chunk, hook<Chunk>, &Chunk::free_hook>,
                                             boost::intrusive::constant_time_size<true>>;
    using iterator = typename list_type::iterator;

   public:
    explicit index(params const& = {}) {}
    index(index&&) = default;
    ~index() { list_.clear(); }

    void insert(Chunk& c)
    {
      if constexpr (Order == list_order::lifo) {
        list_.push_front(c);
      } else if constexpr (Order == list_order::fifo) {
        list_.push_back(c);
      } else {
        auto it = list_.begin();
        while (it != list_.end() && it->address < c.address) {
          ++it;
          ++steps_;
        }
        list_.insert(it, c);
      }
    }

    void erase(Chunk& c) noexcept
    {
      auto it = list_.iterator_to(c);
      if (rover_ == &c) {
        auto next = std::next(it);
        rover_ = next == list_.end() ? nullptr : &*next;
      }
      list_.erase(it);
    }

    // In place, for the address-ordered list only (a LIFO or FIFO list would put a split's
    // remainder at an end): a chunk whose size or start changes without passing another
    // keeps its position, as K&R's malloc shrinks a block without unlinking it. Nothing to do.
    void resized(Chunk&, std::size_t /*old_size*/) noexcept requires(Order == list_order::address) {}

    [[nodiscard]] std::size_t size() const noexcept { return list_.size(); }
    [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }

    Chunk* find_first(std::size_t n) { return scan_first(list_.begin(), list_.end(), n); }

    Chunk* find_next(std::size_t n)
    {
      Chunk* c = nullptr;
      if constexpr (Order == list_order::address) {
        auto from = list_.begin();
        while (from != list_.end() && from->address < rover_address_) {
          ++from;
          ++steps_;
        }
        c = scan_first(from, list_.end(), n);
        if (c == nullptr) c = scan_first(list_.begin(), from, n);
        if (c != nullptr) rover_address_ = c->address;
      } else {
        auto from = rover_ == nullptr ? list_.begin() : list_.iterator_to(*rover_);
        c = scan_first(from, list_.end(), n);
        if (c == nullptr) c = scan_first(list_.begin(), from, n);
        if (c != nullptr) rover_ = c;
      }
      return c;
    }

    Chunk* find_best(std::size_t n)
    {
      Chunk* best = nullptr;
      for (auto& c : list_) {
        ++steps_;
        if (c.size >= n && (best == nullptr || c.size < best->size)) {
          best = &c;
          if (c.size == n) break;  // nothing later can be better: ties go to list order
        }
      }
      return best;
    }

    Chunk* largest()
    {
      Chunk* best = nullptr;
      for (auto& c : list_) {
        ++steps_;
        if (best == nullptr || c.size > best->size) best = &c;
      }
      return best;
    }

    [[nodiscard]] bool contains(Chunk const& c) const
    {
      for (auto const& x : list_)
        if (&x == &c) return true;
      return false;
    }

    [[nodiscard]] std::string check() const
    {
      if constexpr (Order == list_order::address) {
        Chunk const* prev = nullptr;
        for (auto const& c : list_) {
          if (prev != nullptr && !(prev->address < c.address)) return "address order broken";
          prev = &c;
        }
      }
      if (rover_ != nullptr && !contains(*rover_)) return "rover points outside the list";
      return {};
    }

    template <class F>
    void for_each(F&& f) const
    {
      for (auto const& c : list_) f(c);
    }

   private:
    Chunk* scan_first(iterator from, iterator to, std::size_t n)
    {
      for (; from != to; ++from) {
        ++steps_;
        if (from->size >= n) return &*from;
      }
      return nullptr;
    }

    list_type list_;
    Chunk* rover_ = nullptr;            // LIFO/FIFO next fit
    std::uintptr_t rover_address_ = 0;  // address-ordered next fit
    std::uint64_t steps_ = 0;
  };
};

using lifo_list_index = list_index<list_order::lifo>;
using fifo_list_index = list_index<list_order::fifo>;
using address_ordered_list_index = list_index<list_order::address>;

}  // namespace fraglab
