"""The one bridge between named dims and the numpy kernels.

Every computation of cvstats on labelled arrays goes through
:func:`apply_kernel`, a thin wrapper around :func:`xarray.apply_ufunc`: the
named core dims are moved to the last axes of plain numpy arrays, a kernel of
:mod:`cvstats.kernels` (or any numpy function) computes on them, vectorized over
the leading batch axes, and the outputs come back as DataArrays over the batch
dims (and the output core dims, if any). Dask-backed inputs stay lazy: the
kernel runs chunk by chunk.

For in-memory inputs whose coordinates need no merging (one input, or inputs
that share their coordinate objects, as the outputs of one call do),
:func:`apply_kernel` does what :func:`xarray.apply_ufunc` does without its
alignment and merge machinery (:func:`_in_memory`): the same transposes and
new axes, the same output dims, coordinates, indexes, name and attrs. It is
several times faster on the small arrays of the methods (the split means),
where that machinery, not the kernel, is the cost; it is tested identical to
:func:`xarray.apply_ufunc` on every call of every method. Anything else goes to
:func:`xarray.apply_ufunc`.

It lives in the data model because the compact packing
(:mod:`cvstats.cube.compact`) and the results need it as well as the
estimators, and layers below the estimators may not import them. It imports
only xarray (no other module of cvstats), so any module of the package may
import it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

__all__ = ["apply_kernel", "labelled"]


def apply_kernel(
    kernel: Callable[..., Any],
    arrays: Sequence[xr.DataArray],
    core_dims: Sequence[Sequence[Hashable]],
    n_outputs: int,
    *,
    output_core_dims: Sequence[Sequence[Hashable]] | None = None,
    output_sizes: Mapping[Hashable, int] | None = None,
    output_dtypes: Sequence[Any] | None = None,
    keep_attrs: bool | str | None = None,
    **kwargs: Any,
) -> tuple[xr.DataArray, ...]:
    """Apply a numpy kernel over named core dims, vectorized over every other dim.

    The one call of :func:`xarray.apply_ufunc` in cvstats. The core dims of
    each input are moved to its last axes (in the order given), every other dim
    is a batch dim broadcast across the inputs, and dask-backed inputs stay
    lazy (``dask="parallelized"``; a core dim split over several chunks is
    rechunked into one).

    Parameters
    ----------
    kernel : callable
        ``kernel(*arrays, **kwargs)`` on numpy arrays whose last axes are the
        core dims; returns one array, or a tuple (e.g. a named tuple) of
        ``n_outputs`` arrays, each with the batch shape followed by its output
        core dims.
    arrays : sequence of xarray.DataArray
        The inputs, in the kernel's positional order.
    core_dims : sequence of sequence of hashable
        The core dims of each input (``[]`` for none), one entry per array.
    n_outputs : int
        Number of arrays the kernel returns.
    output_core_dims : sequence of sequence of hashable, optional
        The core dims of each output, one entry per output, e.g.
        ``[[SLOT, unit], [SLOT]]``; default none (every output has the batch
        dims only).
    output_sizes : mapping of hashable to int, optional
        Sizes of output core dims that are in no input (needed by dask to
        build the lazy result), e.g. ``{SLOT: k}``.
    output_dtypes : sequence, optional
        The dtype of each output (used by dask); default ``float`` for all.
    keep_attrs : bool or str, optional
        Passed to :func:`xarray.apply_ufunc`: whether (or how) the outputs keep
        the attrs of the inputs; default ``None``, xarray's default (its
        ``keep_attrs`` option).
    **kwargs
        Keyword arguments of the kernel.

    Returns
    -------
    tuple of xarray.DataArray
        The ``n_outputs`` outputs (a 1-tuple for one output).

    Raises
    ------
    ValueError
        If ``core_dims`` does not have one entry per array, or
        ``output_core_dims`` or ``output_dtypes`` not one per output.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from cvstats.cube.apply import apply_kernel
    >>> x = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("model", "split"))
    >>> (mean,) = apply_kernel(lambda a: a.mean(axis=-1), [x], [["split"]], 1)
    >>> mean.dims, mean.values.tolist()
    (('model',), [1.0, 4.0])
    """
    if len(core_dims) != len(arrays):
        raise ValueError(
            f"apply_kernel: {len(arrays)} arrays but {len(core_dims)} entries of core_dims."
        )
    out_dims = [[] for _ in range(n_outputs)] if output_core_dims is None else output_core_dims
    dtypes = [float] * n_outputs if output_dtypes is None else output_dtypes
    if len(out_dims) != n_outputs or len(dtypes) != n_outputs:
        raise ValueError(
            f"apply_kernel: n_outputs = {n_outputs}, but {len(out_dims)} entries of "
            f"output_core_dims and {len(dtypes)} of output_dtypes."
        )
    fast = _in_memory(kernel, arrays, core_dims, out_dims, keep_attrs, kwargs)
    if fast is not None:
        return fast
    return _xarray_apply(
        kernel, arrays, core_dims, out_dims, output_sizes, dtypes, keep_attrs, kwargs
    )


def _xarray_apply(
    kernel: Callable[..., Any],
    arrays: Sequence[xr.DataArray],
    core_dims: Sequence[Sequence[Hashable]],
    out_dims: Sequence[Sequence[Hashable]],
    output_sizes: Mapping[Hashable, int] | None,
    dtypes: Sequence[Any],
    keep_attrs: bool | str | None,
    kwargs: Mapping[str, Any],
) -> tuple[xr.DataArray, ...]:
    """:func:`apply_kernel` by :func:`xarray.apply_ufunc` (any input, lazy ones too)."""
    gufunc_kwargs: dict[str, Any] = {"allow_rechunk": True}
    if output_sizes:
        gufunc_kwargs["output_sizes"] = dict(output_sizes)
    out = xr.apply_ufunc(
        kernel,
        *arrays,
        input_core_dims=[list(d) for d in core_dims],
        output_core_dims=[list(d) for d in out_dims],
        kwargs=dict(kwargs),
        dask="parallelized",
        output_dtypes=list(dtypes),
        dask_gufunc_kwargs=gufunc_kwargs,
        keep_attrs=keep_attrs,
    )
    return tuple(out) if len(out_dims) > 1 else (out,)


@functools.cache
def _keeps_attrs_by_default() -> bool:
    """Whether :func:`xarray.apply_ufunc` keeps attrs when ``keep_attrs`` is not given.

    xarray changed this default over its versions; asked of xarray itself, on
    the first call (not on import: xarray's first ``apply_ufunc`` looks for the
    array libraries it knows, which takes time).
    """
    probe = xr.DataArray([1.0], dims="x", attrs={"probe": 1})
    with xr.set_options(keep_attrs="default"):
        return bool(xr.apply_ufunc(lambda x: x, probe).attrs)


@functools.cache
def _fastpath_works() -> bool:
    """Whether this xarray builds a DataArray from a Variable, coordinates and indexes.

    Asked on the first call, not on import (a first Variable makes xarray look
    for the array libraries it knows, dask among them).
    """
    try:
        var = xr.Variable(("x",), np.zeros(1))
        built = xr.DataArray(var, coords={}, indexes={}, name=None, fastpath=True)
    except TypeError:
        return False
    return bool(built.dims == ("x",))


#: Coordinates and indexes up to this many values are compared by value when two inputs
#: hold them as different objects (larger ones go to xarray).
_COMPARED = 4096


def _in_memory(
    kernel: Callable[..., Any],
    arrays: Sequence[xr.DataArray],
    core_dims: Sequence[Sequence[Hashable]],
    out_dims: Sequence[Sequence[Hashable]],
    keep_attrs: bool | str | None,
    kwargs: Mapping[str, Any],
) -> tuple[xr.DataArray, ...] | None:
    """:func:`xarray.apply_ufunc`'s result for in-memory inputs with shared coordinates.

    None (use :func:`xarray.apply_ufunc`) unless: every input is a numpy-backed
    DataArray, attrs are kept (``keep_attrs`` true, or not given where xarray's
    default keeps them), every coordinate name is one object in every input that
    has it or a small one of equal values, dims and attrs (for an index
    coordinate: its index, or an equal small index), every index is of one
    coordinate, and the dim sizes agree (what xarray's alignment and merge would
    accept without a change, keeping the first input's coordinate). Then, as
    :func:`xarray.apply_ufunc` does: the batch dims are every input dim that is
    no core dim, in order of appearance; each input is
    transposed to its batch dims then its core dims, with new axes for the batch
    dims it lacks after its first; each output has the batch dims then its core
    dims, the coordinates on no dropped core dim, the first input's name and a
    copy of its attrs.
    """
    if not _fastpath_works():
        return None
    keep = xr.get_options()["keep_attrs"] if keep_attrs is None else keep_attrs
    if keep == "default":
        keep = _keeps_attrs_by_default()
    if keep is not True and keep != "override":
        return None
    coords: dict[Hashable, xr.Variable] = {}
    indexes: dict[Hashable, Any] = {}
    sizes: dict[Hashable, int] = {}
    values = []
    for array in arrays:
        if not isinstance(array, xr.DataArray) or type(array.data) is not np.ndarray:
            return None
        values.append(array.data)
        own = array.xindexes
        for name, var in array.coords.variables.items():
            if name in own:  # an index coordinate: an equal index (xarray keeps the first's)
                if name in coords and name not in indexes:
                    return None  # not an index in another input: xarray's rules
                if not _same_index(indexes.setdefault(name, own[name]), own[name]):
                    return None  # alignment: xarray's rules
                coords.setdefault(name, var)
            elif name in indexes or not _same_variable(coords.setdefault(name, var), var):
                return None  # a merge to make: xarray's rules
        for dim, size in zip(array.dims, array.shape, strict=True):
            if sizes.setdefault(dim, size) != size:
                return None  # xarray names the conflict
    if len({id(index) for index in indexes.values()}) != len(indexes):
        return None  # an index of several coordinates (a MultiIndex): xarray's rules
    all_core = {d for dims in core_dims for d in dims} | {d for dims in out_dims for d in dims}
    batch = tuple(d for d in sizes if d not in all_core)
    data = []
    for array, raw, core in zip(arrays, values, core_dims, strict=True):
        prepared = _broadcast_compat(raw, array.dims, batch, tuple(core))
        if prepared is None:
            return None
        data.append(prepared)
    result = kernel(*data, **kwargs)
    results = (result,) if len(out_dims) == 1 else result
    if not isinstance(results, tuple) or len(results) != len(out_dims):
        return None  # xarray names the mismatch
    dropped_by = {d for dims in core_dims for d in dims}
    first = arrays[0]
    outputs = []
    for dims, out in zip(out_dims, results, strict=True):
        if np.ndim(out) != len(batch) + len(dims):
            return None  # xarray names the mismatch
        var = xr.Variable((*batch, *dims), out)
        if any(d in sizes and n != sizes[d] for d, n in var.sizes.items()):
            return None  # xarray names the change of size
        var.attrs = dict(first.attrs)
        dropped = dropped_by - set(dims)
        kept = {k: v for k, v in coords.items() if dropped.isdisjoint(v.dims)}
        kept_indexes = {k: v for k, v in indexes.items() if k in kept}
        outputs.append(
            xr.DataArray(var, coords=kept, indexes=kept_indexes, name=first.name, fastpath=True)
        )
    return tuple(outputs)


def _same_index(first: Any, other: Any) -> bool:
    """Whether two inputs' indexes of one name are equal (small ones compared by value)."""
    if first is other:
        return True
    if type(first) is not type(other) or len(getattr(first, "index", ())) > _COMPARED:
        return False
    return bool(first.equals(other))


def _same_variable(first: xr.Variable, other: xr.Variable) -> bool:
    """Whether two inputs' coordinates of one name are equal (small ones compared by value)."""
    if first is other:
        return True
    if first.dims != other.dims or first.size > _COMPARED:
        return False
    try:  # attrs may hold arrays (netCDF's valid_range): not comparable with ==
        same_attrs = bool(first.attrs == other.attrs)
    except (ValueError, TypeError):
        return False
    return same_attrs and bool(first.equals(other))


def _broadcast_compat(
    values: np.ndarray,
    old: tuple[Hashable, ...],
    batch: tuple[Hashable, ...],
    core: tuple[Hashable, ...],
) -> np.ndarray | None:
    """Return an input's values as :func:`xarray.apply_ufunc` hands them to the kernel.

    None where xarray raises (a core dim missing, a dim that is a core dim
    elsewhere). ``old``: the input's dims. Transposed to its batch dims (in the
    order of ``batch``) then ``core``; a new axis for each batch dim it lacks
    after the first one it has (numpy broadcasting handles the leading ones).
    """
    new = batch + core
    if new == old:
        return values
    present = set(old)
    if any(d not in set(new) for d in old) or any(d not in present for d in core):
        return None
    reordered = tuple(d for d in batch if d in present) + core
    if reordered != old:
        values = values.transpose([old.index(d) for d in reordered])
    if new != reordered:
        key: list[Any] = []
        for dim in new:
            if dim in present:
                key.append(slice(None))
            elif key:
                key.append(np.newaxis)
        values = values[tuple(key)]
    return values


def labelled(
    values: np.ndarray,
    dims: Sequence[Hashable],
    coords: Mapping[Hashable, xr.Variable],
    indexes: Mapping[Hashable, Any],
    name: Hashable | None,
    attrs: Mapping[Any, Any],
) -> xr.DataArray:
    """Return ``values`` over ``dims`` with coordinates and indexes taken from another array.

    ``coords`` are coordinate variables and ``indexes`` their indexes
    (``array.xindexes``), on dims of ``dims`` of the same sizes. Equal to
    ``xarray.DataArray(values, dims=dims, coords=coords, name=name, attrs=attrs)``,
    without re-creating the indexes from the coordinates' values (the
    public constructor's cost on the small arrays of the methods).
    """
    unindexed = any(name in dims and name not in indexes for name in coords)
    if unindexed or not _fastpath_works():  # the constructor would build that index
        return xr.DataArray(values, dims=tuple(dims), coords=dict(coords), name=name, attrs=attrs)
    var = xr.Variable(tuple(dims), values, dict(attrs))
    # shallow copies, as the constructor makes them: their attrs are not the source's
    own = {name: coord.copy(deep=False) for name, coord in coords.items()}
    return xr.DataArray(var, coords=own, indexes=dict(indexes), name=name, fastpath=True)
