// The PyTorch plug-in without PyTorch: its configuration, and its entry points loaded with
// dlopen as PyTorch loads them, serving host memory to many threads at once.
#include <fraglab/plugins/pytorch/device_allocators.hpp>
#include <fraglab/plugins/pytorch/plugin_config.hpp>

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace fraglab::plugin {
namespace {

environment fake(std::map<std::string, std::string> vars)
{
  return [vars](char const* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string error_of(std::map<std::string, std::string> vars)
{
  try {
    validate(read_config(fake(std::move(vars))));
  } catch (std::invalid_argument const& e) {
    return e.what();
  }
  return "";
}

TEST(PluginConfig, DefaultsArePyTorchsAllocatorOverCudaMalloc)
{
  plugin_config const c = read_config(fake({}));
  EXPECT_EQ(c.policy, "pytorch_caching");
  EXPECT_EQ(c.backend, "cuda");
  EXPECT_EQ(c.capacity, std::numeric_limits<std::size_t>::max());
  EXPECT_FALSE(c.print_stats);
  EXPECT_TRUE(c.params.values().empty());
}

TEST(PluginConfig, ReadsEveryVariable)
{
  plugin_config const c = read_config(fake({{"FRAGLAB_POLICY", "tf_bfc"},
                                            {"FRAGLAB_SET", "split_ratio=4;max_internal_fragmentation=1MiB"},
                                            {"FRAGLAB_BACKEND", "cuda_async"},
                                            {"FRAGLAB_CAPACITY", "8GiB"},
                                            {"FRAGLAB_STATS", "1"}}));
  EXPECT_EQ(c.policy, "tf_bfc");
  EXPECT_EQ(c.params.text("split_ratio"), "4");
  EXPECT_EQ(c.params.size("max_internal_fragmentation"), std::size_t{1} << 20);
  EXPECT_EQ(c.backend, "cuda_async");
  EXPECT_EQ(c.capacity, std::size_t{8} << 30);
  EXPECT_TRUE(c.print_stats);
  validate(c);
}

TEST(PluginConfig, BadValuesNameTheVariableAndWhatItExpected)
{
  EXPECT_NE(error_of({{"FRAGLAB_BACKEND", "floppy"}}).find("FRAGLAB_BACKEND: expected cuda, cuda_async, cuda_vmm or host"),
            std::string::npos);
  EXPECT_NE(error_of({{"FRAGLAB_CAPACITY", "lots"}}).find("FRAGLAB_CAPACITY: expected a size"), std::string::npos);
  EXPECT_NE(error_of({{"FRAGLAB_STATS", "yes"}}).find("FRAGLAB_STATS: expected 0 or 1"), std::string::npos);
  EXPECT_NE(error_of({{"FRAGLAB_SET", "split_ratio"}}).find("FRAGLAB_SET: expected KEY=VALUE"), std::string::npos);
  EXPECT_NE(error_of({{"FRAGLAB_SET", "colour=blue"}}).find("unknown parameter 'colour'"), std::string::npos);
  EXPECT_NE(error_of({{"FRAGLAB_SET", "split_ratio=2;split_ratio=4"}}).find("FRAGLAB_SET: split_ratio is given twice (2, then split_ratio=4)"),
            std::string::npos);
  EXPECT_NE(error_of({{"FRAGLAB_POLICY", "tf_bfcc"}}).find("unknown policy 'tf_bfcc'"), std::string::npos);
  EXPECT_NE(error_of({{"FRAGLAB_POLICY", "tf_bfc"}, {"FRAGLAB_SET", "sli=4"}}).find("does not apply to tf_bfc"),
            std::string::npos);
}

// The backend's own parameters are checked against the backend the plug-in will use, before
// any device is there: a device's memory fraction is a CUDA backend's, not host memory's.
TEST(PluginConfig, BackendParametersAreCheckedAgainstItsBackend)
{
  EXPECT_EQ(error_of({{"FRAGLAB_SET", "device_memory_fraction=0.5;granularity=2MiB"}}), "");  // cuda
  EXPECT_EQ(error_of({{"FRAGLAB_BACKEND", "cuda_vmm"}, {"FRAGLAB_SET", "device_memory_fraction=0.5"}}), "");
  EXPECT_NE(error_of({{"FRAGLAB_BACKEND", "host"}, {"FRAGLAB_SET", "device_memory_fraction=0.5"}})
                .find("parameter device_memory_fraction applies to the device backends"),
            std::string::npos);
  EXPECT_NE(error_of({{"FRAGLAB_BACKEND", "cuda_vmm"}, {"FRAGLAB_SET", "granularity=2MiB"}}).find("the device's own granularity"),
            std::string::npos);
  EXPECT_NE(error_of({{"FRAGLAB_SET", "merging=true"}}).find("parameter merging applies to the simulated backend"),
            std::string::npos);
}

// The entry points as PyTorch finds them.
struct plugin_library {
  using malloc_fn = void* (*)(ssize_t, int, void*);
  using free_fn = void (*)(void*, ssize_t, int, void*);
  using text_fn = char const* (*)();

  plugin_library()
  {
    char const* path = std::getenv("FRAGLAB_PLUGIN");
    if (path == nullptr) throw std::runtime_error("FRAGLAB_PLUGIN is not set (meson test sets it)");
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) throw std::runtime_error(dlerror());
    malloc = reinterpret_cast<malloc_fn>(dlsym(handle, "fraglab_malloc"));
    free = reinterpret_cast<free_fn>(dlsym(handle, "fraglab_free"));
    report = reinterpret_cast<text_fn>(dlsym(handle, "fraglab_report"));
    check = reinterpret_cast<text_fn>(dlsym(handle, "fraglab_check_invariants"));
    last_error = reinterpret_cast<text_fn>(dlsym(handle, "fraglab_last_error"));
  }
  void* handle = nullptr;
  malloc_fn malloc = nullptr;
  free_fn free = nullptr;
  text_fn report = nullptr, check = nullptr, last_error = nullptr;
};

TEST(PluginLibrary, ExportsOnlyItsEntryPoints)
{
  plugin_library const lib;
  EXPECT_NE(lib.malloc, nullptr);
  EXPECT_NE(lib.free, nullptr);
  EXPECT_NE(lib.report, nullptr);
  EXPECT_NE(lib.check, nullptr);
  EXPECT_NE(lib.last_error, nullptr);
  // The engine's symbols stay inside: a program with its own copy of fraglab is not affected.
  EXPECT_EQ(dlsym(lib.handle, "_ZN7fraglab16make_compositionESt17basic_string_viewIcSt11char_traitsIcEERKNS_9param_setERKNS_14backend_choiceE"),
            nullptr);
}

// Threads on two devices allocate and free at random; every block carries a signature that
// is checked before it is freed, so two live blocks that overlapped would be caught.
TEST(PluginLibrary, ServesManyThreadsOnTwoDevicesWithoutOverlap)
{
  plugin_library const lib;
  constexpr int threads = 4, steps = 20000;
  std::vector<std::thread> workers;
  std::vector<std::uint64_t> corrupted(threads), failed(threads);
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<std::uint64_t>(t) + 1);
      int const device = t % 2;
      void* const stream = reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x1000 * (t + 1)));
      struct block {
        std::uint64_t* p;
        std::size_t size;
        std::uint64_t tag;
      };
      std::vector<block> live;
      auto release = [&](std::size_t i) {
        block const b = live[i];
        if (b.p[0] != b.tag || b.p[b.size / 8 - 1] != ~b.tag) ++corrupted[static_cast<std::size_t>(t)];
        lib.free(b.p, static_cast<ssize_t>(b.size), device, stream);
        live[i] = live.back();
        live.pop_back();
      };
      for (int s = 0; s < steps; ++s) {
        if (!live.empty() && (live.size() > 300 || rng() % 2 == 0)) {
          release(rng() % live.size());
          continue;
        }
        std::size_t const size = 8 * (2 + rng() % 8192);  // two words at least: a head and a tail
        auto* p = static_cast<std::uint64_t*>(lib.malloc(static_cast<ssize_t>(size), device, stream));
        if (p == nullptr) {
          ++failed[static_cast<std::size_t>(t)];
          continue;
        }
        std::uint64_t const tag = (static_cast<std::uint64_t>(t) << 32) | static_cast<std::uint64_t>(s);
        p[0] = tag;
        p[size / 8 - 1] = ~tag;
        live.push_back({p, size, tag});
      }
      while (!live.empty()) release(live.size() - 1);
    });
  for (auto& w : workers) w.join();
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(corrupted[static_cast<std::size_t>(t)], 0u) << "thread " << t;
    EXPECT_EQ(failed[static_cast<std::size_t>(t)], 0u) << "thread " << t;
  }
  EXPECT_STREQ(lib.check(), "");
  std::string const report = lib.report();
  EXPECT_NE(report.find("device 0, best_fit over host:"), std::string::npos) << report;
  EXPECT_NE(report.find("device 1, best_fit over host:"), std::string::npos) << report;
  EXPECT_NE(report.find(" 0 failed, 0 misuses"), std::string::npos) << report;
}

