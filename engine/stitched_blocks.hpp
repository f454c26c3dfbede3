// Stitched blocks: virtual ranges, each mapped onto physical pages that belong to other
// blocks' ranges too. GMLake (Guo et al., "GMLake: Efficient and Transparent GPU Memory
// Defragmentation for Large-scale DNN Training with Virtual Memory Stitching", ASPLOS 2024)
// serves a request that no free block holds by mapping several free blocks' pages, in
// turn, into a new virtual range; the pages stay in the blocks they came from.
//
// A page is named by its address in the range that first mapped it (its primitive block's
// segment): that range owns the memory, and the engine keeps its chunks. This class keeps
// what lies beside them:
// - which stitched blocks map each page, and whether the page is in use (covered by a live
//   chunk of the engine: a block handed out, or a page a stitched block in use has pinned);
// - per stitched block, how many of its pages are in use: it can serve a request again only
//   while it is not handed out and none of its pages is in use (GMLake's free_fused_blocks;
//   the others are its fragmented_free_fused_blocks);
// - the reusable blocks ordered by (stream, size, address), for a best-fit search;
// - the virtual bytes the stitched ranges take, which are not physical memory: a
//   stitched block maps pages already counted in the reserved bytes.
// A block is dropped when a page it maps goes back to the backend (at once, or, while it is
// handed out, at its free), and when a garbage collection drops every block not in use.
#pragma once

#include <fraglab/engine/chunk.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fraglab {

class stitched_blocks {
 public:
  struct range {
    std::uintptr_t address;
    std::size_t size;
  };

  struct block {
    std::uintptr_t address = 0;  // its own virtual range
    std::size_t size = 0;        // pages.size() x the page size
    stream_id stream = 0;
    std::vector<std::uintptr_t> pages;  // the pages it maps, in order
    std::size_t used_pages = 0;         // of its pages, those in use
    bool handed_out = false;
    bool doomed = false;                // a page it maps went back while it was handed out
    std::size_t requested = 0;          // while handed out: the caller's size
    std::vector<range> pinned;          // while handed out: the engine chunks it holds live
  };

  // `unmapped(address, size)` is called as each block goes, to take its virtual range away.
  using unmap_function = std::function<void(std::uintptr_t, std::size_t)>;

  explicit stitched_blocks(std::size_t page, unmap_function unmapped = {}) : page_(page), unmapped_(std::move(unmapped)) {}

  [[nodiscard]] std::size_t page() const noexcept { return page_; }

  // A new block at `address`, handed out, mapping `pages` (free now: the caller pins them
  // and then calls used()).
  block& add(std::uintptr_t address, stream_id stream, std::vector<std::uintptr_t> pages, std::size_t requested)
  {
    auto b = std::make_unique<block>();
    b->address = address;
    b->size = pages.size() * page_;
    b->stream = stream;
    b->pages = std::move(pages);
    b->handed_out = true;
    b->requested = requested;
    for (std::uintptr_t p : b->pages) pages_[p].mappers.push_back(b.get());
    bytes_ += b->size;
    peak_bytes_ = std::max(peak_bytes_, bytes_);
    block& ref = *b;
    blocks_.emplace(address, std::move(b));
    return ref;
  }

  [[nodiscard]] block* find(std::uintptr_t address) const
  {
    auto const it = blocks_.find(address);
    return it == blocks_.end() ? nullptr : it->second.get();
  }

  // The smallest reusable block of `stream` with at least `size` bytes (lowest address on
  // ties), or null.
  [[nodiscard]] block* smallest_reusable(stream_id stream, std::size_t size) const
  {
    block key;
    key.stream = stream;
    key.size = size;
    auto const it = reusable_.lower_bound(&key);
    return it == reusable_.end() || (*it)->stream != stream ? nullptr : *it;
  }

  // b, reusable, is handed out for a request of `requested` bytes.
  void hand_out(block& b, std::size_t requested)
  {
    reusable_.erase(&b);
    b.handed_out = true;
    b.requested = requested;
  }

  // b, handed out, comes back (its pinned chunks already freed and marked free).
  void take_back(block& b)
  {
    b.handed_out = false;
    b.requested = 0;
    b.pinned.clear();
    if (b.doomed) drop(b);
    else if (b.used_pages == 0) reusable_.insert(&b);
  }

  // The pages in [address, address + n) are in use now / free now.
  void used(std::uintptr_t address, std::size_t n) { mark(address, n, true); }
  void freed(std::uintptr_t address, std::size_t n) { mark(address, n, false); }

