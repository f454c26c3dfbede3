// CUDA failures as typed values and exceptions carrying the CUDA error text.
//
// Running out of device memory is an ordinary refusal: a backend returns an empty
// acquisition, counts a refusal and keeps the failure in last_error(), and the engine turns
// it into alloc_status::capacity or backend_refused. Any other CUDA error (no device, a
// broken context, an invalid argument) means the backend cannot go on, and it throws
// cuda_error, whose what() names the call, its arguments and CUDA's own text.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace fraglab {

// One failed CUDA call: the call as written for a person, the error's numeric code, its
// name (cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY) and CUDA's description.
struct cuda_failure {
  std::string call;
  int code = 0;
  std::string name;
  std::string text;

  [[nodiscard]] std::string message() const { return call + ": " + text + " (" + name + ")"; }
};

class cuda_error : public std::runtime_error {
 public:
  explicit cuda_error(cuda_failure f) : std::runtime_error(f.message()), failure_(std::move(f)) {}
  [[nodiscard]] cuda_failure const& failure() const noexcept { return failure_; }

 private:
  cuda_failure failure_;
};

namespace detail {

inline cuda_failure runtime_failure(std::string call, cudaError_t e)
{
  return {std::move(call), static_cast<int>(e), cudaGetErrorName(e), cudaGetErrorString(e)};
}

// Throws cuda_error unless `e` is cudaSuccess.
inline void check_runtime(cudaError_t e, std::string_view call)
{
  if (e != cudaSuccess) throw cuda_error(runtime_failure(std::string(call), e));
}

inline bool is_out_of_memory(cudaError_t e) noexcept { return e == cudaErrorMemoryAllocation; }
inline bool is_out_of_memory(CUresult e) noexcept { return e == CUDA_ERROR_OUT_OF_MEMORY; }

// The failure of `call`, which returned `e`, when it is a refusal: CUDA ran out of memory.
// The runtime's last error is cleared, so the program's next call does not report it.
// Any other error throws cuda_error.
inline cuda_failure refusal_or_throw(cudaError_t e, std::string call)
{
  cuda_failure f = runtime_failure(std::move(call), e);
  if (!is_out_of_memory(e)) throw cuda_error(std::move(f));
  (void)cudaGetLastError();
  return f;
}

}  // namespace detail
}  // namespace fraglab
