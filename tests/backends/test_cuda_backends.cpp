// The CUDA backends. Tests that need a device skip, saying why, where none is present (the
// CI machine); the tests of what happens without a device run only there. On a machine with
// a GPU, experiments/scripts/device/run_on_gpu.sh runs this suite for real.
#include <fraglab/backends/cuda_async_backend.hpp>
#include <fraglab/backends/cuda_backend.hpp>
#include <fraglab/backends/cuda_pinned_backend.hpp>
#include <fraglab/backends/cuda_vmm_backend.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include "support/training_trace.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace fraglab {
namespace {

#define REQUIRE_DEVICE()                                                                    \
  do {                                                                                      \
    if (auto why = cuda_device_unavailable()) GTEST_SKIP() << "no CUDA device: " << *why;   \
  } while (0)

#define REQUIRE_NO_DEVICE()                                                                              \
  do {                                                                                                   \
    if (!cuda_device_unavailable()) GTEST_SKIP() << "a CUDA device is present: this tests its absence"; \
  } while (0)

std::size_t total_memory() { return detail::cuda_device_total_memory(0); }

// Writes a byte pattern over [p, p + n) on the device and reads it back.
bool device_memory_works(std::uintptr_t p, std::size_t n)
{
  auto* const d = reinterpret_cast<unsigned char*>(p);
  if (cudaMemset(d, 0x5a, n) != cudaSuccess) return false;
  unsigned char first = 0, last = 0;
  if (cudaMemcpy(&first, d, 1, cudaMemcpyDeviceToHost) != cudaSuccess) return false;
  if (cudaMemcpy(&last, d + n - 1, 1, cudaMemcpyDeviceToHost) != cudaSuccess) return false;
  return first == 0x5a && last == 0x5a;
}

TEST(DeviceMemoryLimit, BytesFractionOrTheSmallerOfBoth)
{
  std::size_t const total = std::size_t{80} << 30;
  EXPECT_EQ(device_memory_limit{}.resolve(total), std::numeric_limits<std::size_t>::max());
  EXPECT_EQ((device_memory_limit{std::size_t{1} << 30, 0.0}.resolve(total)), std::size_t{1} << 30);
  EXPECT_EQ((device_memory_limit{std::numeric_limits<std::size_t>::max(), 0.5}.resolve(total)), std::size_t{40} << 30);
  EXPECT_EQ((device_memory_limit{std::size_t{10} << 30, 0.5}.resolve(total)), std::size_t{10} << 30);
  EXPECT_EQ((device_memory_limit{std::size_t{50} << 30, 0.5}.resolve(total)), std::size_t{40} << 30);
  EXPECT_THROW((void)(device_memory_limit{0, 1.5}.resolve(total)), std::invalid_argument);
  EXPECT_THROW((void)(device_memory_limit{0, -0.1}.resolve(total)), std::invalid_argument);
}

TEST(WithoutADevice, EveryBackendFailsWithCudasOwnText)
{
  REQUIRE_NO_DEVICE();
  std::string const why = *cuda_device_unavailable();
  EXPECT_EQ(why.rfind("cudaGetDeviceCount: ", 0), 0u) << why;
  EXPECT_NE(why.find("(cudaError"), std::string::npos) << why;  // the error's name, e.g. cudaErrorNoDevice
  cuda_backend b;  // a limit in bytes needs nothing from the device until memory is asked for
  try {
    (void)b.acquire(1 << 20, 256);
    FAIL() << "acquire without a device must throw";
  } catch (cuda_error const& e) {
    EXPECT_NE(e.failure().code, 0);
    EXPECT_FALSE(e.failure().text.empty());
    EXPECT_EQ(std::string(e.what()).find(e.failure().text) != std::string::npos, true) << e.what();
  }
  EXPECT_EQ(b.acquired_bytes(), 0u);
  EXPECT_THROW(cuda_backend(cuda_backend_params{0, {0, 0.5}, 256}), cuda_error);  // a fraction asks the device
  EXPECT_THROW(cuda_async_backend{}, cuda_error);
  EXPECT_THROW(cuda_vmm_backend{}, cuda_error);
  cuda_pinned_backend pinned;
  EXPECT_THROW((void)pinned.acquire(4096, 4096), cuda_error);
}

TEST(WithoutADevice, TheRegistrySaysWhyACudaBackendCannotBeUsed)
{
  REQUIRE_NO_DEVICE();
  for (char const* kind : {"cuda", "cuda_async", "cuda_vmm"}) {
    try {
      (void)make_composition("tf_bfc", {}, backend_choice{kind})->make();
      FAIL() << kind;
    } catch (std::runtime_error const& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("backend ") + kind + ": cudaGetDeviceCount: ", 0), 0u) << e.what();
    }
  }
}

