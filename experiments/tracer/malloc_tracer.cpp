// libfraglab_tracer.so: preloaded into an unmodified program (LD_PRELOAD, or `fraglab
// trace -- PROGRAM`), it records every malloc, calloc, realloc, reallocarray, free,
// memalign, posix_memalign, aligned_alloc, valloc and pvalloc into a native binary trace,
// one file per process: DIR/PROGRAM.PID.fbin, DIR from FRAGLAB_TRACE_DIR or else the
// working directory; with FRAGLAB_TRACE_ONLY=NAME only processes whose executable is NAME.
//
// How it stays correct:
// - No recursion: its tables live in mmap'd pages, its file is written with write(2), and
//   a thread-local flag passes any call made from inside the tracer straight to the real
//   allocator. dlsym's own allocations, before the real functions are known, come from a
//   static bootstrap arena and are never traced.
// - Threads: one mutex guards the table and the file. A block leaves the table before the
//   real free() can hand its address to another thread, and enters it only after malloc
//   returned it, so two threads never record the same address live twice.
// - fork: the prepare handler flushes (so the child cannot write the parent's records
//   again); the child starts its own file at its first allocation event, beginning with
//   an allocation for every block it inherited (renumbered from 1), so its frees of them match.
// - exec, _exit: the file is flushed first (the header always counts what was written).
//   At normal exit the destructor flushes and later events (other libraries' destructors)
//   are written through one by one.
//
// What is recorded: the requested size (malloc(0) as 1 byte: the format has no empty
// requests), the alignment asked for, failures (NULL for a non-zero request) as the
// header's recorded failures. realloc that moves the block is recorded as the new
// allocation followed by the free of the old one (both live while the data is copied);
// in place, as the free followed by the allocation.
#include <fraglab/tracer/detail/pointer_table.hpp>
#include <fraglab/tracer/detail/trace_file.hpp>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

using namespace fraglab::tracer::detail;

struct real_functions {
  void* (*malloc)(std::size_t) = nullptr;
  void (*free)(void*) = nullptr;
  void* (*calloc)(std::size_t, std::size_t) = nullptr;
  void* (*realloc)(void*, std::size_t) = nullptr;
  void* (*memalign)(std::size_t, std::size_t) = nullptr;
  int (*posix_memalign)(void**, std::size_t, std::size_t) = nullptr;
  void* (*aligned_alloc)(std::size_t, std::size_t) = nullptr;
  void* (*valloc)(std::size_t) = nullptr;
  void* (*pvalloc)(std::size_t) = nullptr;
  int (*execve)(char const*, char* const[], char* const[]) = nullptr;
  int (*execvpe)(char const*, char* const[], char* const[]) = nullptr;
  int (*fexecve)(int, char* const[], char* const[]) = nullptr;
  void (*exit_now)(int) = nullptr;  // _exit
};

real_functions real;
bool resolving = false;
bool resolved = false;

// dlsym may allocate (its error strings, thread-local buffers) before `real` is filled.
alignas(16) unsigned char bootstrap_arena[64 * 1024];
std::size_t bootstrap_used = 0;

bool from_bootstrap(void const* p)
{
  auto const* c = static_cast<unsigned char const*>(p);
  return c >= bootstrap_arena && c < bootstrap_arena + sizeof bootstrap_arena;
}

void* bootstrap_alloc(std::size_t size)
{
  std::size_t const rounded = (size + 15) / 16 * 16;
  if (bootstrap_used + rounded > sizeof bootstrap_arena) return nullptr;
  void* p = bootstrap_arena + bootstrap_used;
  bootstrap_used += rounded;
  return p;  // zeroed: the arena is static and never reused
}

