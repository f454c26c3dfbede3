// Preloaded by `fraglab record-tf`: TensorFlow's stack capture, tsl::CurrentStackTrace(), in
// the same text (one "\tFUNCTION" line a frame between TF's begin and end markers), with each
// frame's name looked up once per return address instead of on every call.
//
// Why: at TF_CPP_VMODULE=bfc_allocator=4 TF logs the stack of every allocation and free, and
// its own capture symbolizes every frame each time: 70 ms an allocation here, 3 minutes for a
// small Keras model that runs in 4 s with this one. TF exports the function with default
// visibility, so the dynamic linker binds TF's calls to the first definition it finds, this
// one. The allocator's decisions do not depend on it.
#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

namespace {

constexpr int deepest = 256;  // frames kept: TF's own capture stops at 128

std::mutex names_mutex;
// Never destroyed: TF logs frees from static destructors at exit, after ours would have run.
auto* names = new std::unordered_map<void*, std::string>();

std::string name_of(void* address)
{
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_sname == nullptr) return {};
  int status = 0;
  char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : info.dli_sname;
  std::free(demangled);
  return name;
}

}  // namespace

namespace tsl {

// Declared as TF declares it (tsl/platform/stacktrace.h), so that it has TF's mangled name.
__attribute__((visibility("default"))) std::string CurrentStackTrace()
{
  void* frames[deepest];
  int const n = backtrace(frames, deepest);
  std::string out = "*** Begin stack trace ***\n";
  std::lock_guard lock(names_mutex);
  for (int i = 0; i < n; ++i) {
    auto it = names->find(frames[i]);
    if (it == names->end()) it = names->emplace(frames[i], name_of(frames[i])).first;
    out += '\t';
    out += it->second;
    out += '\n';
  }
  out += "*** End stack trace ***\n";
  return out;
}

}  // namespace tsl