TEST(CudaBackend, AcquiresAlignedDeviceMemoryAndGivesItBack)
{
  REQUIRE_DEVICE();
  cuda_backend b;
  acquisition const a = b.acquire(1000, 1);
  ASSERT_TRUE(a);
  EXPECT_EQ(a.size, 1024u);  // rounded to the 256-byte granularity
  EXPECT_EQ(a.base % 256, 0u);
  EXPECT_TRUE(device_memory_works(a.base, a.size));
  acquisition const big = b.acquire(3 << 20, 1 << 21);  // beyond cudaMalloc's 256-byte guarantee
  ASSERT_TRUE(big);
  EXPECT_EQ(big.base % (1 << 21), 0u);
  EXPECT_TRUE(device_memory_works(big.base, big.size));
  EXPECT_EQ(b.acquired_bytes(), 1024u + (3u << 20));
  EXPECT_FALSE(b.release(a.base, 512));  // not the size it was acquired with
  EXPECT_FALSE(b.release(a.base + 256, 1024));
  EXPECT_TRUE(b.release(a.base, 1024));
  EXPECT_TRUE(b.release(big.base, big.size));
  EXPECT_EQ(b.acquired_bytes(), 0u);
  EXPECT_EQ(b.stats().acquisitions, 2u);
  EXPECT_EQ(b.stats().releases, 2u);
}

TEST(CudaBackend, RunningOutOfMemoryIsARefusalWithCudasText)
{
  REQUIRE_DEVICE();
  cuda_backend b;
  acquisition const a = b.acquire(2 * total_memory(), 256);
  EXPECT_FALSE(a);
  EXPECT_EQ(b.stats().refusals, 1u);
  ASSERT_TRUE(b.last_error().has_value());
  EXPECT_EQ(b.last_error()->name, "cudaErrorMemoryAllocation");
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // nothing left behind for the program's next call
  EXPECT_TRUE(b.acquire(1 << 20, 256));       // and the device still serves
}

TEST(CudaBackend, AMemoryLimitInBytesOrAsAFractionRefusesWithoutAskingCuda)
{
  REQUIRE_DEVICE();
  cuda_backend bytes(cuda_backend_params{0, {std::size_t{4} << 20, 0.0}, 256});
  EXPECT_EQ(bytes.capacity(), std::size_t{4} << 20);
  EXPECT_TRUE(bytes.acquire(3 << 20, 256));
  EXPECT_FALSE(bytes.acquire(2 << 20, 256));
  EXPECT_FALSE(bytes.last_error().has_value());  // refused by the limit, not by CUDA
  cuda_backend fraction(cuda_backend_params{0, {std::numeric_limits<std::size_t>::max(), 0.25}, 256});
  EXPECT_EQ(fraction.capacity(), static_cast<std::size_t>(static_cast<long double>(total_memory()) * 0.25));
}

TEST(CudaAsyncBackend, ServesFromItsOwnPool)
{
  REQUIRE_DEVICE();
  cuda_async_backend b;
  acquisition const a = b.acquire(5 << 20, 256);
  ASSERT_TRUE(a);
  EXPECT_TRUE(device_memory_works(a.base, a.size));
  EXPECT_GE(b.pool_reserved_bytes(), std::uint64_t{5} << 20);
  EXPECT_TRUE(b.release(a.base, a.size));
  // The pool keeps what was freed (release threshold: everything).
  EXPECT_GE(b.pool_reserved_bytes(), std::uint64_t{5} << 20);
  EXPECT_FALSE(b.acquire(2 * total_memory(), 256));
  ASSERT_TRUE(b.last_error().has_value());
  EXPECT_EQ(b.last_error()->name, "cudaErrorMemoryAllocation");
}

