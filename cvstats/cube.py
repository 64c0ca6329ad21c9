"""The loss cube: schema validation and construction from users' own results.

The schema is documented in ``docs/cube-schema.md``. :func:`validate` checks
all of it; :func:`from_arrays` and :func:`from_frame` build valid cubes from
arrays or long-format tables of losses computed anywhere.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import ArrayLike

from cvstats.errors import CubeError
from cvstats.schema import (
    BLOCKS,
    CONTRAST,
    CORE_DIMS,
    EXAMPLE,
    IN_TRAIN,
    INT_SPLIT_COORDS,
    MODEL,
    REQUIRED_ATTRS,
    SPLIT,
    SPLIT_COORDS,
    UNIT_DIMS,
    UNKNOWN_SEED,
)

__all__ = ["validate", "from_arrays", "from_frame", "get_extra_dims", "in_test", "unit_dim"]

_FIX_BUILD = "Build cubes with cvstats.from_arrays, cvstats.from_frame or cvstats.collect."


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
        For a compact cube (:mod:`cvstats.compact`), which has no ``example``
        dim: what needs per-example positions needs the dense cube.
    """
    if "slot" in cube.dims:
        raise CubeError(
            "this function needs the dense cube (per-example positions), but got a compact "
            "cube (dim `slot`); expand it with cvstats.compact.from_compact(...) first."
        )
    return cube.isel({unit_dim(cube): 0}, drop=True).notnull()


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------


def _py(value: Any) -> Any:
    """Return a plain Python scalar for messages (no ``np.int64(0)`` reprs)."""
    return value.item() if isinstance(value, np.generic) else value


def _where(cube: xr.DataArray, mask: np.ndarray, dims: Sequence[Hashable]) -> str:
    """Describe the first True position of ``mask`` (over ``dims``) with coordinate labels."""
    idx = np.argwhere(mask)[0]
    parts = []
    for dim, i in zip(dims, idx, strict=True):
        label = _py(cube[dim].values[i]) if dim in cube.coords else int(i)
        parts.append(f"{dim} {label!r}" if isinstance(label, str) else f"{dim} {label}")
    return ", ".join(parts)


def _check_name(cube: xr.DataArray) -> None:
    """Check the name: the loss name formulas use, a non-empty str unlike any coordinate."""
    if cube.name is None or not isinstance(cube.name, str):
        raise CubeError(
            "the cube has no name; name it after its loss, e.g. cube.rename('zero_one')."
        )
    if not cube.name.strip():
        raise CubeError(
            f"the cube's name is {cube.name!r}, but the name is the loss name that formulas "
            "use on their left side ('loss ~ model'); name it after its loss, e.g. "
            "cube.rename('loss')."
        )
    if cube.name in cube.coords or cube.name in cube.dims:
        raise CubeError(
            f"the cube is named {cube.name!r} like one of its coordinates; rename it after its "
            "loss, e.g. cube.rename('loss')."
        )


def _check_sizes(cube: xr.DataArray) -> None:
    """Check that every dim holds at least one element (split, example, model, extra)."""
    empty = [str(d) for d in cube.dims if cube.sizes[d] == 0]
    if empty:
        raise CubeError(
            f"the cube's dim {empty[0]!r} has length 0 (sizes {dict(cube.sizes)}); every dim "
            "needs at least one element: at least one split, example and model, and one "
            "element of every extra dim. Check the selection or the data that built the cube "
            "(e.g. a .sel(...) whose labels match nothing), or drop an empty extra dim."
        )


def _dtype_problem(dtype: np.dtype, subject: str, obj: str) -> str | None:
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