template <class F>
void resolve_one(F& f, char const* name)
{
  f = reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

void resolve()
{
  if (resolved || resolving) return;
  resolving = true;
  resolve_one(real.malloc, "malloc");
  resolve_one(real.free, "free");
  resolve_one(real.calloc, "calloc");
  resolve_one(real.realloc, "realloc");
  resolve_one(real.memalign, "memalign");
  resolve_one(real.posix_memalign, "posix_memalign");
  resolve_one(real.aligned_alloc, "aligned_alloc");
  resolve_one(real.valloc, "valloc");
  resolve_one(real.pvalloc, "pvalloc");
  resolve_one(real.execve, "execve");
  resolve_one(real.execvpe, "execvpe");
  resolve_one(real.fexecve, "fexecve");
  resolve_one(real.exit_now, "_exit");
  resolving = false;
  resolved = true;
}

// The recorder: the table of live blocks, free slots and this process's file.
struct recorder {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pointer_table live;
  mapped_vector<std::uint32_t> free_slots;
  std::uint32_t next_slot = 1;  // slot 0 names frees of blocks never seen live
  trace_file file;
  bool disabled = false;        // after an I/O error or when FRAGLAB_TRACE_DIR is unusable
  bool write_through = false;   // after the destructor: every event goes to disk at once
  bool inherited_pending = false;  // a fork's child that has not opened its file yet
  std::uint64_t stale = 0;      // allocations at an address still live: a free we never saw
};

recorder rec;
thread_local bool in_tracer __attribute__((tls_model("initial-exec"))) = false;

void complain(char const* what)
{
  char const prefix[] = "fraglab tracer: ";
  ssize_t ignored = ::write(2, prefix, sizeof prefix - 1);
  ignored = ::write(2, what, std::strlen(what));
  ignored = ::write(2, "\n", 1);
  (void)ignored;
}

void program_name(char* out, std::size_t capacity)
{
  char exe[4096];
  ssize_t const n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  char const* name = "process";
  if (n > 0) {
    exe[n] = '\0';
    char const* slash = std::strrchr(exe, '/');
    name = slash ? slash + 1 : exe;
  }
  std::size_t i = 0;
  for (; name[i] && i + 1 < capacity; ++i) out[i] = (name[i] == '/' || name[i] == ' ') ? '_' : name[i];
  out[i] = '\0';
}

// Under the lock: makes sure this process has its file, a fork's child replaying what it
// inherited first.
bool ensure_file()
{
  if (rec.disabled) return false;
  if (rec.file.is_open()) return true;
  char dir[trace_file::path_capacity];
  char const* env = ::getenv("FRAGLAB_TRACE_DIR");
  if (env && *env) {
    std::size_t const n = std::strlen(env);
    if (n >= sizeof dir) return rec.disabled = true, false;
    std::memcpy(dir, env, n + 1);
  } else if (!::getcwd(dir, sizeof dir)) {
    complain("cannot find the working directory; not tracing");
    return rec.disabled = true, false;
  }
  char name[256];
  program_name(name, sizeof name);
  // FRAGLAB_TRACE_ONLY (`fraglab trace --only`): the other processes run as they would,
  // keeping LD_PRELOAD for the children they start, but write nothing.
  if (char const* only = ::getenv("FRAGLAB_TRACE_ONLY"); only && *only && std::strcmp(only, name) != 0)
    return rec.disabled = true, false;
  if (!rec.file.create(dir, name, static_cast<long>(::getpid()))) {
    complain("cannot create a trace file in FRAGLAB_TRACE_DIR (or the working directory); not tracing");
    return rec.disabled = true, false;
  }
  if (rec.inherited_pending) {
    // The inherited blocks are this file's first allocations, numbered afresh from 1: the
    // parent's numbers have gaps where its freed blocks were, and a file whose slots exceed
    // its allocations is not a trace (every slot but 0 is allocated at least once).
    rec.inherited_pending = false;
    rec.free_slots.clear();
    rec.next_slot = 1;
    bool ok = true;
    rec.live.for_each_mutable([&](live_block& b) {
      b.slot = rec.next_slot++;
      ok = ok && rec.file.allocation(b.slot, b.size, b.log2_alignment);
    });
    if (!ok) return rec.disabled = true, false;
  }
  return true;
}

void after_event()
{
  if (rec.write_through && !rec.file.flush()) rec.disabled = true;
}

std::uint32_t take_slot()
{
  return rec.free_slots.empty() ? rec.next_slot++ : rec.free_slots.pop_back();
}

void record_free_of(live_block const& b)
{
  if (!rec.file.free(b.slot)) rec.disabled = true;
  if (b.slot != 0) rec.free_slots.push_back(b.slot);
}

void record_allocation(void* p, std::size_t size, std::size_t alignment)
{
  if (!ensure_file()) return;
  auto const address = reinterpret_cast<std::uintptr_t>(p);
  live_block stale;
  if (rec.live.take(address, stale)) {  // freed behind our back: close it first
    ++rec.stale;
    record_free_of(stale);
  }
  live_block const b{address, size == 0 ? 1 : size, take_slot(),
                     static_cast<std::uint8_t>(alignment > 1 ? std::countr_zero(alignment) : 0)};
  if (!rec.live.insert(b) || !rec.file.allocation(b.slot, b.size, b.log2_alignment)) rec.disabled = true;
  after_event();
}

// Removes `p` from the table; its free is recorded by the caller (now, or after realloc).
bool forget(void* p, live_block& b)
{
  if (!ensure_file()) return false;
  if (!rec.live.take(reinterpret_cast<std::uintptr_t>(p), b)) b = live_block{reinterpret_cast<std::uintptr_t>(p), 0, 0, 0};
  return true;
}

// One intercepted call: active when it should be recorded, and then it sets the
// thread-local guard so that anything the recording itself calls is passed through.
class tracing_scope {
 public:
  tracing_scope()
  {
    resolve();  // the caller is about to call a `real` function
    active_ = !in_tracer && resolved && !rec.disabled;
    if (active_) in_tracer = true;
  }
  ~tracing_scope()
  {
    if (active_) in_tracer = false;
  }
  tracing_scope(tracing_scope const&) = delete;
  tracing_scope& operator=(tracing_scope const&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

class locked {
 public:
  locked() { ::pthread_mutex_lock(&rec.lock); }
  ~locked() { ::pthread_mutex_unlock(&rec.lock); }
  locked(locked const&) = delete;
  locked& operator=(locked const&) = delete;
};

void* traced_result(void* p, std::size_t size, std::size_t alignment, bool active)
{
  if (!active) return p;
  locked guard;
  if (p) record_allocation(p, size, alignment);
  else if (size != 0) rec.file.failure();
  return p;
}

void flush_now()
{
  if (!resolved) return;
  locked guard;
  if (rec.file.is_open() && !rec.file.flush()) rec.disabled = true;
}

void prepare_fork()
{
  ::pthread_mutex_lock(&rec.lock);
  if (rec.file.is_open() && !rec.file.flush()) rec.disabled = true;
}

void parent_after_fork() { ::pthread_mutex_unlock(&rec.lock); }

void child_after_fork()
{
  rec.file.detach();
  rec.inherited_pending = true;
  ::pthread_mutex_unlock(&rec.lock);
}

__attribute__((constructor)) void start_tracing()
{
  resolve();
  ::pthread_atfork(prepare_fork, parent_after_fork, child_after_fork);
}

__attribute__((destructor)) void finish_tracing()
{
  flush_now();
  locked guard;
  rec.write_through = true;
  if (rec.stale != 0) {  // a free that bypassed malloc's symbols (a static allocator, a raw syscall)
    char line[160];
    std::snprintf(line, sizeof line, "%llu allocations came back at addresses still live; a free was missed "
                  "before each (recorded there)", static_cast<unsigned long long>(rec.stale));
    complain(line);
  }
}

void* malloc_impl(std::size_t size)
{
  if (resolving) return bootstrap_alloc(size);
  tracing_scope scope;
  return traced_result(real.malloc(size), size, 1, scope.active());
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* malloc(std::size_t size) { return malloc_impl(size); }

__attribute__((visibility("default"))) void free(void* p)
{
  if (!p || from_bootstrap(p)) return;
  tracing_scope scope;
  if (scope.active()) {
    locked guard;
    live_block b;
    if (forget(p, b)) record_free_of(b);
    after_event();
  }
  real.free(p);
}

__attribute__((visibility("default"))) void* calloc(std::size_t n, std::size_t size)
{
  if (resolving) return n && size > SIZE_MAX / n ? nullptr : bootstrap_alloc(n * size);
  tracing_scope scope;
  std::size_t const bytes = n && size > SIZE_MAX / n ? SIZE_MAX : n * size;
  return traced_result(real.calloc(n, size), bytes, 1, scope.active());
}

__attribute__((visibility("default"))) void* realloc(void* p, std::size_t size)
{
  if (!p) return malloc_impl(size);
  if (from_bootstrap(p)) {  // only dlsym's early allocations: move them to the real heap
    void* q = malloc_impl(size);
    if (q) std::memcpy(q, p, std::min<std::size_t>(size, bootstrap_arena + sizeof bootstrap_arena - static_cast<unsigned char*>(p)));
    return q;
  }
  tracing_scope scope;
  if (!scope.active()) return real.realloc(p, size);
  live_block old{};
  bool known;
  {
    locked guard;
    known = forget(p, old);
  }
  void* q = real.realloc(p, size);
  if (!known) return q;
  locked guard;
  if (!q && size != 0) {  // failed: the old block stays live (if it ever was, to us)
    if (old.slot != 0) rec.live.insert(old);
    rec.file.failure();
  } else if (!q) {  // realloc(p, 0) freed it
    record_free_of(old);
    after_event();
  } else if (q == p) {
    record_free_of(old);
    record_allocation(q, size, 1);
  } else {
    record_allocation(q, size, 1);
    record_free_of(old);
    after_event();
  }
  return q;
}

__attribute__((visibility("default"))) void* reallocarray(void* p, std::size_t n, std::size_t size)
{
  if (n && size > SIZE_MAX / n) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, n * size);
}

__attribute__((visibility("default"))) void* memalign(std::size_t alignment, std::size_t size)
{
  tracing_scope scope;
  return traced_result(real.memalign(alignment, size), size, std::bit_ceil(alignment), scope.active());
}

__attribute__((visibility("default"))) void* aligned_alloc(std::size_t alignment, std::size_t size)
{
  tracing_scope scope;
  return traced_result(real.aligned_alloc(alignment, size), size, std::bit_ceil(alignment), scope.active());
}

__attribute__((visibility("default"))) int posix_memalign(void** out, std::size_t alignment, std::size_t size)
{
  tracing_scope scope;
  int const status = real.posix_memalign(out, alignment, size);
  if (status == 0) traced_result(*out, size, alignment, scope.active());
  else if (scope.active() && status == ENOMEM) traced_result(nullptr, size, alignment, true);
  return status;
}

__attribute__((visibility("default"))) void* valloc(std::size_t size)
{
  tracing_scope scope;
  return traced_result(real.valloc(size), size, static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), scope.active());
}

__attribute__((visibility("default"))) void* pvalloc(std::size_t size)
{
  tracing_scope scope;
  std::size_t const page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t const rounded = size == 0 ? page : (size + page - 1) / page * page;
  return traced_result(real.pvalloc(size), rounded, page, scope.active());
}

// exec replaces the image without running destructors: flush first. glibc's execv, execvp
// and execl* reach execve internally, not through the symbol, so each entry is wrapped.
__attribute__((visibility("default"))) int execve(char const* path, char* const argv[], char* const envp[])
{
  resolve();
  flush_now();
  return real.execve(path, argv, envp);
}

__attribute__((visibility("default"))) int execvpe(char const* file, char* const argv[], char* const envp[])
{
  resolve();
  flush_now();
  return real.execvpe(file, argv, envp);
}

__attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[])
{
  resolve();
  flush_now();
  return real.fexecve(fd, argv, envp);
}

__attribute__((visibility("default"))) int execv(char const* path, char* const argv[]) { return execve(path, argv, environ); }

__attribute__((visibility("default"))) int execvp(char const* file, char* const argv[]) { return execvpe(file, argv, environ); }

}  // extern "C"

