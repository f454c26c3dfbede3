#include <fraglab/runtime/registry/cuda_backends.hpp>

#include <fraglab/backends/cuda_async_backend.hpp>
#include <fraglab/backends/cuda_backend.hpp>
#include <fraglab/backends/cuda_pinned_backend.hpp>
#include <fraglab/backends/cuda_vmm_backend.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace fraglab::registry_detail {
namespace {

int device_of(param_set const& p)
{
  std::size_t const d = p.count("device");
  if (d > static_cast<std::size_t>(std::numeric_limits<int>::max())) throw std::invalid_argument("parameter device is too large");
  return static_cast<int>(d);
}

device_memory_limit limit_of(backend_choice const& b, param_set const& p)
{
  device_memory_limit l;
  l.bytes = b.capacity;
  l.fraction = p.real("device_memory_fraction");
  if (!(l.fraction >= 0.0 && l.fraction <= 1.0)) throw std::invalid_argument("parameter device_memory_fraction must be in [0, 1]");
  return l;
}

// The parameters cuda and cuda_async share, over their defaults.
template <class Params>
Params device_block_params(backend_choice const& b, param_set const& p)
{
  Params cp;
  cp.device = device_of(p);
  cp.limit = limit_of(b, p);
  if (p.has("granularity")) cp.granularity = p.size("granularity");
  return cp;
}

}  // namespace

backend_choice with_device_capacity(backend_choice b, param_set const& p)
{
  if (!is_device_memory_backend(b.kind)) return b;
  int const device = device_of(p);
  if (auto why = cuda_device_unavailable()) throw std::runtime_error("backend " + b.kind + ": " + *why);
  std::size_t const total = detail::cuda_device_total_memory(device);
  b.capacity = std::min(total, limit_of(b, p).resolve(total));  // at most the device, by default all of it
  return b;
}

any_backend make_cuda_backend(backend_choice const& b, param_set const& p)
{
  if (b.kind == "cuda_pinned") {
    cuda_pinned_backend_params cp;
    cp.capacity = b.capacity;
    if (p.has("granularity")) cp.granularity = p.size("granularity");
    return any_backend(cuda_pinned_backend(cp));
  }
  if (auto why = cuda_device_unavailable()) throw std::runtime_error("backend " + b.kind + ": " + *why);
  if (b.kind == "cuda") return any_backend(cuda_backend(device_block_params<cuda_backend_params>(b, p)));
  if (b.kind == "cuda_async") return any_backend(cuda_async_backend(device_block_params<cuda_async_backend_params>(b, p)));
  if (b.kind == "cuda_vmm") {
    cuda_vmm_backend_params cp;
    cp.device = device_of(p);
    cp.limit = limit_of(b, p);
    return any_backend(cuda_vmm_backend(cp));
  }
  throw std::invalid_argument("not a CUDA backend: '" + b.kind + "'");
}

}  // namespace fraglab::registry_detail