def _check_dtype(dtype: np.dtype) -> None:
    """Check that losses are float32 or float64 (NaN marks non-test examples)."""
    problem = _dtype_problem(dtype, "losses", "cube")
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
            f"a cube must be an xarray.DataArray, got {type(cube).__name__}. {_FIX_BUILD}"
        )
    _check_name(cube)
    core = (SPLIT, EXAMPLE, CONTRAST) if CONTRAST in cube.dims else CORE_DIMS
    missing = [d for d in core if d not in cube.dims]
    if missing:
        raise CubeError(
            f"the cube lacks the dim(s) {missing}; it has dims {list(cube.dims)} and needs "
            f"(*extra, {', '.join(CORE_DIMS)}). Rename dims with cube.rename(...) or "
            f"{_FIX_BUILD[0].lower() + _FIX_BUILD[1:]}"
        )
    if tuple(cube.dims[-3:]) != core:
        order = [*(d for d in cube.dims if d not in core), *core]
        raise CubeError(
            f"the cube's dims are {list(cube.dims)} but must end with {list(core)}; "
            f"fix with cube.transpose(*{order})."
        )
    _check_sizes(cube)
    _check_dtype(cube.dtype)
    for dim in core:
        if dim not in cube.coords:
            raise CubeError(
                f"the `{dim}` dim has no coordinate; add labels with "
                f"cube.assign_coords({dim}=...)."
            )
        labels = pd.Index(cube[dim].values)
        if labels.has_duplicates:
            dup = _py(labels[labels.duplicated()][0])
            raise CubeError(
                f"the `{dim}` coordinate has duplicated label {dup!r}; labels must be unique."
            )
    if not np.issubdtype(cube[SPLIT].dtype, np.integer):
        raise CubeError(
            f"the `split` coordinate must hold ints, got dtype {cube[SPLIT].dtype}; "
            "relabel with cube.assign_coords(split=np.arange(cube.sizes['split']))."
        )
    unit = core[-1]
    if not all(isinstance(m, str) for m in cube[unit].values.tolist()):
        raise CubeError(
            f"the `{unit}` coordinate must hold {unit} names (str); relabel with "
            f"cube.assign_coords({unit}=[str(m) for m in cube.{unit}.values])."
        )


def _check_split_coords(cube: xr.DataArray) -> None:
    missing = [c for c in SPLIT_COORDS if c not in cube.coords]
    if missing:
        raise CubeError(
            f"the cube lacks the split coordinate(s) {missing}; every cube needs "
            f"{list(SPLIT_COORDS)} on the `split` dim (-1 where not applicable). {_FIX_BUILD}"
        )
    for c in SPLIT_COORDS:
        if cube[c].dims != (SPLIT,):
            raise CubeError(
                f"coordinate `{c}` must lie on the `split` dim alone, got dims {cube[c].dims}."
            )
    for c in INT_SPLIT_COORDS:
        if not np.issubdtype(cube[c].dtype, np.integer):
            raise CubeError(f"coordinate `{c}` must hold ints, got dtype {cube[c].dtype}.")
    block = np.asarray(cube["block"].values.tolist(), dtype=object)
    bad = ~np.isin(block, BLOCKS)
    if bad.any():
        i = int(np.argmax(bad))
        raise CubeError(
            f"split {cube[SPLIT].values[i]} has block {block[i]!r}; blocks are {list(BLOCKS)}."
        )
    c = {name: cube[name].values for name in INT_SPLIT_COORDS}
    splits = cube[SPLIT].values.tolist()

    def fail(mask: np.ndarray, what: str) -> None:
        if mask.any():
            i = int(np.argmax(mask))
            raise CubeError(f"split {splits[i]} in block {block[i]!r} {what}")

    n = cube.attrs["n"]
    fail(c["n_train"] < 1, f"has n_train = {c['n_train'][np.argmax(c['n_train'] < 1)]} < 1.")
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
        frame = pd.DataFrame({"half": c["half"][is_half], "side": c["side"][is_half]})
        counts = frame.value_counts()
        sides = frame.groupby("half")["side"].nunique()
        if (sides != 2).any():
            m = sides.index[np.argmax(sides.values != 2)]
            raise CubeError(
                f"half-split m = {m} of block 'half' has splits on one side only; the "
                "conservative Z needs J splits in both halves (side 0 and side 1) of every m."
            )
        if counts.nunique() != 1:
            raise CubeError(
                "the (half, side) groups of block 'half' hold different numbers of splits "
                f"({dict(counts)}); every group needs the same J."
            )
    if is_5x2.any():
        counts = pd.DataFrame({"half": c["half"][is_5x2], "side": c["side"][is_5x2]})
        counts = counts.value_counts()
        if (counts != 1).any() or counts.size != 2 * np.unique(c["half"][is_5x2]).size:
            raise CubeError(
                "block '5x2' needs exactly one split per (half, side): side 0 trains on D_m and "
                "tests on D_m^c, side 1 the reverse."
            )
    if is_rep.any():
        counts = pd.Series(c["replicate"][is_rep]).value_counts()
        if counts.nunique() != 1:
            raise CubeError(
                "the replicates of block 'replicate' hold different numbers of splits "
                f"({dict(counts)}); every replicate needs the same J splits."
            )


