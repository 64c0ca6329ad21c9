"""Tests on one hold-out split (docs/theory.md §4, method 1): hold-out t and McNemar."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from cvstats import kernels
from cvstats.cube import unit_dim
from cvstats.cube.apply import apply_kernel
from cvstats.cube.compact import SLOT
from cvstats.cube.groups import group_codes
from cvstats.cube.schema import CONTRAST, EXAMPLE, MODEL, SPLIT
from cvstats.errors import (
    ArgumentError,
    CubeError,
    CvstatsTypeError,
    DesignError,
    ZeroVarianceWarning,
)
from cvstats.inference.blocks import block_positions
from cvstats.inference.clustered import cluster_title, clustered_test
from cvstats.inference.common import make_result, resolve_size
from cvstats.inference.engine import Call, Choice, method
from cvstats.inference.registry import LIBERAL_FLAG, MethodSpec
from cvstats.results import InferenceResult

__all__ = ["holdout_t", "mcnemar", "MCNEMAR_VARIANTS"]

MCNEMAR_VARIANTS = ("z", "corrected", "exact")

_HOLDOUT = "liberal for n1μ: (n2 σ3 + σ0 - σ3)/(σ0 - σ3) > 1 (valid for the trained model)"


def _example_dim(cube: xr.DataArray) -> str:
    """Return the dim of a split's test losses: ``example``, or ``slot`` when compact."""
    return SLOT if SLOT in cube.dims else EXAMPLE


def _one_split(cube: xr.DataArray, split: int | None, method: str) -> xr.DataArray:
    """Return the losses of the one split a hold-out method uses (``(*extra, example, unit)``)."""
    if split is None:
        pos = block_positions(cube, "main", method)
        if pos.size != 1:
            labels = cube[SPLIT].values[pos][:5].tolist()
            raise DesignError(
                f"{method} uses one hold-out split, but the main block has {pos.size}; pick "
                f"one with `split=` (e.g. split={labels[0]}) or draw a single split with "
                "cvstats.designs.holdout."
            )
        return cube.isel({SPLIT: int(pos[0])})
    if split not in cube[SPLIT].values:
        raise ArgumentError(
            f"`split` = {split!r} is not a split label of the cube (labels "
            f"{cube[SPLIT].values[:5].tolist()}...)."
        )
    return cube.sel({SPLIT: split})


@method(
    MethodSpec(
        name="holdout_t",
        title="Hold-out t ({variant} reference)",
        design="holdout",
        kernel="holdout_t",
        estimand="conditional",
        target="model",
        reference="normal",
        direction=_HOLDOUT,
        short="liberal",
        flag=LIBERAL_FLAG,
        rank=6,
        reason="the test losses of the one trained model (Nadeau & Bengio 2003, §4)",
        source="Nadeau & Bengio (2003), §4, method 1",
        fits="1",
        row=10,
        needs="examples",
        random_splits=False,
        checks={"variant": Choice(("z", "t"))},
        renamed={"reference": "variant"},
    )
)
def holdout_t(call: Call, *, split: int | None = None, variant: str = "z") -> InferenceResult:
    """Hold-out test on one split (docs/theory.md §4, method 1).

    ``μ̂_1`` = mean of the ``n2`` test losses, ``σ̂² = S_L² / n2``; reference
    ``N(0, 1)`` (default) or ``t_{n2-1}`` (``variant="t"``, the NIPS paper's
    choice). A valid interval for the *conditional* error of the one trained
    model, not for ``n1μ``.

    With a ``group`` coordinate on the cube (docs/grouped-data.md), ``σ̂²`` is
    the cluster-robust (CR1) variance of the mean over the ``G`` groups of the
    test set, with statsmodels' small-sample factor ``G/(G-1)``
    (:mod:`cvstats.kernels.cluster`; ``S_L²/n2`` again with one example per
    group), the ``t`` reference has ``G - 1`` degrees of freedom, and the
    title says ``"cluster-robust variance (G groups)"``; fewer than 10 groups
    is a :class:`~cvstats.errors.DesignError`.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube (or contrast cube) whose main block is one split
        (:func:`cvstats.designs.holdout`), or any cube with ``split`` given.
    %(test_options)s
    split : int, optional
        Label of the split to use; default the main block's only split.
    variant : {"z", "t"}, default "z"
        Reference distribution.

    %(returns_inference_result)s
    """
    one = _one_split(call.cube, split, "hold-out t")
    n1 = int(one["n_train"])
    over = _example_dim(one)
    codes = group_codes(call.cube)
    fields = {}
    if codes is None:
        stat = call.kernel(kernels.holdout_t, [one], [[over]], mu0=call.mu0, reference=variant)
    else:
        stat = clustered_test(codes, one, mu0=call.mu0, reference=variant, method="hold-out t")
        title = call.spec.result_fields(variant=variant)["title"]
        fields["title"] = cluster_title(title, one, codes)
    n2 = int(one.notnull().isel({d: 0 for d in one.dims if d != over}).sum())
    return call.test(
        stat,
        n1=n1,
        n2=n2,
        n_splits=1,
        params={"variant": variant},
        reference="normal" if variant == "z" else "t",
        **fields,
    )


