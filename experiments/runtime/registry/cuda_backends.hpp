// The CUDA backends as the registry offers them (--backend cuda, cuda_async, cuda_vmm,
// cuda_pinned). cuda_backends.cpp builds them where the CUDA Toolkit is found;
// cuda_backends_absent.cpp, built elsewhere, makes choosing one a clear error.
#pragma once

#include <fraglab/backends/any_backend.hpp>
#include <fraglab/runtime/params/param_set.hpp>
#include <fraglab/runtime/registry/composition.hpp>

#include <string_view>

namespace fraglab::registry_detail {

inline bool is_cuda_backend(std::string_view kind)
{
  return kind == "cuda" || kind == "cuda_async" || kind == "cuda_vmm" || kind == "cuda_pinned";
}

// The CUDA backends that serve a device's memory (cuda_pinned serves the host's): the ones
// that read `device` and `device_memory_fraction`.
inline bool is_device_memory_backend(std::string_view kind) { return is_cuda_backend(kind) && kind != "cuda_pinned"; }

// `b` with its capacity resolved on the device: the smaller of --capacity and
// device_memory_fraction x the device's memory, so that a preset's own memory fraction
// (TF's per_process_gpu_memory_fraction) is taken of the real device. Other backends are
// returned as they are.
backend_choice with_device_capacity(backend_choice b, param_set const& p);

any_backend make_cuda_backend(backend_choice const& b, param_set const& p);

}  // namespace fraglab::registry_detail