def _check_attrs(cube: xr.DataArray) -> None:
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


def _check_values(cube: xr.DataArray) -> None:
    """Check the NaN pattern and test sizes; computes all reductions in one pass."""
    unit = unit_dim(cube)
    # the split coordinates are small: hold them in memory (cube.chunk() chunks them too,
    # and groupby needs concrete labels)
    cube = cube.assign_coords({c: (SPLIT, np.asarray(cube[c].values)) for c in SPLIT_COORDS})
    tested = cube.isel({unit: 0}, drop=True).notnull()  # (*extra, split, example)
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
        "n_test": tested.sum(EXAMPLE),
    }
    in_train = cube.coords.get(IN_TRAIN)
    if in_train is not None:
        stats["overlap"] = (in_train & tested).sum(EXAMPLE)
        stats["train_count"] = in_train.sum(EXAMPLE)
    block = cube["block"].values
    main_kfold = (block == "main") & (cube["fold"].values >= 0)
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

    splits = cube[SPLIT].values.tolist()
    if int(ds["n_inf"]):
        per_split = ds["inf_split"]
        first = dict(zip(per_split.dims, np.argwhere(per_split.values)[0].tolist(), strict=True))
        row = np.isinf(np.asarray(cube.isel(first).values))  # (example, unit) of one split
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
    n_test = ds["n_test"].transpose(..., SPLIT).values.reshape(-1, len(splits))
    if (n_test == 0).any():
        i = int(np.argmax((n_test == 0).any(axis=0)))
        raise CubeError(
            f"split {splits[i]} has no test example (all losses NaN); drop the split or fill "
            "its test losses."
        )
    if in_train is not None:
        overlap = ds["overlap"].values
        if overlap.any():
            where = _where(cube, overlap > 0, ds["overlap"].dims)
            raise CubeError(
                f"losses are present for training examples ({where}): the test set of a split "
                f"must not meet its training set (`{IN_TRAIN}`). Set those losses to NaN."
            )
        count = ds["train_count"].transpose(..., SPLIT).values.reshape(-1, len(splits))
        mismatch = (count != cube["n_train"].values).any(axis=0)
        if mismatch.any():
            i = int(np.argmax(mismatch))
            raise CubeError(
                f"split {splits[i]} has n_train = {cube['n_train'].values[i]} but `{IN_TRAIN}` "
                f"marks {count[:, i].min()} training examples; make them agree."
            )
    n = int(cube.attrs["n"])
    total = n_test + cube["n_train"].values
    if (total > n).any():
        i = int(np.argmax((total > n).any(axis=0)))
        raise CubeError(
            f"split {splits[i]} has n_train + n_test = {total[:, i].max()} > n = {n}; fix "
            "`n_train` or the attr `n`."
        )
    for kind in BLOCKS:
        sel = block == kind
        if kind == "main":
            sel &= ~main_kfold
        if kind == "nested":
            continue  # |fold a| + |fold b|: checked against the main folds below
        if not sel.any():
            continue
        sizes = np.unique(n_test[:, sel])
        if sizes.size > 1:
            i = int(np.flatnonzero(sel)[np.argmax((n_test[:, sel] != sizes[0]).any(axis=0))])
            raise CubeError(
                f"block {kind!r} has splits with different test sizes {sizes.tolist()} (split "
                f"{splits[i]} has {n_test[:, i].tolist()[:5]}); the design needs the same n2 in "
                "every split of a block."
            )
        if kind == "half" and (n_test[:, sel][0, 0] + cube["n_train"].values[sel] > n // 2).any():
            raise CubeError(
                f"block 'half' has n_train + n_test above floor(n/2) = {n // 2}; inner splits "
                "must fit inside a half of the data."
            )
    if main_kfold.any():
        cover = ds["fold_cover"].values
        if (cover != 1).any():
            raise CubeError(
                "the k-fold main block does not test every example exactly once per repeat "
                f"({int((cover == 0).sum())} untested, {int((cover > 1).sum())} tested more "
                "than once); a k-fold repeat must partition the examples."
            )
    if "nested_tested" in ds:
        _check_nested(cube, ds["main_tested"].values, ds["nested_tested"].values)
    for kind in ("half", "5x2"):
        if f"{kind}_cover" in ds:
            cover = ds[f"{kind}_cover"]  # (*extra, pair, example)
            pair = f"{kind}_pair"
            pairs = cover[pair].values
            side0 = cover.sel({pair: pairs[pairs % 2 == 0]}).values
            side1 = cover.sel({pair: pairs[pairs % 2 == 0] + 1}).values
            if (side0 & side1).any():
                raise CubeError(
                    f"block {kind!r}: the two sides of a half-split test common examples; "
                    "the halves D_m and D_m^c must be disjoint."
                )


def _check_nested(cube: xr.DataArray, mt: np.ndarray, nt: np.ndarray) -> None:
    """Each 'nested' split tests two whole folds of its repeat; each pair of folds once.

    ``mt`` and ``nt`` are the test masks ``(*extra, split, example)`` of the k-fold
    main splits and of the nested splits.
    """
    block = cube["block"].values
    main = (block == "main") & (cube["fold"].values >= 0)
    nested = block == "nested"
    m_rep, m_fold = cube["repeat"].values[main], cube["fold"].values[main]
    n_rep, n_fold = cube["repeat"].values[nested], cube["fold"].values[nested]
    labels_s = cube[SPLIT].values[nested]
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


def validate(cube: xr.DataArray) -> None:
    """Check that ``cube`` follows the loss-cube schema (``docs/cube-schema.md``).

    Checks the name (a non-empty str: the loss name formulas use), dims and
    their order (none of length 0), dtype (float32 or float64), unique
    labels, the split coordinates and their per-block rules, the attrs,
    finiteness, the NaN pattern (the same for every model; disjoint from
    ``in_train`` when present), test sizes per block (the same ``n2`` in
    every split of a block and every element of the extra dims), k-fold
    partitions and disjoint halves. A dask-backed
    cube is reduced in a single pass. A compact cube (dim ``slot``) is checked
    by :func:`cvstats.compact.validate_compact`.

    Parameters
    ----------
    cube : xarray.DataArray
        The cube to check.

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
    >>> cvstats.validate(cube)
    >>> cvstats.validate(cube.rename(None))
    Traceback (most recent call last):
    ...
    cvstats.errors.CubeError: the cube has no name; ...
    """
    if isinstance(cube, xr.DataArray) and "slot" in cube.dims:
        from cvstats.compact import validate_compact  # a compact cube (cvstats.compact)

        validate_compact(cube)
        return
    _check_structure(cube)
    _check_attrs(cube)
    _check_split_coords(cube)
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
    _check_values(cube)


# --------------------------------------------------------------------------
# construction
# --------------------------------------------------------------------------


def _split_table(
    n_splits: int, splits: pd.DataFrame | Mapping[str, ArrayLike] | None
) -> dict[str, np.ndarray]:
    """Resolve the split coordinates: defaults (block main, -1) plus what the user gave."""
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


def from_arrays(
    losses: ArrayLike,
    test_mask: ArrayLike | None = None,
    *,
    design: xr.Dataset | None = None,
    models: Sequence[str] | None = None,
    examples: ArrayLike | None = None,
    extra_dims: Sequence[str] = (),
    extra_coords: Mapping[str, ArrayLike] | None = None,
    name: str = "loss",
    n_train: int | ArrayLike | None = None,
    splits: pd.DataFrame | Mapping[str, ArrayLike] | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> xr.DataArray:
    """Build a validated loss cube from arrays of losses.

    Parameters
    ----------
    losses : array-like
        Losses of shape ``(*extra, split, example, model)``. Values off the test
        mask are set to NaN (so dense arrays of losses on every example are
        accepted); every test example must have a finite loss. numpy or dask.
        float32 and float64 losses are kept as they are; integers and float16
        are converted to float64 (exactly). Complex, duration, timestamp,
        extended-precision and non-numeric losses are refused.
    test_mask : array-like of bool, optional
        Test membership, shape ``(split, example)`` or ``(*extra, split, example)``.
        Default: the design's ``test`` mask when ``design`` is given, otherwise
        the non-NaN pattern of ``losses`` (which must then be the same for every
        model).
    design : xarray.Dataset, optional
        A design of :mod:`cvstats.designs`: supplies the split coordinates,
        ``in_train`` (its ``train`` mask, when the test mask is the design's),
        the example labels and the attrs. A ``(split, example)`` ``test_mask``
        given with it must not meet the design's training sets; a per-dataset
        mask ``(*extra, split, example)`` uses the design as a template of the
        split coordinates only (each dataset has its own splits).
    models : sequence of str, optional
        Model names; default ``"model0"``, ``"model1"``, ...
    examples : array-like, optional
        Example labels; default the design's, else ``0..n-1``.
    extra_dims : sequence of str, default ()
        Names of the leading dims of ``losses`` (e.g. ``("dataset",)``).
    extra_coords : mapping, optional
        Coordinates for the extra dims.
    name : str, default "loss"
        Name of the loss (the cube's name, which formulas use): not empty.
    n_train : int or array-like, optional
        Training-set size per split (or one for all), when there is no design.
    splits : DataFrame or mapping, optional
        Other split coordinates (``block``, ``half``, ``side``, ``replicate``,
        ``repeat``, ``fold``, ``n_train``), one value per split, when there is no
        design. Missing ones default to ``block = "main"`` and -1.
    attrs : mapping, optional
        Attrs (``design``, ``n``, ``seed``, ...); defaults: the design's, else
        ``design="user"``, ``n`` = number of examples, ``seed=-1``.

    Returns
    -------
    xarray.DataArray
        A cube that passes :func:`validate`.

    Raises
    ------
    CubeError
        For shapes that do not fit, NaN or infinite losses on test examples, or
        any schema violation.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> losses = np.array([[[1.0], [np.nan], [0.0]], [[np.nan], [1.0], [1.0]]])
    >>> cube = cvstats.from_arrays(losses, n_train=1, models=["tree"], name="zero_one")
    >>> cube.sizes["split"], cube.sizes["example"], cube.attrs["design"]
    (2, 3, 'user')
    """
    if isinstance(losses, xr.DataArray):
        losses = losses.data
    data = losses if hasattr(losses, "chunks") and hasattr(losses, "dask") else np.asarray(losses)
    extra = tuple(extra_dims)
    dims = (*extra, *CORE_DIMS)
    if data.ndim != len(dims):
        raise CubeError(
            f"`losses` has {data.ndim} dims but {len(dims)} are expected {dims}; name leading "
            "dims with `extra_dims`."
        )
    # float16 is promoted to float64 below (exactly); every other problem is an error
    problem = (
        None if data.dtype == np.float16 else _dtype_problem(data.dtype, "`losses`", "losses")
    )
    if problem is not None:
        raise CubeError(problem)
    if not np.issubdtype(data.dtype, np.number):
        raise CubeError(f"`losses` must be real numbers, got dtype {data.dtype}.")
    if data.dtype not in (np.float32, np.float64):  # ints, float16: exact in float64
        data = data.astype(np.float64)
    S, n_ex, n_models = data.shape[-3:]

    if design is not None:
        if not isinstance(design, xr.Dataset) or "test" not in design or "train" not in design:
            raise CubeError("`design` must be a design of cvstats.designs (train/test masks).")
        if design.sizes[SPLIT] != S or design.sizes[EXAMPLE] != n_ex:
            raise CubeError(
                f"`losses` has {S} splits x {n_ex} examples but the design has "
                f"{design.sizes[SPLIT]} x {design.sizes[EXAMPLE]}."
            )
        if splits is not None or n_train is not None:
            raise CubeError("pass either `design` or `splits`/`n_train`, not both.")
        table = {c: design[c].values for c in SPLIT_COORDS}
        split_labels = design[SPLIT].values
        if examples is None:
            examples = design[EXAMPLE].values
        base_attrs = dict(design.attrs)
    else:
        splits = dict(splits) if splits is not None else {}
        if n_train is not None:
            splits["n_train"] = np.broadcast_to(np.asarray(n_train), (S,))
        table = _split_table(S, splits)
        split_labels = np.arange(S, dtype=np.int64)
        base_attrs = {"design": "user", "n": int(n_ex), "seed": UNKNOWN_SEED}
    base_attrs.update(attrs or {})

    if test_mask is None and design is not None:
        mask = design["test"].values
        in_train = design["train"]
    else:
        in_train = None
        mask = None if test_mask is None else np.asarray(test_mask)
        # a (split, example) mask replaces the design's own test sets, so it must stay off
        # their training sets; a per-dataset mask (*extra, split, example) uses the design
        # only as a template of split coordinates (each dataset has its own splits)
        if mask is not None and design is not None and mask.shape == (S, n_ex):
            meet = mask.astype(bool) & design["train"].values
            if meet.any():
                split = int(np.argwhere(meet)[0][-2])
                raise CubeError(
                    "`test_mask` marks training examples of the design as tested: the test "
                    f"set must not meet the training set (first at split {split})."
                )
    if mask is not None:
        if mask.dtype != bool:
            raise CubeError(f"`test_mask` must be boolean, got dtype {mask.dtype}.")
        if mask.shape not in {(S, n_ex), (*data.shape[:-3], S, n_ex)}:
            raise CubeError(
                f"`test_mask` has shape {mask.shape}; expected {(S, n_ex)} or "
                f"{(*data.shape[:-3], S, n_ex)}."
            )
        mask_b = mask[..., None]
        bad = mask_b & ~np.isfinite(data)
        if bad.any():
            where = np.argwhere(np.asarray(bad))[0].tolist()
            raise CubeError(
                f"{int(bad.sum())} test example(s) have a NaN or infinite loss (first at index "
                f"{where} of (*extra, split, example, model)); every test example needs a "
                "finite loss."
            )
        data = np.where(mask_b, data, np.nan)

    if models is None:
        models = [f"model{i}" for i in range(n_models)]
    if len(models) != n_models:
        raise CubeError(f"`models` names {len(models)} models but `losses` has {n_models}.")
    coords: dict[str, Any] = {
        SPLIT: split_labels,
        EXAMPLE: np.arange(n_ex) if examples is None else np.asarray(examples),
        MODEL: np.asarray(models, dtype=object),
    }
    coords.update({c: (SPLIT, table[c]) for c in SPLIT_COORDS})
    if extra_coords:
        coords.update(dict(extra_coords))
    cube = xr.DataArray(data, dims=dims, coords=coords, name=name, attrs=base_attrs)
    if in_train is not None:
        cube = cube.assign_coords({IN_TRAIN: ((SPLIT, EXAMPLE), in_train.values)})
    validate(cube)
    return cube


def _row(df: pd.DataFrame, i: int) -> str:
    """Name row ``i`` (a position) of ``df``: by its index label when labels are unique."""
    if df.index.is_unique:
        return f"row {_py(df.index[i])!r}"
    return f"the row at position {i}"


def _check_frame_keys(df: pd.DataFrame, keys: Sequence[str]) -> None:
    """Every key column of a long table has a label on every row (no NaN, None or NaT)."""
    for col in keys:
        missing = df[col].isna().to_numpy()
        if missing.any():
            first = int(np.argmax(missing))
            raise CubeError(
                f"column {col!r} has {int(missing.sum())} row(s) without a label (NaN or None; "
                f"first at {_row(df, first)}); each row's loss goes to the cell its "
                f"labels name, so every row needs one. Drop those rows with "
                f"df.dropna(subset=[{col!r}]) or fill in their labels."
            )


def _check_labels_map_back(column: pd.Series, codes: np.ndarray, uniques: pd.Index) -> None:
    """Labels that compare equal but differ in type (``True`` and ``1``) are one key: refuse.

    ``codes, uniques`` are ``pandas.factorize(column)``; only object columns can mix types.
    """
    if (codes < 0).any():  # no missing label reaches here (_check_frame_keys)
        raise CubeError(f"column {column.name!r} has rows without a label.")
    if column.dtype != object:
        return
    spelled = pd.DataFrame({"code": codes, "text": column.astype(str).to_numpy()})
    spelled = spelled.drop_duplicates()
    if len(spelled) > len(uniques):
        code = spelled["code"][spelled["code"].duplicated()].iloc[0]
        rows = spelled.index[spelled["code"] == code][:3]
        labels = [_py(column.iloc[i]) for i in rows]
        raise CubeError(
            f"column {column.name!r} holds the labels {labels}, which compare equal but differ "
            f"in type: they would be merged into one {column.name}. Give the labels one type, "
            f"e.g. df[{column.name!r}] = df[{column.name!r}].astype(str)."
        )


def from_frame(
    df: pd.DataFrame,
    *,
    split: str = "split",
    example: str = "example",
    model: str = "model",
    loss: str = "loss",
    extra_dims: Sequence[str] = (),
    n_train: int | None = None,
    attrs: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> xr.DataArray:
    """Build a validated loss cube from a long-format table of test losses.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per (extra..., split, example, model) *test* loss. Optional
        design columns (``block``, ``half``, ``side``, ``replicate``, ``repeat``,
        ``fold``, ``n_train``) must be constant within a split.
    split, example, model, loss : str
        Column names of the split label (int), example label, model name and
        loss value. Every row needs all its labels (no NaN or None), one row
        per key, and labels of one type per column (``True`` and ``1`` compare
        equal); the losses are read as float64 (exact for ints, bools, float16
        and float32).
    extra_dims : sequence of str, default ()
        Columns to turn into leading dims (e.g. ``["dataset"]``).
    n_train : int, optional
        Training-set size of every split, when there is no ``n_train`` column.
    attrs : mapping, optional
        Attrs (``design``, ``n``, ``seed``); default ``design="user"``, ``n`` = the
        number of distinct examples, ``seed=-1``.
    name : str, optional
        Name of the cube (not empty); default the ``loss`` column's name.

    Returns
    -------
    xarray.DataArray
        A cube that passes :func:`validate`; splits, examples and models keep
        their order of first appearance; NaN where a (split, example) has no row.

    Raises
    ------
    CubeError
        For a missing label, a repeated key, labels that merge or collide, a
        loss that is not a finite real number, or any schema violation.

    Examples
    --------
    >>> import pandas as pd, cvstats
    >>> df = pd.DataFrame({"split": [0, 0, 1, 1], "example": [3, 1, 1, 2],
    ...                    "model": "ols", "loss": [0.5, 1.5, 2.0, 0.1]})
    >>> cube = cvstats.from_frame(df, n_train=1)
    >>> cube.sel(model="ols").values.tolist()
    [[0.5, 1.5, nan], [nan, 2.0, 0.1]]
    """
    if not isinstance(df, pd.DataFrame):
        raise CubeError(f"`df` must be a pandas DataFrame, got {type(df).__name__}.")
    keys = [*extra_dims, split, example, model]
    if len(set(keys)) != len(keys):
        raise CubeError(
            f"`split`, `example`, `model` and `extra_dims` must name different columns, got "
            f"{keys}."
        )
    missing = [c for c in [*keys, loss] if c not in df.columns]
    if missing:
        raise CubeError(
            f"`df` lacks the column(s) {missing}; it has {list(df.columns)}. Name the columns "
            "with the split=, example=, model=, loss= arguments."
        )
    if len(df) == 0:
        raise CubeError("`df` has no rows; it needs one row per (split, example, model) loss.")
    _check_frame_keys(df, keys)
    loss_dtype = df[loss].dtype
    # numbers are read as float64: exact for ints, bools, float16 and float32
    problem = (
        _dtype_problem(loss_dtype, f"column {loss!r}", f"df[{loss!r}]")
        if isinstance(loss_dtype, np.dtype) and loss_dtype != np.float16
        else None
    )
    if problem is not None:
        raise CubeError(problem)
    if not pd.api.types.is_numeric_dtype(loss_dtype):
        raise CubeError(f"column {loss!r} must hold numbers, got dtype {loss_dtype}.")
    codes, uniques = [], []
    for col in keys:
        c, u = pd.factorize(df[col], sort=False)
        _check_labels_map_back(df[col], c, u)
        codes.append(c)
        uniques.append(u)
    names = pd.Index([str(m) for m in uniques[-1]])
    if names.has_duplicates:
        name_ = names[names.duplicated()][0]
        clash = [_py(m) for m in uniques[-1] if str(m) == name_]
        raise CubeError(
            f"column {model!r} holds the distinct labels {clash}, which all become the model "
            f"name {name_!r}; give every model a distinct name."
        )
    shape = tuple(len(u) for u in uniques)
    cell = pd.Index(np.ravel_multi_index(codes, shape))  # one cell per row
    dup = cell.duplicated()
    if dup.any():
        second = int(np.argmax(dup))
        first = int(np.argmax(cell == cell[second]))
        row = {k: _py(v) for k, v in df.iloc[first][keys].items()}
        raise CubeError(
            f"`df` has more than one loss for {row} ({int(dup.sum())} repeated row(s); "
            f"{_row(df, first)} and {_row(df, second)} share that key); keep one "
            f"row per key, e.g. df.drop_duplicates(subset={keys}), or average the repeats first."
        )
    losses = df[loss].to_numpy(dtype=float, na_value=np.nan)
    values = np.full(shape, np.nan)
    values[tuple(codes)] = losses
    if not np.isfinite(losses).all():
        raise CubeError(
            f"column {loss!r} has NaN or infinite losses; every row is a test loss and must "
            "be finite (drop rows of examples that were not tested)."
        )

    split_codes, split_labels = codes[len(extra_dims)], uniques[len(extra_dims)]
    split_cols = [c for c in SPLIT_COORDS if c in df.columns]
    splits: dict[str, np.ndarray] = {}
    for col in split_cols:
        per_split = df.groupby(split_codes, sort=True)[col]
        if (per_split.nunique() > 1).any():
            s = _py(split_labels[int(np.argmax(per_split.nunique().to_numpy() > 1))])
            raise CubeError(f"column {col!r} varies within split {s!r}; it must be constant.")
        splits[col] = per_split.first().to_numpy()
    if n_train is not None:
        if "n_train" in splits:
            raise CubeError("`df` has an `n_train` column; do not pass `n_train` as well.")
        splits["n_train"] = np.full(len(split_labels), n_train)
    table = _split_table(len(split_labels), splits)
    try:
        split_values = np.asarray(split_labels, dtype=np.int64)
        exact = bool(np.all(split_values == np.asarray(split_labels)))
    except (TypeError, ValueError) as e:
        raise CubeError(f"the {split!r} column must hold int split labels.") from e
    if not exact:
        bad = _py(np.asarray(split_labels)[split_values != np.asarray(split_labels)][0])
        raise CubeError(f"the {split!r} column must hold int split labels, got {bad}.")
    base_attrs = {"design": "user", "n": int(shape[-2]), "seed": UNKNOWN_SEED}
    base_attrs.update(attrs or {})
    coords: dict[str, Any] = {
        d: np.asarray(u) for d, u in zip(extra_dims, uniques[: len(extra_dims)], strict=True)
    }
    coords.update(
        {
            SPLIT: split_values,
            EXAMPLE: np.asarray(uniques[-2]),
            MODEL: np.asarray([str(m) for m in uniques[-1]], dtype=object),
        }
    )
    coords.update({c: (SPLIT, table[c]) for c in SPLIT_COORDS})
    cube = xr.DataArray(
        values,
        dims=(*extra_dims, *CORE_DIMS),
        coords=coords,
        name=loss if name is None else name,
        attrs=base_attrs,
    )
    validate(cube)
    return cube
