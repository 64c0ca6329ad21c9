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

At most :data:`MAX_THREADS` threads (or the ``threads`` option of
:func:`cvstats.set_options`), no more than the cores this process may run on
(``os.sched_getaffinity``), as dask's threaded scheduler does, and no more than
a caller's threadpoolctl limit (``threadpool_limits(limits=n)``, which
scikit-learn and joblib's workers set): a caller who limits the BLAS/OpenMP
pools limits these threads too.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from cvstats.options import get_options

__all__ = [
    "BLOCK_VALUES",
    "MAX_THREADS",
    "MIN_VALUES",
    "leading_blocks",
    "leading_parts",
    "map_parts",
    "workers",
]

#: Arrays below this many values are reduced in one piece (a thread costs more).
MIN_VALUES = 1 << 22
#: The most threads one reduction uses.
MAX_THREADS = 4
#: About this many values per block of a blocked pass (1 MiB of float64): a block stays in
#: the processor's cache while every operation of the pass reads it.
BLOCK_VALUES = 1 << 17

T = TypeVar("T")


def _caller_limit() -> int | None:
    """Return the lowest thread count of the loaded BLAS/OpenMP pools (threadpoolctl).

    A caller's ``threadpool_limits(limits=n)`` lowers it to ``n``; untouched,
    the pools run one thread per core. ``None`` when no such pool is loaded
    or threadpoolctl is not installed. About 0.4 ms: asked only for arrays
    large enough to be cut.
    """
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover (scikit-learn, a dependency, requires it)
        return None
    counts = [int(pool["num_threads"]) for pool in threadpool_info() if pool.get("num_threads")]
    return min(counts) if counts else None


def workers() -> int:
    """Return the number of threads a large reduction may use (1 to :data:`MAX_THREADS`).

    The ``threads`` option (:func:`cvstats.set_options`) when set, else
    :data:`MAX_THREADS`; never more than the cores available nor a caller's
    threadpoolctl limit.
    """
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    chosen = get_options()["threads"]
    n = min(MAX_THREADS if chosen is None else chosen, available)
    limit = _caller_limit() if n > 1 else None
    if limit is not None:
        n = min(n, limit)
    return max(1, n)


def leading_parts(array: Any) -> list[slice]:
    """Return slices of the first axis of ``array``, one per thread (one slice: not cut).

    An array of fewer than :data:`MIN_VALUES` values, of fewer than two rows on
    its first axis, or with one thread available, gives ``[slice(None)]``.
    """
    shape = np.shape(array)
    if not shape or shape[0] < 2 or int(np.prod(shape)) < MIN_VALUES:
        return [slice(None)]
    n = workers()
    if n == 1:
        return [slice(None)]
    k = min(n, shape[0])
    ends = np.linspace(0, shape[0], k + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:], strict=True)]


#: The threads of the passes, started on first use and kept (starting threads on every
#: call costs about a millisecond); dropped in a forked child, which does not inherit them.
_POOL: ThreadPoolExecutor | None = None
_PREFIX = "cvstats-pass"
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """Return the process's pool of :data:`MAX_THREADS` threads, started on first use."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix=_PREFIX)
        return _POOL


def _forget_pool() -> None:
    """Drop the pool in a forked child: its threads were not copied (a new one starts)."""
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def map_parts(fn: Callable[[slice], T], parts: list[slice]) -> list[T]:
    """Return ``[fn(part) for part in parts]``, computed in threads when there are several.

    The parts run on the process's pool (at most :data:`MAX_THREADS` at once);
    the first part runs in the calling thread, which would otherwise wait. A
    call from within a part runs its parts in that thread.
    """
    if len(parts) == 1 or threading.current_thread().name.startswith(_PREFIX):
        # one part, or called from a part itself: in this thread (the pool's threads
        # could all be waiting for parts queued behind them)
        return [fn(part) for part in parts]
    rest = [_pool().submit(fn, part) for part in parts[1:]]
    try:
        first = fn(parts[0])
    finally:
        done = [future.result() for future in rest]
    return [first, *done]


def leading_blocks(
    shape: tuple[int, ...], keep: int = 2, size: int | None = None
) -> list[tuple[slice, ...]]:
    """Return index tuples that cut an array of ``shape`` into blocks of about ``size`` values.

    A pass that makes several numpy operations over a large array (validation's
    checks, a contrast and its split means) runs them block by block, so that
    every operation after the first reads the block from the processor's cache
    rather than from memory. The last ``keep`` axes are never cut (for a cube,
    ``example`` and the unit dim: a block holds whole splits); the leading axes
    are cut in order, the first one first, a block holding at least one element
    of each. The blocks cover the array once, in C order. Every element of an
    index tuple is a slice, so a block keeps the array's number of axes.
    ``size`` defaults to :data:`BLOCK_VALUES`.
    """
    size = BLOCK_VALUES if size is None else size
    lead = len(shape) - keep
    if lead <= 0 or shape[0] == 0:
        return [()]
    inner = int(np.prod(shape[1:]))
    if inner <= size or lead == 1:
        step = max(1, size // max(1, inner))
        step = -(-shape[0] // -(-shape[0] // step))  # blocks of even sizes
        return [(slice(a, min(a + step, shape[0])),) for a in range(0, shape[0], step)]
    rest = leading_blocks(shape[1:], keep, size)
    return [(slice(i, i + 1), *r) for i in range(shape[0]) for r in rest]