def _difference(cube: xr.DataArray, models: Sequence[str] | None) -> xr.DataArray:
    """``L_A - L_B`` of two classifiers' 0/1 losses (or a contrast cube's values)."""
    unit = unit_dim(cube)
    if unit == CONTRAST:
        if models is not None:
            raise ArgumentError("`models` applies to a cube of models, not to a contrast cube.")
        return cube
    if models is not None:
        if isinstance(models, str):
            raise CvstatsTypeError(
                f"`models` must be a pair of model names, got the str {models!r}; write "
                "models=('a', 'b')."
            )
        models = list(models)
        missing = [m for m in models if m not in cube[MODEL].values]
        if len(models) != 2 or missing or models[0] == models[1]:
            raise ArgumentError(
                f"`models` must name two distinct models among the cube's models "
                f"{cube[MODEL].values.tolist()}, got {models}."
            )
        cube = cube.sel({MODEL: models})
    if cube.sizes[MODEL] != 2:
        raise ArgumentError(
            f"McNemar's test compares two classifiers, but the cube has {cube.sizes[MODEL]} "
            f"models {cube[MODEL].values.tolist()}; pass `models=(a, b)`."
        )
    values = cube.data
    bad = ~np.isnan(values) & (values != 0) & (values != 1)
    if bool(bad.any()):
        raise CubeError(
            f"McNemar's test needs zero-one losses, but the cube {cube.name!r} holds other "
            f"values (e.g. {np.asarray(values[bad])[:3].tolist()}); use holdout_t for other "
            "losses."
        )
    a, b = cube[MODEL].values.tolist()
    diff = cube.sel({MODEL: a}, drop=True) - cube.sel({MODEL: b}, drop=True)
    return diff.assign_coords({CONTRAST: f"{a} - {b}"})


