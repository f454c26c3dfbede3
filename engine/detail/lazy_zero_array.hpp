// An array of zeros in pages of its own, which the kernel maps on first write: a sparse
// table (a radix tree's directory, an address bitmap over gigabytes of span) costs only the
// pages its entries touch.
//
// Why mmap and not calloc: calloc gives untouched pages only when the C library happens to
// serve the block with a fresh mapping. glibc writes the zeros itself when it serves the
// block from memory it has used before (its mmap threshold rises with use, up to 32 MiB),
// and always under MALLOC_PERTURB_, which `meson test` sets: an address bitmap's 128 MiB
// window then cost 128 MiB of writes, and one test spent 58 s in the kernel. Sanitizers'
// allocators write shadow memory for every byte. A private anonymous mapping is zero and
// unmapped until written, whoever the malloc is.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace fraglab::detail {

template <class T>
class lazy_zero_array {
  // All-zero bytes must be a valid T: pointers and integers.
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);

 public:
  lazy_zero_array() noexcept = default;
  // n zero Ts; std::bad_alloc when the address space cannot be had.
  explicit lazy_zero_array(std::size_t n) : bytes_(n * sizeof(T))
  {
    if (n > ~std::size_t{0} / sizeof(T)) throw std::bad_alloc();
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
  }
  lazy_zero_array(lazy_zero_array&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0))
  {
  }
  lazy_zero_array& operator=(lazy_zero_array&& other) noexcept
  {
    lazy_zero_array(std::move(other)).swap(*this);
    return *this;
  }
  ~lazy_zero_array()
  {
    if (data_ != nullptr) ::munmap(data_, bytes_);
  }

  void swap(lazy_zero_array& other) noexcept
  {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
  }

  [[nodiscard]] T* get() const noexcept { return data_; }

 private:
  T* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace fraglab::detail