TEST(CudaVmmBackend, GrowsInPlaceAtTheDevicesGranularity)
{
  REQUIRE_DEVICE();
  cuda_vmm_backend b;
  std::size_t const page = b.granularity();
  EXPECT_TRUE(detail::is_pow2(page));
  EXPECT_TRUE(b.supports_merging());
  acquisition const first = b.acquire(1, 1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first.size, page);
  EXPECT_EQ(b.next_address(), first.end());
  acquisition const second = b.acquire(page + 1, 1);
  ASSERT_TRUE(second);
  EXPECT_EQ(second.base, first.end());  // in place: the engine merges the two into one region
  EXPECT_EQ(second.size, 2 * page);
  EXPECT_TRUE(device_memory_works(first.base, first.size + second.size));  // one range across both
  EXPECT_EQ(b.acquired_bytes(), 3 * page);
  // Any whole pages go back, the free tail of a pool included; the top is mapped again in place.
  EXPECT_FALSE(b.release(second.base + 1, page));
  EXPECT_TRUE(b.release(second.base + page, page));
  EXPECT_EQ(b.next_address(), second.base + page);
  EXPECT_FALSE(b.release(second.base + page, page));  // no longer mapped
  acquisition const again = b.acquire(page, 1);
  ASSERT_TRUE(again);
  EXPECT_EQ(again.base, second.base + page);
  EXPECT_TRUE(device_memory_works(again.base, again.size));
  EXPECT_EQ(b.acquired_bytes(), 3 * page);
}

TEST(CudaVmmBackend, MapsInsideReservationsItHandsOut)
{
  REQUIRE_DEVICE();
  cuda_vmm_backend b;
  std::size_t const page = b.granularity();
  acquisition const r = b.reserve(8 * page, page);
  ASSERT_TRUE(r);
  EXPECT_EQ(b.acquired_bytes(), 0u);  // addresses alone cost nothing
  acquisition const m = b.acquire_at(r.base + 2 * page, 2 * page);
  ASSERT_TRUE(m);
  EXPECT_TRUE(device_memory_works(m.base, m.size));
  EXPECT_FALSE(b.acquire_at(r.base + 3 * page, page));   // already mapped
  EXPECT_FALSE(b.acquire_at(r.base + 7 * page, 2 * page));  // runs past the reservation
  EXPECT_FALSE(b.acquire_at(r.base + 1, page));           // not page-aligned
  EXPECT_TRUE(b.release(m.base, m.size));
  EXPECT_EQ(b.acquired_bytes(), 0u);
}

