"""Groups of examples on the cube: the optional ``group`` coordinate (docs/grouped-data.md).

A cube may carry a coordinate ``group`` on ``example`` (dims ``("example",)``)
naming the group of every example — the patient of a scan, the user of a
session, the document of a passage. Examples of one group are not
independent; the methods whose variance is computed over examples then use a
cluster-robust variance (:mod:`cvstats.kernels.cluster`). This module checks
the coordinate, codes it as integers for the kernels, and finds the splits a
group straddles (examples of one group on both sides of a split).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.cube.schema import EXAMPLE, GROUP, IN_TRAIN, SPLIT
from cvstats.errors import CubeError

__all__ = ["check_groups", "group_codes", "groups_coord", "straddling_splits"]


def groups_coord(groups: Any, n_examples: int, what: str = "`groups`") -> np.ndarray:
    """Return ``groups`` as a 1-d array of one label per example, checked.

    Parameters
    ----------
    groups : array_like
        One group label per example (ints or strings).
    n_examples : int
        Number of examples.
    what : str
        How to name the argument in messages.

    Raises
    ------
    CubeError
        If `groups` is not one label per example, or a label is missing (NaN, None).
    """
    values = np.asarray(groups.values if isinstance(groups, pd.Series | xr.DataArray) else groups)
    if values.ndim != 1 or values.shape[0] != n_examples:
        raise CubeError(
            f"{what} must give one group label per example ({n_examples}), got shape "
            f"{values.shape}; pass a 1-d array aligned with the examples."
        )
    missing = np.asarray(pd.isna(values))
    if missing.any():
        first = int(np.argmax(missing))
        raise CubeError(
            f"{what} has {int(missing.sum())} missing group label(s) (NaN or None; first at "
            f"example position {first}); every example must belong to exactly one group: give "
            "each such example its own label (e.g. its example label) or drop it."
        )
    if values.dtype.kind not in "iuUSOb":
        raise CubeError(
            f"{what} must hold integer or string group labels, got dtype {values.dtype}; "
            "convert float labels with .astype(int) or to strings."
        )
    if values.dtype.kind == "O" and not all(isinstance(v, str | int | np.integer) for v in values):
        bad = next(v for v in values if not isinstance(v, str | int | np.integer))
        raise CubeError(
            f"{what} must hold integer or string group labels, got {type(bad).__name__} "
            f"{bad!r}; convert the labels to strings."
        )
    return values


def check_groups(cube: xr.DataArray | xr.Dataset) -> None:
    """Check the optional ``group`` coordinate of a cube (no-op without one).

    It must lie on ``example`` alone (dims ``("example",)``: one group per
    example, the same in every dataset) and name a group for every example.

    Raises
    ------
    CubeError
        Naming the problem and the fix.
    """
    if GROUP not in cube.coords:
        return
    coord = cube.coords[GROUP]
    if coord.dims != (EXAMPLE,):
        raise CubeError(
            f"the `{GROUP}` coordinate must lie on the `{EXAMPLE}` dim alone (one group per "
            f"example), got dims {coord.dims}; assign it with "
            f"cube.assign_coords({GROUP}=('{EXAMPLE}', labels))."
        )
    groups_coord(coord.values, cube.sizes[EXAMPLE], f"the `{GROUP}` coordinate")


def group_codes(cube: xr.DataArray | xr.Dataset) -> xr.DataArray | None:
    """Return the ``group`` coordinate as int codes ``0..G-1`` over ``example``, or None.

    The codes follow the order of first appearance (:func:`pandas.factorize`).
    """
    if GROUP not in cube.coords:
        return None
    codes, _ = pd.factorize(np.asarray(cube.coords[GROUP].values))
    return xr.DataArray(codes.astype(np.int64), dims=(EXAMPLE,), coords={EXAMPLE: cube[EXAMPLE]})


def straddling_splits(cube: xr.DataArray) -> dict[Hashable, int]:
    """Return the splits where a group has examples in both the test and the training set.

    The training set is the ``in_train`` coordinate when the cube has one,
    otherwise every example the split does not test. Only the first element
    of the extra dims is read (the group coordinate is the same in every
    element).

    Parameters
    ----------
    cube : xarray.DataArray
        A dense cube (dim ``example``) with a ``group`` coordinate.

    Returns
    -------
    dict
        Split label -> number of groups that straddle it (splits with none left out).
    """
    if GROUP not in cube.coords or EXAMPLE not in cube.dims:
        return {}
    first = cube.isel({d: 0 for d in cube.dims if d not in (SPLIT, EXAMPLE)})
    test = first.notnull().transpose(SPLIT, EXAMPLE).values
    if IN_TRAIN in cube.coords:
        it = cube[IN_TRAIN]
        train = it.isel({d: 0 for d in it.dims if d not in (SPLIT, EXAMPLE)})
        train = np.asarray(train.transpose(SPLIT, EXAMPLE).values, dtype=bool)
    else:
        train = ~test
    codes, _ = pd.factorize(np.asarray(cube.coords[GROUP].values))
    n_groups = int(codes.max()) + 1
    n_splits = test.shape[0]
    # split s's group g is bin s * G + g: one bincount per side, O(splits x examples)
    bins = (np.arange(n_splits)[:, None] * n_groups + codes[None, :]).ravel()

    def per_group(side: np.ndarray) -> np.ndarray:
        tally = np.bincount(bins, weights=side.ravel(), minlength=n_splits * n_groups)
        return tally.reshape(n_splits, n_groups) > 0

    counts = (per_group(test) & per_group(train)).sum(axis=1)
    labels = cube[SPLIT].values
    return {labels[i].item(): int(counts[i]) for i in np.flatnonzero(counts)}