@method(
    MethodSpec(
        name="mcnemar",
        title="McNemar ({variant})",
        design="holdout",
        kernel="mcnemar",
        estimand="conditional",
        target="model",
        reference="normal",
        direction=_HOLDOUT,
        short="liberal",
        flag=LIBERAL_FLAG,
        rank=7,
        reason="exact for the one trained pair of classifiers (0/1 losses)",
        source="McNemar (1947); Dietterich (1998), §3.1; Nadeau & Bengio (2003), §4, method 1",
        fits="1",
        row=20,
        needs="examples",
        only={"mu0": 0.0},
        why_only="McNemar's test is a test of mu0 = 0",
        contrasts="pairwise",
        zero_one=True,
        default=False,
        random_splits=False,
        checks={"variant": Choice(MCNEMAR_VARIANTS)},
    )
)
def mcnemar(
    call: Call,
    *,
    variant: str = "z",
    split: int | None = None,
    models: Sequence[str] | None = None,
) -> InferenceResult:
    """McNemar's test of two classifiers on one hold-out split (docs/theory.md §4, method 1).

    With ``n10`` = #(A wrong, B right) and ``n01`` = #(A right, B wrong) on the
    test set: ``"z"``: ``(n10 - n01)/sqrt(n10 + n01)`` against ``N(0, 1)``;
    ``"corrected"``: ``(|n10 - n01| - 1)² / (n10 + n01)`` against ``χ²_1``
    (two-sided only); ``"exact"``: binomial test of ``n10`` given
    ``n10 + n01``. Every variant reports ``estimate = (n10 - n01)/n2`` (the
    difference of error rates) with ``stderr = sqrt(n10 + n01)/n2`` and the
    z-form interval (``df = inf``). Tests ``μ0 = 0``; conditional on the one
    trained pair of models.

    With a ``group`` coordinate on the cube (docs/grouped-data.md), the
    ``"z"`` variant is the clustered McNemar z of Durkalski et al. (2003):
    ``Σ_g u_g / sqrt(Σ_g u_g²)`` with ``u_g = n10_g - n01_g`` of group ``g``,
    ``stderr = sqrt(Σ_g u_g²)/n2``, the title says ``"cluster-robust variance
    (G groups)"`` (:func:`cvstats.kernels.cluster.cluster_mcnemar_z`; McNemar's
    z again with one example per group). ``Σ_g u_g²`` is the cluster score
    variance under the null, statsmodels'
    ``sandwich_covariance.S_crosssection(d[:, None], groups)`` with ``d_i``
    the per-example discordance ``+1/-1/0``. The ``"corrected"`` and ``"exact"``
    variants count discordant pairs as independent and are refused
    (:class:`~cvstats.errors.DesignError`), as are fewer than 10 groups.

    Parameters
    ----------
    cube : xarray.DataArray
        Cube of 0/1 losses of two models (or pick two with ``models``), or a
        contrast cube of differences of two classifiers' 0/1 losses.
    variant : {"z", "corrected", "exact"}, default "z"
        Which form of the test.
    %(alpha)s
    alternative : {"two-sided", "less", "greater"}
        ``"greater"``: model A errs more often than B.
    split : int, optional
        Label of the split; default the main block's only split.
    models : sequence of two str, optional
        The two models ``(A, B)`` to compare.
    mu0 : float, default 0
        Taken like every test's; McNemar's test tests ``μ0 = 0`` only, so any
        other value is refused.

    Returns
    -------
    InferenceResult
        Over the extra dims (and ``contrast`` for a contrast cube).
    """
    cube, alternative = call.cube, call.alternative
    if variant == "corrected" and alternative != "two-sided":
        raise ArgumentError(
            "the continuity-corrected McNemar chi-square test is two-sided only; use "
            "variant='z' or 'exact' for a one-sided test."
        )
    one = _one_split(cube, split, "McNemar's test")
    diff = _difference(one, models)
    values = diff.data
    other = ~np.isnan(values) & (values != 0) & (values != 1) & (values != -1)
    if bool(other.any()):
        raise CubeError(
            "McNemar's test needs differences of two classifiers' zero-one losses (values "
            f"-1, 0, 1); this contrast cube holds other values, e.g. "
            f"{pd.unique(np.asarray(values[other]).ravel())[:3].tolist()}."
        )
    over = _example_dim(diff)
    n10 = (diff == 1).sum(over)
    n01 = (diff == -1).sum(over)
    n2 = diff.notnull().sum(over)
    codes = group_codes(cube)
    fields = call.spec.result_fields(variant=variant)
    stderr = np.sqrt(n10 + n01) / n2
    if codes is not None:
        if variant != "z":
            raise DesignError(
                f"McNemar's test with variant={variant!r} counts the discordant pairs as "
                "independent, but the cube has a `group` coordinate; use variant='z', the "
                "clustered McNemar z of Durkalski et al. (2003) (docs/grouped-data.md)."
            )
        statistic, pvalue, stderr, _ = apply_kernel(
            kernels.cluster.cluster_mcnemar_z,
            [diff, codes],
            [[EXAMPLE], [EXAMPLE]],
            4,
            alternative=alternative,
        )
        reference = "normal"
        fields["title"] = cluster_title(fields["title"], diff, codes)
    elif variant == "z":
        statistic, pvalue = apply_kernel(
            kernels.mcnemar_z, [n10, n01], [[], []], 2, alternative=alternative
        )
        reference = "normal"
    elif variant == "corrected":
        statistic, pvalue = apply_kernel(kernels.mcnemar_chi2, [n10, n01], [[], []], 2)
        reference = "chi2(1)"
    else:
        statistic, pvalue = apply_kernel(
            kernels.mcnemar_exact, [n10, n01], [[], []], 2, alternative=alternative
        )
        reference = "binomial"
        if bool(((n10 + n01) == 0).any()):
            warnings.warn(
                "McNemar exact: the number of discordant pairs n10 + n01 is zero (the two "
                "models err on the same test examples): the standard error and the interval "
                "are degenerate (zero width); the p-value is 1.",
                ZeroVarianceWarning,
                stacklevel=2,
            )
    estimate = (n10 - n01) / n2
    df = xr.full_like(estimate, np.inf)
    n2_value = int(n2.max())
    return make_result(
        estimate,
        stderr,
        statistic,
        df,
        pvalue,
        loss=str(cube.name),
        **{
            **fields,
            **call.options._asdict(),
            "reference": reference,
            "n1": resolve_size("n1", None, int(one["n_train"])),
            "n2": n2_value,
            "n_splits": 1,
            "n_fits": 1,
        },
    )
