"""Building loss cubes from users' own results: :func:`from_arrays` and :func:`from_frame`.

Losses computed anywhere (arrays, or long-format tables) become a cube that
:func:`cvstats.validate` accepts; the schema is ``docs/cube-schema.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from numpy.typing import ArrayLike

from cvstats.cube.dense import dtype_problem, one_size_splits, plain_value, split_table
from cvstats.cube.groups import groups_coord
from cvstats.cube.schema import (
    CORE_DIMS,
    EXAMPLE,
    GROUP,
    IN_TRAIN,
    MODEL,
    N_TEST,
    SPLIT,
    SPLIT_COORDS,
    UNKNOWN_SEED,
)
from cvstats.cube.validation import validate
from cvstats.errors import CubeError

__all__ = ["from_arrays", "from_frame"]


def _state_test_sizes(cube: xr.DataArray, tested: Any) -> xr.DataArray:
    """Add the ``n_test`` coordinate when the splits of a block differ in test size.

    ``tested`` is the test mask, ``(split, example)`` or ``(*extra, split, example)``
    (numpy or dask). A block other than the k-fold main block and ``"nested"``
    may hold splits of different test sizes only when the cube states them
    (``docs/cube-schema.md``); the builders know the test sets, so they state
    them. Nothing is added when the sizes agree (the cube is as before), or when
    a split's size differs between elements of the extra dims (one size per
    split cannot say it: validation then refuses the block, naming the fix).
    """
    if 0 in cube.shape:  # an empty dim: validation says so
        return cube
    counts = np.asarray(tested.sum(axis=-1)).reshape(-1, cube.sizes[SPLIT])  # (rows, split)
    block = np.asarray(cube["block"].values)
    one_size = one_size_splits(block, cube["fold"].values)
    differ = any(
        np.unique(counts[:, (block == kind) & one_size]).size > 1
        for kind in np.unique(block[one_size])
    )
    if not differ or (counts != counts[:1]).any():
        return cube
    return cube.assign_coords({N_TEST: (SPLIT, counts[0].astype(np.int64))})


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
    groups: ArrayLike | None = None,
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
    groups : array-like, optional
        The group (patient, user, document) of every example, one int or str
        label per example; stored as the coordinate ``group`` on ``example``.
        Default: the design's ``group`` coordinate when it has one (a design of
        :func:`cvstats.designs.from_splitter` given ``groups``), else none (the
        examples are independent). Methods whose variance is computed over
        examples then use a cluster-robust variance (docs/grouped-data.md).

    Returns
    -------
    xarray.DataArray
        A cube that passes :func:`validate`. When the splits of a block (other
        than a k-fold main block) differ in test size — a 2-fold split of an
        odd ``n``, groups of unequal size — the cube states each split's test
        size in an int coordinate ``n_test`` on ``split`` (``docs/cube-schema.md``).

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
    problem = None if data.dtype == np.float16 else dtype_problem(data.dtype, "`losses`", "losses")
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
        table = split_table(S, splits)
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
    if groups is None and design is not None and GROUP in design.coords:
        groups = design[GROUP].values
    if groups is not None:
        cube = cube.assign_coords({GROUP: (EXAMPLE, groups_coord(groups, n_ex))})
    if mask is not None:
        cube = _state_test_sizes(cube, mask)
    elif n_models:
        cube = _state_test_sizes(cube, ~np.isnan(data[..., 0]))
    validate(cube)
    return cube


def _row(df: pd.DataFrame, i: int) -> str:
    """Name row ``i`` (a position) of ``df``: by its index label when labels are unique."""
    if df.index.is_unique:
        return f"row {plain_value(df.index[i])!r}"
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
        labels = [plain_value(column.iloc[i]) for i in rows]
        raise CubeError(
            f"column {column.name!r} holds the labels {labels}, which compare equal but differ "
            f"in type: they would be merged into one {column.name}. Give the labels one type, "
            f"e.g. df[{column.name!r}] = df[{column.name!r}].astype(str)."
        )


def _example_groups(
    df: pd.DataFrame, group: str, example_codes: np.ndarray, examples: pd.Index
) -> Any:
    """Return the group of every example from the `group` column, constant within an example."""
    column = df[group]
    if column.isna().any():
        row = int(np.argmax(column.isna().to_numpy()))
        raise CubeError(
            f"column {group!r} (`group`) has {int(column.isna().sum())} missing label(s) (first "
            f"at {_row(df, row)}); every example must belong to exactly one group."
        )
    per_example = column.groupby(example_codes, sort=True)
    varies = per_example.nunique().to_numpy() > 1
    if varies.any():
        raise CubeError(
            f"column {group!r} (`group`) gives {int(varies.sum())} example(s) more than one "
            f"group (first: example {plain_value(examples[int(np.argmax(varies))])!r}); every "
            "example must belong to exactly one group, the same in every row."
        )
    return groups_coord(per_example.first().to_numpy(), len(examples), f"column {group!r}")


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
    group: str | None = None,
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
    group : str, optional
        Column of the group (patient, user, document) of every example: one
        label per example (the same in every row of that example), none
        missing; stored as the coordinate ``group`` on ``example``
        (docs/grouped-data.md). Default: no groups.

    Returns
    -------
    xarray.DataArray
        A cube that passes :func:`validate`; splits, examples and models keep
        their order of first appearance; NaN where a (split, example) has no row.
        When the splits of a block (other than a k-fold main block) differ in
        test size, the cube states each split's test size in an int coordinate
        ``n_test`` on ``split`` (as :func:`from_arrays` does).

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
    wanted = [*keys, loss, *([group] if group is not None else [])]
    missing = [c for c in wanted if c not in df.columns]
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
        dtype_problem(loss_dtype, f"column {loss!r}", f"df[{loss!r}]")
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
        clash = [plain_value(m) for m in uniques[-1] if str(m) == name_]
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
        row = {k: plain_value(v) for k, v in df.iloc[first][keys].items()}
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
            s = plain_value(split_labels[int(np.argmax(per_split.nunique().to_numpy() > 1))])
            raise CubeError(f"column {col!r} varies within split {s!r}; it must be constant.")
        splits[col] = per_split.first().to_numpy()
    if n_train is not None:
        if "n_train" in splits:
            raise CubeError("`df` has an `n_train` column; do not pass `n_train` as well.")
        splits["n_train"] = np.full(len(split_labels), n_train)
    table = split_table(len(split_labels), splits)
    try:
        split_values = np.asarray(split_labels, dtype=np.int64)
        exact = bool(np.all(split_values == np.asarray(split_labels)))
    except (TypeError, ValueError) as e:
        raise CubeError(f"the {split!r} column must hold int split labels.") from e
    if not exact:
        bad = plain_value(np.asarray(split_labels)[split_values != np.asarray(split_labels)][0])
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
    if group is not None:
        coords[GROUP] = (EXAMPLE, _example_groups(df, group, codes[-2], uniques[-2]))
    cube = xr.DataArray(
        values,
        dims=(*extra_dims, *CORE_DIMS),
        coords=coords,
        name=loss if name is None else name,
        attrs=base_attrs,
    )
    cube = _state_test_sizes(cube, ~np.isnan(values[..., 0]))  # every dim holds a row
    validate(cube)
    return cube
