"""Grouped examples in the tests of one cube (docs/grouped-data.md).

When the cube carries a ``group`` coordinate on ``example``
(:mod:`cvstats.cube.groups`), the methods whose variance is computed over
examples (hold-out t, Bayle et al.'s interval, the nested CV interval,
McNemar's z, and ``var_mu`` of
:func:`~cvstats.across.kfold_variance.kfold_statistics`) compute it
cluster-robustly (:mod:`cvstats.kernels.cluster`) and say so; the methods that
use split means only are unchanged, which is right as long as no group
straddles the training and test sets of a split (Nadeau & Bengio 2003,
Lemma 1 treats the split means as exchangeable draws, each from a test set
independent of its training set): :func:`warn_if_straddling` warns otherwise.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from cvstats.cube.apply import apply_kernel
from cvstats.cube.groups import group_codes, straddling_splits
from cvstats.cube.schema import EXAMPLE
from cvstats.errors import CvstatsWarning
from cvstats.kernels.cluster import cluster_t

__all__ = [
    "CLUSTER_NOTE",
    "cluster_title",
    "clustered_test",
    "warn_if_straddling",
]

#: What the title of a result with a cluster-robust variance says (then ``(G groups)``).
CLUSTER_NOTE = "cluster-robust variance"


def clustered_test(
    codes: xr.DataArray,
    values: xr.DataArray,
    *,
    mu0: float,
    reference: str,
    method: str,
) -> tuple[xr.DataArray, ...]:
    """``(estimate, stderr, statistic, df)`` of the mean of ``values`` over ``example``, clustered.

    ``codes`` are the int group codes over ``example`` (:func:`group_codes`;
    a cube with groups is dense, so its losses lie on ``example``).
    """
    return apply_kernel(
        cluster_t,
        [values, codes],
        [[EXAMPLE], [EXAMPLE]],
        4,
        mu0=mu0,
        reference=reference,
        method=method,
    )


def cluster_title(title: str, values: xr.DataArray, codes: xr.DataArray) -> str:
    """``title`` with the note ``"; cluster-robust variance (G groups)"``.

    ``G`` counts the groups with a value; a range ``G = a–b`` when it differs
    across the extra dims.
    """
    present = values.notnull()
    counts = []
    flat = present.transpose(..., EXAMPLE).values.reshape(-1, present.sizes[EXAMPLE])
    for row in flat:
        counts.append(np.unique(codes.values[row]).size)
    low, high = min(counts), max(counts)
    groups = f"{low} groups" if low == high else f"{low}–{high} groups"
    return f"{title}; {CLUSTER_NOTE} ({groups})"


def warn_if_straddling(cube: xr.DataArray) -> None:
    """Warn (``CvstatsWarning``) when a group straddles a split's training and test sets.

    Without a ``group`` coordinate, or with every group on one side of every
    split (e.g. ``GroupKFold``), nothing happens.
    """
    if group_codes(cube) is None:
        return
    where = straddling_splits(cube)
    if not where:
        return
    first = next(iter(where))
    warnings.warn(
        f"{len(where)} split(s) have a group with examples in both the training and the test "
        f"set (split {first!r}: {where[first]} group(s)): the test losses then depend on the "
        "training set beyond what the methods assume, and the split means are correlated "
        "beyond Nadeau & Bengio's Lemma 1 (every method's variance may be too small); split "
        "by groups (sklearn.model_selection.GroupKFold, GroupShuffleSplit) with "
        "cvstats.designs.from_splitter(cv, X, y, groups).",
        CvstatsWarning,
        stacklevel=3,
    )
