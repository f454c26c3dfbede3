// fraglab completion bash: a completion script for bash that asks fraglab itself for what to
// offer, so that it never drifts from the command definitions: the commands from
// `fraglab help`, each command's options from its `--help` (Boost.Program_options prints
// every option it defines), policies from `fraglab policies --names` and parameter keys from
// `fraglab policies --keys`.
#include <fraglab/cli/commands.hpp>

#include <iostream>
#include <stdexcept>

namespace fraglab::cli {
namespace {

constexpr char const* bash_script = R"BASH(# bash completion for fraglab: `source <(fraglab completion bash)`, or save it as
# ~/.local/share/bash-completion/completions/fraglab.
_fraglab() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} exe=${COMP_WORDS[0]}
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W "$("$exe" help 2>/dev/null | awk '/^commands:/{f=1;next} f && NF {print $1}') help completion" -- "$cur"))
    return
  fi
  local command=${COMP_WORDS[1]}
  case $prev in
    -p|--policy)
      # After a comma, the next policy of the list.
      local done=${cur%,*} last=${cur##*,}
      [[ $cur == *,* ]] && done="$done," || done=""
      COMPREPLY=($(compgen -P "$done" -W "$("$exe" policies --names 2>/dev/null)" -- "$last"))
      return ;;
    --set|--vary)
      compopt -o nospace 2>/dev/null
      COMPREPLY=($(compgen -S = -W "$("$exe" policies --keys 2>/dev/null | awk 'NR>1 {print $1}')" -- "$cur"))
      return ;;
    --backend)
      COMPREPLY=($(compgen -W "simulated heap host cuda cuda_async cuda_vmm cuda_pinned" -- "$cur"))
      return ;;
    --format)
      COMPREPLY=($(compgen -W "table csv json md" -- "$cur"))
      return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$("$exe" "$command" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _fraglab fraglab
)BASH";

}  // namespace

int completion(std::vector<std::string> const& args)
{
  if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help")) {
    std::cout << "fraglab completion bash: print a bash completion script (`source <(fraglab completion bash)`)\n";
    return 0;
  }
  if (args.size() != 1 || args[0] != "bash")
    throw std::invalid_argument("expected `fraglab completion bash` (bash is the one shell it writes for)");
  std::cout << bash_script;
  return 0;
}

}  // namespace fraglab::cli
