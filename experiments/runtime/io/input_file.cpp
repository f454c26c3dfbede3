#include <fraglab/runtime/io/input_file.hpp>

#include <fraglab/runtime/io/temporary_file.hpp>
#include <fraglab/runtime/io/write_fully.hpp>

#include <zlib.h>
#include <zstd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fraglab {
namespace {

enum class compression { none, gzip, zstd };

constexpr std::size_t block = 1 << 16;

bool starts_with(std::string_view head, std::string_view magic) { return head.substr(0, magic.size()) == magic; }

compression compression_of(std::string_view head)
{
  if (starts_with(head, "\x1f\x8b")) return compression::gzip;
  if (starts_with(head, "\x28\xb5\x2f\xfd")) return compression::zstd;
  return compression::none;
}

// The compressions fraglab does not read, by their magic numbers, with the command that
// undoes each: a clear refusal rather than "binary data, not a trace".
std::optional<std::string> unreadable_compression(std::string_view head)
{
  if (starts_with(head, "\xfd" "7zXZ")) return "xz-compressed: decompress it first (xz -dk FILE)";
  if (starts_with(head, "BZh") && head.size() > 3 && head[3] >= '1' && head[3] <= '9')
    return "bzip2-compressed: decompress it first (bzip2 -dk FILE)";
  if (starts_with(head, "\x04\x22\x4d\x18")) return "lz4-compressed: decompress it first (lz4 -d FILE)";
  if (starts_with(head, "PK\x03\x04")) return "a zip archive: extract the trace first (unzip FILE)";
  if (starts_with(head, "7z\xbc\xaf\x27\x1c")) return "a 7z archive: extract the trace first (7z x FILE)";
  if (starts_with(head, "\x5d\x00\x00")) return "lzma-compressed: decompress it first (unlzma -k FILE)";
  return std::nullopt;
}

constexpr std::string_view readable = "; fraglab reads gzip and zstd itself";

class fd_guard {
 public:
  explicit fd_guard(int fd) : fd_(fd) {}
  fd_guard(fd_guard const&) = delete;
  fd_guard& operator=(fd_guard const&) = delete;
  ~fd_guard()
  {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Reads what is there, up to n bytes; 0 only at the end.
std::size_t read_some(int fd, unsigned char* to, std::size_t n, std::string const& path)
{
  for (;;) {
    ssize_t const r = ::read(fd, to, n);
    if (r >= 0) return static_cast<std::size_t>(r);
    if (errno != EINTR) throw input_error(path + ": read error: " + std::strerror(errno));
  }
}

// Fills up to n bytes, stopping early only at the end: a pipe hands out what it has.
std::size_t read_full(int fd, unsigned char* to, std::size_t n, std::string const& path)
{
  std::size_t got = 0;
  while (got < n) {
    std::size_t const r = read_some(fd, to + got, n - got, path);
    if (r == 0) break;
    got += r;
  }
  return got;
}

void spool_write(int fd, unsigned char const* data, std::size_t n, std::string const& path)
{
  if (int const e = write_fully(fd, data, n); e != 0)
    throw input_error(path + ": cannot copy it to a temporary file: " + std::strerror(e));
}

// How far decompression may run ahead of the compressed bytes read. Real traces and logs
// compress up to about 450 times (TF's BFC log, its stacks repeated); zeros compress 30,000
// times, and a few hundred kilobytes of them would fill the disk.
constexpr std::uint64_t default_decompression_ratio = 2000;
constexpr std::uint64_t decompression_allowance = std::uint64_t{64} << 20;  // what any small file may grow to

std::uint64_t decompression_ratio()
{
  char const* v = std::getenv("FRAGLAB_MAX_DECOMPRESSION_RATIO");
  if (v == nullptr || *v == '\0') return default_decompression_ratio;
  char* end = nullptr;
  unsigned long long const r = std::strtoull(v, &end, 10);
  if (*end != '\0' || r == 0) throw std::invalid_argument(std::string("FRAGLAB_MAX_DECOMPRESSION_RATIO: expected a whole number above 0, got '") + v + "'");
  return r;
}

// Decompressed bytes on their way to the spool, checked as they come: the first bytes must
// begin a trace (no zero byte in text, or a binary format's magic), and the whole may not
// outgrow its compressed size by more than the ratio allows.
class decompressed_sink {
 public:
  decompressed_sink(int fd, std::string const& path) : fd_(fd), path_(path), ratio_(decompression_ratio()) {}

  void write(unsigned char const* data, std::size_t n, std::uint64_t compressed_so_far)
  {
    if (head_.size() < head_bytes) {
      head_.append(reinterpret_cast<char const*>(data), std::min(n, head_bytes - head_.size()));
      if (head_.size() == head_bytes) check_head();
    }
    written_ += n;
    if (written_ > decompression_allowance && written_ / ratio_ > compressed_so_far)
      throw input_error(path_ + ": decompresses to more than " + std::to_string(ratio_) + " times its compressed size (" +
                        std::to_string(written_) + " bytes from " + std::to_string(compressed_so_far) +
                        "): refused as a decompression bomb; FRAGLAB_MAX_DECOMPRESSION_RATIO=N allows N times");
    spool_write(fd_, data, n, path_);
  }

  void finish() { check_head(); }

 private:
  static constexpr std::size_t head_bytes = 64;

  void check_head() const
  {
    std::string_view const h = head_;
    bool const binary = h.starts_with(std::string_view("FLTRACE\0", 8)) || (!h.empty() && static_cast<unsigned char>(h[0]) == 0x80);
    if (!binary && h.find('\0') != std::string_view::npos)
      throw input_error(path_ + ": decompressed, it starts with zero bytes, which no trace does (native text, native binary, RMM CSV, "
                                "a PyTorch snapshot or a TF log): " + quoted(h.substr(0, 16)));
  }

  int fd_;
  std::string const& path_;
  std::uint64_t ratio_;
  std::string head_;
  std::uint64_t written_ = 0;
};

// gzip, concatenated members included (as gzip -d reads them).
void gunzip(int from, std::vector<unsigned char> first, decompressed_sink& to, std::string const& path)
{
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw input_error(path + ": cannot start gzip decompression");
  struct end_guard {
    z_stream& z;
    ~end_guard() { inflateEnd(&z); }
  } guard{z};
  std::vector<unsigned char> in = std::move(first), out(block);
  std::uint64_t consumed = 0;
  bool ended = false;
  for (;;) {
    if (in.empty()) {
      in.resize(block);
      in.resize(read_some(from, in.data(), block, path));
      if (in.empty()) break;
    }
    z.next_in = in.data();
    z.avail_in = static_cast<uInt>(in.size());
    while (z.avail_in > 0) {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      int const rc = inflate(&z, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
        throw input_error(path + ": compressed byte " + std::to_string(consumed + (in.size() - z.avail_in)) +
                          ": corrupt gzip data (" + (z.msg != nullptr ? z.msg : "zlib error " + std::to_string(rc)) + ")");
      to.write(out.data(), out.size() - z.avail_out, consumed + (in.size() - z.avail_in));
      ended = rc == Z_STREAM_END;
      if (ended && z.avail_in > 0) inflateReset(&z);  // another member follows
      if (rc == Z_BUF_ERROR && z.avail_out == out.size()) break;
    }
    consumed += in.size();
    in.clear();
  }
  if (!ended) throw input_error(path + ": compressed byte " + std::to_string(consumed) + ": truncated gzip data");
}

void unzstd(int from, std::vector<unsigned char> first, decompressed_sink& to, std::string const& path)
{
  std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> d(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!d) throw input_error(path + ": cannot start zstd decompression");
  std::vector<unsigned char> in = std::move(first), out(ZSTD_DStreamOutSize());
  std::uint64_t consumed = 0;
  std::size_t pending = 1;  // ZSTD_decompressStream's hint: 0 once a frame has ended
  for (;;) {
    if (in.empty()) {
      in.resize(block);
      in.resize(read_some(from, in.data(), block, path));
      if (in.empty()) break;
    }
    ZSTD_inBuffer ib{in.data(), in.size(), 0};
    // Until the input is used up and the decoder holds nothing more (a full output buffer
    // may leave some behind). A frame that ended exactly as the buffer filled holds nothing:
    // one more call would start reading a next frame from no bytes, and its hint would say
    // "truncated" of a whole file.
    for (bool full = true; ib.pos < ib.size || (full && pending != 0);) {
      ZSTD_outBuffer ob{out.data(), out.size(), 0};
      pending = ZSTD_decompressStream(d.get(), &ob, &ib);
      if (ZSTD_isError(pending))
        throw input_error(path + ": compressed byte " + std::to_string(consumed + ib.pos) + ": corrupt zstd data (" +
                          ZSTD_getErrorName(pending) + ")");
      to.write(out.data(), ob.pos, consumed + ib.pos);
      full = ob.pos == ob.size;
    }
    consumed += in.size();
    in.clear();
  }
  if (pending != 0) throw input_error(path + ": compressed byte " + std::to_string(consumed) + ": truncated zstd data");
}

// Copies (decompressing) what `from` yields after `first` into a new unlinked file.
int spool(int from, std::vector<unsigned char> first, compression c, std::string const& path)
{
  fd_guard to(unlinked_temporary_file());
  decompressed_sink sink(to.get(), path);
  switch (c) {
    case compression::gzip:
      gunzip(from, std::move(first), sink, path);
      sink.finish();
      break;
    case compression::zstd:
      unzstd(from, std::move(first), sink, path);
      sink.finish();
      break;
    case compression::none: {
      spool_write(to.get(), first.data(), first.size(), path);
      std::vector<unsigned char> buf(block);
      while (std::size_t const n = read_some(from, buf.data(), buf.size(), path)) spool_write(to.get(), buf.data(), n, path);
      break;
    }
  }
  return to.release();
}

// Spools by name, once a process: a pipe can be read only once, and a compressed binary
// trace is read again on every pass.
std::mutex spools_mutex;
std::unordered_map<std::string, int> spools;

}  // namespace

std::ifstream open_input(std::string const& path, std::string_view expected, std::ios::openmode mode)
{
  std::lock_guard lock(spools_mutex);
  auto opened = [&](std::string const& name) {
    std::ifstream in(name, mode);
    if (!in) throw input_error(path + ": cannot open for reading");
    return in;
  };
  if (auto const it = spools.find(path); it != spools.end()) return opened("/proc/self/fd/" + std::to_string(it->second));

  bool const standard_input = path == "-";
  struct stat st{};
  if (!standard_input && ::stat(path.c_str(), &st) != 0)
    throw input_error(path + ": cannot open for reading: " + std::strerror(errno));
  // Opening a directory succeeds on Linux, and its reads then fail as if it were empty.
  if (!standard_input && S_ISDIR(st.st_mode)) throw input_error(path + ": a directory; expected " + std::string(expected));
  fd_guard owned(standard_input ? -1 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!standard_input && owned.get() < 0) throw input_error(path + ": cannot open for reading: " + std::strerror(errno));
  int const from = standard_input ? 0 : owned.get();

  std::vector<unsigned char> head(block);
  head.resize(read_full(from, head.data(), head.size(), path));
  std::string_view const h(reinterpret_cast<char const*>(head.data()), head.size());
  if (auto const why = unreadable_compression(h)) throw input_error(path + ": " + *why + std::string(readable));
  compression const c = compression_of(h);
  if (c == compression::none && !standard_input && S_ISREG(st.st_mode)) return opened(path);
  int const fd = spool(from, std::move(head), c, path);
  spools.emplace(path, fd);
  return opened("/proc/self/fd/" + std::to_string(fd));
}

}  // namespace fraglab
