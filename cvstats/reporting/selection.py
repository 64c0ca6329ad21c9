"""After a hyper-parameter search: which candidates are as good as the best, and at what error.

See docs/after-a-search.md. :func:`model_confidence_set` is the model
confidence set of Hansen, Lunde & Nason (2011, Econometrica 79(2));
:func:`cv_confidence_set` the cross-validation with confidence of Lei (2020,
JASA 115);

:func:`bbc_cv` the bootstrap bias-corrected cross-validation of Tsamardinos,
Greasidou & Borboudakis (2018, Machine Learning 107, §4, Algorithm 1) on a loss
cube whose candidates lie on ``model`` and whose main block is a (repeated)
K-fold: an estimate and an interval of the error of "choose the candidate
with the best CV score", from the fits already made (no nested CV). The
arithmetic is :func:`cvstats.kernels.bbc.bbc_cv`; the ``"rescaled"`` interval
(:func:`cvstats.kernels.bbc.oob_scale`) is cvstats's own calibration.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.checks import check_int, validate_alpha
from cvstats.cube.compact import from_compact, is_compact
from cvstats.cube.schema import CORE_DIMS, EXAMPLE, GROUP, MODEL, SPLIT
from cvstats.cube.score import examples_refusal, is_score
from cvstats.cube.validation import validate
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError, DesignError
from cvstats.inference.blocks import block_positions, kfold_layout
from cvstats.kernels.bbc import bbc_cv as _bbc_kernel
from cvstats.kernels.cvc import cvc_pvalues
from cvstats.kernels.mcs import MCS_STATISTICS, mcs
from cvstats.results.selection import (
    BBC_INTERVALS,
    BOOTSTRAP,
    BBCResult,
    CVCResult,
    MCSResult,
    bbc_interval,
)

__all__ = ["bbc_cv", "candidate_losses", "cv_confidence_set", "model_confidence_set"]

_METHOD = "BBC-CV"
#: Why the selection methods refuse a score cube (e.g. from_cv_results's).
_SCORE_WHY = (
    "it resamples (or multiplies) the single examples' out-of-sample losses of every candidate"
)


def candidate_losses(cube: Any, method: str) -> tuple[xr.DataArray, int]:
    """Each example's out-of-sample loss per candidate, averaged over the K-fold's repeats.

    Parameters
    ----------
    cube : xarray.DataArray
        A loss cube (dense or compact) with the candidates on ``model`` and a
        (repeated) K-fold main block, no extra dims.
    method : str
        The method's name, for the messages.

    Returns
    -------
    losses : xarray.DataArray
        ``(example, model)``: the mean over the repeats of each example's loss
        in the fold that tests it (its coordinates on ``example`` kept).
    repeats : int
        The number of repeats of the K-fold.

    Raises
    ------
    CvstatsTypeError
        Not a DataArray.
    CubeError
        A score cube (no per-example losses), or a cube breaking the schema.
    ArgumentError
        Extra dims, fewer than two candidates, or two candidates with the same
        losses on every example.
    DesignError
        The main block is not a K-fold.
    """
    if not isinstance(cube, xr.DataArray):
        raise CvstatsTypeError(
            f"`cube` must be an xarray.DataArray loss cube, got {type(cube).__name__}; build "
            "one with cvstats.collect or cvstats.from_arrays."
        )
    if is_score(cube):
        raise CubeError(
            f"{examples_refusal(method, _SCORE_WHY)} A search's cv_results_ keeps fold scores "
            "only: refit its grid keeping the losses with cvstats.collect("
            "cvstats.designs.grid_models(estimator, param_grid), X, y, design, loss=...)."
        )
    if is_compact(cube):
        cube = from_compact(cube)
    validate(cube)
    extra = [str(d) for d in cube.dims if d not in CORE_DIMS]
    if extra:
        raise ArgumentError(
            f"{method} takes one search, a cube with dims {CORE_DIMS}, but `cube` has the "
            f"extra dims {extra}; select one element first, e.g. cube.isel({extra[0]}=0)."
        )
    n_models = cube.sizes[MODEL]
    if n_models < 2:
        raise ArgumentError(
            f"{method} selects among candidates, but `cube` has {n_models} model on `model`; "
            "give the losses of every candidate of the search (at least two)."
        )
    _, repeats = kfold_layout(cube, method)
    main = cube.isel({SPLIT: block_positions(cube, "main", method)})
    losses = main.mean(SPLIT, skipna=True).transpose(EXAMPLE, MODEL)
    _refuse_duplicates(losses, method)
    return losses, repeats


def _refuse_duplicates(losses: xr.DataArray, method: str) -> None:
    """ArgumentError naming the candidates whose losses are equal on every example."""
    values = np.asarray(losses.values)
    _, first, inverse = np.unique(values.T, axis=0, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    dup = [m for m in range(values.shape[1]) if first[inverse[m]] != m]
    if dup:
        names = losses[MODEL].values
        pairs = ", ".join(f"{names[m]!r} = {names[first[inverse[m]]]!r}" for m in dup)
        raise ArgumentError(
            f"{method} needs distinct candidates, but some have the same loss on every example "
            f"({pairs}): their tie makes the selection arbitrary. Keep one of each, e.g. "
            "cube.drop_sel(model=[...])."
        )


def _bootstrap_units(
    losses: xr.DataArray, n_boot: int, seed: Any
) -> tuple[np.ndarray, np.ndarray | None, str]:
    """``(draws, units, unit)``: ``n_boot`` iid draws of the examples, or of the groups.

    ``draws`` is ``(n_boot, G)`` indices of the ``G`` units; ``units`` the unit of
    each example (None: each example its own); ``unit`` ``"example"`` or ``"group"``
    (when ``losses`` has a ``group`` coordinate on ``example``).
    """
    units, n_units, unit = _units(losses)
    draws = np.random.default_rng(seed).integers(0, n_units, size=(n_boot, n_units))
    return draws, units, unit


def _units(losses: xr.DataArray) -> tuple[np.ndarray | None, int, str]:
    """``(units, n_units, unit)``: the group of each example (None: the examples alone)."""
    if GROUP in losses.coords:
        codes, groups = pd.factorize(np.asarray(losses[GROUP].values))
        return np.asarray(codes), len(groups), "group"
    return None, losses.sizes[EXAMPLE], "example"


def bbc_cv(
    cube: xr.DataArray,
    *,
    n_boot: int = 1000,
    alpha: float = 0.05,
    interval: str = "percentile",
    seed: int | np.random.Generator | None = 0,
) -> BBCResult:
    """Bootstrap bias-corrected CV: the error of choosing the best candidate by CV.

    Tsamardinos, Greasidou & Borboudakis (2018, Machine Learning 107, §4,
    Algorithm 1). The best CV score of a search is optimistic (the winner's
    curse). BBC-CV corrects it from the out-of-sample losses already computed:
    each of ``n_boot`` replications draws the examples (or, when the cube has a
    ``group`` coordinate, the groups) with replacement, selects the candidate
    with the smallest mean loss on the in-bag draws and scores it on the
    out-of-bag examples. The estimate is the mean of these out-of-bag losses,
    the interval their percentiles (``interval="percentile"``, the paper's) or
    those percentiles brought closer to the estimate (``"rescaled"``, below).
    See docs/after-a-search.md.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube with the candidates on ``model`` (at least two) and a K-fold
        or repeated K-fold main block, so that every example has an
        out-of-sample loss per repeat (averaged over the repeats); dims
        ``(split, example, model)``. A smaller loss is better.
    n_boot : int, default 1000
        Bootstrap replications (at least 100).
    alpha : float, default 0.05
        Level of the interval (``1 - alpha``).
    interval : {"percentile", "rescaled"}, default "percentile"
        ``"percentile"``: the ``alpha/2`` and ``1 - alpha/2`` percentiles of the
        out-of-bag losses (Tsamardinos et al. 2018), conservative when the
        per-example losses are nearly independent. ``"rescaled"``: the
        percentiles' distances from the estimate times
        ``sqrt(f / (1 - f))``, ``f = (1 - 1/G)^G`` over ``G`` units
        (:func:`cvstats.kernels.bbc.oob_scale`, cvstats's calibration, Notes).
    seed : int, numpy.random.Generator or None, default 0
        Seed of the bootstrap draws (:func:`numpy.random.default_rng`).

    Returns
    -------
    BBCResult
        The estimate, its interval, the naive best CV score, the share of the
        replications selecting each candidate, and the replications.

    Raises
    ------
    CubeError
        A score cube: BBC-CV needs per-example losses.
    ArgumentError
        One candidate, candidates with identical losses, extra dims, a bad
        ``n_boot``, ``alpha`` or ``interval``, or every replication without an
        out-of-bag example.
    DesignError
        The main block is not a K-fold.

    Notes
    -----
    Ties of the in-bag means go to the first candidate along ``model``; the
    naive score is the smallest mean CV loss. A replication that draws every
    unit has no out-of-bag example and is left out (counted in ``n_used``).

    The percentile interval is the spread of *one* out-of-bag mean, on about
    ``f ≈ e^{-1} ≈ 37 %`` of the units. For a fixed candidate, the out-of-bag
    units of a replication are a simple random sample without replacement of
    the ``G`` units, so its mean varies with variance about
    ``s² (1 - f) / (f G)`` (Cochran 1977, Theorem 2.2), while the estimate,
    close to the candidate's mean over all units, has variance ``σ²/G``:
    ``"rescaled"`` multiplies the percentiles' distances from the estimate by
    the ratio ``sqrt(f / (1 - f)) ≈ 0.76``. This calibration is cvstats's, not
    the paper's. It assumes independent per-example losses: in a Monte Carlo
    world of Gaussian losses it covers the selected candidate's true error near
    nominally (0.94, 0.92, 0.89 at nominal 0.90 for 100, 200, 500 examples,
    where the percentile interval covers 0.99, 0.98, 0.95), but the losses of
    the examples of one fold share that fold's fit, and for ridge regression
    with 20 features it undercovers (0.79, 0.82, 0.88) where the percentile
    interval is near nominal (0.92, 0.93, 0.95); hence the default
    (docs/after-a-search.md, ``benchmarks/coverage_bbc.py``).

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> design = cvstats.designs.kfold(60, K=5, seed=0)
    >>> rng = np.random.default_rng(1)
    >>> losses = np.broadcast_to(rng.random((1, 60, 4)), (5, 60, 4))
    >>> res = cvstats.bbc_cv(cvstats.from_arrays(losses, design=design), n_boot=200)
    >>> bool(res.estimate >= res.naive)
    True
    """
    n_boot = check_int("n_boot", n_boot, 100)
    alpha = validate_alpha(alpha)
    if not isinstance(interval, str) or interval not in BBC_INTERVALS:
        raise ArgumentError(
            f"`interval` must be one of {list(BBC_INTERVALS)}, got {interval!r}; "
            "'percentile' is the paper's interval, 'rescaled' cvstats's calibration of it."
        )
    losses, repeats = candidate_losses(cube, _METHOD)
    draws, units, unit = _bootstrap_units(losses, n_boot, seed)
    n_units = draws.shape[1]
    oob, winner = _bbc_kernel(losses.values, draws, units)
    used = np.isfinite(oob)
    if not used.any():
        raise ArgumentError(
            f"every one of the {n_boot} replications drew all {n_units} {unit}s, leaving no "
            "out-of-bag example; BBC-CV needs more units."
        )
    cv_loss = losses.mean(EXAMPLE).reset_coords(drop=True)
    best = int(np.argmin(cv_loss.values))
    naive = float(cv_loss.values[best])
    estimate = float(oob[used].mean())
    share = np.bincount(winner[used], minlength=losses.sizes[MODEL]) / used.sum()
    return BBCResult(
        loss=str(cube.name),
        estimate=estimate,
        ci=bbc_interval(oob[used], alpha, interval, n_units),
        naive=naive,
        optimism=estimate - naive,
        best=str(cv_loss[MODEL].values[best]),
        cv_loss=cv_loss,
        selected=cv_loss.copy(data=share),
        replicates=xr.DataArray(oob[used], dims=BOOTSTRAP),
        alpha=alpha,
        n_boot=n_boot,
        n_used=int(used.sum()),
        n_examples=losses.sizes[EXAMPLE],
        n_units=n_units,
        n_repeats=repeats,
        unit=unit,
        interval_method=interval,
    )


def model_confidence_set(
    cube: xr.DataArray,
    *,
    alpha: float = 0.05,
    statistic: str = "R",
    n_boot: int = 1000,
    seed: int | np.random.Generator | None = 0,
) -> MCSResult:
    """Find the candidates of a search as good as the best: the model confidence set.

    Hansen, Lunde & Nason (2011, Econometrica 79(2), §3): starting from every
    candidate, test equal mean loss of the candidates left with a bootstrap
    statistic and remove the worst while the test rejects at ``alpha``. The
    set contains the best candidate(s) with probability at least ``1 - alpha``
    (asymptotically); each candidate's p-value is the smallest ``alpha`` at
    which it leaves. The bootstrap is iid over the examples (block size 1), or
    over the groups when the cube has a ``group`` coordinate on ``example``.
    The steps are those of ``arch.bootstrap.MCS`` (equal to it given the same
    bootstrap indices). See docs/after-a-search.md.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube with the candidates on ``model`` (at least two) and a K-fold
        or repeated K-fold main block (each example's loss averaged over the
        repeats); dims ``(split, example, model)``. A smaller loss is better.
    alpha : float, default 0.05
        The set's level is ``1 - alpha``.
    statistic : {"R", "max"}, default "R"
        ``T_R``, the largest standardized pairwise difference, or ``T_max``,
        the largest standardized difference from the set's average (§3.1.2).
    n_boot : int, default 1000
        Bootstrap replications (at least 100).
    seed : int, numpy.random.Generator or None, default 0
        Seed of the bootstrap draws.

    Returns
    -------
    MCSResult
        The p-value of each candidate, whether it is in the set, its mean loss
        and its elimination step.

    Raises
    ------
    CubeError
        A score cube (per-example losses are needed).
    ArgumentError
        One candidate, candidates with the same loss on every example (a tie:
        their difference has no variance), extra dims, a bad ``statistic``,
        ``n_boot`` or ``alpha``.
    DesignError
        The main block is not a K-fold.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> design = cvstats.designs.kfold(80, K=5, seed=0)
    >>> rng = np.random.default_rng(1)
    >>> losses = rng.random((1, 80, 3)) + [0.0, 0.02, 0.6]
    >>> cube = cvstats.from_arrays(np.repeat(losses, 5, axis=0), design=design)
    >>> cvstats.model_confidence_set(cube).members
    ['model0', 'model1']
    """
    if statistic not in MCS_STATISTICS:
        raise ArgumentError(
            f"`statistic` must be one of {list(MCS_STATISTICS)} (T_R or T_max of Hansen, Lunde "
            f"& Nason 2011), got {statistic!r}."
        )
    n_boot = check_int("n_boot", n_boot, 100)
    alpha = validate_alpha(alpha)
    losses, repeats = candidate_losses(cube, "The model confidence set")
    draws, units, unit = _bootstrap_units(losses, n_boot, seed)
    out = mcs(losses.values, draws, units, statistic)
    mean_loss = losses.mean(EXAMPLE).reset_coords(drop=True)
    return MCSResult(
        loss=str(cube.name),
        mean_loss=mean_loss,
        pvalue=mean_loss.copy(data=out.pvalue),
        in_set=mean_loss.copy(data=out.pvalue > alpha),
        step=mean_loss.copy(data=out.step),
        statistic=statistic,
        alpha=alpha,
        n_boot=n_boot,
        n_examples=losses.sizes[EXAMPLE],
        n_units=draws.shape[1],
        n_repeats=repeats,
        unit=unit,
    )


def cv_confidence_set(
    cube: xr.DataArray,
    *,
    alpha: float = 0.05,
    n_boot: int = 1000,
    seed: int | np.random.Generator | None = 0,
) -> CVCResult:
    """Find the candidates not shown worse than the best: cross-validation with confidence.

    Lei (2020, JASA 115, "Cross-validation with confidence", §3, Algorithm 1):
    each candidate ``m`` is tested against "``m`` is the best" with the largest
    standardized mean loss difference ``max_j sqrt(n) μ̂_mj / σ̂_mj`` over the
    other candidates, calibrated by a Gaussian multiplier bootstrap of the
    per-example differences centred within their folds
    (:func:`cvstats.kernels.cvc.cvc_pvalues`); the set keeps the candidates
    whose test does not reject at ``alpha`` and contains the best one with
    probability at least ``1 - alpha`` (asymptotically). On a cube with a
    ``group`` coordinate the examples of a group share their multiplier. See
    docs/after-a-search.md.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube with the candidates on ``model`` (at least two) and a K-fold
        main block of one repeat; dims ``(split, example, model)``. A smaller
        loss is better.
    alpha : float, default 0.05
        The set's level is ``1 - alpha``.
    n_boot : int, default 1000
        Bootstrap replications (at least 100).
    seed : int, numpy.random.Generator or None, default 0
        Seed of the Gaussian multipliers.

    Returns
    -------
    CVCResult
        The p-value of each candidate, whether it is in the set, its mean loss.

    Raises
    ------
    CubeError
        A score cube (per-example losses are needed).
    ArgumentError
        One candidate, candidates with the same loss on every example, extra
        dims, a bad ``n_boot`` or ``alpha``.
    DesignError
        The main block is not a K-fold, or is a repeated one (Lei's test is
        for one V-fold split; select one repeat).

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> design = cvstats.designs.kfold(100, K=5, seed=0)
    >>> rng = np.random.default_rng(1)
    >>> losses = rng.random((1, 100, 3)) + [0.0, 0.02, 0.6]
    >>> cube = cvstats.from_arrays(np.repeat(losses, 5, axis=0), design=design)
    >>> sorted(cvstats.cv_confidence_set(cube).members)
    ['model0', 'model1']
    """
    n_boot = check_int("n_boot", n_boot, 100)
    alpha = validate_alpha(alpha)
    method = "Cross-validation with confidence"
    losses, repeats = candidate_losses(cube, method)
    if repeats > 1:
        raise DesignError(
            f"{method} (Lei 2020) tests on one V-fold split, but the cube's main block has "
            f"{repeats} repeats; select one, e.g. cube.isel(split=cube['repeat'].values == 0)."
        )
    main = cube.isel({SPLIT: block_positions(cube, "main", method)})
    tested = main.notnull().any(MODEL).transpose(SPLIT, EXAMPLE).values
    fold = main["fold"].values[np.argmax(tested, axis=0)]  # the fold testing each example
    units, n_units, unit = _units(losses)
    zeta = np.random.default_rng(seed).standard_normal((n_boot, n_units))
    if units is not None:
        zeta = zeta[:, units]
    pvalue = cvc_pvalues(losses.values, fold, zeta)
    mean_loss = losses.mean(EXAMPLE).reset_coords(drop=True)
    return CVCResult(
        loss=str(cube.name),
        mean_loss=mean_loss,
        pvalue=mean_loss.copy(data=pvalue),
        in_set=mean_loss.copy(data=pvalue > alpha),
        alpha=alpha,
        n_boot=n_boot,
        n_examples=losses.sizes[EXAMPLE],
        n_units=n_units,
        n_folds=int(np.unique(fold).size),
        unit=unit,
    )
