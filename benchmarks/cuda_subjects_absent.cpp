// Built where the CUDA Toolkit was not found.
#include <fraglab/benchmarks/subjects.hpp>

#include <stdexcept>

namespace fraglab::bench {

std::vector<subject> cuda_runtime_subjects()
{
  throw std::invalid_argument("--cuda-baselines needs fraglab built with the CUDA Toolkit (see docs/gpu.md)");
}

std::string cuda_device_name() { return "none (built without CUDA)"; }

}  // namespace fraglab::bench
