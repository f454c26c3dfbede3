// The process's own malloc behind the engine's allocate/deallocate interface, so that the
// replay loop that drives a preset drives glibc, jemalloc, mimalloc or tcmalloc unchanged.
// Which one serves is decided the way each is meant to be deployed under an unmodified
// program, by LD_PRELOAD (experiments/scripts/reproduce/speed_table.py sets it), and is read back from the
// symbol the dynamic linker resolved, so a benchmark is never labelled with an allocator
// that did not run.
#pragma once

#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/engine/results.hpp>

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace fraglab::bench {

class system_malloc {
 public:
  allocation allocate(std::size_t size, std::size_t alignment = 1, std::uint64_t /*stream*/ = 0) noexcept
  {
    // aligned_alloc wants a multiple of the alignment; malloc already aligns to 16.
    void* p = alignment <= alignof(std::max_align_t) ? std::malloc(size)
                                                      : std::aligned_alloc(alignment, detail::align_up(size, alignment));
    if (p == nullptr) return {0, 0, alloc_status::backend_refused};
    return {reinterpret_cast<std::uintptr_t>(p), size, alloc_status::ok};
  }

  free_status deallocate(std::uintptr_t address) noexcept
  {
    std::free(reinterpret_cast<void*>(address));
    return free_status::ok;
  }
};

// The file of the library that defines `symbol` in this process, or empty.
inline std::string_view defining_file(char const* symbol)
{
  Dl_info info{};
  void* const address = dlsym(RTLD_DEFAULT, symbol);
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return {};
  return info.dli_fname;
}

// "glibc", "jemalloc", "mimalloc", "tcmalloc", or the file name of whatever library
// provides the malloc this process calls. Each of the three is known by a function of its
// own API defined in the same file as malloc, not by the file's name: a copy under another
// name (experiments/scripts/reproduce/host_ratios.py --libdir) would otherwise be labelled what it is not.
inline std::string serving_malloc()
{
  std::string_view const file = defining_file("malloc");
  if (file.empty()) return "unknown";
  struct signature {
    char const* name;
    char const* symbol;
  };
  for (auto [name, symbol] : {signature{"jemalloc", "mallctl"}, signature{"mimalloc", "mi_malloc"},
                              signature{"tcmalloc", "tc_malloc"}})
    if (defining_file(symbol) == file) return name;
  if (file.find("libc.so") != std::string_view::npos) return "glibc";
  return std::string(file.substr(file.find_last_of('/') + 1));
}

}  // namespace fraglab::bench
