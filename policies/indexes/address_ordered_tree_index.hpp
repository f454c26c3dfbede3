// Free chunks in address order in a balanced search tree augmented with the largest free
// size in each subtree, so that address-ordered first fit and next fit cost O(log n)
// instead of the classic O(n) list scan, while choosing exactly the same chunk.
//
// The augmentation is the "interval tree" technique of Cormen et al. (CLRS 14.2). The tree
// is a treap (Seidel & Aragon 1996) whose priorities are a hash of the chunk's place when it
// is inserted, its region's creation order and its offset there: expected O(log n) depth;
// a set of chunks inserted makes one shape in any order; and the same sequence of operations
// makes the same shape wherever the backend put the regions (a hash of the address itself
// made the shape, and so the steps and instructions counted, follow the OS's placement,
// which changes from run to run: docs/performance.md, "The augmented first fit"). Written by
// hand because Boost.Intrusive's trees rebalance without a hook that could keep a subtree
// maximum up to date.
//
// Splitting and merging leave a free chunk where it was in address order, so the engine
// asks for them in place (`resized`): a split hands out the chunk's head under a new record
// and the indexed chunk, now the remainder, keeps its node and priority; a merge grows a
// chunk where it is. Either only refreshes the maxima above it, and stops as soon as one is
// unchanged. This is how K&R's and dlmalloc's address-ordered lists shrink a block without
// unlinking it; it changes no decision, because first fit and next fit depend on addresses
// and sizes only.
//
// The lowest chunk is kept at hand: first fit takes it without a descent whenever it holds
// the request, as it does every request of the least size. An insertion compares against
// it; erasing it steps to its successor. perl's replay under first_fit descended 3.08 nodes
// an operation, 0.74 with it.
//
// Next fit keeps a roving address: a search starts at the lowest free chunk at or above the
// address of the previous allocation and wraps to the lowest address (Knuth's "next fit",
// TAOCP 2.5; Wilson et al. 1995 section 3.5).
#pragma once

#include <fraglab/engine/detail/bits.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace fraglab {

template <class Chunk>
struct augmented_tree_hook {
  Chunk* parent = nullptr;
  Chunk* left = nullptr;
  Chunk* right = nullptr;
  std::size_t subtree_max = 0;  // largest chunk size in the subtree rooted here
  std::uint64_t priority = 0;   // heap order; kept while the chunk changes in place
};

struct address_ordered_tree_index {
  static constexpr const char* name = "ao_tree";
  struct params {};

  template <class Chunk>
  using hook = augmented_tree_hook<Chunk>;

  template <class Chunk>
  class index {
   public:
    explicit index(params const& = {}) {}
    index(index&& o) noexcept : root_(o.root_), lowest_(o.lowest_), size_(o.size_), rover_(o.rover_), steps_(o.steps_)
    {
      o.root_ = o.lowest_ = nullptr;
    }

    void insert(Chunk& c)
    {
      auto& h = c.free_hook;
      h.left = h.right = nullptr;
      h.subtree_max = c.size;
      h.priority = priority_of(c);
      Chunk* parent = nullptr;
      Chunk** link = &root_;
      while (*link != nullptr) {
        parent = *link;
        link = c.address < parent->address ? &parent->free_hook.left : &parent->free_hook.right;
      }
      *link = &c;
      h.parent = parent;
      while (h.parent != nullptr && h.parent->free_hook.priority < h.priority) rotate_up(c);
      // The maxima above c never counted it: to them its subtree grew from what they hold.
      propagate(c, 0, h.subtree_max);
      if (lowest_ == nullptr || c.address < lowest_->address) lowest_ = &c;
      ++size_;
    }

    void erase(Chunk& c) noexcept
    {
      auto& h = c.free_hook;
      if (&c == lowest_) lowest_ = successor_of_lowest();
      while (h.left != nullptr || h.right != nullptr) {
        Chunk* child = h.left == nullptr                                               ? h.right
                       : h.right == nullptr                                            ? h.left
                       : h.left->free_hook.priority > h.right->free_hook.priority ? h.left
                                                                                       : h.right;
        rotate_up(*child);
      }
      Chunk* const parent = h.parent;
      replace_child(parent, &c, nullptr);
      h.parent = nullptr;
      --size_;
      // Unless c held its parent's maximum, no maximum changes.
      if (parent == nullptr || c.size < parent->free_hook.subtree_max) return;
      std::size_t const before = parent->free_hook.subtree_max;
      update(*parent);
      propagate(*parent, before, parent->free_hook.subtree_max);
    }

