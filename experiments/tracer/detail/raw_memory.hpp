// Memory for the tracer's own tables, straight from the kernel: anything the tracer took
// from malloc would be traced, or recurse into the tracer while it holds its lock.
#pragma once

#include <sys/mman.h>

#include <cstddef>

namespace fraglab::tracer::detail {

inline void* map_zeroed(std::size_t bytes) noexcept
{
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

inline void unmap(void* p, std::size_t bytes) noexcept
{
  if (p) ::munmap(p, bytes);
}

// A growable array of trivially copyable T in mapped pages.
template <class T>
class mapped_vector {
 public:
  bool push_back(T v) noexcept
  {
    if (size_ == capacity_ && !grow()) return false;
    data_[size_++] = v;
    return true;
  }
  bool empty() const noexcept { return size_ == 0; }
  void clear() noexcept { size_ = 0; }
  T pop_back() noexcept { return data_[--size_]; }

 private:
  bool grow() noexcept
  {
    std::size_t const capacity = capacity_ ? 2 * capacity_ : 4096;
    T* data = static_cast<T*>(map_zeroed(capacity * sizeof(T)));
    if (!data) return false;
    for (std::size_t i = 0; i < size_; ++i) data[i] = data_[i];
    unmap(data_, capacity_ * sizeof(T));
    data_ = data;
    capacity_ = capacity;
    return true;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
};

}  // namespace fraglab::tracer::detail
