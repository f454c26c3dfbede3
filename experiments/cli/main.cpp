// fraglab: replay allocation traces under swappable allocator policies.
#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/runtime/io/input_error.hpp>
#include "version.hpp"

#include <boost/program_options/errors.hpp>

#include <algorithm>
#include <new>
#include <cstring>
#include <string_view>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::cout << fraglab::cli::usage;
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::cout << "fraglab " << FRAGLAB_VERSION << " (commit " << FRAGLAB_COMMIT << ")\n";
    return 0;
  }
  std::string const command = argv[1];
  std::vector<std::string> const args(argv + 2, argv + argc);
  try {
    int status = fraglab::cli::run_command(command, args);
    // A result printed to a full disk or a closed pipe is a result lost: `replay T > /dev/full`
    // must not exit 0.
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("standard output: write failed");
    if (std::size_t const skipped = fraglab::cli::skipped_traces(); skipped != 0 && status == 0) {
      std::cerr << "fraglab " << command << ": " << skipped << " trace" << (skipped == 1 ? " was" : "s were")
                << " left out (--keep-going)\n";
      status = 1;
    }
    return status;
  } catch (fraglab::input_error const& e) {
    std::cerr << "fraglab: " << e.what() << '\n';
    return 2;
  } catch (std::invalid_argument const& e) {
    std::cerr << "fraglab " << command << ": " << e.what() << '\n';
    return 2;
  } catch (boost::program_options::error const& e) {
    std::cerr << "fraglab " << command << ": " << e.what() << '\n';
    return 2;
  } catch (std::bad_alloc const&) {
    // What the options asked for did not fit in memory: say so, with what to change, rather
    // than the bare std::bad_alloc.
    std::cerr << "fraglab " << command << ": out of memory: what the options ask for (the trace's size, --states, a "
              << "generator's counts) does not fit in this machine's memory; ask for less\n";
    return 1;
  } catch (std::exception const& e) {
    std::cerr << "fraglab " << command << ": " << e.what() << '\n';
    return 1;
  }
}
