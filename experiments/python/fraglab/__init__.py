"""fraglab: replay allocation traces under swappable allocation policies and measure fragmentation.

Every function runs what the `fraglab` command runs, in this process, and returns its table as a
pandas DataFrame (docs/python.md). The bindings are the extension module fraglab._core; their
types are in __init__.pyi beside this file.
"""

from ._core import (
    ALLOC,
    FREE,
    RELEASE,
    InputError,
    Trace,
    __commit__,
    __version__,
    capacity,
    composable_pairs,
    info,
    parameters,
    plan,
    policies,
    policy,
    read_trace,
    read_traces,
    replay,
    run,
    sweep,
    tune,
    verify,
)

__all__ = [
    "ALLOC",
    "FREE",
    "RELEASE",
    "InputError",
    "Trace",
    "capacity",
    "composable_pairs",
    "info",
    "parameters",
    "plan",
    "policies",
    "policy",
    "read_trace",
    "read_traces",
    "replay",
    "run",
    "sweep",
    "tune",
    "verify",
]

# Shown as fraglab.Trace and fraglab.InputError, the names users import them by.
for _name in ("Trace", "InputError"):
    globals()[_name].__module__ = __name__
del _name
