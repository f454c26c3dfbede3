// Where a recorded allocation came from, in one line a person reading a memory map can act
// on: the frame of the program's own code in a PyTorch snapshot's stack (`frames`, innermost
// first, as torch.cuda.memory._record_memory_history captures them).
//
// The rule, in order:
// - the innermost Python frame outside PyTorch's own package (the model or script that asked
//   for the tensor), as `FILE.py:LINE FUNCTION` with the file's directories left out;
// - else the innermost Python frame of any file;
// - else (a stack of C++ frames only, as the autograd engine's thread records) the innermost
//   ATen operator (`at::_ops::NAME`), else the innermost frame outside the allocator and the
//   stack capture, as its function name without the parameter list.
// An empty stack has no site: "".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace fraglab::trace {

struct stack_frame {
  std::string_view name;
  std::string_view filename;
  std::int64_t line = 0;
};

std::string call_site(std::span<stack_frame const> frames);

}  // namespace fraglab::trace
