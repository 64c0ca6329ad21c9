"""The dense form of the loss cube: dims ``(*extra, split, example, model)``, and its checks.

The schema is documented in ``docs/cube-schema.md``. :func:`validate_dense` checks all
of it; the helpers named ``check_*`` are shared with the compact form
(:mod:`cvstats.cube.compact`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import bottleneck as bn
import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import ArrayLike

from cvstats.cube.groups import check_groups
from cvstats.cube.known import Facts, lazy
from cvstats.cube.schema import (
    BLOCKS,
    CONTRAST,
    CORE_DIMS,
    EXAMPLE,
    FIXED_MODELS_DESIGN,
    GREATER_IS_BETTER,
    IN_TRAIN,
    INT_SPLIT_COORDS,
    MODEL,
    N_TEST,
    REQUIRED_ATTRS,
    SPLIT,
    SPLIT_COORDS,
    UNIT_DIMS,
)
from cvstats.cube.threads import leading_blocks, leading_parts, map_parts
from cvstats.errors import CubeError

__all__ = [
    "validate_dense",
    "get_extra_dims",
    "in_test",
    "unit_dim",
    "check_attrs",
    "check_dtype",
    "check_name",
    "check_sizes",
    "check_split_coords",
    "check_labels",
    "check_nested",
    "coord",
    "FIX_BUILD",
    "NESTED_TRAIN",
    "TIME_ORDERED",
    "nested_train",
    "time_ordered",
    "dtype_problem",
    "plain_value",
    "split_table",
    "stated_test_sizes",
    "one_size_splits",
    "UNEQUAL_SIZES_FIX",
]

FIX_BUILD = "Build cubes with cvstats.from_arrays, cvstats.from_frame or cvstats.designs.collect."

#: Attr of a design, and of the cubes built on it (:func:`cvstats.designs.from_splitter` sets
#: it): 1 when every split's training set contains the previous split's, as the growing
#: training sets of scikit-learn's ``TimeSeriesSplit`` do; 0 (or absent) otherwise. The
#: methods that treat the splits as exchangeable random draws refuse such a cube
#: (:meth:`cvstats.inference.registry.MethodSpec.time_order_refusal`).
NESTED_TRAIN = "nested_train"

#: Attr of a design, and of the cubes built on it (:func:`cvstats.designs.from_splitter` sets
#: it): 1 when the splits come in time order, each training only on examples before its
#: test set, the test sets starting later split after split, as scikit-learn's
#: ``TimeSeriesSplit`` makes them with growing windows and with a sliding one
#: (``max_train_size``); 0 (or absent) otherwise. A cube with it (or with
#: :data:`NESTED_TRAIN`) is time-ordered (:func:`time_ordered`): the methods that treat the
#: splits as exchangeable random draws refuse it.
TIME_ORDERED = "time_ordered"

#: How to state unequal test sizes in a block of a loss cube, for messages.
UNEQUAL_SIZES_FIX = (
    "If the design's test sets do differ in size (a 2-fold split of an odd n, groups of "
    "unequal size, a PredefinedSplit), state each split's test size: build the cube with "
    "cvstats.from_arrays or cvstats.from_frame, which record them in the `n_test` coordinate, "
    "or add it with cube.assign_coords(n_test=('split', sizes)). Otherwise a test loss was "
    "lost (NaN in every model): fill it, or drop the example from the split's test set in the "
    "design."
)


def unit_dim(cube: xr.DataArray) -> str:
    """Return the last dim of a cube: ``"model"``, or ``"contrast"`` for a contrast cube."""
    last = cube.dims[-1] if cube.dims else None
    return str(last) if last in UNIT_DIMS else MODEL


def _core(cube: xr.DataArray) -> tuple[str, str, str]:
    return (SPLIT, EXAMPLE, unit_dim(cube))


def get_extra_dims(cube: xr.DataArray) -> tuple[Hashable, ...]:
    """Return the dims of a cube before ``(split, example, model|contrast)``."""
    return tuple(d for d in cube.dims if d not in _core(cube))


def in_test(cube: xr.DataArray) -> xr.DataArray:
    """Return the boolean test membership ``(*extra, split, example)`` of a cube.

    Test membership is the NaN pattern of the losses (the same for every model,
    which :func:`validate` checks); the first model's pattern is returned.

    Raises
    ------
    CubeError
        For a compact cube (:mod:`cvstats.cube.compact`), which has no ``example``
        dim: what needs per-example positions needs the dense cube; for a score
        cube (:mod:`cvstats.cube.score`), which holds no per-example losses at all.
    """
    if "slot" in cube.dims:
        raise CubeError(
            "this function needs the dense cube (per-example positions), but got a compact "
            "cube (dim `slot`); expand it with cvstats.cube.compact.from_compact(...) first."
        )
    if EXAMPLE not in cube.dims and SPLIT in cube.dims:
        raise CubeError(
            "this function needs per-example losses, but got a score cube (one value per "
            "split and model, no `example` dim: cvstats.cube.score); collect a loss cube "
            "instead, with cvstats.collect(..., loss=...) or cvstats.from_arrays."
        )
    return cube.isel({unit_dim(cube): 0}, drop=True).notnull()


def split_table(
    n_splits: int, splits: pd.DataFrame | Mapping[str, ArrayLike] | None
) -> dict[str, np.ndarray]:
    """Resolve the split coordinates: defaults (block main, -1) plus what the user gave.

    Shared by the builders of loss cubes (:mod:`cvstats.cube.construct`) and of score
    cubes (:mod:`cvstats.cube.score`); ``n_train`` is required.
    """
    table: dict[str, np.ndarray] = {"block": np.full(n_splits, "main", dtype=object)}
    for name in INT_SPLIT_COORDS:
        table[name] = np.full(n_splits, -1, dtype=np.int64)
    given = {} if splits is None else {k: np.asarray(v) for k, v in dict(splits).items()}
    unknown = sorted(set(given) - set(SPLIT_COORDS))
    if unknown:
        raise CubeError(
            f"`splits` has unknown column(s) {unknown}; the split coordinates are "
            f"{list(SPLIT_COORDS)}."
        )
    for name, values in given.items():
        if values.shape != (n_splits,):
            raise CubeError(
                f"`splits[{name!r}]` must hold one value per split ({n_splits}), got shape "
                f"{values.shape}."
            )
        if name == "block":
            table[name] = values.astype(str).astype(object)
        else:
            if not np.issubdtype(values.dtype, np.integer):
                raise CubeError(f"`splits[{name!r}]` must hold ints, got dtype {values.dtype}.")
            table[name] = values.astype(np.int64)
    if "n_train" not in given:
        raise CubeError(
            "the training-set size of each split is needed: pass `n_train` (an int, or one per "
            "split), e.g. n - n_test for k-fold or resampling on all n examples, or pass "
            "`design=` a cvstats design."
        )
    table["block"] = table["block"].astype(str)
    return table


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------


def plain_value(value: Any) -> Any:
    """Return a plain Python scalar for messages (no ``np.int64(0)`` reprs)."""
    return value.item() if isinstance(value, np.generic) else value


def _where(cube: xr.DataArray, mask: np.ndarray, dims: Sequence[Hashable]) -> str:
    """Describe the first True position of ``mask`` (over ``dims``) with coordinate labels."""
    idx = np.argwhere(mask)[0]
    parts = []
    for dim, i in zip(dims, idx, strict=True):
        label = plain_value(coord(cube, dim)[i]) if dim in cube.coords else int(i)
        parts.append(f"{dim} {label!r}" if isinstance(label, str) else f"{dim} {label}")
    return ", ".join(parts)


def check_name(cube: xr.DataArray, what: str = "loss", example: str = "zero_one") -> None:
    """Check the name: the loss name formulas use, a non-empty str unlike any coordinate.

    ``what`` and ``example`` word the messages: ``"loss"`` and ``"zero_one"`` for a
    loss cube, ``"metric"`` and ``"roc_auc"`` for a score cube (:mod:`cvstats.cube.score`).
    """
    left = "loss" if what == "loss" else example
    if cube.name is None or not isinstance(cube.name, str):
        raise CubeError(
            f"the cube has no name; name it after its {what}, e.g. cube.rename({example!r})."
        )
    if not cube.name.strip():
        raise CubeError(
            f"the cube's name is {cube.name!r}, but the name is the {what} name that formulas "
            f"use on their left side ('{left} ~ model'); name it after its {what}, e.g. "
            f"cube.rename({left!r})."
        )
    if cube.name in cube.coords or cube.name in cube.dims:
        raise CubeError(
            f"the cube is named {cube.name!r} like one of its coordinates; rename it after its "
            f"{what}, e.g. cube.rename({left!r})."
        )


def check_sizes(cube: xr.DataArray) -> None:
    """Check that every dim holds at least one element (split, example, model, extra)."""
    empty = [str(d) for d in cube.dims if cube.sizes[d] == 0]
    if empty:
        raise CubeError(
            f"the cube's dim {empty[0]!r} has length 0 (sizes {dict(cube.sizes)}); every dim "
            "needs at least one element: at least one split, example and model, and one "
            "element of every extra dim. Check the selection or the data that built the cube "
            "(e.g. a .sel(...) whose labels match nothing), or drop an empty extra dim."
        )


def dtype_problem(dtype: np.dtype, subject: str, obj: str) -> str | None:
    """Why losses of ``dtype`` cannot be used, with the fix; None if they can (or are ints).

    ``subject`` starts the message (``"losses"``, ``"`losses`"``); ``obj`` is the
    expression to convert in the advice (``"cube"``, ``"losses"``). Integer and
    non-numeric dtypes are left to the callers (each converts or refuses them).
    """
    not_real = {
        "m": (
            "durations",
            f"convert them to a number of units, e.g. {obj} / np.timedelta64(1, 's')",
        ),
        "M": ("timestamps", "compute a number per test example (e.g. a duration in seconds)"),
        "c": ("complex numbers", f"keep a real loss, e.g. {obj}.real or abs({obj})"),
    }
    if dtype.kind in not_real:
        what, fix = not_real[dtype.kind]
        return f"{subject} must be real numbers, got dtype {dtype} ({what}); {fix}."
    if dtype == np.float16:
        return (
            f"{subject} of dtype float16 are not supported: float16 holds integers exactly only "
            "up to 2048 and overflows above 65504, so the sums over the test examples behind "
            f"every split mean lose precision or overflow; convert with {obj}.astype('float32') "
            "(lossless)."
        )
    if dtype.kind == "f" and dtype.itemsize > 8:
        return (
            f"{subject} of dtype {dtype} are not supported: cvstats computes in float64; "
            f"convert with {obj}.astype('float64')."
        )
    return None


def check_dtype(dtype: np.dtype) -> None:
    """Check that losses are float32 or float64 (NaN marks non-test examples)."""
    problem = dtype_problem(dtype, "losses", "cube")
    if problem is not None:
        raise CubeError(problem)
    if not np.issubdtype(dtype, np.floating):
        kind = "numeric" if np.issubdtype(dtype, np.number) else "non-numeric"
        raise CubeError(
            f"losses must be floating point (NaN marks non-test examples), got {kind} dtype "
            f"{dtype}; convert with cube.astype(float)"
            + ("" if kind == "numeric" else " after mapping the values to numbers")
            + "."
        )


def _check_structure(cube: Any) -> None:
    if not isinstance(cube, xr.DataArray):
        raise CubeError(
            f"a cube must be an xarray.DataArray, got {type(cube).__name__}. {FIX_BUILD}"
        )
    check_name(cube)
    if EXAMPLE in cube.dims and GREATER_IS_BETTER in cube.attrs:
        raise CubeError(
            f"the cube has an `{EXAMPLE}` dim but carries the score-cube attr "
            f"`{GREATER_IS_BETTER}`: a score cube holds one value per split and model and has no "
            f"`{EXAMPLE}` dim, a loss cube holds per-example losses and no `{GREATER_IS_BETTER}`. "
            "If it holds scores, keep one value per split and model (no example dim) and build "
            "it with cvstats.cube.from_scores; if it holds per-example losses, drop the attr "
            f"with cube.attrs.pop({GREATER_IS_BETTER!r})."
        )
    core = (SPLIT, EXAMPLE, CONTRAST) if CONTRAST in cube.dims else CORE_DIMS
    check_core_dims(
        cube,
        core,
        what="cube",
        needs=f"(*extra, {', '.join(CORE_DIMS)})",
        after_missing=f" or {FIX_BUILD[0].lower() + FIX_BUILD[1:]}",
    )
    check_sizes(cube)
    check_dtype(cube.dtype)
    check_labels(cube, core)


def coord(obj: xr.DataArray | xr.Dataset, name: Hashable) -> np.ndarray:
    """Return the values of a coordinate, without building a DataArray around it."""
    return np.asarray(obj.coords.variables[name].values)


def check_labels(cube: xr.DataArray, core: tuple[str, ...]) -> None:
    """Check the labels of the core dims (shared by every form of the cube).

    Every core dim has a coordinate of unique labels; ``split`` labels are ints
    and the last dim (``model`` or ``contrast``) holds names (str).
    """
    var = cube.coords.variables
    for dim in core:
        if dim not in cube.coords:
            raise CubeError(
                f"the `{dim}` dim has no coordinate; add labels with "
                f"cube.assign_coords({dim}=...)."
            )
        labels = pd.Index(coord(cube, dim))
        if labels.has_duplicates:
            dup = plain_value(labels[labels.duplicated()][0])
            raise CubeError(
                f"the `{dim}` coordinate has duplicated label {dup!r}; labels must be unique."
            )
    if not np.issubdtype(var[SPLIT].dtype, np.integer):
        raise CubeError(
            f"the `split` coordinate must hold ints, got dtype {var[SPLIT].dtype}; "
            "relabel with cube.assign_coords(split=np.arange(cube.sizes['split']))."
        )
    unit = core[-1]
    if not all(isinstance(m, str) for m in coord(cube, unit).tolist()):
        raise CubeError(
            f"the `{unit}` coordinate must hold {unit} names (str); relabel with "
            f"cube.assign_coords({unit}=[str(m) for m in cube.{unit}.values])."
        )


def check_split_coords(cube: xr.DataArray) -> None:
    """Check the split coordinates and their per-block rules (shared by both forms)."""
    var = cube.coords.variables
    missing = [c for c in SPLIT_COORDS if c not in cube.coords]
    if missing:
        raise CubeError(
            f"the cube lacks the split coordinate(s) {missing}; every cube needs "
            f"{list(SPLIT_COORDS)} on the `split` dim (-1 where not applicable). {FIX_BUILD}"
        )
    for c in SPLIT_COORDS:
        if var[c].dims != (SPLIT,):
            raise CubeError(
                f"coordinate `{c}` must lie on the `split` dim alone, got dims {var[c].dims}."
            )
    for c in INT_SPLIT_COORDS:
        if not np.issubdtype(var[c].dtype, np.integer):
            raise CubeError(f"coordinate `{c}` must hold ints, got dtype {var[c].dtype}.")
    block = np.asarray(coord(cube, "block").tolist(), dtype=object)
    bad = ~np.isin(block, BLOCKS)
    if bad.any():
        i = int(np.argmax(bad))
        raise CubeError(
            f"split {coord(cube, SPLIT)[i]} has block {block[i]!r}; blocks are {list(BLOCKS)}."
        )
    c = {name: coord(cube, name) for name in INT_SPLIT_COORDS}
    splits = coord(cube, SPLIT).tolist()

    def fail(mask: np.ndarray, what: str) -> None:
        if mask.any():
            i = int(np.argmax(mask))
            raise CubeError(f"split {splits[i]} in block {block[i]!r} {what}")

    n = cube.attrs["n"]
    # fixed models' answers (cvstats.from_evals) are the one design without a training set
    least, hint = 0, ""
    if cube.attrs.get("design") != FIXED_MODELS_DESIGN:
        least = 1
        hint = f" (0 only for fixed models' answers, design {FIXED_MODELS_DESIGN!r}: from_evals)"
    low = c["n_train"] < least
    fail(low, f"has n_train = {c['n_train'][np.argmax(low)]} < {least}{hint}.")
    fail(c["n_train"] >= n, f"has n_train >= n = {n} (no example left to test).")
    is_half, is_5x2 = block == "half", block == "5x2"
    paired = is_half | is_5x2
    fail(paired & (c["half"] < 0), "has half = -1; set `half` to its half-split index m >= 0.")
    fail(
        paired & ~np.isin(c["side"], [0, 1]),
        "has side not in {0, 1}; set `side` to the half of the pair it belongs to.",
    )
    fail(~paired & (c["half"] != -1), "has half != -1; only 'half' and '5x2' splits have one.")
    fail(~paired & (c["side"] != -1), "has side != -1; only 'half' and '5x2' splits have one.")
    is_rep = block == "replicate"
    fail(is_rep & (c["replicate"] < 0), "has replicate = -1; set it to the replicate index r.")
    fail(~is_rep & (c["replicate"] != -1), "has replicate != -1; only 'replicate' splits do.")
    is_main = block == "main"
    is_nested = block == "nested"
    kfold = (c["fold"] >= 0) | (c["repeat"] >= 0)
    fail(
        ~is_main & ~is_nested & kfold,
        "has a repeat or fold index; only 'main' k-fold splits have them.",
    )
    fail(
        is_nested & ((c["fold"] < 0) | (c["repeat"] < 0)),
        "has repeat or fold = -1; a 'nested' split needs its repeat and a left-out fold.",
    )
    if is_nested.any() and not (is_main.any() and (c["fold"][is_main] >= 0).all()):
        raise CubeError(
            "block 'nested' needs a k-fold main block (its outer folds); build the design "
            "with cvstats.designs.nested_cv."
        )
    fail(
        is_main & ((c["fold"] >= 0) != (c["repeat"] >= 0)),
        "has only one of repeat/fold set; k-fold splits need both (>= 0), others neither.",
    )
    if is_main.any() and kfold[is_main].any() and not kfold[is_main].all():
        raise CubeError(
            "the main block mixes k-fold splits (fold >= 0) with other splits; a main block is "
            "either one (repeated) k-fold or J random splits."
        )
    if is_half.any():
        halves, sides = c["half"][is_half], c["side"][is_half]
        groups, counts = np.unique(np.stack([halves, sides]), axis=1, return_counts=True)
        ms, per_m = np.unique(groups[0], return_counts=True)  # sides seen per half-split
        if (per_m != 2).any():
            raise CubeError(
                f"half-split m = {ms[np.argmax(per_m != 2)]} of block 'half' has splits on one "
                "side only; the conservative Z needs J splits in both halves (side 0 and side 1) "
                "of every m."
            )
        if np.unique(counts).size != 1:
            sizes = {(int(m), int(k)): int(n) for (m, k), n in zip(groups.T, counts, strict=True)}
            raise CubeError(
                "the (half, side) groups of block 'half' hold different numbers of splits "
                f"({sizes}); every group needs the same J."
            )
    if is_5x2.any():
        halves, sides = c["half"][is_5x2], c["side"][is_5x2]
        _, counts = np.unique(np.stack([halves, sides]), axis=1, return_counts=True)
        if (counts != 1).any() or counts.size != 2 * np.unique(halves).size:
            raise CubeError(
                "block '5x2' needs exactly one split per (half, side): side 0 trains on D_m and "
                "tests on D_m^c, side 1 the reverse."
            )
    if is_rep.any():
        reps, counts = np.unique(c["replicate"][is_rep], return_counts=True)
        if np.unique(counts).size != 1:
            sizes = {int(r): int(n) for r, n in zip(reps, counts, strict=True)}
            raise CubeError(
                "the replicates of block 'replicate' hold different numbers of splits "
                f"({sizes}); every replicate needs the same J splits."
            )


def check_block_sizes(
    block: np.ndarray,
    fold: np.ndarray,
    n_test: np.ndarray,
    n_train: np.ndarray,
    splits: np.ndarray,
    n: int,
    stated: Any,
    what: str,
) -> None:
    """Check one test size per block (unless stated) and that half-splits fit in a half.

    Shared by the dense and the compact form. ``n_test`` is ``(rows, split)``
    (rows: the extra dims' elements); k-fold main splits (folds differ when K
    does not divide n) and ``'nested'`` splits are checked against the folds
    elsewhere. Unstated sizes must agree: a test loss lost in every model shows
    as a split one example short, which nothing else would notice.
    """
    one_size = one_size_splits(block, fold)
    for kind in BLOCKS:
        sel = (block == kind) & one_size
        if not sel.any():
            continue
        sizes = np.unique(n_test[:, sel])
        if sizes.size > 1 and stated is None:
            i = int(np.flatnonzero(sel)[np.argmax((n_test[:, sel] != sizes[0]).any(axis=0))])
            raise CubeError(
                f"block {kind!r} has splits with different test sizes {sizes.tolist()} (split "
                f"{splits[i]} has {n_test[:, i].tolist()[:5]}), and the {what} does not state "
                f"its test sizes (no `{N_TEST}` coordinate). {UNEQUAL_SIZES_FIX}"
            )
        if kind == "half" and (n_test[:, sel] + n_train[sel] > n // 2).any():
            raise CubeError(
                f"block 'half' has n_train + n_test above floor(n/2) = {n // 2}; inner splits "
                "must fit inside a half of the data."
            )


def check_core_dims(
    cube: xr.DataArray,
    core: tuple[str, ...],
    *,
    what: str,
    needs: str,
    after_missing: str = "",
    after_order: str = "",
) -> None:
    """Check that ``cube`` has the ``core`` dims, last and in order (dense and score forms).

    The errors name the dims the cube has, what it ``needs``, and the fix
    (``cube.rename`` / ``cube.transpose``), followed by ``after_missing`` or
    ``after_order``.
    """
    missing = [d for d in core if d not in cube.dims]
    if missing:
        raise CubeError(
            f"the {what} lacks the dim(s) {missing}; it has dims {list(cube.dims)} and needs "
            f"{needs}. Rename dims with cube.rename(...){after_missing}"
        )
    if tuple(cube.dims[-len(core) :]) != core:
        order = [*(d for d in cube.dims if d not in core), *core]
        raise CubeError(
            f"the {what}'s dims are {list(cube.dims)} but must end with {list(core)}; "
            f"fix with cube.transpose(*{order}).{after_order}"
        )


def one_size_splits(block: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """Mark the splits whose block has one test size ``n2`` unless the cube states the sizes.

    Every block but the k-fold main block (whose folds differ when ``K`` does not
    divide ``n``; its partition check guards its test sets) and ``"nested"``
    (two folds of a repeat, checked against them). ``block`` and ``fold`` are the
    split coordinates' values.
    """
    block = np.asarray(block)
    return (block != "nested") & ~((block == "main") & (np.asarray(fold) >= 0))


def stated_test_sizes(cube: xr.DataArray) -> np.ndarray | None:
    """Return the ``n_test`` coordinate of a loss cube (its stated test sizes), or None.

    A loss cube reads its test sizes off its NaN pattern; it may also state them,
    one int per split, which lets the splits of a block differ in size (the
    NaN pattern must then agree with them in every element of the extra dims:
    :func:`validate_dense` checks it). :func:`cvstats.from_arrays` and
    :func:`cvstats.from_frame` add the coordinate when a block's sizes differ.
    """
    if N_TEST not in cube.coords:
        return None
    sizes = cube[N_TEST]
    if sizes.dims != (SPLIT,):
        raise CubeError(
            f"coordinate `{N_TEST}` must lie on the `split` dim alone (one test size per "
            f"split), got dims {sizes.dims}."
        )
    if not np.issubdtype(sizes.dtype, np.integer):
        raise CubeError(
            f"coordinate `{N_TEST}` must hold ints (numbers of test examples), got dtype "
            f"{sizes.dtype}; convert with cube.assign_coords(n_test=cube.n_test.astype(int))."
        )
    return np.asarray(sizes.values)


def check_attrs(cube: xr.DataArray) -> None:
    """Check the required attrs (``design``, ``n``, ``seed``) and their types."""
    missing = [a for a in REQUIRED_ATTRS if a not in cube.attrs]
    if missing:
        raise CubeError(
            f"the cube lacks the attr(s) {missing}; set them with cube.attrs.update(...): "
            "`design` (str), `n` (examples available, int), `seed` (int, -1 if unknown)."
        )
    if not isinstance(cube.attrs["design"], str):
        raise CubeError(f"attr `design` must be a str, got {cube.attrs['design']!r}.")
    for name in ("n", "seed"):
        value = cube.attrs[name]
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
            raise CubeError(f"attr `{name}` must be an int, got {value!r}.")
    if int(cube.attrs["n"]) < 2:
        raise CubeError(
            f"attr `n` = {cube.attrs['n']} is too small; it counts the examples of the design."
        )
    time_ordered(cube)


def nested_train(obj: xr.DataArray | xr.Dataset) -> bool:
    """Whether a cube's (or design's) training sets are nested: its attr ``nested_train``.

    The attr is 1 when every split's training set contains the previous split's
    (``TimeSeriesSplit``: the training sets grow), 0 otherwise, and absent for the
    designs drawn by cvstats (random splits, never nested). It is an int because
    netCDF refuses bool attrs; a bool is accepted in memory. An object without
    attrs has no such flag (False): validation names what else is wrong with it.

    Raises
    ------
    CubeError
        If the attr is present but is not 0, 1 or a bool.
    """
    return _flag(
        obj,
        NESTED_TRAIN,
        "every split's training set contains the previous split's, as TimeSeriesSplit makes them",
    )


def time_ordered(obj: xr.DataArray | xr.Dataset) -> bool:
    """Whether a cube's (or design's) splits come in time order.

    Its attr ``time_ordered`` (:data:`TIME_ORDERED`: each split trains on examples
    before its test set, the test sets move forward, as ``TimeSeriesSplit`` makes
    them with or without ``max_train_size``) or ``nested_train`` (:func:`nested_train`;
    the cubes saved before ``time_ordered`` existed carry only this one) is 1.

    Raises
    ------
    CubeError
        If either attr is present but is not 0, 1 or a bool.
    """
    ordered = _flag(
        obj,
        TIME_ORDERED,
        "each split trains on examples before its test set and the test sets move forward, "
        "as TimeSeriesSplit makes them",
    )
    return nested_train(obj) or ordered


def _flag(obj: xr.DataArray | xr.Dataset, name: str, meaning: str) -> bool:
    """Read a 0/1 attr (an int for netCDF, or a bool in memory); absent: False."""
    attrs = getattr(obj, "attrs", None)
    value = attrs.get(name, 0) if isinstance(attrs, Mapping) else 0
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer) and int(value) in (0, 1):
        return bool(int(value))
    raise CubeError(
        f"attr `{name}` must be 1 ({meaning}) or 0, or a bool, got {plain_value(value)!r}; "
        f"cvstats.designs.from_splitter sets it from the splits. Fix it with "
        f"cube.attrs[{name!r}] = 1 (or 0)."
    )


def _check_values(cube: xr.DataArray) -> Facts:
    """Check finiteness, the NaN pattern, covers and test sizes, reading the values once.

    The values are read by :func:`_value_summary` (numpy: the whole array in
    memory, or each chunk of a dask array whose core dims are whole), which
    counts the test examples and says whether any value check fails; only then
    is the cube read again, by :func:`_value_stats`, to name the problem and
    where it is (that path also serves dask cubes chunked along a core dim, in
    one pass). Returns the test count of every split in the first element of
    the extra dims.
    """
    unit = unit_dim(cube)
    # the split coordinates are small: hold them in memory (cube.chunk() chunks them too,
    # and groupby needs concrete labels)
    if any(cube.coords.variables[c].chunks is not None for c in SPLIT_COORDS):
        cube = cube.assign_coords({c: (SPLIT, coord(cube, c)) for c in SPLIT_COORDS})
    splits = coord(cube, SPLIT).tolist()
    in_train = cube.coords.get(IN_TRAIN)
    counted, means, largest = _fast_counts(cube)
    ds = None if counted is not None else _value_stats(cube, unit)
    n_tested = ds["n_tested"] if ds is not None else counted
    n_test = n_tested.transpose(..., SPLIT).values.reshape(-1, len(splits))
    if (n_test == 0).any():
        i = int(np.argmax((n_test == 0).any(axis=0)))
        raise CubeError(
            f"split {splits[i]} has no test example (all losses NaN); drop the split or fill "
            "its test losses."
        )
    if in_train is not None:
        if ds is not None:
            _check_overlap(cube, ds)
        count = in_train.sum(EXAMPLE).transpose(..., SPLIT).values.reshape(-1, len(splits))
        n_train = coord(cube, "n_train")
        mismatch = (count != n_train).any(axis=0)
        if mismatch.any():
            i = int(np.argmax(mismatch))
            raise CubeError(
                f"split {splits[i]} has n_train = {n_train[i]} but `{IN_TRAIN}` "
                f"marks {count[:, i].min()} training examples; make them agree."
            )
    stated = stated_test_sizes(cube)
    if stated is not None:
        differs = n_tested != xr.DataArray(stated, dims=SPLIT)
        if bool(differs.any()):
            first = tuple(np.argwhere(differs.values)[0])  # (*extra, split)
            tested, i = n_tested.values[first], int(first[-1])
            raise CubeError(
                f"split {splits[i]} tests {int(tested)} example(s) (losses not NaN, at "
                f"{_where(cube, differs.values, differs.dims)}) but its `{N_TEST}` coordinate "
                f"states {int(stated[i])}: a test loss was lost (NaN in every model), or "
                f"`{N_TEST}` is wrong. Fill the loss, or fix `{N_TEST}` (cvstats.from_arrays "
                "and cvstats.from_frame set it from the test sets)."
            )
    n = int(cube.attrs["n"])
    total = n_test + coord(cube, "n_train")
    if (total > n).any():
        i = int(np.argmax((total > n).any(axis=0)))
        raise CubeError(
            f"split {splits[i]} has n_train + n_test = {total[:, i].max()} > n = {n}; fix "
            "`n_train` or the attr `n`."
        )
    block = coord(cube, "block")
    check_block_sizes(
        block,
        coord(cube, "fold"),
        n_test,
        coord(cube, "n_train"),
        splits,
        n,
        stated,
        "cube",
    )
    if ds is not None:
        _check_covers(cube, ds)
    return Facts(first_counts=n_test[0].copy(), means=means, largest=largest)


def _fast_counts(
    cube: xr.DataArray,
) -> tuple[xr.DataArray | None, xr.DataArray | None, float | None]:
    """Test counts ``(*extra, split)`` from one numpy read, None if a value check fails.

    None too where this path does not apply: a nested block (checked by
    :func:`check_nested` on the masks), a dask array chunked along ``split``,
    ``example`` or the unit dim, or an ``in_train`` over extra dims of a dask cube.
    For a dask cube, also the split means ``(*extra, split, unit)`` and the
    largest absolute loss, computed from each chunk while it is in memory
    (None in memory, where they would cost a pass of their own).
    """
    nothing = None, None, None
    block = coord(cube, "block")
    if (block == "nested").any():
        return nothing
    values = cube.data
    extra = cube.ndim - 3
    in_train = cube.coords.get(IN_TRAIN)
    if isinstance(values, np.ndarray):
        chunks = None
    elif lazy(values) and all(len(c) == 1 for c in values.chunks[extra:]):
        if in_train is not None and in_train.ndim > 2:
            return nothing
        chunks = values.chunks[:extra]
    else:
        return nothing
    train = None
    if in_train is not None:  # laid out over the mask's dims, 1 on the dims it lacks
        order = [d for d in cube.dims[:-1] if d in in_train.dims]
        lacking = [i for i, d in enumerate(cube.dims[:-1]) if d not in in_train.dims]
        train = np.expand_dims(np.asarray(in_train.transpose(*order).values), lacking)
    coords = {c: coord(cube, c) for c in ("block", "half", "side", "fold", "repeat")}
    if chunks is None:  # cut along the first extra dim, in threads (cvstats.cube.threads)
        parts = leading_parts(values) if extra else [slice(None)]

        def summary(part: slice) -> tuple[np.ndarray, bool, Any, Any]:
            mask = train if train is None or train.shape[0] == 1 else train[part]
            return _value_summary(values[part], mask, **coords)

        done = map_parts(summary, parts)
        if any(failed for _, failed, _, _ in done):
            return nothing
        counts = np.concatenate([c for c, _, _, _ in done], axis=0)
        return xr.DataArray(counts, dims=cube.dims[:-2]), None, None
    import dask

    parts = [
        dask.delayed(_value_summary)(b, train, **coords, means=True)
        for b in values.to_delayed().ravel()
    ]
    done = dask.compute(*parts)
    if any(failed for _, failed, _, _ in done):
        return nothing
    counts = np.empty(cube.shape[:-2], dtype=np.intp)
    means = np.empty(cube.shape[:-2] + cube.shape[-1:], dtype=cube.dtype)
    for idx, (c, _, m, _) in zip(np.ndindex(*values.numblocks[:extra]), done, strict=True):
        counts[_slices(idx, chunks)] = c
        means[_slices(idx, chunks)] = m
    largest = max(float(big) for _, _, _, big in done)
    # the split means as cvstats.inference.blocks.split_means returns them
    template = cube.drop_vars([c for c in cube.coords if EXAMPLE in cube.coords.variables[c].dims])
    template = template.isel({EXAMPLE: 0}, drop=True)
    means.setflags(write=False)  # remembered with the cube and handed to every method
    return xr.DataArray(counts, dims=cube.dims[:-2]), template.copy(data=means), largest


def _slices(idx: tuple[int, ...], chunks: tuple[tuple[int, ...], ...]) -> tuple[slice, ...]:
    """Return the slices of the extra dims that chunk ``idx`` covers."""
    starts = [int(np.sum(c[:i])) for i, c in zip(idx, chunks, strict=True)]
    return tuple(slice(a, a + c[i]) for a, i, c in zip(starts, idx, chunks, strict=True))


def _value_summary(
    values: np.ndarray,
    train: np.ndarray | None,
    *,
    block: np.ndarray,
    half: np.ndarray,
    side: np.ndarray,
    fold: np.ndarray,
    repeat: np.ndarray,
    means: bool = False,
) -> tuple[np.ndarray, bool, np.ndarray | None, float | None]:
    """Read ``values`` ``(*extra, split, example, unit)`` once: test counts, and a failure.

    Returns the test counts ``(*extra, split)`` and whether any of the checks
    of values fails: an infinite loss, a NaN pattern that differs between
    models, a test example marked as training (``train``, broadcastable to the
    mask), a k-fold repeat that does not test every example exactly once, or
    the two sides of a half-split (``half``/``5x2``) that test common examples;
    with ``means``, the split means ``(*extra, split, unit)`` and the largest
    absolute loss too (None otherwise).
    """
    mask, counts, failed, split_means, largest = _tested(values, means)
    if not failed and train is not None:
        lacking = tuple(i for i, n in enumerate(train.shape) if n == 1 and mask.shape[i] > 1)
        reduced = mask.any(axis=lacking, keepdims=True) if lacking else mask
        failed = bool((reduced & train).any())
    main_kfold = (block == "main") & (fold >= 0)
    for r in np.unique(repeat[main_kfold]) if not failed else ():
        cover = mask[..., main_kfold & (repeat == r), :].sum(-2)
        failed = failed or bool((cover != 1).any())
    for kind in ("half", "5x2"):
        sel = block == kind
        for m in np.unique(half[sel]) if not failed else ():
            side0 = mask[..., sel & (half == m) & (side == 0), :].any(-2)
            side1 = mask[..., sel & (half == m) & (side == 1), :].any(-2)
            failed = failed or bool((side0 & side1).any())
    if not means or failed:
        return counts, failed, None, None
    return counts, failed, split_means, largest


def _tested(
    values: np.ndarray, means: bool
) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray | None, float | None]:
    """Check every value, block by block: return the test mask, its counts, a failure.

    Reads ``values`` ``(*extra, split, example, unit)`` in blocks of whole
    splits (:func:`cvstats.cube.threads.leading_blocks`), each checked while it
    is in the processor's cache: the test mask (the first model's losses not
    NaN) and its count per split, an infinite loss or another model's NaN
    pattern (failed); with ``means``, the split means ``(*extra, split, unit)``
    and the largest absolute loss too (None otherwise). The numbers are those
    of the whole array: every reduction is along ``example`` or ``unit``,
    within a block.
    """
    mask = np.empty(values.shape[:-1], dtype=bool)
    counts = np.empty(values.shape[:-2], dtype=np.intp)
    # validated losses are floating point: bottleneck's means keep their dtype
    split_means = np.empty(values.shape[:-2] + values.shape[-1:], values.dtype) if means else None
    failed, largest = False, 0.0
    for at in leading_blocks(values.shape):
        block, tested = values[at], mask[at]
        np.isnan(block[..., 0], out=tested)
        for k in range(1, values.shape[-1]):
            failed = failed or bool((np.isnan(block[..., k]) != tested).any())
        np.logical_not(tested, out=tested)
        counts[at] = np.count_nonzero(tested, axis=-1)
        if split_means is None:
            failed = failed or bool(np.isinf(block).any())
        elif not failed:  # the extremes tell an infinity and bound the contrasts
            # fmax/fmin skip NaN as bottleneck's nanmax/nanmin do, in a vectorized loop
            hi = float(np.fmax.reduce(block, axis=None))
            lo = float(np.fmin.reduce(block, axis=None))
            failed = bool(np.isinf(hi) or np.isinf(lo))
            largest = max(largest, abs(hi), abs(lo))
            split_means[at] = bn.nanmean(block, axis=-2)
        if failed:
            break
    return mask, counts, failed, split_means, largest


def _value_stats(cube: xr.DataArray, unit: str) -> xr.Dataset:
    """Every reduction the value checks need, in one pass (numpy or dask), checked in order.

    Raises the first of: an infinite loss, a NaN pattern that differs between
    models (each located); returns the Dataset for the later checks
    (:func:`_check_overlap`, :func:`_check_covers`).
    """
    first = cube.isel({unit: 0}, drop=True)
    tested = first.notnull()  # (*extra, split, example)
    # the NaN pattern of every other model against the first, OR-ed: cheaper than
    # comparing the whole (..., unit) mask and reducing over `unit`
    pattern_bad = xr.zeros_like(tested)
    for k in range(1, cube.sizes[unit]):
        pattern_bad = pattern_bad | (cube.isel({unit: k}, drop=True).notnull() != tested)
    stats = {
        # per split, not per value: locating an infinity must not load the whole cube
        "inf_split": np.isinf(cube).any([EXAMPLE, unit]),
        "n_inf": np.isinf(cube).sum(),
        "pattern_bad": pattern_bad,
        "n_tested": tested.sum(EXAMPLE),
    }
    in_train = cube.coords.get(IN_TRAIN)
    if in_train is not None:
        stats["overlap"] = (in_train & tested).sum(EXAMPLE)
    block = coord(cube, "block")
    main_kfold = (block == "main") & (coord(cube, "fold") >= 0)
    if main_kfold.any():
        sub = tested.isel({SPLIT: main_kfold})
        stats["fold_cover"] = sub.groupby("repeat").sum(SPLIT)
    if (block == "nested").any():
        for key, sel in (("nested", block == "nested"), ("main", main_kfold)):
            sub = tested.isel({SPLIT: sel}).reset_coords(drop=True)
            stats[f"{key}_tested"] = sub.rename({SPLIT: f"{key}_split"})
    for kind in ("half", "5x2"):
        sel = block == kind
        if sel.any():
            sub = tested.isel({SPLIT: sel})
            pair = f"{kind}_pair"  # own dim name: the two blocks have different pair counts
            grouped = sub.assign_coords(
                {pair: (SPLIT, sub["half"].values * 2 + sub["side"].values)}
            )
            stats[f"{kind}_cover"] = grouped.groupby(pair).sum(SPLIT) > 0
    ds = xr.Dataset(stats).compute()  # one pass over a dask-backed cube
    if int(ds["n_inf"]):
        per_split = ds["inf_split"]
        at = dict(zip(per_split.dims, np.argwhere(per_split.values)[0].tolist(), strict=True))
        row = np.isinf(np.asarray(cube.isel(at).values))  # (example, unit) of one split
        where = ", ".join(
            [_where(cube, per_split.values, per_split.dims), _where(cube, row, (EXAMPLE, unit))]
        )
        raise CubeError(
            f"the cube holds {int(ds['n_inf'])} infinite loss(es) (first at {where}); losses "
            "must be finite on test examples. Clip or fix the loss (e.g. log loss of a "
            "probability 0)."
        )
    bad = ds["pattern_bad"].values
    if bad.any():
        where = _where(cube, bad, ds["pattern_bad"].dims)
        raise CubeError(
            f"the NaN pattern differs between models at {where}: every model must be tested "
            "on the same examples of every split. Fill the missing losses or drop the example "
            "from the split for every model."
        )
    return ds


def _check_overlap(cube: xr.DataArray, ds: xr.Dataset) -> None:
    overlap = ds["overlap"].values
    if overlap.any():
        where = _where(cube, overlap > 0, ds["overlap"].dims)
        raise CubeError(
            f"losses are present for training examples ({where}): the test set of a split "
            f"must not meet its training set (`{IN_TRAIN}`). Set those losses to NaN."
        )


def _check_covers(cube: xr.DataArray, ds: xr.Dataset) -> None:
    """Check the k-fold partitions, the nested folds and the disjoint halves, from ``ds``."""
    if "fold_cover" in ds:
        cover = ds["fold_cover"].values
        if (cover != 1).any():
            raise CubeError(
                "the k-fold main block does not test every example exactly once per repeat "
                f"({int((cover == 0).sum())} untested, {int((cover > 1).sum())} tested more "
                "than once); a k-fold repeat must partition the examples."
            )
    if "nested_tested" in ds:
        check_nested(cube, ds["main_tested"].values, ds["nested_tested"].values)
    for kind in ("half", "5x2"):
        if f"{kind}_cover" in ds:
            cover = ds[f"{kind}_cover"]  # (*extra, pair, example)
            pair = f"{kind}_pair"
            pairs = cover[pair].values
            side0 = cover.sel({pair: pairs[pairs % 2 == 0]}).values
            side1 = cover.sel({pair: pairs[pairs % 2 == 0] + 1}).values
            if (side0 & side1).any():
                raise _halves_meet(kind)


def _halves_meet(kind: str) -> CubeError:
    return CubeError(
        f"block {kind!r}: the two sides of a half-split test common examples; "
        "the halves D_m and D_m^c must be disjoint."
    )


def check_nested(cube: xr.DataArray, mt: np.ndarray, nt: np.ndarray) -> None:
    """Each 'nested' split tests two whole folds of its repeat; each pair of folds once.

    ``mt`` and ``nt`` are the test masks ``(*extra, split, example)`` of the k-fold
    main splits and of the nested splits (shared with the compact form, which
    builds them from its ``example_index``).
    """
    block = coord(cube, "block")
    main = (block == "main") & (coord(cube, "fold") >= 0)
    nested = block == "nested"
    m_rep, m_fold = (
        coord(cube, "repeat")[main],
        coord(cube, "fold")[main],
    )
    n_rep, n_fold = (
        coord(cube, "repeat")[nested],
        coord(cube, "fold")[nested],
    )
    labels_s = coord(cube, SPLIT)[nested]
    seen: set[tuple[int, int, int]] = set()
    for s, (r, a) in enumerate(zip(n_rep, n_fold, strict=True)):
        folds = mt[..., m_rep == r, :]  # (*extra, K, example)
        labels = m_fold[m_rep == r]
        t = nt[..., s, :][..., None, :]
        hit = (t & folds).any(-1)  # (*extra, K)
        whole = ~hit | (folds <= t).all(-1)
        ok = (hit.sum(-1) == 2) & whole.all(-1) & hit[..., labels == a][..., 0]
        label = labels_s[s]
        if not ok.all():
            raise CubeError(
                f"split {label} in block 'nested' must test exactly two whole folds of repeat "
                f"{r} of the main block, one of them fold {a} (a fit leaving out a pair of folds)."
            )
        pair = np.sort(labels[hit.reshape(-1, labels.size)[0]]).tolist()
        key = (int(r), int(pair[0]), int(pair[1]))
        if key in seen:
            raise CubeError(
                f"split {label} in block 'nested' repeats the pair of folds {pair[0]}, {pair[1]} "
                f"of repeat {r}; each pair is fitted once."
            )
        seen.add(key)


def validate_dense(cube: xr.DataArray) -> Facts:
    """Check that a dense ``cube`` follows the loss-cube schema (``docs/cube-schema.md``).

    Checks the name (a non-empty str: the loss name formulas use), dims and
    their order (none of length 0), dtype (float32 or float64), unique
    labels, the split coordinates and their per-block rules, the attrs,
    finiteness, the NaN pattern (the same for every model; disjoint from
    ``in_train`` when present), test sizes per block (the same ``n2`` in
    every split of a block and every element of the extra dims, unless the
    cube states its test sizes in an ``n_test`` coordinate, which the NaN
    pattern must then match in every element of the extra dims), k-fold
    partitions and disjoint halves, and the optional ``group`` coordinate (one
    label per example, none missing: :func:`cvstats.cube.groups.check_groups`).
    A dask-backed
    cube is reduced in a single pass. :func:`cvstats.validate` dispatches here
    for a dense cube (dim ``example``).

    Parameters
    ----------
    cube : xarray.DataArray
        The cube to check.

    Returns
    -------
    cvstats.cube.known.Facts
        What the checks counted: the test size of every split (in the first
        element of the extra dims).

    Raises
    ------
    CubeError
        Naming the first problem found and how to fix it.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats import designs
    >>> d = designs.resampled(20, 5, J=3, seed=0)
    >>> cube = cvstats.from_arrays(np.ones((3, 20, 2)), design=d, models=["a", "b"])
    >>> validate_dense(cube).first_counts.tolist()  # the test examples of every split
    [5, 5, 5]
    >>> validate_dense(cube.rename(None))
    Traceback (most recent call last):
    ...
    cvstats.errors.CubeError: the cube has no name; ...
    """
    _check_structure(cube)
    check_attrs(cube)
    check_split_coords(cube)
    check_groups(cube)
    if IN_TRAIN in cube.coords:
        it = cube[IN_TRAIN]
        if (
            it.dtype != bool
            or not set(it.dims) >= {SPLIT, EXAMPLE}
            or it.dims[-2:]
            != (
                SPLIT,
                EXAMPLE,
            )
        ):
            raise CubeError(
                f"coordinate `{IN_TRAIN}` must be bool over (*extra, split, example), got "
                f"dtype {it.dtype} and dims {it.dims}."
            )
    return _check_values(cube)