// A page mapped again (GMLake's stitching): bytes written through the alias are read at the
// page's own address, and the alias outlives the page's release until it is unmapped.
TEST(CudaVmmBackend, MapsPagesAgainAtASecondAddress)
{
  REQUIRE_DEVICE();
  cuda_vmm_backend b;
  std::size_t const page = b.granularity();
  acquisition const r = b.reserve(4 * page, page);
  acquisition const m = b.acquire_at(r.base, 2 * page);
  ASSERT_TRUE(m);
  acquisition const alias = b.reserve(2 * page, page);
  std::uintptr_t const swapped[] = {m.base + page, m.base};  // in another order
  ASSERT_TRUE(b.map_alias(alias.base, swapped));
  EXPECT_EQ(b.acquired_bytes(), 2 * page);  // no new memory
  ASSERT_EQ(cudaMemset(reinterpret_cast<void*>(alias.base), 0x11, page), cudaSuccess);
  ASSERT_EQ(cudaMemset(reinterpret_cast<void*>(alias.base + page), 0x22, page), cudaSuccess);
  unsigned char first = 0, second = 0;
  ASSERT_EQ(cudaMemcpy(&first, reinterpret_cast<void*>(m.base), 1, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&second, reinterpret_cast<void*>(m.base + page), 1, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(first, 0x22);
  EXPECT_EQ(second, 0x11);
  EXPECT_FALSE(b.map_alias(alias.base, swapped));  // mapped already
  std::uintptr_t const unmapped[] = {r.base + 3 * page};
  EXPECT_FALSE(b.map_alias(r.base + 2 * page, unmapped));  // not a page the backend holds
  EXPECT_TRUE(b.release(m.base, m.size));
  EXPECT_TRUE(device_memory_works(alias.base, 2 * page));  // the driver keeps mapped memory
  b.unmap_alias(alias.base, 2 * page);
}

// gmlake over cuda_vmm: a stitched block is usable memory, its bytes are the pages' bytes.
TEST(PresetsOnTheDevice, GMLakeStitchesDevicePages)
{
  REQUIRE_DEVICE();
  auto a = make_composition("gmlake", {}, backend_choice{"cuda_vmm"})->make();
  std::vector<allocation> segments;
  for (int i = 0; i < 3; ++i) segments.push_back(a->allocate(200u << 20));
  for (auto const& s : segments) ASSERT_TRUE(s);
  ASSERT_TRUE(device_memory_works(segments[0].address, segments[0].size));
  for (auto const& s : segments) EXPECT_EQ(a->deallocate(s.address), free_status::ok);
  std::size_t const reserved = a->counters().reserved_bytes;
  allocation const stitched = a->allocate(560u << 20);
  ASSERT_TRUE(stitched);
  EXPECT_EQ(a->counters().reserved_bytes, reserved);  // no new memory: the free blocks' pages, mapped again
  EXPECT_TRUE(device_memory_works(stitched.address, stitched.size));
  EXPECT_EQ(a->check_invariants(), "");
  EXPECT_EQ(a->deallocate(stitched.address), free_status::ok);
  EXPECT_GT(a->release_free_regions(), 0u);
}

TEST(CudaVmmBackend, RunningOutOfMemoryLeavesNothingMapped)
{
  REQUIRE_DEVICE();
  cuda_vmm_backend b(cuda_vmm_backend_params{0, {}, 2 * total_memory()});
  EXPECT_FALSE(b.acquire(total_memory() + b.granularity(), 1));
  EXPECT_EQ(b.acquired_bytes(), 0u);
  EXPECT_TRUE(b.acquire(b.granularity(), 1));  // the pages mapped before the refusal were given back
}

TEST(CudaPinnedBackend, ServesPageLockedHostMemory)
{
  REQUIRE_DEVICE();
  cuda_pinned_backend b;
  acquisition const a = b.acquire(10000, 1);
  ASSERT_TRUE(a);
  EXPECT_EQ(a.size, 12288u);
  EXPECT_EQ(a.base % 4096, 0u);
  std::memset(reinterpret_cast<void*>(a.base), 7, a.size);  // host memory: written directly
  unsigned int flags = 0;
  EXPECT_EQ(cudaHostGetFlags(&flags, reinterpret_cast<void*>(a.base)), cudaSuccess);  // and known to CUDA as pinned
  EXPECT_TRUE(b.release(a.base, a.size));
}

// A preset over real device memory makes the decisions it makes over the simulated backend:
// the same acquisitions, peaks and failures; only the addresses differ.
TEST(PresetsOnTheDevice, DecideAsInSimulationOnATrainingTrace)
{
  REQUIRE_DEVICE();
  struct run {
    char const* policy;
    char const* backend;
  };
  for (run const r : {run{"tf_bfc", "cuda"}, run{"pytorch_caching", "cuda"}, run{"tlsf", "cuda"},
                      run{"pytorch_caching", "cuda_async"}, run{"best_fit", "cuda_async"}}) {
    param_set granularity;
    if (std::string(r.policy) == "tlsf" || std::string(r.policy) == "best_fit") granularity.set("granularity", "2MiB");
    SCOPED_TRACE(std::string(r.policy) + " over " + r.backend);
    replay_result const device = testing::replay_small_training(r.policy, granularity, r.backend);
    EXPECT_EQ(device.failed_allocs, 0u);
    testing::expect_same_decisions(device, testing::replay_small_training(r.policy, granularity, "simulated"));
  }
  // Expandable segments need reservations: cuda_vmm's, at the device's page.
  replay_result const expandable = testing::replay_small_training("pytorch_expandable", {}, "cuda_vmm");
  EXPECT_EQ(expandable.failed_allocs, 0u);
  EXPECT_GT(expandable.peak_reserved_bytes, 0u);
}

TEST(PresetsOnTheDevice, AllocatorsHandOutUsableMemoryAndKeepTheirInvariants)
{
  REQUIRE_DEVICE();
  for (char const* policy : {"tf_bfc", "pytorch_caching", "tlsf"}) {
    auto a = make_composition(policy, {}, backend_choice{"cuda"})->make();
    std::vector<allocation> live;
    for (std::size_t i = 0; i < 200; ++i) {
      live.push_back(a->allocate(512 * (1 + i * 37 % 4096)));
      ASSERT_TRUE(live.back()) << policy;
      ASSERT_TRUE(device_memory_works(live.back().address, live.back().size)) << policy;
      if (i % 3 == 0) {
        EXPECT_EQ(a->deallocate(live.front().address), free_status::ok);
        live.erase(live.begin());
      }
    }
    EXPECT_EQ(a->check_invariants(), "") << policy;
    for (auto const& x : live) EXPECT_EQ(a->deallocate(x.address), free_status::ok);
    EXPECT_GT(a->release_free_regions(), 0u) << policy;  // cudaFree of whole regions
  }
}

}  // namespace
}  // namespace fraglab

int main(int argc, char** argv)
{
  testing::InitGoogleTest(&argc, argv);
  if (auto why = fraglab::cuda_device_unavailable())
    std::printf("no CUDA device, so the device tests skip: %s\n", why->c_str());
  return RUN_ALL_TESTS();
}
