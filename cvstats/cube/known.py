"""What validation proved about a cube, remembered while the cube provably stays the same.

Validating a cube reads every value (finiteness, the NaN pattern, the test
sizes, the covers of the blocks), and a cube passes through several calls on
the way to an answer: ``pairwise`` validates the loss cube, then ``compare``
and every method would validate the contrast cube again. A cube need not be
re-read when it provably has not changed since it was validated (issue 16).
A proof must not be fooled: numpy lets anyone make a read-only array
writable again (``setflags(write=True)``), change it and lock it again, and a
ctypes pointer writes to any array, so no flag of an in-memory array proves
that its values are those validated, and only reading them (as validation
does) would (issue 26). This module keeps the proofs that hold:

* **within a call**, nothing global: :class:`Checked` is the handle of a cube
  validated once, which its holder passes down explicitly — ``compare``
  validates its cube (or makes its contrast cube from a validated one) and
  hands the handle to every method, which neither validates the cube again
  nor recomputes the split means another method computed (the handle's
  cache). A cube handed to a public function is validated by that function:
  an in-memory cube, even a read-only contrast cube of
  :func:`~cvstats.cube.formula.pairwise`, is read again by every call;
* **for the process**, a dask-backed cube (a graph of tasks, whose ``name``
  changes when a value is assigned to it, and whose in-memory sources are
  read-only arrays, copied by :func:`remember`'s check or refused) is
  remembered with a snapshot of everything else validation reads: name,
  dims, dtype, attrs and every coordinate (the values of an in-memory one,
  the graph's name of a lazy one). A cube that differs from its snapshot in
  any of them is not known and is validated again. A lazy cube reads its
  store when computed: one changed on disk by another program is not seen.

What is remembered is a :class:`Facts`: the test count of every split (of the
first element of the extra dims), which :func:`cvstats.inference.blocks.block_sizes`
reads instead of counting the NaN pattern again.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import xarray as xr

from cvstats.cube.schema import EXAMPLE

__all__ = [
    "Checked",
    "Facts",
    "immutable",
    "lazy",
    "remember",
    "recall",
]

#: In-memory coordinates of a remembered (lazy) cube up to this many elements are
#: snapshot by value; a cube with a larger one is not remembered.
SNAPSHOT_LIMIT = 1 << 24


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
    """Whether ``array``'s values provably cannot change unseen between two calls.

    True only for a dask array whose graph holds no in-memory numpy data
    (:data:`IN_MEMORY_BLOCK`; e.g. a cube opened lazily from a store): a
    graph of tasks, whose ``name`` changes when a value is assigned to it (the
    snapshot keeps the name). False for every numpy array, read-only or not:
    numpy lets anyone make a read-only array that owns its memory writable
    again (``setflags(write=True)``), and a ctypes pointer writes to any
    array; and False for a dask array made from one (``cube.chunk()``), whose
    blocks are numpy arrays held by the graph. A lazy cube reads its store
    when computed: one changed on disk by another program is not seen (nor
    was it between two reads of one call).
    """
    return lazy(array) and not _holds_arrays(array)


#: A numpy array of this many values or more, or of three dims or more, in a dask graph
#: is in-memory data (blocks of a cube, e.g. of ``cube.chunk()``), which its holder can
#: change; smaller ones are the parameters of a computation (the weights of a contrast).
IN_MEMORY_BLOCK = 4096


def _holds_arrays(array: Any) -> bool:
    """Whether the graph of the dask array ``array`` holds in-memory data (numpy blocks)."""
    graph = array.__dask_graph__()
    layers = getattr(graph, "layers", {None: graph})
    for layer in layers.values():
        values = layer.mapping.values() if hasattr(layer, "mapping") else ()
        for value in values:
            value = getattr(value, "value", value)  # a task's literal data
            if isinstance(value, np.ndarray) and (
                value.size >= IN_MEMORY_BLOCK or value.ndim >= 3
            ):
                return True
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

    A lazy coordinate is recognised by its graph's name (as the cube's data);
    an in-memory one by a copy of its values (a read-only array can be made
    writable again: its identity proves nothing).
    """
    if not isinstance(var, xr.IndexVariable) and lazy(var.data):
        if not immutable(var.data):
            return None
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
    # a score cube (no example dim) is small and validated quickly: never remembered
    if not immutable(data) or not {EXAMPLE, "slot"} & set(cube.dims):
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
    # a graph cannot change but by an assignment, which changes its name
    if cube.data is not snap.data or _token(snap.data) != snap.token:
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
            if _token(value[0]) != value[1]:
                return False
        elif not _same(np.asarray(var.values), value):
            return False
    return True


# id(cube) -> (weak reference to the cube, snapshot, facts); an entry leaves with its cube
_REGISTRY: dict[int, tuple[weakref.ref, _Snapshot, Facts]] = {}


def _forget(key: int) -> None:
    _REGISTRY.pop(key, None)


def remember(cube: xr.DataArray, facts: Facts) -> bool:
    """Remember that ``cube`` passed validation, while that provably still holds.

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
        Whether the cube was remembered: a cube whose data is immutable
        (:func:`immutable`: lazy, from a store) and whose coordinates can be
        snapshot. An in-memory cube is never remembered: its holder can change
        it between two calls (within a call, the :class:`Checked` handle carries
        what validation proved).
    """
    snap = _snapshot(cube)
    if snap is None:
        return False
    key = id(cube)
    _REGISTRY[key] = (weakref.ref(cube), snap, facts)
    weakref.finalize(cube, _forget, key)
    return True


def recall(cube: xr.DataArray) -> Facts | None:
    """Return the facts of ``cube`` if it is remembered valid (:func:`remember`), else None.

    A remembered cube is known only while it matches its snapshot; one that
    changed is forgotten.
    """
    entry = _REGISTRY.get(id(cube))
    if entry is None:
        return None
    ref, snap, facts = entry
    if ref() is not cube or not _matches(cube, snap):
        _forget(id(cube))
        return None
    return facts


@dataclass(frozen=True, eq=False)
class Checked:
    """A cube validated once, handed down explicitly with what was proved about it.

    :func:`cvstats.compare` validates its cube once and hands this to every
    method it runs (the method then does not validate it again); a method called
    alone makes its own (:func:`cvstats.cube.validation.checked`). The split
    means and block sizes computed for the cube are kept in :attr:`cache`, so
    the methods that share a handle share one reduction of the cube.

    Attributes
    ----------
    cube : xarray.DataArray
        The cube, validated.
    facts : Facts
        What its validation established.
    cache : dict
        Split means and block sizes computed for it
        (:func:`cvstats.inference.blocks.split_means`, ``block_sizes``).
    """

    cube: xr.DataArray
    facts: Facts = field(default_factory=Facts)
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    def with_facts(self, facts: Facts) -> Checked:
        """Return the handle with ``facts`` (what a caller proved since), sharing its cache."""
        return Checked(self.cube, facts, self.cache)

    def of(self, cube: xr.DataArray, facts: Facts | None = None) -> Checked:
        """Return a handle of ``cube``, a cube derived from this one that keeps its checks.

        (A selection of its contrasts or models: the NaN pattern, sizes and finiteness
        hold; the split means are those of the new cube, computed for it.)
        """
        base = self.facts if facts is None else facts
        return Checked(cube, replace(base, means=None, largest=None))
