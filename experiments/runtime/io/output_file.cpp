#include <fraglab/runtime/io/output_file.hpp>

#include <fraglab/runtime/io/temporary_file.hpp>
#include <fraglab/runtime/io/write_fully.hpp>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <utility>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace fraglab {
namespace {

namespace fs = std::filesystem;

std::string error_text(int e) { return std::strerror(e); }

// Standard output and error by the names a shell user gives them; written through the
// process's own descriptor, so that `-o /dev/stdout > file` appends where the shell put it.
int standard_stream(std::string const& path)
{
  if (path == "-" || path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1") return 1;
  if (path == "/dev/stderr" || path == "/dev/fd/2" || path == "/proc/self/fd/2") return 2;
  return -1;
}

// The name a chain of symbolic links ends at (which need not exist yet: `ln -s new.csv
// out.csv` then `-o out.csv` writes new.csv). Writing to the link itself would replace it
// with a regular file.
std::string final_target(std::string path)
{
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st{};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::array<char, 4096> buf{};
    ssize_t const n = ::readlink(path.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) return path;
    fs::path const to(std::string(buf.data(), static_cast<std::size_t>(n)));
    path = to.is_absolute() ? to.string() : (fs::path(path).parent_path() / to).string();
  }
  throw std::invalid_argument(path + ": too many levels of symbolic links");
}

std::string directory_of(std::string const& path)
{
  std::string const dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// --- removing the temporaries beside targets when a signal ends the process -------------
// The handler may only make async-signal-safe calls: it reads a fixed table of names that
// stay allocated while registered, unlinks them and re-raises the signal.

constexpr std::size_t max_temporaries = 64;
std::array<std::atomic<char const*>, max_temporaries> temporaries{};

extern "C" void remove_temporaries_and_reraise(int sig)
{
  for (auto& slot : temporaries)
    if (char const* name = slot.load()) ::unlink(name);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_signal_handlers()
{
  static std::once_flag once;
  std::call_once(once, [] {
    for (int const sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old{};
      // A signal the caller ignores (nohup's SIGHUP) stays ignored.
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa{};
      sa.sa_handler = remove_temporaries_and_reraise;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

void register_temporary(char const* name)
{
  for (auto& slot : temporaries) {
    char const* empty = nullptr;
    if (slot.compare_exchange_strong(empty, name)) return;
  }
  // More outputs open at once than the table holds: still correct, only not cleaned on a signal.
}

void unregister_temporary(char const* name)
{
  for (auto& slot : temporaries) {
    char const* expected = name;
    if (slot.compare_exchange_strong(expected, nullptr)) return;
  }
}

mode_t process_umask()
{
  static mode_t const mask = [] {
    mode_t const m = ::umask(022);
    ::umask(m);
    return m;
  }();
  return mask;
}

void write_all(int fd, char const* data, std::size_t n, std::string const& path)
{
  if (int const e = write_fully(fd, data, n); e != 0) throw std::runtime_error(path + ": write failed: " + error_text(e));
}

void copy_into(int from, int to, std::string const& path)
{
  if (::lseek(from, 0, SEEK_SET) != 0) throw std::runtime_error(path + ": cannot read the temporary file back");
  std::array<char, 1 << 16> buf{};
  for (;;) {
    ssize_t const r = ::read(from, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw std::runtime_error(path + ": cannot read the temporary file back: " + error_text(errno));
    if (r == 0) return;
    write_all(to, buf.data(), static_cast<std::size_t>(r), path);
  }
}

bool stat_of(std::string const& path, struct stat& st) { return ::stat(path.c_str(), &st) == 0; }

}  // namespace

void check_output_file(std::string const& path, std::vector<std::string> const& inputs)
{
  if (path.empty()) throw std::invalid_argument("the file name is empty");
  if (standard_stream(path) >= 0) return;
  std::string const target = final_target(path);
  struct stat st{};
  bool const exists = stat_of(target, st);
  if (exists && S_ISDIR(st.st_mode)) throw std::invalid_argument(path + ": is a directory; expected a file name");
  if (exists && S_ISREG(st.st_mode))
    for (auto const& input : inputs) {
      struct stat in{};
      if (standard_stream(input) < 0 && stat_of(input, in) && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
        throw std::invalid_argument(path + ": is the input " + input + "; write the output to another file");
    }
  if (exists && !S_ISREG(st.st_mode)) return;  // written through
  if (exists && st.st_nlink > 1) {             // rewritten in place: it must open for writing
    int const fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw std::invalid_argument(path + ": cannot be written: " + error_text(errno));
    ::close(fd);
    return;
  }
  std::string const dir = directory_of(target);
  struct stat d{};
  if (!stat_of(dir, d))
    throw std::invalid_argument(path + ": " + dir + " does not exist");
  if (!S_ISDIR(d.st_mode)) throw std::invalid_argument(path + ": " + dir + " is not a directory");
  // Tried, not inferred from the mode bits: root passes those, a read-only file system does not.
  std::string probe = target + ".fraglab-XXXXXX";
  int const fd = ::mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) throw std::invalid_argument(path + ": cannot create a file in " + dir + ": " + error_text(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

bool same_output(std::string const& a, std::string const& b)
{
  int const sa = standard_stream(a), sb = standard_stream(b);
  if (sa >= 0 || sb >= 0) return sa == sb;
  std::string const ta = final_target(a), tb = final_target(b);
  struct stat x{}, y{};
  if (stat_of(ta, x) && stat_of(tb, y)) return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
  return fs::weakly_canonical(ta) == fs::weakly_canonical(tb);
}

output_file::output_file(std::string path) : path_(std::move(path))
{
  check_output_file(path_);
  int const standard = standard_stream(path_);
  struct stat st{};
  if (standard >= 0) {
    kind_ = kind::through;
  } else {
    target_ = final_target(path_);
    bool const exists = stat_of(target_, st);
    kind_ = !exists ? kind::replace : !S_ISREG(st.st_mode) ? kind::through : st.st_nlink > 1 ? kind::in_place : kind::replace;
  }
  if (kind_ == kind::replace) {
    install_signal_handlers();
    tmp_ = target_ + ".fraglab-XXXXXX";
    fd_ = ::mkostemp(tmp_.data(), O_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error(path_ + ": cannot create a temporary file beside it: " + error_text(errno));
    register_temporary(tmp_.c_str());
    bool const exists = stat_of(target_, st);
    // The result takes the place of the file it replaces, so it keeps that file's mode and
    // owner (a 0600 file stays private); a new file gets what the umask allows, as `>` would.
    (void)::fchmod(fd_, exists ? st.st_mode & 07777 : 0666 & ~process_umask());
    if (exists) (void)::fchown(fd_, st.st_uid, st.st_gid);
  } else {
    fd_ = unlinked_temporary_file();
  }
  out_.open("/proc/self/fd/" + std::to_string(fd_), std::ios::binary | std::ios::trunc);
  if (!out_) {
    int const e = errno;
    discard();
    throw std::runtime_error(path_ + ": cannot open the temporary file for writing: " + error_text(e));
  }
}

output_file::~output_file()
{
  if (out_.is_open()) out_.close();
  if (!done_) discard();
  if (fd_ >= 0) ::close(fd_);
}

void output_file::discard() noexcept
{
  if (!tmp_.empty()) {
    ::unlink(tmp_.c_str());
    unregister_temporary(tmp_.c_str());
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  done_ = true;
}

namespace {

// Opens `target` for the copy, and closes it checking the result: NFS and some devices report
// a failed write only there.
class copy_target {
 public:
  copy_target(std::string const& target, int flags) : fd_(::open(target.c_str(), flags | O_WRONLY | O_CLOEXEC | O_NOCTTY)) {}
  copy_target(copy_target const&) = delete;
  copy_target& operator=(copy_target const&) = delete;
  ~copy_target()
  {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] bool close() noexcept
  {
    int const fd = std::exchange(fd_, -1);
    return ::close(fd) == 0;
  }

 private:
  int fd_;
};

}  // namespace

void output_file::commit()
{
  errno = 0;
  out_.close();  // flushes; a failed write or flush leaves failbit set
  int const write_errno = errno;
  bool const failed = out_.fail();
  done_ = true;  // from here on this function cleans up after itself
  auto give_up = [&](std::string const& why) {
    discard();
    throw std::runtime_error(path_ + ": " + why);
  };
  if (failed) give_up("write failed" + (write_errno != 0 ? ": " + error_text(write_errno) : std::string()));
  switch (kind_) {
    case kind::replace:
      if (std::rename(tmp_.c_str(), target_.c_str()) != 0) give_up("cannot rename the temporary file into place: " + error_text(errno));
      unregister_temporary(tmp_.c_str());
      return;
    case kind::in_place:
    case kind::through: {
      if (int const standard = standard_stream(path_); standard >= 0) {
        (standard == 1 ? std::cout : std::cerr).flush();  // what the program printed there goes first
        copy_into(fd_, standard, path_);
        return;
      }
      copy_target to(target_, kind_ == kind::in_place ? O_TRUNC : 0);
      if (to.fd() < 0) give_up("cannot open for writing: " + error_text(errno));
      copy_into(fd_, to.fd(), path_);
      if (!to.close()) give_up("write failed: " + error_text(errno));
      return;
    }
  }
}

void write_output_file(std::string const& path, std::string const& content)
{
  output_file f(path);
  f.stream() << content;
  f.commit();
}

}  // namespace fraglab
