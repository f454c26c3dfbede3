# The types of fraglab's functions, for editors and type checkers; what each does is in its
# docstring (help(fraglab.replay)) and docs/python.md. Checked against the module by
# tests/python/test_package.py (mypy's stubtest, and every name and argument here against the
# bindings' own signatures).
import os
from typing import Any, Iterable, Literal, Mapping, Sequence, overload

import numpy as np
import numpy.typing as npt
import pandas as pd

__version__: str
__commit__: str

ALLOC: int
FREE: int
RELEASE: int

_Path = str | os.PathLike[str]
_Traces = Trace | _Path | Iterable[Trace | _Path]
_Policies = str | Iterable[str]
_Size = int | str
_Params = Mapping[str, Any]
_Device = int | str

class InputError(ValueError): ...

class Trace:
    @staticmethod
    def from_arrays(
        kind: npt.ArrayLike,
        id: npt.ArrayLike,
        size: npt.ArrayLike,
        alignment: npt.ArrayLike | None = None,
        stream: npt.ArrayLike | None = None,
        device: int | npt.ArrayLike = 0,
        name: str = "arrays",
    ) -> Trace: ...
    def to_arrays(self) -> dict[str, npt.NDArray[Any]]: ...
    def write(self, path: _Path, to: str = "") -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def events(self) -> int: ...
    @property
    def allocs(self) -> int: ...
    @property
    def frees(self) -> int: ...
    @property
    def releases(self) -> int: ...
    @property
    def recorded_failures(self) -> int: ...
    @property
    def device(self) -> int: ...
    @property
    def allocator(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def recorded_settings(self) -> str: ...
    def __len__(self) -> int: ...

def read_trace(path: _Path, device: _Device | None = None) -> Trace: ...
def read_traces(path: _Path, device: _Device | None = None) -> list[Trace]: ...
@overload
def replay(
    traces: _Traces,
    policies: _Policies,
    *,
    backend: str | None = None,
    capacity: _Size | None = None,
    params: _Params | None = None,
    repeat: int = 1,
    warm: bool = False,
    free_by: str = "reference",
    strict: bool = False,
    stop_on_failure: bool = False,
    timeseries: Literal[False] = False,
    offline: bool | float | None = None,
    jobs: int = 1,
    ignore_recorded_settings: bool = False,
) -> pd.DataFrame: ...
@overload
def replay(
    traces: _Traces,
    policies: _Policies,
    *,
    backend: str | None = None,
    capacity: _Size | None = None,
    params: _Params | None = None,
    repeat: int = 1,
    warm: bool = False,
    free_by: str = "reference",
    strict: bool = False,
    stop_on_failure: bool = False,
    timeseries: Literal[True],
    offline: bool | float | None = None,
    jobs: int = 1,
    ignore_recorded_settings: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]: ...
def sweep(
    traces: _Traces,
    policies: _Policies,
    vary: Mapping[str, str | Iterable[Any]],
    *,
    backend: str | None = None,
    capacity: _Size | None = None,
    params: _Params | None = None,
    repeat: int = 0,
    warm: bool = False,
    free_by: str = "reference",
    offline: bool | float | None = None,
    jobs: int = 1,
    ignore_recorded_settings: bool = False,
) -> pd.DataFrame: ...
def capacity(
    traces: _Traces,
    policies: _Policies,
    *,
    backend: str | None = None,
    params: _Params | None = None,
    jobs: int = 1,
    ignore_recorded_settings: bool = False,
) -> pd.DataFrame: ...
def tune(
    recording: _Traces, *, capacity: _Size | None = None, jobs: int | None = None
) -> tuple[pd.DataFrame, dict[str, Any]]: ...
def info(traces: _Traces) -> pd.DataFrame: ...
def verify(snapshots: _Path | Iterable[_Path], policy: str = "auto", device: _Device | None = None) -> pd.DataFrame: ...
@overload
def plan(
    inputs: _Traces,
    time_limit: float = 10.0,
    *,
    capacity: _Size | None = None,
    jobs: int = 1,
    placements: Literal[False] = False,
    lifetimes: Literal["half-open", "inclusive"] = "half-open",
    node_budget: int | None = None,
) -> pd.DataFrame: ...
@overload
def plan(
    inputs: _Traces,
    time_limit: float = 10.0,
    *,
    capacity: _Size | None = None,
    jobs: int = 1,
    placements: Literal[True],
    lifetimes: Literal["half-open", "inclusive"] = "half-open",
    node_budget: int | None = None,
) -> tuple[pd.DataFrame, list[pd.DataFrame]]: ...
@overload
def run(args: Sequence[str], text: Literal[False] = False) -> pd.DataFrame: ...
@overload
def run(args: Sequence[str], text: Literal[True]) -> list[dict[str, str]]: ...
def policies() -> pd.DataFrame: ...
def composable_pairs() -> list[tuple[str, str]]: ...
def policy(spec: str) -> dict[str, Any]: ...
def parameters() -> pd.DataFrame: ...
