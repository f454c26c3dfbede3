"""The package as an editor and a type checker see it: the stubs beside the module
(fraglab/__init__.pyi) name every function, argument, keyword-only marker and default the
bindings have, mypy's stubtest agrees, and every public function and class is documented."""
import ast
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fraglab

from conftest import cli

PACKAGE = Path(fraglab.__file__).parent
STUB = PACKAGE / "__init__.pyi"


def stub_functions():
    """{qualified name: [the signatures the stub gives it, overloads in order]}."""
    found = {}
    tree = ast.parse(STUB.read_text())
    for node in tree.body:
        scopes = [("", node)] if isinstance(node, ast.FunctionDef) else []
        if isinstance(node, ast.ClassDef):
            scopes = [(node.name + ".", f) for f in node.body if isinstance(f, ast.FunctionDef)]
        for prefix, f in scopes:
            if any(isinstance(d, ast.Name) and d.id == "property" for d in f.decorator_list) or f.name.startswith("__"):
                continue
            found.setdefault(prefix + f.name, []).append(f.args)
    return found


def stub_parameters(args):
    """(name, keyword-only, default source or None) of each argument, self left out."""
    positional = [a for a in args.args if a.arg != "self"]
    defaults = [None] * (len(positional) - len(args.defaults)) + [ast.unparse(d) for d in args.defaults]
    out = [(a.arg, False, d) for a, d in zip(positional, defaults)]
    out += [(a.arg, True, None if d is None else ast.unparse(d)) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    return out


def split_top_level(text):
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "[(" and 1 or (c in "])" and -1 or 0)
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def binding_parameters(function):
    """The same, from the signature pybind11 writes as the docstring's first line."""
    first = function.__doc__.splitlines()[0]
    inside = first[first.index("(") + 1:first.rindex(") ->")]
    out, keyword_only = [], False
    for part in split_top_level(inside):
        if part == "*":
            keyword_only = True
            continue
        name, _, default = part.partition(" = ")
        name = name.split(":")[0].strip()
        if name != "self":
            out.append((name, keyword_only, default or None))
    return out


def public_functions():
    for name in fraglab.__all__:
        thing = getattr(fraglab, name)
        if inspect.isclass(thing):
            for member, value in vars(thing).items():
                if not member.startswith("_") and not isinstance(value, property) and callable(getattr(thing, member)):
                    yield f"{name}.{member}", getattr(thing, member)
        elif callable(thing):
            yield name, thing


def test_the_stub_gives_every_function_the_bindings_arguments():
    stubs = stub_functions()
    bound = dict(public_functions())
    assert sorted(stubs) == sorted(bound), "functions the stub and the module do not share"
    for name, function in bound.items():
        theirs = binding_parameters(function)
        for overload in stubs[name]:
            ours = stub_parameters(overload)
            assert [(n, k) for n, k, _ in ours] == [(n, k) for n, k, _ in theirs], f"{name}: arguments differ"
            for (n, _, d), (_, _, bd) in zip(ours, theirs):
                if d is not None:  # an overload narrowed to one value (Literal[True]) has none
                    assert ast.literal_eval(d) == ast.literal_eval(bd), f"{name}({n}=...): stub {d}, module {bd}"
        # The first overload is the call with every default left as it is.
        assert [d is None for _, _, d in stub_parameters(stubs[name][0])] == [d is None for _, _, d in theirs], \
            f"{name}: the first overload's defaults are not the module's"


def test_every_public_name_is_documented():
    """help() shows each function's arguments (with units), what it returns and what it raises."""
    assert fraglab.__doc__ and "replay" in fraglab.__doc__
    for name, function in public_functions():
        doc = function.__doc__.split("\n", 1)[1]  # pybind11's first line is the signature
        arguments = [n for n, _, _ in binding_parameters(function)]
        if arguments:
            documented = re.findall(r"^    (\w+): ", doc.split("Args:\n", 1)[-1].split("\n\n")[0], re.M)
            assert sorted(documented) == sorted(arguments), f"fraglab.{name}'s Args: {documented}, its arguments {arguments}"
            assert "\nRaises:\n" in doc, f"fraglab.{name} does not say what it raises"
        if not function.__doc__.splitlines()[0].endswith("-> None"):
            assert "\nReturns:\n" in doc, f"fraglab.{name} does not say what it returns"
    for name in ("Trace", "InputError"):
        assert len(getattr(fraglab, name).__doc__) > 80, f"fraglab.{name} is not documented"
    for name, value in vars(fraglab.Trace).items():
        if isinstance(value, property):
            assert value.__doc__ and len(value.__doc__) > 15, f"Trace.{name} is not documented"
    assert fraglab.Trace.__module__ == "fraglab" and fraglab.InputError.__module__ == "fraglab"


def test_mypy_stubtest_finds_the_stub_true_to_the_module(tmp_path):
    try:
        import mypy.stubtest  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed (Debian: python3-mypy; .ci/install-deps tests installs it)")
    # pandas and numpy ship no stubs of their own in Debian's packages: their names are Any here.
    (tmp_path / "mypy.ini").write_text("[mypy]\nignore_missing_imports = True\ncache_dir = " + str(tmp_path / "cache") + "\n")
    env = dict(os.environ, MYPYPATH=str(PACKAGE.parent))
    done = subprocess.run([sys.executable, "-m", "mypy.stubtest", "fraglab", "--mypy-config-file", str(tmp_path / "mypy.ini"),
                           "--allowlist", str(Path(__file__).with_name("stubtest_allowlist.txt"))],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_wrong_call_is_a_type_error_to_mypy(tmp_path):
    try:
        import mypy.api
    except ImportError:
        pytest.skip("mypy is not installed (Debian: python3-mypy; .ci/install-deps tests installs it)")
    (tmp_path / "calls.py").write_text(
        "import fraglab\n"
        "frame = fraglab.replay('t.trace', ['tlsf'], capacity='512MiB', jobs=2)\n"
        "results, samples = fraglab.replay('t.trace', 'tlsf', timeseries=True)\n"
        "table, placed = fraglab.plan('p.csv', 5.0, placements=True)\n"
        "fraglab.replay('t.trace', 'tlsf', 'heap')\n"  # backend is keyword-only
        "fraglab.sweep('t.trace', 'tlsf', vary={'split_ratio': [1, 2]}, capacity=1.5)\n"  # a size is int or str
        "fraglab.read_trace('t.trace').events()\n")  # a property, not a method
    out, _, status = mypy.api.run([str(tmp_path / "calls.py"), "--ignore-missing-imports", "--no-error-summary",
                                   "--cache-dir", str(tmp_path / "cache")])
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1 and [int(e.split(":")[1]) for e in errors] == [5, 6, 7], out


@pytest.mark.parametrize("function", [n for n in fraglab.__all__ if inspect.isbuiltin(getattr(fraglab, n))] + ["Trace.from_arrays"])
def test_hostile_arguments_raise_python_errors_never_crash(function, tmp_path):
    trace = tmp_path / "small.trace"
    cli("gen", "random", "--allocations", "300", "-o", trace)
    arguments = ",".join(n for n, _, _ in binding_parameters(dict(public_functions())[function]))
    done = subprocess.run([sys.executable, "-W", "ignore", str(Path(__file__).with_name("hostile_calls.py")), function, "7", "300",
                           str(trace), arguments], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, f"the interpreter ended with {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout == "done\n", done.stdout[-3000:]
