#!/usr/bin/env bash
# `pip wheel .` from a clean checkout of this tree, installed into a new virtual environment
# with nothing else on its path: the `fraglab` command and `import fraglab` are there, their
# versions are meson.build's, and one replay gives the same numbers through both.
#
# Offline and repeatable: pip takes meson-python and the module's dependencies from the
# wheelhouse `.ci/install-deps tests` downloads (FRAGLAB_WHEELHOUSE names another); the test
# skips where there is none. The build is the wheel's own (pyproject.toml), at -Og: the
# packaging is what is checked, and -O2 would add minutes of compiling to CI.
set -u
root=$(realpath "$(dirname "$0")/../..")
wheelhouse=${FRAGLAB_WHEELHOUSE:-$root/.venv/wheelhouse}
source "$(dirname "$0")/../support/expect.sh"
if ! compgen -G "$wheelhouse/meson_python-*.whl" >/dev/null || ! compgen -G "$wheelhouse/pandas-*.whl" >/dev/null; then
  echo "SKIP: no wheelhouse with meson-python and pandas at $wheelhouse (bash .ci/install-deps tests downloads it)"
  exit 77
fi
if ! /usr/bin/python3 -m venv --help >/dev/null 2>&1; then
  echo "SKIP: /usr/bin/python3 has no venv module (Debian: python3-venv)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pip_offline=(--disable-pip-version-check --no-index --find-links "$wheelhouse")

# The checkout: a clone, with this tree's changes and new files over it (so that what is
# tested is what the rest of the suite tests), and no build of any kind in it.
git clone -q "$root" "$work/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
  tar -xf - -C "$work/src"
expect "the checkout holds no build" '[[ ! -e $work/src/build && ! -e $work/src/.venv ]]'

/usr/bin/python3 -m venv "$work/builder"
(cd "$work" && CXXFLAGS="-Og -g0" "$work/builder/bin/python" -m pip wheel -q "${pip_offline[@]}" --no-deps -w "$work/dist" "$work/src") \
  >"$work/wheel.log" 2>&1; rc=$?
expect "pip wheel builds it (exit $rc)" '[[ $rc -eq 0 ]]' || tail -30 "$work/wheel.log"
wheel=$(compgen -G "$work/dist/fraglab-*.whl" | head -1)
version=$(sed -nE "s/^  version: '([^']+)',$/\1/p" "$root/meson.build")
expect "the wheel is named by meson.build's version $version ($(basename "${wheel:-none}"))" '[[ $(basename "${wheel:-none}") == fraglab-$version-* ]]'
listing=$(/usr/bin/python3 -m zipfile -l "${wheel:-/dev/null}" 2>/dev/null)
expect "it holds the package, its stubs and the command, not the C++ headers" \
  'grep -q "fraglab/__init__.py " <<<"$listing" && grep -q "fraglab/__init__.pyi " <<<"$listing" && grep -q "fraglab/py.typed " <<<"$listing" &&
   grep -qE "fraglab/_core\..*\.so " <<<"$listing" && grep -qE "\.data/scripts/fraglab " <<<"$listing" && ! grep -q "allocator.hpp" <<<"$listing"'

/usr/bin/python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "${pip_offline[@]}" "${wheel:-missing.whl}" >"$work/install.log" 2>&1; rc=$?
expect "pip installs it, and numpy and pandas with it (exit $rc)" '[[ $rc -eq 0 ]]' || cat "$work/install.log"

# Everything below runs in the new environment only: its bin first on the path, no PYTHONPATH,
# in a folder outside the source tree.
in_venv() { (cd "$work" && env -i HOME="$work" PATH="$work/venv/bin:/usr/bin:/bin" "$@"); }
out=$(in_venv fraglab --version 2>&1)
expect "fraglab --version says $version ($out)" '[[ $out == "fraglab $version "* ]]'
expect "the command is the environment's ($(in_venv sh -c 'command -v fraglab'))" '[[ $(in_venv sh -c "command -v fraglab") == "$work/venv/bin/fraglab" ]]'
in_venv fraglab gen phases --seed 5 -o "$work/t.trace" >/dev/null 2>&1
in_venv fraglab replay "$work/t.trace" -p tf_bfc,pytorch_caching,tlsf --backend simulated --repeat 0 --format csv -o "$work/cli.csv" 2>"$work/replay.log"; rc=$?
expect "the command replays (exit $rc)" '[[ $rc -eq 0 && -s $work/cli.csv ]]' || cat "$work/replay.log"
# The CUDA backends are in the wheel where the build found the toolkit (meson's cuda option),
# and only there.
out=$(in_venv fraglab replay "$work/t.trace" -p tlsf --backend cuda 2>&1)
if [[ -f /usr/local/cuda/lib64/libcudart_static.a && -f /usr/local/cuda/include/cuda_runtime_api.h ]]; then
  expect "with the CUDA Toolkit here, the wheel's fraglab has the CUDA backends ($out)" '[[ $out != *"needs fraglab built with the CUDA Toolkit"* ]]'
else
  expect "without the CUDA Toolkit, the wheel's fraglab says so ($out)" '[[ $out == *"needs fraglab built with the CUDA Toolkit"* ]]'
fi
out=$(in_venv python - "$work" "$version" <<'PY' 2>&1
import importlib.metadata, io, pathlib, sys
import pandas as pd
import fraglab

work, version = pathlib.Path(sys.argv[1]), sys.argv[2]
where = pathlib.Path(fraglab.__file__).parent
assert where.is_relative_to(pathlib.Path(sys.prefix)), f"fraglab imported from {where}, not the environment"
assert fraglab.__version__ == version == importlib.metadata.version("fraglab"), (fraglab.__version__, importlib.metadata.version("fraglab"))
assert (where / "py.typed").is_file() and (where / "__init__.pyi").is_file(), "the type stubs are not installed"
doc = io.StringIO()
sys.stdout, saved = doc, sys.stdout
help(fraglab.replay)
sys.stdout = saved
assert "Replays every trace under every policy" in doc.getvalue(), doc.getvalue()[:300]
ours = fraglab.replay(str(work / "t.trace"), "tf_bfc,pytorch_caching,tlsf", backend="simulated", repeat=0)
theirs = pd.read_csv(work / "cli.csv", float_precision="round_trip", keep_default_na=False, na_values=[""],
                     dtype={"trace": str, "policy": str})
assert list(ours.columns) == list(theirs.columns), (list(ours.columns), list(theirs.columns))
for column in theirs.columns:
    if column == "ns_per_op":
        continue
    a, b = ours[column].tolist(), theirs[column].tolist()
    assert a == b, f"{column}: module {a}, command {b}"
assert ours["peak_reserved_bytes"].min() > 0
try:
    fraglab.replay(str(work / "missing.trace"), "tlsf")
    raise AssertionError("a missing file was read")
except ValueError as e:
    assert "missing.trace" in str(e), e
try:
    fraglab.replay(str(work / "t.trace"), "no_such_policy")
    raise AssertionError("an unknown policy was run")
except ValueError as e:
    assert "no_such_policy" in str(e), e
print("same numbers:", len(ours), "rows")
PY
)
rc=$?
expect "import fraglab there: its version, stubs and help, and the same replay's numbers ($out)" '[[ $rc -eq 0 && ${out##*$'"'"'\n'"'"'} == "same numbers: 3 rows" ]]'
report test_wheel
