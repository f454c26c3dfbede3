// Built where the CUDA Toolkit was not found: the CUDA backends exist only by name.
#include <fraglab/runtime/registry/cuda_backends.hpp>

#include <stdexcept>
#include <string>

namespace fraglab::registry_detail {
namespace {

[[noreturn]] void unavailable(backend_choice const& b)
{
  // "backend KIND: why", as the CUDA backends word a missing device.
  throw std::invalid_argument("backend " + b.kind +
                              ": needs fraglab built with the CUDA Toolkit (meson setup -Dcuda=enabled; see docs/gpu.md)");
}

}  // namespace

backend_choice with_device_capacity(backend_choice b, param_set const&)
{
  if (is_cuda_backend(b.kind)) unavailable(b);
  return b;
}

any_backend make_cuda_backend(backend_choice const& b, param_set const&) { unavailable(b); }

}  // namespace fraglab::registry_detail
