// A backend chosen at run time. Backends are called only on the miss path (growing and
// releasing regions), so one virtual call there costs nothing measurable, and it lets the
// registry instantiate each composition once instead of once per backend.
#pragma once

#include <fraglab/backends/backend_stats.hpp>
#include <fraglab/engine/backend_traits.hpp>
#include <fraglab/engine/concepts.hpp>

#include <memory>
#include <span>
#include <string_view>
#include <utility>

namespace fraglab {

class any_backend {
  struct interface {
    virtual ~interface() = default;
    virtual acquisition acquire(std::size_t n, std::size_t alignment) = 0;
    virtual bool release(std::uintptr_t base, std::size_t n) = 0;
    virtual std::size_t capacity() const = 0;
    virtual std::size_t granularity() const = 0;
    virtual std::size_t acquired_bytes() const = 0;
    virtual bool supports_merging() const = 0;
    virtual std::string_view name() const = 0;
    virtual backend_stats const& stats() const = 0;
    virtual std::uintptr_t next_address() const = 0;  // 0: unknown
    virtual acquisition acquire_mapping(std::size_t n) = 0;
    virtual acquisition reserve(std::size_t n, std::size_t alignment) = 0;
    virtual acquisition acquire_at(std::uintptr_t address, std::size_t n) = 0;
    virtual void follow(std::span<planned_segment const> plan) = 0;
    virtual bool map_alias(std::uintptr_t at, std::span<std::uintptr_t const> pages) = 0;
    virtual void unmap_alias(std::uintptr_t at, std::size_t n) = 0;
  };

  template <class B>
  struct model final : interface {
    explicit model(B b) : impl(std::move(b)) {}
    acquisition acquire(std::size_t n, std::size_t a) override { return impl.acquire(n, a); }
    bool release(std::uintptr_t base, std::size_t n) override { return impl.release(base, n); }
    std::size_t capacity() const override { return impl.capacity(); }
    std::size_t granularity() const override { return impl.granularity(); }
    std::size_t acquired_bytes() const override { return impl.acquired_bytes(); }
    bool supports_merging() const override { return impl.supports_merging(); }
    std::string_view name() const override { return impl.name(); }
    backend_stats const& stats() const override { return impl.stats(); }
    std::uintptr_t next_address() const override
    {
      if constexpr (backend_traits<B>::next_address) return impl.next_address();
      else return 0;
    }
    acquisition acquire_mapping(std::size_t n) override
    {
      if constexpr (backend_traits<B>::acquire_mapping) return impl.acquire_mapping(n);
      else return impl.acquire(n, impl.granularity());
    }
    acquisition reserve(std::size_t n, std::size_t alignment) override
    {
      if constexpr (backend_traits<B>::reserve) return impl.reserve(n, alignment);
      else return {};  // no address reservations: expandable pools cannot grow here
    }
    void follow(std::span<planned_segment const> plan) override
    {
      if constexpr (backend_traits<B>::follow) impl.follow(plan);  // else real memory: its own addresses
    }
    acquisition acquire_at(std::uintptr_t address, std::size_t n) override
    {
      if constexpr (backend_traits<B>::acquire_at) return impl.acquire_at(address, n);
      else return {};
    }
    bool map_alias(std::uintptr_t at, std::span<std::uintptr_t const> pages) override
    {
      if constexpr (backend_traits<B>::map_alias) return impl.map_alias(at, pages);
      else return false;  // its memory cannot be mapped at a second address
    }
    void unmap_alias(std::uintptr_t at, std::size_t n) override
    {
      if constexpr (backend_traits<B>::unmap_alias) impl.unmap_alias(at, n);
    }
    B impl;
  };

 public:
  // Every optional member, each answering as the chosen backend would not where it has none.
  static constexpr backend_hook hooks = backend_hook::next_address | backend_hook::acquire_mapping |
                                        backend_hook::reserve | backend_hook::acquire_at | backend_hook::map_alias |
                                        backend_hook::unmap_alias | backend_hook::follow;

  template <class B>
    requires(backend<B> && !std::is_same_v<std::remove_cvref_t<B>, any_backend>)
  explicit any_backend(B b) : impl_(std::make_unique<model<B>>(std::move(b)))
  {
  }

  acquisition acquire(std::size_t n, std::size_t a) { return impl_->acquire(n, a); }
  bool release(std::uintptr_t base, std::size_t n) { return impl_->release(base, n); }
  [[nodiscard]] std::size_t capacity() const { return impl_->capacity(); }
  [[nodiscard]] std::size_t granularity() const { return impl_->granularity(); }
  [[nodiscard]] std::size_t acquired_bytes() const { return impl_->acquired_bytes(); }
  [[nodiscard]] bool supports_merging() const { return impl_->supports_merging(); }
  [[nodiscard]] std::string_view name() const { return impl_->name(); }
  [[nodiscard]] backend_stats const& stats() const { return impl_->stats(); }
  [[nodiscard]] std::uintptr_t next_address() const { return impl_->next_address(); }
  // Memory apart from the growing space (mmap beside sbrk); a backend without such a space
  // serves it as an ordinary acquisition.
  acquisition acquire_mapping(std::size_t n) { return impl_->acquire_mapping(n); }
  // Address reservations and mapping at a chosen address (CUDA VMM); empty where unsupported.
  acquisition reserve(std::size_t n, std::size_t alignment) { return impl_->reserve(n, alignment); }
  acquisition acquire_at(std::uintptr_t address, std::size_t n) { return impl_->acquire_at(address, n); }
  // Pages mapped again, in order, at `at` inside a reservation (GMLake's stitching); false
  // where the backend cannot map its memory twice. unmap_alias takes such a mapping away.
  bool map_alias(std::uintptr_t at, std::span<std::uintptr_t const> pages) { return impl_->map_alias(at, pages); }
  void unmap_alias(std::uintptr_t at, std::size_t n) { impl_->unmap_alias(at, n); }
  // A recording's segment addresses to hand out (simulated_backend::follow); ignored by a
  // backend of real memory.
  void follow(std::span<planned_segment const> plan) { impl_->follow(plan); }

 private:
  std::unique_ptr<interface> impl_;
};

static_assert(backend<any_backend>);

}  // namespace fraglab