    // c, indexed with `old_size` bytes, has another size and perhaps another start, with no
    // indexed chunk between its old and new start: its place in the order is the same.
    void resized(Chunk& c, std::size_t old_size) noexcept
    {
      std::size_t const before = c.free_hook.subtree_max;
      if (c.size >= before) c.free_hook.subtree_max = c.size;
      else if (old_size == before) update(c);  // c held its subtree's maximum and shrank
      propagate(c, before, c.free_hook.subtree_max);
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }

    // Lowest-address chunk of size >= n: the lowest chunk of all where it fits, which needs no
    // descent (a request of the least size fits every chunk), else found from the root.
    Chunk* find_first(std::size_t n)
    {
      if (lowest_ != nullptr && lowest_->size >= n) {
        ++steps_;
        return lowest_;
      }
      return first_in(root_, n);
    }

    Chunk* find_next(std::size_t n)
    {
      Chunk* c = first_at_or_after(root_, rover_, n);
      if (c == nullptr) c = first_in(root_, n);
      if (c != nullptr) rover_ = c->address;
      return c;
    }

    // The largest chunk, lowest address among equals.
    Chunk* largest()
    {
      Chunk* x = root_;
      if (x == nullptr) return nullptr;
      std::size_t const top = x->free_hook.subtree_max;
      for (;;) {
        ++steps_;
        Chunk* l = x->free_hook.left;
        if (l != nullptr && l->free_hook.subtree_max == top) x = l;
        else if (x->size == top) return x;
        else x = x->free_hook.right;
      }
    }

    [[nodiscard]] bool contains(Chunk const& c) const
    {
      Chunk const* x = root_;
      while (x != nullptr && x != &c) x = c.address < x->address ? x->free_hook.left : x->free_hook.right;
      return x == &c;
    }

    [[nodiscard]] std::string check() const
    {
      std::size_t count = 0;
      std::string err = check_subtree(root_, nullptr, count);
      if (err.empty() && count != size_) err = "tree holds " + std::to_string(count) + " chunks, size says " + std::to_string(size_);
      Chunk const* lowest = root_;
      while (lowest != nullptr && lowest->free_hook.left != nullptr) lowest = lowest->free_hook.left;
      if (err.empty() && lowest != lowest_) err = "the lowest chunk kept is not the tree's lowest";
      return err;
    }

    template <class F>
    void for_each(F&& f) const
    {
      walk(root_, f);
    }

   private:
    // Offsets below 2^40 (regions up to 1 TiB) keep the creation order's bits apart; beyond,
    // two places may share a priority, which costs balance, never order.
    static std::uint64_t priority_of(Chunk const& c) noexcept
    {
      auto const* r = c.region();
      return detail::mix64((c.address - r->base) ^ (std::uint64_t{r->serial} << 40));
    }

    // The chunk after the lowest in address order, which has no left child: the lowest of
    // its right subtree, else its parent.
    Chunk* successor_of_lowest() const noexcept
    {
      Chunk* s = lowest_->free_hook.right;
      if (s == nullptr) return lowest_->free_hook.parent;
      while (s->free_hook.left != nullptr) s = s->free_hook.left;
      return s;
    }

    static std::size_t max_of(Chunk const* c) noexcept { return c == nullptr ? 0 : c->free_hook.subtree_max; }

    static void update(Chunk& c) noexcept
    {
      c.free_hook.subtree_max = std::max({c.size, max_of(c.free_hook.left), max_of(c.free_hook.right)});
    }

    // The maximum of c's subtree went from `before` to `after`: the maxima above follow,
    // as far as they change. An ancestor's new maximum is known without reading its other
    // child where c's grew past it, or where c never held it (then nothing changes); only
    // where c held it and shrank is the other child read. Growth (an insertion, a merge)
    // and most shrinking (a split of a chunk that is not its subtree's largest) so walk up
    // without touching the siblings of the path, which are where its cache misses were.
    static void propagate(Chunk& c, std::size_t before, std::size_t after) noexcept
    {
      for (Chunk* p = c.free_hook.parent; p != nullptr && before != after; p = p->free_hook.parent) {
        std::size_t const held = p->free_hook.subtree_max;
        if (after >= held) p->free_hook.subtree_max = after;
        else if (before < held) return;
        else update(*p);
        before = held;
        after = p->free_hook.subtree_max;
      }
    }

