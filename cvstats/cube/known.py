"""What validation proved about a cube, remembered while the cube provably stays the same.

Validating a cube reads every value (finiteness, the NaN pattern, the test
sizes, the covers of the blocks), and a cube passes through several calls on
the way to an answer: ``pairwise`` validates the loss cube, then ``compare``
and every method would validate the contrast cube again. A cube need not be
re-read when it provably has not changed since it was validated (issue 16).
This module keeps that proof, in two ways:

* **for the process**, a cube whose values nobody can change in place — a
  numpy array that is read-only and owns its memory (or whose every base is
  read-only) — is remembered with a snapshot of everything else validation
  reads: name, dims, dtype, attrs and every coordinate (its values, or, for a
  large coordinate, the read-only array itself). A cube that differs from its
  snapshot in any of them is not known and is validated again. The contrast
  cubes of :func:`~cvstats.cube.formula.contrasts` and
  :func:`~cvstats.cube.formula.pairwise` are made so (read-only data, proved
  finite and with the NaN pattern of the validated cube they come from); a
  cube the user built stays writable and is validated on every call;
* **within a call**, :func:`scope` trusts a cube its caller has just
  validated (``compare`` runs many methods on one cube), and keeps the split
  means computed in the call, so that the methods share one reduction.

What is remembered is a :class:`Facts`: the test count of every split (of the
first element of the extra dims), which :func:`cvstats.inference.blocks.block_sizes`
reads instead of counting the NaN pattern again.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

__all__ = [
    "Facts",
    "immutable",
    "lazy",
    "remember",
    "recall",
    "scope",
    "scoped_cache",
    "settle",
]

#: Coordinates up to this many elements are snapshot by value; larger ones must be
#: read-only arrays, remembered by identity.
SNAPSHOT_LIMIT = 1_000_000


@dataclass(frozen=True)
class Facts:
    """What validating a cube established.

    Attributes
    ----------
    first_counts : numpy.ndarray or None
        Test examples (non-NaN losses) of every split, in the first element of
        the extra dims (dense loss cubes; None for other forms).
    finite : bool
        Whether the losses are known to be finite. False for a lazy contrast of
        a validated cube: a difference can overflow, and proving it did not
        takes a read, which :func:`cvstats.cube.validation.validated` does (or
        its caller, from the split means it computes anyway).
    means : xarray.DataArray or None
        The test mean of every split ``(*extra, split, unit)``, in memory, when
        validation computed them on the way (a lazy cube read chunk by chunk:
        the chunk is in memory then), so that ``compare`` need not read the
        cube again.
    largest : float or None
        The largest absolute loss, with ``means``: it proves a contrast's
        losses finite without reading them.
    """

    first_counts: np.ndarray | None = field(default=None, repr=False)
    finite: bool = True
    means: xr.DataArray | None = field(default=None, repr=False)
    largest: float | None = None


def lazy(array: Any) -> bool:
    """Whether ``array`` is a dask collection (dask's own test; no dask imported, none)."""
    dask = sys.modules.get("dask")
    return dask is not None and bool(dask.is_dask_collection(array))


def immutable(array: Any) -> bool:
    """Whether ``array``'s values cannot change in place unseen.

    True for a read-only numpy array that owns its memory, or a read-only view
    whose every base is a read-only numpy array: writing to it raises, and no
    writable array shares its memory. True for a dask array: a graph of tasks,
    whose ``name`` changes when a value is assigned to it (the snapshot keeps
    the name). A lazy cube reads its store when computed: one changed on disk
    by another program is not seen (nor was it between two reads of one call).
    """
    if lazy(array):
        return True
    while isinstance(array, np.ndarray):
        if array.flags.writeable:
            return False
        if array.base is None:
            return True
        array = array.base
    return False


@dataclass
class _Snapshot:
    """Everything but the values that validation reads, as it was when validated."""

    data: Any
    token: str | None
    name: Hashable
    dims: tuple[Hashable, ...]
    dtype: np.dtype
    attrs: dict[Hashable, Any]
    coords: dict[Hashable, tuple[str, tuple[Hashable, ...], np.dtype, Any]] = field(
        default_factory=dict
    )


def _coordinate(var: xr.Variable) -> tuple[str, tuple[Hashable, ...], np.dtype, Any] | None:
    """Return how to recognise a coordinate later (None: it cannot be proved unchanged).

    An immutable array is recognised by identity; an index (immutable in
    xarray) or a small writable array by a copy of its values.
    """
    if not isinstance(var, xr.IndexVariable) and immutable(var.data):
        return "ref", var.dims, var.dtype, (var.data, _token(var.data))
    if isinstance(var, xr.IndexVariable) or var.size <= SNAPSHOT_LIMIT:
        return "value", var.dims, var.dtype, np.array(var.values, copy=True)
    return None


def _same(a: Any, b: Any) -> bool:
    """Equality of snapshot values (arrays elementwise, NaN equal to NaN; dicts deeply)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(_same(x, y) for x, y in zip(a, b, strict=True))
        )
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):
        return False


def _copy_attrs(attrs: Mapping[Hashable, Any]) -> dict[Hashable, Any]:
    return {
        k: np.array(v, copy=True) if isinstance(v, np.ndarray) else _copy_value(v)
        for k, v in attrs.items()
    }


def _copy_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return _copy_attrs(value)
    if isinstance(value, list | tuple):
        return type(value)(_copy_value(v) for v in value)
    return value


def _snapshot(cube: xr.DataArray) -> _Snapshot | None:
    data = cube.data
    if not immutable(data):
        return None
    snap = _Snapshot(data, _token(data), cube.name, cube.dims, cube.dtype, _copy_attrs(cube.attrs))
    for name, var in cube.coords.variables.items():
        coord = _coordinate(var)
        if coord is None:
            return None
        snap.coords[name] = coord
    return snap


def _token(data: Any) -> str | None:
    """Return the name of a dask array (it changes with an assignment), None for numpy."""
    return str(data.name) if lazy(data) else None


def _matches(cube: xr.DataArray, snap: _Snapshot) -> bool:
    if cube.data is not snap.data or not immutable(snap.data) or _token(snap.data) != snap.token:
        return False
    if not (
        _same(cube.name, snap.name)
        and cube.dims == snap.dims
        and cube.dtype == snap.dtype
        and _same(dict(cube.attrs), snap.attrs)
        and set(cube.coords) == set(snap.coords)
    ):
        return False
    variables = cube.coords.variables
    for name, (how, dims, dtype, value) in snap.coords.items():
        var = variables[name]
        if var.dims != dims or var.dtype != dtype:
            return False
        if how == "ref":
            if isinstance(var, xr.IndexVariable) or var.data is not value[0]:
                return False
            if not immutable(value[0]) or _token(value[0]) != value[1]:
                return False
        elif not _same(np.asarray(var.values), value):
            return False
    return True


# id(cube) -> (weak reference to the cube, snapshot, facts); an entry leaves with its cube
_REGISTRY: dict[int, tuple[weakref.ref, _Snapshot, Facts]] = {}


def _forget(key: int) -> None:
    _REGISTRY.pop(key, None)


def remember(cube: xr.DataArray, facts: Facts) -> bool:
    """Remember that ``cube`` passed validation, if it provably cannot change unseen.

    Parameters
    ----------
    cube : xarray.DataArray
        A cube just validated (or built from one by an operation that keeps what
        validation checks, as a contrast of a validated cube does).
    facts : Facts
        What its validation established.

    Returns
    -------
    bool
        Whether the cube was remembered: only a cube whose data is an immutable
        numpy array (:func:`immutable`) and whose large coordinates are immutable
        too.
    """
    snap = _snapshot(cube)
    if snap is None:
        return False
    key = id(cube)
    _REGISTRY[key] = (weakref.ref(cube), snap, facts)
    weakref.finalize(cube, _forget, key)
    return True


# the cubes trusted within a caller's block: id -> (cube, facts, split-means cache)
_Scoped = dict[int, tuple[xr.DataArray, Facts, dict[Any, Any]]]
_SCOPE: ContextVar[_Scoped | None] = ContextVar("cvstats_trusted_cubes", default=None)


def _scoped(cube: xr.DataArray) -> tuple[xr.DataArray, Facts, dict[Any, Any]] | None:
    entry = (_SCOPE.get() or {}).get(id(cube))
    return entry if entry is not None and entry[0] is cube else None


def recall(cube: xr.DataArray) -> Facts | None:
    """Return the facts of ``cube`` if it is known valid (in a :func:`scope`, or remembered).

    A remembered cube is known only while it matches its snapshot; one that
    changed is forgotten.
    """
    scoped = _scoped(cube)
    if scoped is not None:
        return scoped[1]
    entry = _REGISTRY.get(id(cube))
    if entry is None:
        return None
    ref, snap, facts = entry
    if ref() is not cube or not _matches(cube, snap):
        _forget(id(cube))
        return None
    return facts


@contextmanager
def scope(cube: xr.DataArray, facts: Facts | None = None) -> Iterator[None]:
    """Within the block, ``cube`` is known valid (its caller validated it).

    Parameters
    ----------
    cube : xarray.DataArray
        The cube validated by the caller.
    facts : Facts, optional
        What validation established; default what is known of the cube already,
        or nothing.
    """
    if facts is None:
        facts = recall(cube) or Facts()
    outer = _scoped(cube)  # nested scopes of one cube share its facts and split means
    entry = outer if outer is not None else (cube, facts, {})
    token = _SCOPE.set({**(_SCOPE.get() or {}), id(cube): entry})
    try:
        yield
    finally:
        _SCOPE.reset(token)


def scoped_cache(cube: xr.DataArray) -> dict[Any, Any] | None:
    """Return the cache of ``cube`` in the current :func:`scope` (or None): split means, sizes."""
    scoped = _scoped(cube)
    return scoped[2] if scoped is not None else None


def settle(cube: xr.DataArray, facts: Facts) -> None:
    """Record what a caller established about ``cube`` since it was known (finiteness).

    Updates the facts of ``cube`` in the current :func:`scope` and, if it is
    remembered, in the registry.
    """
    scoped = _scoped(cube)
    if scoped is not None:
        current = _SCOPE.get()
        assert current is not None
        current[id(cube)] = (cube, facts, scoped[2])
    if id(cube) in _REGISTRY and recall(cube) is not None:
        remember(cube, facts)
