// A program that counts its own allocations, for checking the tracer against it. Every
// request it makes has a size in a band the C and C++ runtimes do not use (77000-77999),
// so the test can pick its events out of everything else the process allocates.
//
//   counting_program calls N        every allocation function N times; prints per-size counts
//   counting_program threads T N    T threads, each N mallocs and frees, some held a while
//   counting_program fork K C       K blocks live across fork; the child allocates C, frees
//                                   everything and leaves by _exit; the parent frees its K
//   counting_program fork-exit K C  2K blocks, every other one freed (gaps in the tracer's
//                                   numbering), then as fork, but the child returns from
//                                   main (exit, destructors and all), as a shell's $(...) does
//   counting_program exec E         E blocks, then exec of itself as `calls 1`
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t band = 77000;

void must(bool ok, char const* what)
{
  if (!ok) {
    std::fprintf(stderr, "counting_program: %s failed\n", what);
    std::exit(1);
  }
}

// One line per size: "SIZE allocations", the count the test compares with the trace.
int calls(long n)
{
  for (long i = 0; i < n; ++i) {
    void* a = std::malloc(band + 1);
    void* b = std::calloc(1, band + 2);
    void* c = std::malloc(band + 10);
    c = std::realloc(c, band + 3);  // a new allocation of band+3, the free of band+10
    void* d = memalign(64, band + 4);
    void* e = nullptr;
    must(posix_memalign(&e, 128, band + 5) == 0, "posix_memalign");
    void* f = std::aligned_alloc(256, band + 824);  // 77824: a multiple of the alignment
    void* g = valloc(band + 7);
    void* h = reallocarray(nullptr, 1, band + 8);
    must(a && b && c && d && f && g && h, "allocation");
    for (void* p : {a, b, c, d, e, f, g, h}) std::free(p);
  }
  for (std::size_t size : {band + 1, band + 2, band + 10, band + 3, band + 4, band + 5, band + 824, band + 7, band + 8})
    std::printf("%zu %ld\n", size, n);
  return 0;
}

int threads(long t, long n)
{
  std::vector<std::thread> workers;
  for (long w = 0; w < t; ++w)
    workers.emplace_back([n, w] {
      std::vector<void*> held;
      for (long i = 0; i < n; ++i) {
        held.push_back(std::malloc(band + 100 + static_cast<std::size_t>((i + w) % 50)));
        if (held.size() > 16) {  // free out of order, so addresses are reused across threads
          std::free(held[static_cast<std::size_t>(i) % held.size()]);
          held[static_cast<std::size_t>(i) % held.size()] = held.back();
          held.pop_back();
        }
      }
      for (void* p : held) std::free(p);
    });
  for (auto& w : workers) w.join();
  std::printf("%ld\n", t * n);
  return 0;
}

int forking(long k, long c)
{
  std::vector<void*> parent_blocks;
  for (long i = 0; i < k; ++i) parent_blocks.push_back(std::malloc(band + 200));
  std::fflush(stdout);
  pid_t const child = fork();
  must(child >= 0, "fork");
  if (child == 0) {
    std::vector<void*> own;
    for (long i = 0; i < c; ++i) own.push_back(std::malloc(band + 201));
    for (void* p : own) std::free(p);
    for (void* p : parent_blocks) std::free(p);
    _exit(0);
  }
  int status = 0;
  must(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child");
  for (void* p : parent_blocks) std::free(p);
  std::printf("%ld %ld\n", k, c);
  return 0;
}

int forking_with_gaps(long k, long c)
{
  std::vector<void*> parent_blocks;
  for (long i = 0; i < 2 * k; ++i) {
    void* p = std::malloc(band + 210);
    if (i % 2 == 0) std::free(p);
    else parent_blocks.push_back(p);
  }
  std::fflush(stdout);
  pid_t const child = fork();
  must(child >= 0, "fork");
  if (child == 0) {
    std::vector<void*> own;
    for (long i = 0; i < c; ++i) own.push_back(std::malloc(band + 211));
    for (void* p : own) std::free(p);
    for (void* p : parent_blocks) std::free(p);
    return 0;  // exit(), not _exit(): the tracer's destructor writes the header
  }
  int status = 0;
  must(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child");
  for (void* p : parent_blocks) std::free(p);
  std::printf("%ld %ld\n", k, c);
  return 0;
}

int exec_self(char const* self, long e)
{
  for (long i = 0; i < e; ++i) must(std::malloc(band + 300) != nullptr, "malloc");  // still live at exec
  execl(self, self, "calls", "1", static_cast<char*>(nullptr));
  must(false, "execl");
  return 1;
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc == 3 && std::strcmp(argv[1], "calls") == 0) return calls(std::atol(argv[2]));
  if (argc == 4 && std::strcmp(argv[1], "threads") == 0) return threads(std::atol(argv[2]), std::atol(argv[3]));
  if (argc == 4 && std::strcmp(argv[1], "fork") == 0) return forking(std::atol(argv[2]), std::atol(argv[3]));
  if (argc == 4 && std::strcmp(argv[1], "fork-exit") == 0) return forking_with_gaps(std::atol(argv[2]), std::atol(argv[3]));
  if (argc == 3 && std::strcmp(argv[1], "exec") == 0) return exec_self(argv[0], std::atol(argv[2]));
  std::fprintf(stderr, "usage: counting_program calls N | threads T N | fork K C | fork-exit K C | exec E\n");
  return 2;
}
