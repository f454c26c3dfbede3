// fraglab record-tf -- PROGRAM ARGS: runs an unmodified TensorFlow (or JAX) program with its
// BFC allocator's log switched on, and writes that log, zstd-compressed, for verify, replay
// and the rest (docs/tensorflow.md; the log's lines: experiments/runtime/trace/tf_bfc_log.hpp).
#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/cli/preload_library.hpp>

#include <fraglab/runtime/io/output_file.hpp>

#include <boost/program_options.hpp>
#include <zstd.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab::cli {
namespace {

namespace fs = std::filesystem;

constexpr char const* stacks_file = "libfraglab_tf_stacks.so";
constexpr std::string_view default_cpu_limit_mb = "65536";  // TF's default for TF_CPU_BFC_MEM_LIMIT_IN_MB

// PROGRAM.tflog.zst, where PROGRAM is the script a Python runs (`python train.py` ->
// train.tflog.zst, `python -m pkg.mod` -> pkg.mod), else the program's file name.
std::string default_output(std::vector<std::string> const& command)
{
  std::string name = fs::path(command[0]).filename().string();
  if (name.starts_with("python"))
    for (std::size_t i = 1; i < command.size(); ++i) {
      if (command[i] == "-m" && i + 1 < command.size()) {
        name = command[i + 1];
        break;
      }
      if (command[i].ends_with(".py")) {
        name = fs::path(command[i]).stem().string();
        break;
      }
    }
  return name + ".tflog.zst";
}

// The settings that make TF's BFC allocator log what a replay needs, in the child before exec.
void set_recording_environment(fs::path const& stacks)
{
  if (std::getenv("TF_CPU_ALLOCATOR_USE_BFC") == nullptr) ::setenv("TF_CPU_ALLOCATOR_USE_BFC", "1", 1);
  std::string vmodule = "bfc_allocator=4";
  if (char const* old = std::getenv("TF_CPP_VMODULE"); old && *old) vmodule = std::string(old) + "," + vmodule;
  ::setenv("TF_CPP_VMODULE", vmodule.c_str(), 1);
  ::setenv("TF_CPP_MIN_LOG_LEVEL", "0", 1);  // VLOG lines are INFO lines
  if (!stacks.empty()) prepend_preload(stacks);
}

// Compresses the log into the output as it arrives, and passes the program's own stderr on.
class log_writer {
 public:
  explicit log_writer(std::ostream& out) : out_(out), z_(ZSTD_createCCtx(), ZSTD_freeCCtx), buffer_(ZSTD_CStreamOutSize())
  {
    if (!z_) throw std::runtime_error("cannot start zstd compression");
    ZSTD_CCtx_setParameter(z_.get(), ZSTD_c_compressionLevel, 9);
  }

  // A line of the log's own, which the terminal does not see.
  void header(std::string_view l)
  {
    compress(l);
    compress("\n");
  }

  void line(std::string_view l)
  {
    bool const bfc = in_stack_ || l.find("bfc_allocator.cc:") != std::string_view::npos || (after_stack_ && l.empty());
    after_stack_ = false;
    if (l.find("[mem-debug] ") != std::string_view::npos) {
      if (l.find("[mem-debug] AllocateRaw,") != std::string_view::npos) ++allocations_;
      if (l.find("*** Begin stack trace ***") != std::string_view::npos) in_stack_ = true;
    } else if (in_stack_ && l.starts_with("*** End stack trace ***")) {
      in_stack_ = false;
      after_stack_ = true;
    }
    compress(l);
    compress("\n");
    if (!bfc) {
      std::cerr.write(l.data(), static_cast<std::streamsize>(l.size()));
      std::cerr << '\n';
    }
  }

  void finish()
  {
    ZSTD_inBuffer in{nullptr, 0, 0};
    for (std::size_t left = 1; left != 0;) {
      ZSTD_outBuffer out{buffer_.data(), buffer_.size(), 0};
      left = ZSTD_compressStream2(z_.get(), &out, &in, ZSTD_e_end);
      if (ZSTD_isError(left)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(left));
      out_.write(buffer_.data(), static_cast<std::streamsize>(out.pos));
    }
  }

  [[nodiscard]] std::size_t allocations() const noexcept { return allocations_; }

 private:
  void compress(std::string_view s)
  {
    ZSTD_inBuffer in{s.data(), s.size(), 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer out{buffer_.data(), buffer_.size(), 0};
      std::size_t const rc = ZSTD_compressStream2(z_.get(), &out, &in, ZSTD_e_continue);
      if (ZSTD_isError(rc)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(rc));
      out_.write(buffer_.data(), static_cast<std::streamsize>(out.pos));
    }
  }

