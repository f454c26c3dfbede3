// The PyTorch plug-in: the entry points torch.cuda.memory.CUDAPluggableAllocator loads from
// a shared library (PyTorch 2.0+, c10/cuda/CUDAPluggableAllocator):
//
//   void* fraglab_malloc(ssize_t size, int device, cudaStream_t stream)
//   void  fraglab_free(void* ptr, ssize_t size, int device, cudaStream_t stream)
//
// serving CUDA memory through the preset or composition named in the environment
// (plugin_config.hpp). docs/gpu.md shows the three lines that install it, and
// plugins/pytorch/train_example.py trains a small model with it.
//
// The streams are passed through as opaque handles (a cudaStream_t is a pointer), so this
// file needs no CUDA header: the same library serves the host backend in the tests of
// machines without a GPU.
//
// Extra entry points for tests and tools: fraglab_report() (what FRAGLAB_STATS=1 prints at
// exit), fraglab_check_invariants(), fraglab_last_error(); each returns a string owned by
// the library, valid until the next call of the same function.
#include <fraglab/plugins/pytorch/device_allocators.hpp>
#include <fraglab/plugins/pytorch/plugin_config.hpp>

#include <sys/types.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>

namespace {

using fraglab::plugin::device_allocators;

// Made on first use and never destroyed: at exit PyTorch may still free tensors from
// static destructors, after which the CUDA runtime unloads; the driver reclaims the memory
// with the process, as it does for PyTorch's own cache.
device_allocators* the_allocators()
{
  static device_allocators* const instance = [] {
    fraglab::plugin::plugin_config c;
    try {
      c = fraglab::plugin::read_config(fraglab::plugin::process_environment());
      fraglab::plugin::validate(c);
    } catch (std::exception const& e) {
      std::fprintf(stderr, "fraglab plug-in: %s\n", e.what());
      std::abort();  // a misconfigured run must not silently use another allocator's settings
    }
    auto* a = new device_allocators(c);
    if (c.print_stats)
      std::atexit([] { std::fputs(the_allocators()->report().c_str(), stderr); });
    return a;
  }();
  return instance;
}

char const* keep(std::string& storage, std::string value)
{
  storage = std::move(value);
  return storage.c_str();
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* fraglab_malloc(ssize_t size, int device, void* stream)
{
  if (size < 0) return nullptr;
  return the_allocators()->allocate(static_cast<std::size_t>(size), device, stream);
}

__attribute__((visibility("default"))) void fraglab_free(void* ptr, ssize_t /*size*/, int device, void* /*stream*/)
{
  the_allocators()->deallocate(ptr, device);
}

__attribute__((visibility("default"))) char const* fraglab_report()
{
  static std::string s;
  return keep(s, the_allocators()->report());
}

__attribute__((visibility("default"))) char const* fraglab_check_invariants()
{
  static std::string s;
  return keep(s, the_allocators()->check_invariants());
}

__attribute__((visibility("default"))) char const* fraglab_last_error()
{
  static std::string s;
  return keep(s, the_allocators()->last_error());
}

}  // extern "C"