  // The backend took [address, address + n) back: every block mapping a page there goes
  // (a block handed out goes at its free). The listener of observed_backend.
  void released(std::uintptr_t address, std::size_t n)
  {
    std::vector<block*> gone;
    for (auto it = pages_.lower_bound(address); it != pages_.end() && it->first < address + n; ++it)
      for (block* b : it->second.mappers)
        if (std::find(gone.begin(), gone.end(), b) == gone.end()) gone.push_back(b);
    for (block* b : gone) {
      if (b->handed_out) b->doomed = true;
      else drop(*b);
    }
  }

  // Garbage collection: drops every block not handed out. Returns the virtual bytes freed.
  std::size_t drop_idle()
  {
    std::vector<block*> idle;
    for (auto const& [address, b] : blocks_)
      if (!b->handed_out) idle.push_back(b.get());
    std::size_t freed_bytes = 0;
    for (block* b : idle) {
      freed_bytes += b->size;
      drop(*b);
    }
    return freed_bytes;
  }

  // Drops every block, handed out or not (the allocator goes).
  void drop_all()
  {
    while (!blocks_.empty()) drop(*blocks_.begin()->second);
  }

  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::size_t peak_bytes() const noexcept { return peak_bytes_; }
  [[nodiscard]] std::size_t count() const noexcept { return blocks_.size(); }
  [[nodiscard]] std::size_t reusable_count() const noexcept { return reusable_.size(); }

  // Empty when consistent; else the first violation. `in_use(page)` says whether the engine
  // has the page under a live chunk.
  template <class InUse>
  [[nodiscard]] std::string check(InUse&& in_use) const
  {
    for (auto const& [p, entry] : pages_) {
      if (entry.in_use != in_use(p)) return "stitched page " + std::to_string(p) + ": its use flag disagrees with the engine";
      if (entry.mappers.empty()) return "stitched page " + std::to_string(p) + " has no block mapping it";
    }
    for (auto const& [address, b] : blocks_) {
      std::size_t used_pages = 0;
      for (std::uintptr_t p : b->pages) used_pages += pages_.at(p).in_use ? 1 : 0;
      if (used_pages != b->used_pages) return "stitched block " + std::to_string(address) + ": wrong count of pages in use";
      bool const should_be_reusable = !b->handed_out && b->used_pages == 0;
      if (should_be_reusable != (reusable_.count(b.get()) == 1))
        return "stitched block " + std::to_string(address) + ": reusable set disagrees with its state";
      if (b->handed_out && b->pinned.empty()) return "stitched block " + std::to_string(address) + " is handed out but pins nothing";
    }
    return {};
  }

 private:
  struct page_entry {
    bool in_use = false;
    std::vector<block*> mappers;
  };

  struct by_stream_size_address {
    bool operator()(block const* a, block const* b) const noexcept
    {
      if (a->stream != b->stream) return a->stream < b->stream;
      if (a->size != b->size) return a->size < b->size;
      return a->address < b->address;
    }
  };

  void mark(std::uintptr_t address, std::size_t n, bool in_use)
  {
    for (auto it = pages_.lower_bound(address); it != pages_.end() && it->first < address + n; ++it) {
      if (it->second.in_use == in_use) continue;
      it->second.in_use = in_use;
      for (block* b : it->second.mappers) {
        if (in_use) {
          if (b->used_pages++ == 0 && !b->handed_out) reusable_.erase(b);
        } else if (--b->used_pages == 0 && !b->handed_out) {
          reusable_.insert(b);
        }
      }
    }
  }

  void drop(block& b)
  {
    reusable_.erase(&b);
    for (std::uintptr_t p : b.pages) {
      auto const it = pages_.find(p);
      auto& m = it->second.mappers;
      m.erase(std::find(m.begin(), m.end(), &b));
      if (m.empty()) pages_.erase(it);
    }
    bytes_ -= b.size;
    if (unmapped_) unmapped_(b.address, b.size);
    blocks_.erase(b.address);
  }

  std::size_t page_;
  unmap_function unmapped_;
  std::map<std::uintptr_t, page_entry> pages_;
  std::unordered_map<std::uintptr_t, std::unique_ptr<block>> blocks_;
  std::set<block*, by_stream_size_address> reusable_;
  std::size_t bytes_ = 0, peak_bytes_ = 0;
};

}  // namespace fraglab