    void replace_child(Chunk* parent, Chunk* old_child, Chunk* new_child) noexcept
    {
      if (parent == nullptr) root_ = new_child;
      else if (parent->free_hook.left == old_child) parent->free_hook.left = new_child;
      else parent->free_hook.right = new_child;
      if (new_child != nullptr) new_child->free_hook.parent = parent;
    }

    // Rotates x above its parent, keeping address order, and refreshes both maxima. x's
    // subtree becomes p's, so its maximum is p's, or its own size where p's did not count
    // it yet (an insertion rotates before it propagates): no need to read x's other child.
    void rotate_up(Chunk& x) noexcept
    {
      Chunk& p = *x.free_hook.parent;
      Chunk* grand = p.free_hook.parent;
      std::size_t const whole = std::max(p.free_hook.subtree_max, x.size);
      if (p.free_hook.left == &x) {
        p.free_hook.left = x.free_hook.right;
        if (x.free_hook.right != nullptr) x.free_hook.right->free_hook.parent = &p;
        x.free_hook.right = &p;
      } else {
        p.free_hook.right = x.free_hook.left;
        if (x.free_hook.left != nullptr) x.free_hook.left->free_hook.parent = &p;
        x.free_hook.left = &p;
      }
      p.free_hook.parent = &x;
      replace_child(grand, &p, &x);
      update(p);
      x.free_hook.subtree_max = whole;
    }

    Chunk* first_in(Chunk* x, std::size_t n)
    {
      if (max_of(x) < n) return nullptr;
      for (;;) {
        ++steps_;
        Chunk* l = x->free_hook.left;
        if (max_of(l) >= n) x = l;
        else if (x->size >= n) return x;
        else x = x->free_hook.right;
      }
    }

    // Lowest-address chunk with address >= from and size >= n. Walks one root-to-leaf
    // path and finishes with at most one first_in() on a subtree known to hold a fit.
    Chunk* first_at_or_after(Chunk* x, std::uintptr_t from, std::size_t n)
    {
      Chunk* pending = nullptr;  // nearest ancestor above `from` whose right subtree is still to try
      while (x != nullptr && max_of(x) >= n) {
        ++steps_;
        if (x->address < from) {
          x = x->free_hook.right;
        } else {
          // x and its right subtree lie above `from`; anything in its left subtree that
          // qualifies comes first, so remember x and go left.
          if (pending_fit(x, n)) pending = x;
          x = x->free_hook.left;
        }
      }
      // Nothing qualified in the left spine below the last pending node.
      if (pending == nullptr) return nullptr;
      if (pending->size >= n) return pending;
      return first_in(pending->free_hook.right, n);
    }

    static bool pending_fit(Chunk const* x, std::size_t n) noexcept
    {
      return x->size >= n || max_of(x->free_hook.right) >= n;
    }

    template <class F>
    static void walk(Chunk const* x, F& f)
    {
      if (x == nullptr) return;
      walk(x->free_hook.left, f);
      f(*x);
      walk(x->free_hook.right, f);
    }

    static std::string check_subtree(Chunk const* x, Chunk const* parent, std::size_t& count)
    {
      if (x == nullptr) return {};
      auto const& h = x->free_hook;
      if (h.parent != parent) return "parent link broken at " + std::to_string(x->address);
      if (h.left != nullptr && !(h.left->address < x->address)) return "address order broken";
      if (h.right != nullptr && !(x->address < h.right->address)) return "address order broken";
      if (parent != nullptr && parent->free_hook.priority < h.priority) return "heap order broken";
      if (h.subtree_max != std::max({x->size, max_of(h.left), max_of(h.right)}))
        return "subtree maximum stale at " + std::to_string(x->address);
      ++count;
      std::string err = check_subtree(h.left, x, count);
      return err.empty() ? check_subtree(h.right, x, count) : err;
    }

    Chunk* root_ = nullptr;
    Chunk* lowest_ = nullptr;  // the lowest-address chunk, the first fit of any request it holds
    std::size_t size_ = 0;
    std::uintptr_t rover_ = 0;
    std::uint64_t steps_ = 0;
  };
};

}  // namespace fraglab