  std::ostream& out_;
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> z_;
  std::vector<char> buffer_;
  bool in_stack_ = false, after_stack_ = false;
  std::size_t allocations_ = 0;
};

std::string shell_words(std::vector<std::string> const& command)
{
  std::string out;
  for (auto const& w : command) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

int record_tf(std::vector<std::string> const& args)
{
  auto const [options, command] = split_at_dashes(args);
  po::options_description desc(
      "fraglab record-tf [-o FILE] -- PROGRAM [ARGS...]\n\n"
      "  fraglab record-tf -- python train.py          train.tflog.zst: TF's BFC allocator, every allocation and free\n"
      "  fraglab record-tf -o run.tflog.zst -- python -m my.model\n"
      "  fraglab verify run.tflog.zst                  every address and region compared with tf_bfc's\n\n"
      "Runs PROGRAM with TF_CPU_ALLOCATOR_USE_BFC=1 (TF's CPU allocator is then a BFCAllocator, as GPU_0_bfc is)\n"
      "and TF_CPP_VMODULE=bfc_allocator=4: TF logs every allocation, free and region, each with a line written\n"
      "under the allocator's lock, so that the recorded order is the allocator's with any number of threads.\n"
      "The program's output is its own; the log goes to FILE (zstd), written only if it holds an allocation.\n"
      "Exit: the program's.\n\n"
      "Options");
  desc.add_options()                                                                                  //
      ("output,o", po::value<std::string>(), "the log (default: PROGRAM.tflog.zst here, PROGRAM the script a Python runs)")  //
      ("stacks", po::value<std::string>()->default_value(""),
       "the library that makes TF's stack capture cheap (default: beside fraglab; docs/tensorflow.md)")  //
      ("slow-stacks", "leave TF's own stack capture in place (70 ms an allocation)");
  auto const parsed = parse_command(options, desc);
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (command.empty()) throw std::invalid_argument("no program given (fraglab record-tf -- PROGRAM ARGS)");
  std::string const out_path = vm.count("output") ? vm["output"].as<std::string>() : default_output(command);
  // The program's files (its script, its data) are its inputs: the log never replaces one.
  std::vector<std::string> inputs;
  for (auto const& a : command)
    if (std::error_code ec; fs::is_regular_file(a, ec)) inputs.push_back(a);
  check_output_file(out_path, inputs);
  output_file out(out_path);
  fs::path stacks;
  if (!vm.count("slow-stacks")) {
    stacks = find_preload_library(stacks_file, vm["stacks"].as<std::string>(), "FRAGLAB_TF_STACKS", "--stacks");
    if (stacks.empty())
      std::cerr << "fraglab record-tf: " << stacks_file << " is not beside this fraglab (sanitizer builds and the Python wheel leave it out): "
                << "TF's own stack capture is slow\n";
  }
  char const* limit = std::getenv("TF_CPU_BFC_MEM_LIMIT_IN_MB");
  std::string const limit_mb = limit && *limit ? limit : std::string(default_cpu_limit_mb);
  if (limit_mb.size() > 12 || limit_mb.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument("TF_CPU_BFC_MEM_LIMIT_IN_MB: expected a whole number of MiB, got '" + limit_mb + "'");

  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  pid_t const child = ::fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    ::close(pipe_fds[0]);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::close(pipe_fds[1]);
    set_recording_environment(stacks);
    exec_program(command, "fraglab record-tf");
  }
  ::close(pipe_fds[1]);
  // Like time(1): a ^C is for the program, and the recording still follows.
  auto const old_int = std::signal(SIGINT, SIG_IGN), old_quit = std::signal(SIGQUIT, SIG_IGN);
  log_writer log(out.stream());
  log.header("fraglab record-tf: TF_CPU_BFC_MEM_LIMIT_IN_MB=" + limit_mb + " command: " + shell_words(command));
  std::string pending;
  std::vector<char> chunk(1 << 16);
  for (;;) {
    ssize_t const n = ::read(pipe_fds[0], chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(chunk.data(), static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1)
      log.line(std::string_view(pending).substr(start, nl - start));
    pending.erase(0, start);
  }
  if (!pending.empty()) log.line(pending);
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::signal(SIGINT, old_int);
  std::signal(SIGQUIT, old_quit);
  int const program_status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

  if (log.allocations() == 0) {
    std::cerr << "fraglab record-tf: no BFC allocation was logged, so nothing is written: is " << command[0]
              << " a TensorFlow program that ran? (its exit status: " << program_status << ")\n";
    return program_status != 0 ? program_status : 2;
  }
  log.finish();
  out.commit();
  std::cerr << "fraglab record-tf: " << log.allocations() << " allocations logged to " << out_path
            << (program_status != 0 ? " (the program exited with status " + std::to_string(program_status) + ")" : "") << '\n';
  return program_status;
}

}  // namespace fraglab::cli
