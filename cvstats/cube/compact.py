"""Compact storage of a loss cube: the test losses only, and where they belong.

A cube ``(*extra, split, example, model)`` is mostly NaN: a split tests
``n2`` of the ``n`` examples (``n2 = n/10`` for a typical resampling
design), so nine values in ten hold nothing. The **compact form** keeps the
test losses only:

* a **compact cube**, the ``xarray.DataArray`` ``(*extra, split, slot, model)``
  named after its loss, where ``slot`` is the position within the split's test
  set (test examples in ascending order of their position along ``example``,
  then NaN padding), with the cube's split coordinates, ``model`` (or
  ``contrast``) coordinate and attrs, an int coordinate ``example_index``
  ``(*extra, split, slot)`` (position along the dense cube's ``example`` dim;
  -1 on padding slots) and the attr ``n_examples`` (size of the dense
  ``example`` dim);
* inside a **compact Dataset** (:func:`to_compact`), which also holds what
  has no place on those dims: the ``example`` labels and the ``in_train``
  coordinate (packed eight examples a byte, as ``in_train_bits``). The
  Dataset converts back to the dense cube exactly (:func:`from_compact`).

Every inference method (and :func:`cvstats.compare`, :func:`cvstats.fit_rho`,
:func:`cvstats.fit_r`, :func:`cvstats.contrasts`) accepts a compact cube as
it accepts a cube: :func:`cvstats.validate`, :func:`cvstats.inference.blocks.split_means`
and :func:`cvstats.inference.blocks.block_sizes` recognise the ``slot`` dim, and
everything else reads the losses through them. ``compare(formula, compact)``
takes the compact Dataset itself (the formula's left side names the variable).

The slot dim is as long as the largest test set. Blocks whose test sizes
differ share that length, the shorter ones padded with NaN: a k-fold main
block whose folds differ by one example pads one slot, and a ``"5x2"`` block
(test size ``n/2``) next to ``n2 = n/10`` resampling splits pads every
split to ``n/2`` (keep the 5x2 block in a cube of its own, or drop it with
:func:`cvstats.designs.select_blocks`, to keep the saving).
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from cvstats._version import __version__
from cvstats.cube import files
from cvstats.cube.apply import apply_kernel
from cvstats.cube.dense import (
    check_attrs,
    check_block_sizes,
    check_dtype,
    check_name,
    check_nested,
    check_sizes,
    check_split_coords,
    stated_test_sizes,
    validate_dense,
)
from cvstats.cube.schema import CONTRAST, EXAMPLE, IN_TRAIN, N_TEST, SPLIT, UNIT_DIMS
from cvstats.errors import CubeError, StorageError

__all__ = [
    "SLOT",
    "EXAMPLE_INDEX",
    "is_compact",
    "to_compact",
    "from_compact",
    "compact_cube",
    "validate_compact",
    "save_compact",
    "open_compact",
    "lazy_chunks",
]

#: The dim of positions within a split's test set.
SLOT = "slot"
#: Coordinate ``(*extra, split, slot)``: position of the slot's example along ``example``.
EXAMPLE_INDEX = "example_index"
#: Attr of a compact cube: the size of the dense cube's ``example`` dim.
N_EXAMPLES = "n_examples"
#: Coordinate of a compact Dataset: ``in_train`` packed along ``example`` (``numpy.packbits``).
TRAIN_BITS = "in_train_bits"
_BYTE = "example_byte"
#: Global attrs marking a compact Dataset.
LAYOUT_ATTR = "cvstats_layout"
VARIABLE_ATTR = "cvstats_variable"
COMPACT_VERSION = 1


def is_compact(obj: Any) -> bool:
    """Whether ``obj`` is a compact cube (a DataArray with a ``slot`` dim) or compact Dataset."""
    if isinstance(obj, xr.Dataset):
        return obj.attrs.get(LAYOUT_ATTR) == "compact"
    return isinstance(obj, xr.DataArray) and SLOT in obj.dims


def _unit(cube: xr.DataArray) -> str:
    last = cube.dims[-1] if cube.dims else None
    return str(last) if last in UNIT_DIMS else "model"


def _index_dtype(n: int) -> np.dtype:
    return np.dtype(np.int32) if n < 2**31 - 1 else np.dtype(np.int64)


# --------------------------------------------------------------------------
# conversion
# --------------------------------------------------------------------------


def _pack(values: np.ndarray, k: int, index_dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """``(..., example, unit)`` -> test losses ``(..., k, unit)`` and positions ``(..., k)``."""
    tested = ~np.isnan(values[..., 0])
    # stable sort of "not tested": the tested examples first, in ascending position
    order = np.argsort(~tested, axis=-1, kind="stable")[..., :k]
    valid = np.take_along_axis(tested, order, axis=-1)
    packed = np.take_along_axis(values, order[..., None], axis=-2)
    packed = np.where(valid[..., None], packed, np.nan).astype(values.dtype, copy=False)
    return packed, np.where(valid, order, -1).astype(index_dtype)


def _unpack(packed: np.ndarray, index: np.ndarray, n: int) -> np.ndarray:
    """Inverse of :func:`_pack`: ``(..., k, unit)`` -> ``(..., n, unit)``, NaN off the index."""
    out = np.full((*packed.shape[:-2], n + 1, packed.shape[-1]), np.nan, dtype=packed.dtype)
    where = np.where(index >= 0, index, n).astype(np.intp)  # padding lands on a spare row
    np.put_along_axis(out, np.broadcast_to(where[..., None], packed.shape), packed, axis=-2)
    return out[..., :n, :]


def to_compact(cube: xr.DataArray) -> xr.Dataset:
    """Convert a loss cube to its compact Dataset (test losses only), losslessly.

    Parameters
    ----------
    cube : xarray.DataArray
        A valid loss cube or contrast cube, numpy- or dask-backed (a dask cube
        stays lazy: the conversion runs chunk-wise, each chunk holding the
        whole ``example`` dim; the cube is read once to validate it and size
        the ``slot`` dim).

    Returns
    -------
    xarray.Dataset
        The compact cube (variable named after the loss, dims
        ``(*extra, split, slot, model|contrast)``, coordinate ``example_index``)
        plus the ``example`` labels and, when the cube has one, ``in_train``
        packed into ``in_train_bits``; attrs ``cvstats_layout = "compact"`` and
        ``cvstats_variable``. :func:`from_compact` gives `cube` back.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.cube.compact import to_compact, from_compact
    >>> d = cvstats.designs.resampled(40, 4, J=3, seed=0)
    >>> cube = cvstats.from_arrays(np.random.default_rng(0).random((3, 40, 2)), design=d)
    >>> compact = to_compact(cube)
    >>> dict(compact["loss"].sizes)
    {'split': 3, 'slot': 4, 'model': 2}
    >>> from_compact(compact).identical(cube)
    True
    """
    if is_compact(cube):
        raise CubeError("`cube` is compact already; expand it with from_compact first.")
    validate_dense(cube)
    unit = _unit(cube)
    n = int(cube.sizes[EXAMPLE])
    k = int(cube.isel({unit: 0}, drop=True).notnull().sum(EXAMPLE).max())
    idtype = _index_dtype(n)
    bare = cube.drop_vars([c for c in cube.coords if EXAMPLE in cube[c].dims])
    packed, index = apply_kernel(
        _pack,
        [bare],
        [[EXAMPLE, unit]],
        2,
        output_core_dims=[[SLOT, unit], [SLOT]],
        output_sizes={SLOT: k},
        output_dtypes=[cube.dtype, idtype],
        keep_attrs=True,
        k=k,
        index_dtype=idtype,
    )
    index = index.drop_vars([c for c in index.coords if unit in index[c].dims])
    packed = packed.assign_coords({EXAMPLE_INDEX: index})
    packed.attrs = {**cube.attrs, N_EXAMPLES: n}
    packed.name = cube.name
    coords: dict[Hashable, Any] = {
        c: cube[c].variable for c in cube.coords if EXAMPLE in cube[c].dims and c != IN_TRAIN
    }
    if IN_TRAIN in cube.coords:
        it = cube[IN_TRAIN]
        bits = np.packbits(np.asarray(it.values, dtype=bool), axis=-1)
        coords[TRAIN_BITS] = ((*it.dims[:-1], _BYTE), bits)
    out = packed.to_dataset().assign_coords(coords)
    out.attrs = {LAYOUT_ATTR: "compact", VARIABLE_ATTR: str(cube.name)}
    return out


def compact_cube(compact: xr.Dataset | xr.DataArray) -> xr.DataArray:
    """Return the compact cube of a compact Dataset (its loss variable); a compact cube as is."""
    if isinstance(compact, xr.DataArray):
        if not is_compact(compact):
            raise CubeError(
                f"expected a compact cube (dims ending in ({SPLIT}, {SLOT}, model)), got a "
                f"DataArray with dims {list(compact.dims)}; convert a cube with to_compact."
            )
        return compact
    if not is_compact(compact):
        raise CubeError(
            "`compact` is not a compact Dataset (no attr cvstats_layout='compact'); build one "
            "with cvstats.cube.compact.to_compact(cube)."
        )
    return compact[compact.attrs[VARIABLE_ATTR]]


def from_compact(compact: xr.Dataset | xr.DataArray) -> xr.DataArray:
    """Expand a compact Dataset (or compact cube) back to the dense loss cube.

    From a compact Dataset the result is identical to the cube given to
    :func:`to_compact` (values, NaN pattern, coordinates, attrs). A compact
    cube alone carries no ``example`` labels or ``in_train``: the labels are
    then ``0..n_examples-1`` and there is no ``in_train``. Dask-backed input
    gives a dask-backed cube.

    Parameters
    ----------
    compact : xarray.Dataset or xarray.DataArray
        From :func:`to_compact` (or :func:`open_compact`), or its compact cube.

    Returns
    -------
    xarray.DataArray
        The dense cube ``(*extra, split, example, model|contrast)``.
    """
    cube = compact_cube(compact)
    unit = _unit(cube)
    n = int(cube.attrs.get(N_EXAMPLES, cube.attrs.get("n", 0)))
    index = cube[EXAMPLE_INDEX]
    index = index.drop_vars([c for c in index.coords if c not in index.dims or c == EXAMPLE_INDEX])
    (dense,) = apply_kernel(
        _unpack,
        [cube.drop_vars(EXAMPLE_INDEX), index],
        [[SLOT, unit], [SLOT]],
        1,
        output_core_dims=[[EXAMPLE, unit]],
        output_sizes={EXAMPLE: n},
        output_dtypes=[cube.dtype],
        keep_attrs=True,
        n=n,
    )
    dense.attrs = {k: v for k, v in cube.attrs.items() if k != N_EXAMPLES}
    dense.name = cube.name
    if isinstance(compact, xr.Dataset):
        extra = {
            c: compact[c].variable
            for c in compact.coords
            if EXAMPLE in compact[c].dims and c not in dense.coords
        }
        dense = dense.assign_coords(extra)
        if TRAIN_BITS in compact.coords:
            bits = compact[TRAIN_BITS]
            unpacked = np.unpackbits(np.asarray(bits.values), axis=-1, count=n).astype(bool)
            dense = dense.assign_coords({IN_TRAIN: ((*bits.dims[:-1], EXAMPLE), unpacked)})
    else:
        dense = dense.assign_coords({EXAMPLE: np.arange(n)})
    return dense


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------


def _fail_first(mask: np.ndarray, splits: list[Any], message: str) -> None:
    if mask.any():
        i = int(np.argwhere(mask)[0][-1])
        raise CubeError(message.format(split=splits[i]))


def _cover(index: np.ndarray, n: int) -> np.ndarray:
    """Count how often each example occurs in every row of ``index``: ``(rows, n)``."""
    rows = index.reshape(index.shape[0], -1)
    flat = np.where(rows >= 0, rows, n) + (n + 1) * np.arange(rows.shape[0])[:, None]
    counts = np.bincount(flat.ravel(), minlength=rows.shape[0] * (n + 1))
    return counts.reshape(rows.shape[0], n + 1)[:, :n]


def validate_compact(cube: xr.DataArray) -> None:
    """Check a compact cube: the schema of ``docs/cube-schema.md`` on the compact layout.

    Called by :func:`cvstats.validate` for a cube with a ``slot`` dim. Checks
    the name, the dims ``(*extra, split, slot, model|contrast)`` (none of
    length 0), dtype (float32 or float64), labels, split
    coordinates and attrs (as for a dense cube); ``example_index``: ints in
    ``[0, n_examples)``, strictly increasing within a split (so unique),
    padding (-1) last; values finite on the indexed slots and NaN exactly on
    the padding, for every model (one pass over a dask cube); test sizes as
    for the dense form (:func:`cvstats.cube.dense.validate_dense`): the same
    size in every split of a block and every row of the extra dims, unless the
    cube states its test sizes in the ``n_test`` coordinate (which the slots
    must then match in every row), the k-fold main block and ``"nested"``
    excepted; ``n_train + n_test <= ⌊n/2⌋`` in every ``"half"`` split; k-fold
    repeats partitioning the examples; the two sides of every half-split
    disjoint and every ``"nested"`` split testing two whole folds of its
    repeat (through the indices).

    Raises
    ------
    CubeError
        Naming the first problem found.
    """
    check_name(cube)
    unit = _unit(cube)
    core = (SPLIT, SLOT, unit)
    if tuple(cube.dims[-3:]) != core:
        raise CubeError(
            f"a compact cube's dims must end with {list(core)}, got {list(cube.dims)}."
        )
    check_sizes(cube)
    check_dtype(cube.dtype)
    for dim in (SPLIT, unit):
        if dim not in cube.coords:
            raise CubeError(f"the `{dim}` dim has no coordinate.")
        if not np.unique(np.asarray(cube[dim].values)).size == cube.sizes[dim]:
            raise CubeError(f"the `{dim}` coordinate has duplicated labels.")
    if not np.issubdtype(cube[SPLIT].dtype, np.integer):
        raise CubeError(f"the `split` coordinate must hold ints, got dtype {cube[SPLIT].dtype}.")
    check_attrs(cube)
    check_split_coords(cube)
    if EXAMPLE_INDEX not in cube.coords:
        raise CubeError(
            f"a compact cube needs the coordinate `{EXAMPLE_INDEX}` (*extra, split, slot); "
            "build compact cubes with cvstats.cube.compact.to_compact."
        )
    idx_var = cube[EXAMPLE_INDEX]
    if (
        not np.issubdtype(idx_var.dtype, np.integer)
        or idx_var.dims[-2:] != (SPLIT, SLOT)
        or not set(idx_var.dims) <= set(cube.dims)
    ):
        raise CubeError(
            f"coordinate `{EXAMPLE_INDEX}` must hold ints over (*extra, split, slot), got dtype "
            f"{idx_var.dtype} and dims {idx_var.dims}."
        )
    # one pass over the losses: infinities, and NaN exactly on the padding for every model
    valid = idx_var >= 0
    stats = xr.Dataset(
        {
            "inf": np.isinf(cube).any(),
            "pattern": (cube.notnull() != valid).any(),
        }
    ).compute()
    if bool(stats["inf"]):
        raise CubeError("the compact cube holds infinite losses; losses must be finite.")
    if bool(stats["pattern"]):
        raise CubeError(
            f"the compact cube's losses are not NaN exactly on the padding slots "
            f"(`{EXAMPLE_INDEX}` = -1), for every model: a test example needs a finite loss."
        )

    index = np.asarray(idx_var.transpose(..., SPLIT, SLOT).values)
    index = index.reshape(-1, *index.shape[-2:])  # (rows, split, slot)
    splits = cube[SPLIT].values.tolist()
    n_ex = int(cube.attrs.get(N_EXAMPLES, cube.attrs["n"]))
    ok = index >= 0
    _fail_first(
        (index >= n_ex).any(axis=(0, 2)),
        splits,
        f"split {{split}} has an `{EXAMPLE_INDEX}` >= n_examples = {n_ex}.",
    )
    _fail_first(
        (ok[..., 1:] & ~ok[..., :-1]).any(axis=(0, 2)),
        splits,
        "split {split} has a padding slot (-1) before a test example; padding goes last.",
    )
    _fail_first(
        (ok[..., 1:] & (np.diff(index, axis=-1) <= 0)).any(axis=(0, 2)),
        splits,
        f"split {{split}} has repeated or unsorted `{EXAMPLE_INDEX}` values; each test "
        "example appears once, in ascending order.",
    )
    n_test = ok.sum(axis=-1)  # (rows, split)
    _fail_first((n_test == 0).any(axis=0), splits, "split {split} has no test example.")
    stated = stated_test_sizes(cube)
    if stated is not None:  # the sizes are stated: every row's slots must match them
        differs = n_test != stated
        if differs.any():
            row, i = (int(k) for k in np.argwhere(differs)[0])
            raise CubeError(
                f"split {splits[i]} tests {int(n_test[row, i])} example(s) (slots with "
                f"`{EXAMPLE_INDEX}` >= 0) but its `{N_TEST}` coordinate states {int(stated[i])}: "
                f"a test loss was lost, or `{N_TEST}` is wrong. Fill the loss, or fix "
                f"`{N_TEST}` (cvstats.from_arrays and cvstats.from_frame set it from the test "
                "sets; to_compact keeps it)."
            )
    n, n_train = int(cube.attrs["n"]), cube["n_train"].values
    _fail_first(
        (n_test + n_train > n).any(axis=0),
        splits,
        f"split {{split}} has n_train + n_test > n = {n}.",
    )
    block = np.asarray(cube["block"].values)
    fold, repeat, half, side = (cube[c].values for c in ("fold", "repeat", "half", "side"))
    main_kfold = (block == "main") & (fold >= 0)
    # as for the dense form: the k-fold main block (folds differ when K does not divide n;
    # the partition check below guards it) and 'nested' (two folds) may differ in test size;
    # the other blocks need one size, unless the cube states its sizes (`n_test`)
    check_block_sizes(block, fold, n_test, n_train, splits, n, stated, "compact cube")
    for r in np.unique(repeat[main_kfold]):
        counts = _cover(index[:, main_kfold & (repeat == r)], n_ex)
        if (counts != 1).any():
            raise CubeError(
                "the k-fold main block does not test every example exactly once per repeat "
                f"(repeat {int(r)}); a k-fold repeat must partition the examples."
            )
    for kind in ("half", "5x2"):
        for m in np.unique(half[block == kind]):
            sides = [
                _cover(index[:, (block == kind) & (half == m) & (side == s)], n_ex) > 0
                for s in (0, 1)
            ]
            if (sides[0] & sides[1]).any():
                raise CubeError(
                    f"block {kind!r}: the two sides of half-split {int(m)} test common "
                    "examples; the halves D_m and D_m^c must be disjoint."
                )
    if (block == "nested").any():  # each nested split tests two whole folds of its repeat
        check_nested(
            cube, _masks(index[:, main_kfold], n_ex), _masks(index[:, block == "nested"], n_ex)
        )


def _masks(index: np.ndarray, n: int) -> np.ndarray:
    """Boolean test masks ``(rows, split, n)`` from example indices ``(rows, split, slot)``."""
    out = np.zeros((*index.shape[:-1], n + 1), dtype=bool)
    np.put_along_axis(out, np.where(index >= 0, index, n), True, axis=-1)
    return out[..., :n]


# --------------------------------------------------------------------------
# storage and chunks
# --------------------------------------------------------------------------


def save_compact(
    compact: xr.Dataset, path: str | os.PathLike[str], *, overwrite: bool = False
) -> Path:
    """Write a compact Dataset atomically to ``.nc`` (netCDF-4) or ``.zarr``.

    The compact cube is validated first; writing goes through the machinery of
    :func:`cvstats.save`, with the same guarantees: a temporary file moved into
    place once complete; without `overwrite` an existing `path` (even one
    created by another process meanwhile) is never replaced; with it only a
    file or store written by cvstats is; a full disk raises instead of
    crashing.

    Parameters
    ----------
    compact : xarray.Dataset
        A compact Dataset (:func:`to_compact`).
    path : str or os.PathLike
        Destination, ending in ``.nc`` or ``.zarr``. Its directory must exist.
    overwrite : bool, default False
        Replace a file or store written by cvstats at `path`.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    cvstats.CubeError
        If the compact cube breaks the schema.
    cvstats.StorageError
        As :func:`cvstats.save`.
    """
    validate_compact(compact_cube(compact))
    target = Path(path)
    files.check_suffix(target)

    def build() -> tuple[xr.Dataset, dict[str, dict[str, Any]]]:
        ds = compact.drop_encoding()
        strings = {
            name: var.copy(data=np.asarray(var.values).astype(object))
            for name, var in ds.variables.items()
            if var.dtype.kind in "OUT"
        }
        ds = ds.assign_coords({k: v for k, v in strings.items() if k in ds.coords})
        ds.attrs = {**compact.attrs, files.VERSION_ATTR: __version__}
        return ds, {name: {"_FillValue": None} for name in ds.variables}

    return files.save_dataset(build, target, overwrite=overwrite, what="the compact cube")


def open_compact(
    path: str | os.PathLike[str], chunks: Mapping[str, int | str | None] | int | str | None = None
) -> xr.Dataset:
    """Open a compact Dataset written by :func:`save_compact` (lazily with ``chunks``).

    With ``chunks=None`` everything is read into memory and the file closed.
    Otherwise the Dataset is dask-backed with these chunks: ``"auto"``, a
    positive int, ``-1`` (whole dims), or a dict mapping dims to one of these
    (a dim left out, or given ``None`` or ``0``, is one chunk). The file is
    checked as by :func:`cvstats.open_cube` before it is opened (it must be a
    regular file or a directory; a zarr store without a pickle codec).

    Raises
    ------
    cvstats.StorageError
        If `path` cannot be opened, or holds no compact cube written by
        :func:`save_compact`.
    cvstats.ArgumentError
        If `chunks` has an invalid value or names a dim the Dataset lacks.
    cvstats.CvstatsTypeError
        If `chunks` has an invalid type.
    """
    source = Path(path)
    suffix = files.check_suffix(source)
    if chunks is not None:
        files.check_chunks(chunks)
    files.check_source(source, suffix)
    try:
        ds = xr.open_dataset(source, cache=False, **files.OPEN_KWARGS[suffix])
    except Exception as e:
        raise StorageError(f"cannot read {str(source)!r} as {files.FORMATS[suffix]}: {e}") from e
    if not is_compact(ds):
        ds.close()
        raise StorageError(f"{str(source)!r} holds no compact cube written by save_compact.")
    ds.attrs.pop("cvstats_version", None)
    close = ds.close
    small = {}
    for name, coord in ds.coords.items():  # small: read now (example_index stays lazy)
        if name == EXAMPLE_INDEX and chunks is not None:
            continue
        values = np.asarray(coord.values)
        if values.dtype.kind == "T" or (
            values.dtype.kind == "O" and all(isinstance(v, str) for v in values.flat)
        ):  # zarr's StringDType / object strings: numpy unicode, as built in memory
            values = values.astype(object).astype(str)
        small[name] = coord.variable.copy(data=values)
    if chunks is None:
        ds = ds.load()
        close()
    else:  # lazily: dask over the backend arrays, nothing read yet
        try:
            ds = files.chunk_dataset(ds, chunks, source)
        except BaseException:
            close()
            raise
    ds = ds.assign_coords(small)
    if chunks is not None:
        ds.set_close(close)
    try:
        validate_compact(ds[ds.attrs[VARIABLE_ATTR]])
    except CubeError:
        ds.close()
        raise
    return ds


def lazy_chunks(
    sizes: Mapping[Hashable, int] | xr.DataArray,
    itemsize: int = 8,
    target_bytes: int = 64 * 2**20,
) -> dict[Hashable, int]:
    """Recommended dask chunks for a (dense or compact) cube: whole examples and models.

    Every reduction cvstats runs is over ``example`` (or ``slot``) within one
    split, then over splits; so a chunk holds the whole ``example``/``slot``
    and ``model``/``contrast`` dims, and is cut along ``split`` and the extra
    dims so that it holds about ``target_bytes``: extra dims one element at a
    time (first dims first) once one element exceeds the target, and splits
    in groups of a size that fits.

    Parameters
    ----------
    sizes : mapping or xarray.DataArray
        Dim sizes, in dim order (``cube.sizes``), or the cube (its itemsize is
        then used).
    itemsize : int, default 8
        Bytes per value (4 for float32).
    target_bytes : int, default 64 MiB
        Approximate bytes per chunk.

    Returns
    -------
    dict
        Chunks per dim, for ``cvstats.open_cube(path, chunks=...)`` or ``cube.chunk(...)``.

    Examples
    --------
    >>> from cvstats.cube.compact import lazy_chunks
    >>> lazy_chunks({"dataset": 1000, "split": 320, "example": 2000, "model": 3}, itemsize=4)
    {'dataset': 8, 'split': 320, 'example': 2000, 'model': 3}
    """
    if isinstance(sizes, xr.DataArray):
        itemsize = sizes.dtype.itemsize
        sizes = dict(sizes.sizes)
    sizes = dict(sizes)
    whole = {EXAMPLE, SLOT, *UNIT_DIMS, CONTRAST}
    inner = int(np.prod([s for d, s in sizes.items() if d in whole])) * itemsize
    per_split = max(1, target_bytes // max(inner, 1))
    out: dict[Hashable, int] = {d: s for d, s in sizes.items() if d in whole}
    n_split = int(sizes.get(SPLIT, 1))
    out[SPLIT] = int(min(n_split, per_split))
    block = inner * out[SPLIT]
    extra = [d for d in sizes if d not in whole and d != SPLIT]
    for d in reversed(extra):  # grow the innermost extra dims first
        fit = max(1, target_bytes // max(block, 1))
        out[d] = int(min(sizes[d], fit))
        block *= out[d]
    return {d: out[d] for d in sizes}
