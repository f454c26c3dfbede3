// The CUDA driver API calls of virtual memory management (cuMemAddressReserve, cuMemCreate,
// cuMemMap, cuMemSetAccess, ...), found through the runtime's cudaGetDriverEntryPointByVersion
// instead of by linking libcuda. A program linked this way starts on a machine that has the
// toolkit but no driver (this one), where the runtime then reports "no driver" as an error
// that tests can skip on, instead of the dynamic linker refusing to load the program.
#pragma once

#include <fraglab/backends/detail/cuda_error.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

namespace fraglab::detail {

struct cuda_driver_api {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuMemAddressReserve) mem_address_reserve = nullptr;
  decltype(&::cuMemAddressFree) mem_address_free = nullptr;
  decltype(&::cuMemCreate) mem_create = nullptr;
  decltype(&::cuMemRelease) mem_release = nullptr;
  decltype(&::cuMemMap) mem_map = nullptr;
  decltype(&::cuMemUnmap) mem_unmap = nullptr;
  decltype(&::cuMemSetAccess) mem_set_access = nullptr;
  decltype(&::cuMemGetAllocationGranularity) mem_get_allocation_granularity = nullptr;

  // The entry points of the installed driver; throws cuda_error when the runtime cannot
  // reach a driver or the driver lacks one of them (VMM needs CUDA 10.2 or later).
  static cuda_driver_api const& get()
  {
    static cuda_driver_api const api = load();
    return api;
  }

  // cuda_failure of a driver call, with the driver's own name and text for `r`.
  [[nodiscard]] cuda_failure failure(std::string call, CUresult r) const
  {
    char const* name = "unknown CUresult";
    char const* text = "unknown error";
    if (get_error_name != nullptr) get_error_name(r, &name);
    if (get_error_string != nullptr) get_error_string(r, &text);
    return {std::move(call), static_cast<int>(r), name, text};
  }

  // The failure of `call` when it ran out of memory (a refusal); any other error throws.
  [[nodiscard]] cuda_failure refusal_or_throw(CUresult r, std::string call) const
  {
    cuda_failure f = failure(std::move(call), r);
    if (!is_out_of_memory(r)) throw cuda_error(std::move(f));
    return f;
  }

  void check(CUresult r, std::string_view call) const
  {
    if (r != CUDA_SUCCESS) throw cuda_error(failure(std::string(call), r));
  }

 private:
  template <class F>
  static void resolve(F& f, char const* symbol)
  {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    // 12000: the ABI these signatures have had since CUDA 12.0.
    check_runtime(cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &found),
                  std::string("cudaGetDriverEntryPointByVersion(") + symbol + ")");
    if (found != cudaDriverEntryPointSuccess || p == nullptr)
      throw cuda_error({std::string("cudaGetDriverEntryPointByVersion(") + symbol + ")", static_cast<int>(found),
                        "cudaDriverEntryPointSymbolNotFound", "the installed driver does not provide this call"});
    f = reinterpret_cast<F>(p);
  }

  static cuda_driver_api load()
  {
    cuda_driver_api a;
    resolve(a.get_error_name, "cuGetErrorName");
    resolve(a.get_error_string, "cuGetErrorString");
    resolve(a.mem_address_reserve, "cuMemAddressReserve");
    resolve(a.mem_address_free, "cuMemAddressFree");
    resolve(a.mem_create, "cuMemCreate");
    resolve(a.mem_release, "cuMemRelease");
    resolve(a.mem_map, "cuMemMap");
    resolve(a.mem_unmap, "cuMemUnmap");
    resolve(a.mem_set_access, "cuMemSetAccess");
    resolve(a.mem_get_allocation_granularity, "cuMemGetAllocationGranularity");
    return a;
  }
};

}  // namespace fraglab::detail
