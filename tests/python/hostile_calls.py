"""Calls a function of fraglab's many times with arguments of every wrong kind, drawn at
random (tests/python/test_package.py runs it in a process of its own, so that a crash of the
interpreter fails the test instead of ending it).

    python hostile_calls.py FUNCTION SEED CALLS TRACE ARGUMENT,...

Prints one line for each call that raised anything but the errors of bad input (TypeError,
ValueError, fraglab.InputError, OverflowError), a RuntimeError of `run`'s failed command, or
what the argument objects themselves raised; then "done"."""
import random
import sys

import numpy as np

import fraglab


class Hostile:
    """Fails whatever is asked of it."""

    def __str__(self):
        raise RuntimeError("hostile __str__")

    def __iter__(self):
        raise RuntimeError("hostile __iter__")

    def __fspath__(self):
        raise RuntimeError("hostile __fspath__")

    def __index__(self):
        raise RuntimeError("hostile __index__")

    def __float__(self):
        raise RuntimeError("hostile __float__")


name, seed, calls, trace, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], [n for n in sys.argv[5].split(",") if n]
function = fraglab.Trace.from_arrays if name == "Trace.from_arrays" else getattr(fraglab, name)
values = [None, 0, -1, 2**70, -2**70, 1.5, float("nan"), float("inf"), True, "", "x", "\0", "tlsf", "tf_bfc,best_fit@x",
          b"abc", [], [None], [1, 2], ["replay"], ["replay", trace, "-p", "no_such"], {}, {"a": 1}, {1: 2}, {"split_ratio": None},
          {"split_ratio": [Hostile()]}, {"split_ratio": "1,2"}, Hostile(), object(), np.array([1, 2]), np.array([[1]]),
          np.array(["a"]), np.zeros(3), np.array([-1]), (x for x in range(2)), "/dev/null", "/", "no_such.trace", "512MiB", "-5",
          trace, fraglab.read_trace(trace)]
rng = random.Random(seed)
for _ in range(calls):
    kwargs = {n: rng.choice(values) for n in names if rng.random() < 0.7}
    try:
        function(**kwargs)
    except (TypeError, ValueError, OverflowError):
        pass
    except RuntimeError as e:
        if not str(e).startswith(("hostile", "fraglab ")):
            print("unexpected RuntimeError:", e, {k: repr(v)[:40] for k, v in kwargs.items()})
    except BaseException as e:  # noqa: B036 (whatever it is, it is reported)
        print(f"unexpected {type(e).__name__}:", e, {k: repr(v)[:40] for k, v in kwargs.items()})
print("done")
