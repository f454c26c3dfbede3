// The live-address map's home for blocks that leave its nursery: a radix tree over
// address / granule, so that a lookup is two dependent loads and no probe sequence. TF's
// RegionManager does the same with a handle per 256-byte granule of each region; here the
// granule is the allocator's quantum, and only the parts of the span that hold blocks cost
// memory.
//
// Three levels. A block's key is its address divided by the granule:
//   - the top bits choose a directory, created on first use and remembered, so that a run
//     whose blocks lie in one span of 2^30 granules (16 GiB at a 16-byte granule) compares
//     one word;
//   - a directory is 2^21 leaf pointers (a lazy_zero_array), so only the pages that hold a
//     leaf pointer are ever resident (one page a 2^18 granules);
//   - a leaf is one page of 512 chunk pointers, allocated when a block first lands in it and
//     released when its last block leaves.
// So its memory is a page for each 512-granule stretch that holds a block: dense where the
// blocks are small and packed, as in the traced C programs' heaps, and up to a page a block
// where they are large and far apart. The caller bounds that (live_address_map.hpp), and a
// tree over its bound is emptied into the hash table.
//
// Behind the nursery, against the hash table: tlsf on ssh 21.2 -> 17.9 ns/op, where two frees
// in five miss the nursery (docs/performance.md, "The address map").
#pragma once

#include <fraglab/engine/detail/hot_cold.hpp>
#include <fraglab/engine/detail/lazy_zero_array.hpp>

#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace fraglab::detail {

// What an insertion did, so that the caller checks its memory bound only when it grew.
enum class radix_insert { placed, placed_in_new_leaf, taken };

template <class Chunk>
class address_radix_tree {
  static constexpr unsigned leaf_log2 = 9;  // 512 pointers: one 4 KiB page
  static constexpr unsigned directory_log2 = 21;
  static constexpr std::size_t page_bytes = 4096;
  static constexpr std::size_t spare_leaves_kept = 8;

  struct leaf {
    std::array<Chunk*, std::size_t{1} << leaf_log2> slots{};
    std::uint32_t live = 0;
  };

  // 2^21 leaf pointers of address space; the kernel maps a page on its first write.
  class directory {
   public:
    explicit directory(std::uintptr_t top) : top_(top) {}

    [[nodiscard]] std::uintptr_t top() const noexcept { return top_; }
    [[nodiscard]] leaf** leaves() const noexcept { return leaves_.get(); }
    // Notes that entry `i` is about to be written; true the first time its page is.
    [[nodiscard]] bool first_write_to_page_of(std::size_t i)
    {
      auto const page = i / entries_per_page;
      if (touched_[page]) return false;
      touched_[page] = true;
      return true;
    }
    // Calls f(entry) for every entry on a page written so far, without faulting in the rest.
    template <class F>
    void for_each_written_entry(F&& f) const
    {
      for (std::size_t page = 0; page < touched_.size(); ++page)
        if (touched_[page])
          for (std::size_t i = page * entries_per_page; i < (page + 1) * entries_per_page; ++i) f(leaves_.get()[i]);
    }

   private:
    static constexpr std::size_t entries = std::size_t{1} << directory_log2;
    static constexpr std::size_t entries_per_page = page_bytes / sizeof(leaf*);
    std::uintptr_t top_;
    lazy_zero_array<leaf*> leaves_{entries};
    std::vector<bool> touched_ = std::vector<bool>(entries / entries_per_page);
  };

 public:
  // `granule`: a power of two no larger than the distance between any two live blocks.
  explicit address_radix_tree(std::size_t granule) : granule_log2_(static_cast<unsigned>(std::countr_zero(granule))) {}
  address_radix_tree(address_radix_tree const&) = delete;
  address_radix_tree& operator=(address_radix_tree const&) = delete;
  ~address_radix_tree() { clear(); }

  // Places `c` at its address, unless another block holds that granule's entry (which
  // live blocks at least a granule apart never do).
  radix_insert insert(Chunk& c)
  {
    std::uintptr_t const key = c.address >> granule_log2_;
    leaf*& l = leaf_entry_for_insert(key);
    radix_insert done = radix_insert::placed;
    if (l == nullptr) [[unlikely]] {
      l = new_leaf(index_of(key));
      done = radix_insert::placed_in_new_leaf;
    }
    Chunk*& slot = l->slots[key & leaf_mask];
    if (slot != nullptr) [[unlikely]] return radix_insert::taken;
    slot = &c;
    ++l->live;
    ++size_;
    return done;
  }

  // Removes and returns the chunk that starts at `address`; null when none does.
  [[nodiscard]] Chunk* extract(std::uintptr_t address) noexcept
  {
    return at(address, [this](leaf** entry, Chunk** slot) {
      leaf* const l = *entry;
      Chunk* const c = std::exchange(*slot, nullptr);
      --size_;
      if (--l->live == 0) [[unlikely]] release(*entry);
      return c;
    });
  }