namespace {

// execl, execlp, execle: gather the variadic arguments into an argv on the stack.
constexpr int max_list_arguments = 4096;

int collect(char const* first, va_list ap, char* argv[])
{
  int n = 0;
  for (char const* a = first; a; a = va_arg(ap, char const*)) {
    if (n + 1 >= max_list_arguments) {
      errno = E2BIG;
      return -1;
    }
    argv[n++] = const_cast<char*>(a);
  }
  argv[n] = nullptr;
  return n;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int execl(char const* path, char const* arg, ...)
{
  char* argv[max_list_arguments];
  va_list ap;
  va_start(ap, arg);
  int const n = collect(arg, ap, argv);
  va_end(ap);
  return n < 0 ? -1 : execve(path, argv, environ);
}

__attribute__((visibility("default"))) int execlp(char const* file, char const* arg, ...)
{
  char* argv[max_list_arguments];
  va_list ap;
  va_start(ap, arg);
  int const n = collect(arg, ap, argv);
  va_end(ap);
  return n < 0 ? -1 : execvpe(file, argv, environ);
}

__attribute__((visibility("default"))) int execle(char const* path, char const* arg, ...)
{
  char* argv[max_list_arguments];
  va_list ap;
  va_start(ap, arg);
  int const n = collect(arg, ap, argv);
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return n < 0 ? -1 : execve(path, argv, envp);
}

__attribute__((visibility("default"))) [[noreturn]] void _exit(int status)
{
  resolve();
  flush_now();
  real.exit_now(status);
  __builtin_unreachable();
}

__attribute__((visibility("default"))) [[noreturn]] void _Exit(int status) { _exit(status); }

}  // extern "C"
