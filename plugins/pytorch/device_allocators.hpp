// One allocator per CUDA device, made on the device's first allocation from the plug-in's
// configuration, each behind its own mutex: PyTorch calls the allocator from every thread
// that launches work (the autograd engine runs the backward pass on threads of its own),
// and TF's BFC and PyTorch's caching allocator guard theirs with one mutex the same way.
#pragma once

#include <fraglab/plugins/pytorch/plugin_config.hpp>
#include <fraglab/runtime/registry/composition.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

namespace fraglab::plugin {

class device_allocators {
 public:
  static constexpr int max_devices = 64;

  explicit device_allocators(plugin_config c) : config_(std::move(c)) {}
  device_allocators(device_allocators const&) = delete;
  device_allocators& operator=(device_allocators const&) = delete;
  ~device_allocators();

  // Null for a zero-byte request and on failure; a failure's reason is in last_error() and
  // is printed to stderr, since PyTorch reports only that memory ran out.
  void* allocate(std::size_t size, int device, void* stream);
  // A pointer this plug-in did not hand out, or a second free, is reported, never ignored.
  void deallocate(void* p, int device);

  // One line per device in use: policy, backend, counts, peaks and fragmentation.
  [[nodiscard]] std::string report() const;
  // Empty, or every broken invariant of every device's allocator.
  [[nodiscard]] std::string check_invariants() const;
  [[nodiscard]] std::string last_error() const;
  [[nodiscard]] plugin_config const& config() const noexcept { return config_; }

 private:
  struct device_entry {
    mutable std::mutex mutex;
    std::unique_ptr<any_allocator> allocator;
  };

  device_entry* entry(int device);  // null (with last_error set) when it cannot be made
  // f(device, allocator) for every device in use, under that device's lock.
  template <class F>
  void for_each_device(F&& f) const;
  void fail(std::string message) const;

  plugin_config config_;
  std::array<std::atomic<device_entry*>, max_devices> devices_{};
  std::mutex making_;
  mutable std::mutex error_mutex_;
  mutable std::string last_error_;
};

}  // namespace fraglab::plugin