  [[nodiscard]] Chunk* find(std::uintptr_t address) const noexcept
  {
    return at(address, [](leaf**, Chunk** slot) { return *slot; });
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t leaves() const noexcept { return leaves_; }
  [[nodiscard]] static constexpr std::size_t leaf_bytes() noexcept { return sizeof(leaf); }
  // Resident bytes: leaves in use and kept spare, and the directory pages written.
  [[nodiscard]] std::size_t memory() const noexcept
  {
    return (leaves_ + spares_.size()) * sizeof(leaf) + directory_pages_ * page_bytes;
  }

  // Calls f(chunk) for every chunk held, in no particular order.
  template <class F>
  void for_each(F&& f) const
  {
    for (auto const& d : directories_)
      d->for_each_written_entry([&](leaf* l) {
        if (l != nullptr)
          for (Chunk* c : l->slots)
            if (c != nullptr) f(*c);
      });
  }

  // Forgets every block and gives all memory back.
  void clear() noexcept
  {
    for (auto const& d : directories_) d->for_each_written_entry([](leaf* l) { delete l; });
    for (leaf* l : spares_) delete l;
    spares_.clear();
    directories_.clear();
    current_ = nullptr;
    current_directory_ = nullptr;
    current_top_ = no_top;
    leaves_ = 0;
    directory_pages_ = 0;
    size_ = 0;
  }

 private:
  static constexpr std::uintptr_t leaf_mask = (std::uintptr_t{1} << leaf_log2) - 1;
  static constexpr std::uintptr_t directory_mask = (std::uintptr_t{1} << directory_log2) - 1;
  static constexpr std::uintptr_t no_top = ~std::uintptr_t{0};  // no key's top bits are all ones

  static std::uintptr_t top_of(std::uintptr_t key) noexcept { return key >> (leaf_log2 + directory_log2); }
  static std::size_t index_of(std::uintptr_t key) noexcept { return (key >> leaf_log2) & directory_mask; }

  // found(entry, slot) with the directory entry and the slot that hold the chunk that
  // starts at `address`, or null when no chunk does. (A callback rather than a returned
  // pair: the pair's null test was not folded into the lookup's, a free cost one more
  // instruction.)
  template <class Found>
  Chunk* at(std::uintptr_t address, Found&& found) const noexcept
  {
    std::uintptr_t const key = address >> granule_log2_;
    leaf** const entry = leaf_entry(key);
    if (entry == nullptr || *entry == nullptr) return nullptr;
    Chunk** const slot = &(*entry)->slots[key & leaf_mask];
    if (*slot == nullptr || (*slot)->address != address) return nullptr;
    return found(entry, slot);
  }

  // The directory entry for `key`'s leaf; null when no directory covers it.
  leaf** leaf_entry(std::uintptr_t key) const noexcept
  {
    if (top_of(key) != current_top_) [[unlikely]] {
      if (!switch_to(top_of(key))) return nullptr;
    }
    return &current_[index_of(key)];
  }

  leaf*& leaf_entry_for_insert(std::uintptr_t key)
  {
    if (top_of(key) != current_top_) [[unlikely]] {
      if (!switch_to(top_of(key))) add_directory(top_of(key));
    }
    return current_[index_of(key)];
  }

  FRAGLAB_COLD bool switch_to(std::uintptr_t top) const noexcept
  {
    for (auto const& d : directories_)
      if (d->top() == top) {
        current_ = d->leaves();
        current_directory_ = d.get();
        current_top_ = top;
        return true;
      }
    return false;
  }

  FRAGLAB_COLD void add_directory(std::uintptr_t top)
  {
    directories_.push_back(std::make_unique<directory>(top));
    current_ = directories_.back()->leaves();
    current_directory_ = directories_.back().get();
    current_top_ = top;
  }

  // A leaf for entry `i` of the current directory.
  FRAGLAB_COLD leaf* new_leaf(std::size_t i)
  {
    if (current_directory_->first_write_to_page_of(i)) ++directory_pages_;
    ++leaves_;
    if (!spares_.empty()) {
      leaf* l = spares_.back();
      spares_.pop_back();
      return l;
    }
    return new leaf;
  }

  // An empty leaf's slots are all null already, so a spare is reused as it is.
  FRAGLAB_COLD void release(leaf*& entry) noexcept
  {
    --leaves_;
    if (spares_.size() < spare_leaves_kept) {
      spares_.push_back(entry);  // capacity reserved below, so this never throws
    } else {
      delete entry;
    }
    entry = nullptr;
  }

  unsigned granule_log2_;
  // The leaves of the directory of the last key looked up, kept beside the directory so
  // that a lookup loads them in one step.
  mutable leaf** current_ = nullptr;
  mutable directory* current_directory_ = nullptr;
  mutable std::uintptr_t current_top_ = no_top;
  std::vector<std::unique_ptr<directory>> directories_;
  std::vector<leaf*> spares_ = [] {
    std::vector<leaf*> v;
    v.reserve(spare_leaves_kept);
    return v;
  }();
  std::size_t leaves_ = 0;           // in use
  std::size_t directory_pages_ = 0;  // directory pages written
  std::size_t size_ = 0;
};

}  // namespace fraglab::detail