TEST(PluginLibrary, ReportsAForeignPointerAndADoubleFree)
{
  plugin_library const lib;
  void* p = lib.malloc(1024, 0, nullptr);
  ASSERT_NE(p, nullptr);
  lib.free(p, 1024, 0, nullptr);
  lib.free(p, 1024, 0, nullptr);
  EXPECT_NE(std::string(lib.last_error()).find(": double_free"), std::string::npos) << lib.last_error();
  int on_stack = 0;
  lib.free(&on_stack, 4, 0, nullptr);
  EXPECT_NE(std::string(lib.last_error()).find(": unknown_pointer"), std::string::npos) << lib.last_error();
  EXPECT_EQ(lib.malloc(0, 0, nullptr), nullptr);  // zero bytes: no block, as with PyTorch's own
  EXPECT_EQ(lib.malloc(16, 64, nullptr), nullptr);
  EXPECT_NE(std::string(lib.last_error()).find("device 64 is out of range"), std::string::npos) << lib.last_error();
  EXPECT_STREQ(lib.check(), "");
}

TEST(PluginLibraryDeathTest, AnUnknownPolicyStopsTheProgramAtTheFirstAllocation)
{
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: the library reads its configuration once
  EXPECT_EXIT(
      {
        setenv("FRAGLAB_POLICY", "tf_bfcc", 1);
        plugin_library const lib;
        (void)lib.malloc(1024, 0, nullptr);
      },
      testing::KilledBySignal(SIGABRT), "fraglab plug-in: unknown policy 'tf_bfcc'");
}

}  // namespace
}  // namespace fraglab::plugin

int main(int argc, char** argv)
{
  // What the library reads at its first call, for every test but the death test's child.
  setenv("FRAGLAB_POLICY", "best_fit", 0);
  setenv("FRAGLAB_BACKEND", "host", 1);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
