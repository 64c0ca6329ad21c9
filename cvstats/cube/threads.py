"""Split a large in-memory reduction over threads, along the cube's first extra dim.

numpy's ufuncs and bottleneck's reductions release the GIL, so the passes
over an in-memory cube that every call makes (validation's checks, the split
means) run on several cores when the cube is cut along its first dim (an extra
dim such as ``dataset``: every part holds whole splits, examples and models, so
each part is checked or reduced on its own and the parts' results are joined).
A cube below :data:`MIN_VALUES` values, or with one core available, is not cut.
Results do not depend on the number of threads: each part's numbers are
computed exactly as for the whole array (bottleneck reduces row by row), and
the parts are joined in order (tested).

At most :data:`MAX_THREADS` threads, and no more than the cores this process
may run on (``os.sched_getaffinity``), as dask's threaded scheduler does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

__all__ = ["MAX_THREADS", "MIN_VALUES", "leading_parts", "map_parts", "workers"]

#: Arrays below this many values are reduced in one piece (a thread costs more).
MIN_VALUES = 1 << 22
#: The most threads one reduction uses.
MAX_THREADS = 4

T = TypeVar("T")


def workers() -> int:
    """Return the number of threads a large reduction may use (1 to :data:`MAX_THREADS`)."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return max(1, min(MAX_THREADS, available))


def leading_parts(array: Any) -> list[slice]:
    """Return slices of the first axis of ``array``, one per thread (one slice: not cut).

    An array of fewer than :data:`MIN_VALUES` values, of fewer than two rows on
    its first axis, or with one thread available, gives ``[slice(None)]``.
    """
    n = workers()
    shape = np.shape(array)
    if n == 1 or not shape or shape[0] < 2 or int(np.prod(shape)) < MIN_VALUES:
        return [slice(None)]
    k = min(n, shape[0])
    ends = np.linspace(0, shape[0], k + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:], strict=True)]


def map_parts(fn: Callable[[slice], T], parts: list[slice]) -> list[T]:
    """Return ``[fn(part) for part in parts]``, computed in threads when there are several."""
    if len(parts) == 1:
        return [fn(parts[0])]
    with ThreadPoolExecutor(len(parts), thread_name_prefix="cvstats") as pool:
        return list(pool.map(fn, parts))
