"""Plan an experiment from a pilot: how many splits, for what width and power (docs/theory.md §10).

Before the fits are paid for: from a pilot cube of a few random splits, the
split means' sample variance ``S²`` estimates ``E[S²] = σ1 (1 - ρ)`` (Lemma 1,
docs/theory.md §2), and with ``ρ`` (the test's own ``ρ0``, ``rho=``, or
:func:`~cvstats.across.rho.fit_rho` across the pilot's datasets) Lemma 1 and
Lemma 2 give, for every number of splits ``J``, the expected half-width of the
corrected resampled t's interval, the power of its test to detect a given
difference and the fits it costs. :func:`plan` returns them with the smallest
``J`` meeting a target width and/or power within a budget of fits, as a
:class:`~cvstats.results.plan.PlanResult`.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
import xarray as xr
from scipy import special, stats

from cvstats.across.rho import fit_rho
from cvstats.cube import is_score, unit_dim, validate
from cvstats.cube.apply import apply_kernel
from cvstats.cube.checks import validate_alpha
from cvstats.cube.compact import SLOT
from cvstats.cube.formula import pairwise
from cvstats.cube.schema import EXAMPLE, MODEL, SPLIT
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError, DesignError
from cvstats.inference.blocks import (
    J_DIM,
    block_positions,
    block_sizes,
    kfold_layout,
    main_means,
    split_means,
)
from cvstats.inference.common import check_not_time_ordered
from cvstats.results.base import BOUNDS, CI_BOUND
from cvstats.results.plan import PlanResult

__all__ = ["plan", "PLANNED_METHODS", "DEFAULT_J", "SEARCH_LIMIT"]

#: The tests :func:`plan` plans for, and the title of their plans.
PLANNED_METHODS = {
    "corrected_resampled_t": "Plan for the corrected resampled t",
    "corrected_repeated_kfold_t": "Plan for the corrected repeated k-fold t",
}
#: The design reported when no ``J`` is asked and no target is met (Nadeau & Bengio, 2000, §4:
#: beyond 15 splits the power of the corrected resampled t grew little in their simulations).
DEFAULT_J = 15
#: Most splits searched for the smallest design meeting a target, without a budget.
SEARCH_LIMIT = 10_000
# the extra dim of independent datasets (as for fit_rho)
_DATASET = "dataset"
# the default grid: J = 2..50 (random splits), or K, 2K, ... up to 50 folds (10 repeats at least)
_GRID_MAX = 50
_NAME = "plan"


def _curves(
    J: np.ndarray,
    s2: np.ndarray,
    k: np.ndarray,
    *,
    c: float,
    alpha: float,
    effect: float | None,
) -> tuple[np.ndarray, ...]:
    """Return the plan's numbers for ``J`` splits (docs/theory.md §10), elementwise.

    ``s2 = E[S²] = σ1 (1 - ρ)``, ``k = ρ/(1 - ρ)`` (the true one), ``c`` the
    test's ``ρ0/(1 - ρ0)`` (``n2/n1``, or ``1/(K-1)``). Returns the half-width at
    the expected variance estimate, the mean half-width under Lemma 2, the power
    to detect ``effect``, the size and the political ratio.
    """
    J, s2, k = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (J, s2, k)))
    df = J - 1.0
    crit = stats.t.isf(alpha / 2, df)
    half = crit * np.sqrt((1.0 / J + c) * s2)
    c4 = np.sqrt(2.0 / df) * np.exp(special.gammaln(J / 2) - special.gammaln(df / 2))
    ratio = (1.0 / J + k) / (1.0 / J + c)
    q = crit / np.sqrt(ratio)
    size = 2.0 * stats.t.sf(q, df)
    if effect is None:
        power = np.full(J.shape, np.nan)
    else:
        lam = abs(effect) / np.sqrt(s2 * (1.0 / J + k))
        # P(T' < -q) for noncentrality λ is P(T' > q) for -λ (symmetry)
        power = _upper_tail(q, df, lam) + _upper_tail(q, df, -lam)
    return half, c4 * half, np.clip(power, 0.0, 1.0), size, ratio


def _upper_tail(q: np.ndarray, df: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Return ``P(T' > q)`` for a noncentral ``t'_df(λ)``, robust far in the tails.

    scipy's (Boost's) series may stop short of its tolerance far in a tail (``ρ``
    well below ``ρ0``, ``J`` in the thousands, a large ``λ``) and warn, or give
    NaN; the value is then ~0 or ~1 all the same, and a NaN is replaced by the
    normal approximation ``Φ((λ - q)/sqrt(1 + q²/(2 df)))``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.asarray(stats.nct.sf(q, df, lam), dtype=float)
    bad = ~np.isfinite(out)
    if np.any(bad):
        approx = stats.norm.cdf((lam - q) / np.sqrt(1.0 + q**2 / (2.0 * df)))
        out = np.where(bad, approx, out)
    return out


def _limits(
    s2: np.ndarray, k: np.ndarray, *, c: float, alpha: float, effect: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """Half-width and power as ``J → ∞`` (docs/theory.md §10).

    ``S² → E[S²]`` and ``μ̂_J → N(δ, σ1 ρ) = N(δ, k E[S²])``: the statistic tends to
    ``N(δ/sqrt(c E[S²]), k/c)`` against ``z_{1-α/2}``.
    """
    s2, k = np.broadcast_arrays(np.asarray(s2, dtype=float), np.asarray(k, dtype=float))
    z = stats.norm.isf(alpha / 2)
    half = z * np.sqrt(c * s2)
    if effect is None:
        return half, np.full(s2.shape, np.nan)
    m = abs(effect) / np.sqrt(c * s2)
    sd = np.sqrt(k / c)
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = stats.norm.sf((z - m) / sd) + stats.norm.cdf((-z - m) / sd)
    power = np.where(sd > 0, spread, (m > z).astype(float))
    return half, power


def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ArgumentError(f"`{name}` must be a finite real number, got {value!r}.")
    return float(value)


def _count(name: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ArgumentError(f"`{name}` must be an int >= {least}, got {value!r}.")
    return int(value)


def _check_targets(
    target_width: Any, effect: Any, power: Any, alpha: float
) -> tuple[float | None, float | None, float]:
    if target_width is not None:
        target_width = _real("target_width", target_width)
        if target_width <= 0:
            raise ArgumentError(
                f"`target_width` must be a positive half-width (in the loss's units), "
                f"got {target_width!r}."
            )
    if effect is not None:
        effect = _real("effect", effect)
        if effect == 0:
            raise ArgumentError(
                "`effect` must be a non-zero difference to detect (the power to detect 0 "
                "is the test's level)."
            )
    power = _real("power", power)
    if not alpha < power < 1:
        raise ArgumentError(
            f"`power` must lie strictly between `alpha` = {alpha:g} and 1, got {power!r}."
        )
    return target_width, effect, power


def _units(pilot: xr.DataArray) -> tuple[xr.DataArray, str]:
    """Return the cube the plan runs on: the pairwise contrasts of a cube of >= 2 models."""
    unit = unit_dim(pilot)
    if unit == MODEL and pilot.sizes.get(MODEL, 1) >= 2:
        models = [str(m) for m in pilot[MODEL].values]
        pairs = len(models) * (len(models) - 1) // 2
        what = "difference" if pairs == 1 else f"{pairs} pairwise differences"
        note = f"planned for the {what} of the models {models} (cvstats.pairwise)"
        return pairwise(pilot), note
    return pilot, ""


def _within_variance(units: xr.DataArray) -> xr.DataArray:
    """Mean over the main splits of the sample variance of their test losses (σ0 - σ3)."""
    pos = block_positions(units, "main", _NAME)
    main = units.isel({SPLIT: pos})
    over = SLOT if SLOT in main.dims else EXAMPLE
    return main.var(over, ddof=1, skipna=True).mean(SPLIT)


def _check_rho(rho: Any, like: xr.DataArray) -> xr.DataArray:
    if isinstance(rho, xr.DataArray):
        extra = [str(d) for d in rho.dims if d not in like.dims]
        if extra:
            raise ArgumentError(
                f"`rho` has dims {extra} that the plan does not have (its dims: "
                f"{[str(d) for d in like.dims]})."
            )
        values = np.asarray(rho.values, dtype=float)
        out = rho.astype(float)
    else:
        value = _real("rho", rho)
        values = np.asarray(value)
        out = xr.DataArray(value)
    if not np.all((values >= 0) & (values < 1)):
        raise ArgumentError(
            f"`rho` must lie in [0, 1) (a correlation of split means, docs/theory.md §2), got "
            f"{np.ravel(values)[:5].tolist()}."
        )
    return out


def _labels(arr: xr.DataArray) -> list[str]:
    dims = [d for d in arr.dims]
    if not dims:
        return []
    stacked = arr.stack(_unit=dims) if len(dims) > 1 else arr.rename({dims[0]: "_unit"})
    return [str(v) for v in stacked["_unit"].values]


def _first_met(J: xr.DataArray, met: xr.DataArray) -> xr.DataArray:
    """Return the smallest ``J`` where ``met`` holds (NaN where it never does)."""
    return J.astype(float).where(met).min("J")


def plan(
    pilot: xr.DataArray,
    *,
    target_width: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    budget_fits: int | None = None,
    method: str = "corrected_resampled_t",
    J: int | None = None,
    rho: float | xr.DataArray | None = None,
    n_test: int | None = None,
) -> PlanResult:
    """Plan an experiment from a pilot: width, power and cost against the number of splits.

    From the pilot's main block of ``J_p >= 2`` splits, ``S²`` (the sample
    variance of the split means) estimates ``E[S²] = σ1 (1 - ρ)`` without bias
    (Lemma 1, docs/theory.md §2). For ``J`` splits of the planned design and the
    corrected resampled t (docs/theory.md §4, method 6), the plan gives
    (docs/theory.md §10):

    * the half-width ``c_{J-1} sqrt((1/J + n2/n1) E[S²])`` of the ``1 - alpha``
      interval at the expected variance estimate, which is the root mean square
      of the half-width (``c_{J-1} = t_{J-1, 1-alpha/2}``); the mean half-width
      under Lemma 2 is ``c4(J)`` times it;
    * the power of the two-sided test at level ``alpha`` to detect a true
      difference ``effect``: under Lemma 2 the statistic is ``sqrt(PR)`` times a
      noncentral ``t_{J-1}`` with noncentrality
      ``effect / sqrt(σ1 (ρ + (1-ρ)/J))``, ``PR = (1/J + ρ/(1-ρ))/(1/J + n2/n1)``
      the political ratio (1 when ``ρ = ρ0``);
    * the fits per learner, ``J``;

    and the smallest ``J`` meeting ``target_width`` and/or the ``power`` to
    detect ``effect`` within ``budget_fits``. A target no design can meet is
    not an error: the plan says so, and why (within the budget, or at any ``J``:
    the half-width never falls below ``z_{1-alpha/2} sqrt(n2/n1 E[S²])``, since
    ``σ1 ρ`` does not shrink with more splits of the same data).

    Parameters
    ----------
    pilot : xarray.DataArray
        A loss cube or score cube (:func:`cvstats.from_scores`) with a main block
        of ``J_p >= 2`` splits of one test size, e.g. on
        ``cvstats.designs.resampled(n, n // 10, J=5)``. A cube of two or more models
        is planned for their pairwise differences (:func:`cvstats.pairwise`,
        which the result's ``note`` says); a contrast cube
        (:func:`cvstats.contrasts`) for its contrasts; a cube of one model for its
        level. Extra dims are kept, except ``dataset``: a ``dataset`` dim holds
        independent datasets of one problem (as for :func:`cvstats.fit_rho`), whose
        ``S²`` are pooled (averaged) and whose ``ρ`` comes from ``fit_rho``.
    target_width : float, optional
        The half-width wanted, in the loss's (or score's) units.
    effect : float, optional
        The true difference to detect (``n1μ_a - n1μ_b`` for a contrast); its sign
        does not matter (two-sided test).
    power : float, default 0.8
        The power wanted to detect ``effect``.
    alpha : float, default 0.05
        Level of the intervals (``1 - alpha``) and of the tests.
    budget_fits : int, optional
        Most fits per learner allowed.
    method : {"corrected_resampled_t", "corrected_repeated_kfold_t"}
        The test planned for. ``"corrected_repeated_kfold_t"`` (docs/theory.md §9.2)
        needs a k-fold pilot (:func:`cvstats.designs.kfold`) and plans
        ``J = K × repeats`` folds with ``ρ0 = 1/K`` and ``n2/n1 = 1/(K - 1)``.
    J : int, optional
        A number of splits to report on (for k-fold: of folds, a multiple of
        ``K``); default the smallest meeting the targets.
    rho : float or xarray.DataArray, optional
        The correlation ``ρ`` of two split means of the planned design, in
        ``[0, 1)`` (a DataArray over the units for one per contrast). Default:
        from ``fit_rho`` when the pilot has a ``dataset`` dim of two or more
        datasets (random splits), else the test's own ``ρ0`` (``n2/(n1 + n2)``,
        or ``1/K``), under which the test is exact (Lemma 2).
    n_test : int, optional
        The test size ``n2`` of the planned random splits (training size
        ``n1 = n1_p + n2_p - n2``); default the pilot's. A loss cube only: the
        within-split variance of its losses (``σ0 - σ3``) carries ``E[S²]`` from
        the pilot's ``n2`` to this one, assuming ``σ0 - σ3`` and ``σ3 - σ2`` do
        not change with the training size (docs/theory.md §10).

    Returns
    -------
    PlanResult
        Over ``J`` (the grid: 2 to 50, the ``J`` asked, the designs found and the
        budget's), ``contrast`` (or ``model``) and the pilot's extra dims
        (:class:`~cvstats.results.plan.PlanResult`); ``verdict()`` says it in words.

    Raises
    ------
    DesignError
        If the pilot's main block has fewer than 2 splits or splits of different
        test sizes, if its split means do not vary (zero ``S²``: nothing to plan
        from), if ``fit_rho`` gives ``ρ̂ >= 1``, or for a k-fold plan of a pilot
        that is not k-fold.
    ArgumentError
        For an unknown ``method``, a non-positive ``target_width``, a zero
        ``effect``, ``power`` outside ``(alpha, 1)``, a ``budget_fits`` below
        the smallest design, a ``J`` below 2 (or not a multiple of ``K``), a
        ``rho`` outside ``[0, 1)``, or an ``n_test`` that leaves no training example.
    CubeError
        For a pilot that is not a valid cube, or an ``n_test`` other than the
        pilot's on a score cube.
    CvstatsTypeError
        For a pilot that is not an xarray.DataArray.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> d = cvstats.designs.resampled(100, 10, J=5, seed=0)
    >>> rng = np.random.default_rng(0)
    >>> losses = rng.normal(size=(5, 100, 2))
    >>> pilot = cvstats.from_arrays(losses, design=d, models=["a", "b"], name="sq")
    >>> res = cvstats.plan(pilot, target_width=0.3)
    >>> res.J_plan.values.tolist()
    [7.0]
    >>> print(res.verdict())
    J = 7 splits (7 fits per learner) give a 95% half-width of 0.29 for a − b, assuming
    ρ = ρ0 = n2/(n1 + n2) = 0.1; the target half-width 0.3 is met from J = 7.
    """
    if not isinstance(method, str) or method not in PLANNED_METHODS:
        raise ArgumentError(f"`method` must be one of {list(PLANNED_METHODS)}, got {method!r}.")
    alpha = validate_alpha(alpha)
    target_width, effect, power = _check_targets(target_width, effect, power, alpha)
    if not isinstance(pilot, xr.DataArray):
        raise CvstatsTypeError(
            f"`pilot` must be a cube (xarray.DataArray), got {type(pilot).__name__}."
        )
    validate(pilot)
    check_not_time_ordered(pilot, _NAME)
    units, note = _units(pilot)
    unit = unit_dim(units)
    score = is_score(units)

    # ------------------------------------------------------------------ the pilot
    means = main_means(split_means(units, ["main"], _NAME), _NAME, min_splits=2)
    sizes = block_sizes(units, "main", _NAME)
    if not sizes.equal:
        raise DesignError(
            f"plan needs a pilot whose main splits share one test size, but they test "
            f"{sizes.n2_min} to {sizes.n2_max} examples; draw the pilot with "
            "cvstats.designs.resampled(n, n_test, J=...)."
        )
    n = int(units.attrs["n"])
    n1_p, n2_p, J_p = sizes.n1, sizes.n2, sizes.n_splits
    s2_p = means.var(J_DIM, ddof=1)
    estimate = means.mean(J_DIM)
    df = J_p - 1
    n_datasets = int(s2_p.sizes.get(_DATASET, 0))
    if n_datasets:
        s2_p, estimate = s2_p.mean(_DATASET), estimate.mean(_DATASET)
        df *= n_datasets
    s2_p, estimate = s2_p.compute(), estimate.compute()
    estimate.attrs = dict(units.attrs)
    bad = ~(s2_p > 0)
    if bool(bad.any()):
        raise DesignError(
            "plan needs split means that vary across the pilot's splits, but their sample "
            f"variance S² is zero (or undefined) for {_labels(s2_p.where(bad, drop=True))}: "
            "with no variance there is nothing to plan from (identical models, or losses "
            "that do not depend on the split)."
        )

    # ------------------------------------------------------------------ the planned design
    kfold = method == "corrected_repeated_kfold_t"
    if kfold:
        K, _ = kfold_layout(units, "plan (corrected_repeated_kfold_t)")
        if n_test is not None:
            raise ArgumentError(
                "`n_test` applies to random splits only: a k-fold design tests n/K examples "
                "per fold."
            )
        n1, n2 = n1_p, n2_p
        c, rho0 = 1.0 / (K - 1), 1.0 / K
        step, smallest = K, K
    else:
        K = 0
        n2 = n2_p if n_test is None else _count("n_test", n_test, 1)
        n1 = n1_p + n2_p - n2
        if n1 < 1:
            raise ArgumentError(
                f"`n_test` = {n2} leaves no training example (the pilot's splits use "
                f"{n1_p + n2_p} of n = {n} examples)."
            )
        c, rho0 = n2 / n1, n2 / (n1 + n2)
        step, smallest = 1, 2
    s2 = s2_p
    if n2 != n2_p:
        if score:
            raise CubeError(
                f"`n_test` = {n2} differs from the pilot's test size {n2_p}, but a score cube "
                "holds no per-example losses from which to carry E[S²] to another test size "
                "(docs/theory.md §10); plan at the pilot's test size, or pilot with losses."
            )
        if n2_p < 2:
            raise DesignError(
                "`n_test` needs the within-split variance of the pilot's losses, which a test "
                "size of 1 does not give."
            )
        within = _within_variance(units)
        if n_datasets:
            within = within.mean(_DATASET)
        within = within.compute()
        between = (s2_p - within / n2_p).clip(min=0.0)
        s2 = between + within / n2
        note = "; ".join(
            p
            for p in (
                note,
                f"E[S²] carried from the pilot's n2 = {n2_p} to n2 = {n2} with the "
                "within-split variance of the losses",
            )
            if p
        )

    # ------------------------------------------------------------------ ρ
    if rho is not None:
        rho_used = _check_rho(rho, s2)
        k = rho_used / (1 - rho_used)
        source, assumption = "given", "as given"
    elif n_datasets >= 2 and not kfold:
        fit = fit_rho(units)
        rho_hat = fit["rho"].clip(min=0.0).compute()
        high = rho_hat >= 1
        if bool(high.any()):
            raise DesignError(
                f"fit_rho gives ρ̂ >= 1 for {_labels(rho_hat.where(high, drop=True))}: the "
                "split means of a dataset barely vary, so no number of splits reduces the "
                "variance; pass `rho=` to plan anyway."
            )
        # k = ρ/(1 - ρ) = σ2 / E[S²]: σ2 stays, E[S²] moves with n2
        k = rho_hat / (1 - rho_hat) * s2_p / s2
        rho_used = k / (1 + k)
        source, assumption = "fit_rho", f"fit_rho across {n_datasets} datasets"
    else:
        k = xr.DataArray(c)
        rho_used = xr.DataArray(rho0)
        source = "rho0"
        if kfold:
            assumption = f"ρ = ρ0 = 1/K = {rho0:.2g}"
        else:
            assumption = f"ρ = ρ0 = n2/(n1 + n2) = {rho0:.2g}"
        extra = []
        if score:
            extra.append(
                "for a score, ρ0 = n2/(n1 + n2) is a guess (docs/theory.md §9.8); pass rho= or "
                "pilot many datasets"
            )
        if n_datasets >= 2:
            extra.append(
                "ρ0 used: fit_rho's ρ̂ of a k-fold cube averages pairs of folds and depends on "
                "the number of repeats (docs/theory.md §9.2)"
            )
        note = "; ".join(p for p in (note, *extra) if p)
    k, rho_used = k.broadcast_like(s2), rho_used.broadcast_like(s2)
    sigma1 = s2 * (1 + k)  # σ1 = E[S²]/(1 - ρ)

    # ------------------------------------------------------------------ the search
    if J is not None:
        J = _count("J", J, smallest)
        if J % step:
            raise ArgumentError(f"`J` must be a multiple of K = {K} (J = K × repeats), got {J}.")
    budget_J = None
    if budget_fits is not None:
        budget_fits = _count("budget_fits", budget_fits, 1)
        budget_J = budget_fits // step * step
        if budget_J < smallest:
            raise ArgumentError(
                f"`budget_fits` = {budget_fits} does not pay for the smallest design "
                f"(J = {smallest}: {smallest} fits per learner)."
            )
    # the search ends at the budget, or at SEARCH_LIMIT splits (beyond, σ1 ρ dominates anyway)
    top = SEARCH_LIMIT * step if budget_J is None else min(budget_J, SEARCH_LIMIT * step)
    opts = {"c": c, "alpha": alpha, "effect": effect}

    def curves(values: np.ndarray, var: xr.DataArray) -> tuple[xr.DataArray, ...]:
        Js = xr.DataArray(values, dims="J", coords={"J": values})
        return apply_kernel(_curves, [Js, var, k], [[], [], []], 5, **opts)

    values = np.arange(smallest, top + 1, step)
    searched = xr.DataArray(values, dims="J", coords={"J": values})
    half, _, pwr, _, _ = curves(searched.values, s2)
    wide = half <= target_width if target_width is not None else None
    strong = pwr >= power if effect is not None else None
    nan = xr.full_like(s2, np.nan, dtype=float)
    J_width = _first_met(searched, wide) if wide is not None else nan
    J_power = _first_met(searched, strong) if strong is not None else nan
    if wide is not None or strong is not None:
        both = (wide if wide is not None else True) & (strong if strong is not None else True)
        J_plan = _first_met(searched, both)
    else:
        J_plan = nan
    if J is not None:
        J_chosen = xr.full_like(s2, J, dtype=np.int64)
    else:
        # no target met: the best the budget buys; no target: DEFAULT_J (within the budget)
        usual = -(-DEFAULT_J // step) * step
        if budget_J is None:
            fallback = usual
        elif target_width is None and effect is None:
            fallback = min(budget_J, usual)
        else:
            fallback = top
        J_chosen = J_plan.fillna(fallback).astype(np.int64)

    # ------------------------------------------------------------------ the grid
    default = np.arange(smallest, max(_GRID_MAX, 10 * step) + 1, step)
    found = [a.values[np.isfinite(a.values)] for a in (J_width, J_power, J_plan)]
    extra_J = [J_chosen.values.ravel(), *found, [J] if J is not None else [], [top]]
    grid = np.union1d(default, np.concatenate([np.asarray(v, dtype=float) for v in extra_J]))
    grid = grid[grid >= smallest].astype(np.int64)
    lo_q, hi_q = stats.chi2.isf(alpha / 2, df), stats.chi2.ppf(alpha / 2, df)
    half, mean_half, pwr, size, ratio = curves(grid, s2)
    half_lo, _, pwr_hi, _, _ = curves(grid, s2 * df / lo_q)
    half_hi, _, pwr_lo, _, _ = curves(grid, s2 * df / hi_q)
    n_fits = xr.DataArray(grid * 1, dims="J", coords={"J": grid})
    meets = xr.ones_like(half, dtype=bool)
    if target_width is not None:
        meets = meets & (half <= target_width)
    if effect is not None:
        meets = meets & (pwr >= power)
    if budget_fits is not None:
        meets = meets & (n_fits <= budget_fits)
    half_limit, power_limit = apply_kernel(_limits, [s2, k], [[], []], 2, **opts)

    order = ["J", unit, *[d for d in s2.dims if d != unit]]
    units_order = order[1:]

    def grid_da(a: xr.DataArray) -> xr.DataArray:
        return a.transpose(*order)

    def unit_da(a: xr.DataArray) -> xr.DataArray:
        return a.transpose(*[d for d in units_order if d in a.dims])

    def interval(low: xr.DataArray, high: xr.DataArray) -> xr.DataArray:
        out = xr.concat([grid_da(low), grid_da(high)], dim=CI_BOUND, coords="minimal")
        return out.assign_coords({CI_BOUND: np.array(BOUNDS)}).transpose(*order, CI_BOUND)

    return PlanResult(
        method=method,
        title=PLANNED_METHODS[method],
        loss=str(units.name),
        alpha=alpha,
        target_width=target_width,
        effect=effect,
        target_power=power,
        budget_fits=budget_fits,
        n=n,
        n1=n1,
        n2=n2,
        K=K,
        fits_per_split=1,
        pilot_splits=J_p,
        pilot_n2=n2_p,
        pilot_df=df,
        search_end=int(top),
        rho_source=source,
        assumption=assumption,
        note=note,
        n_fits=n_fits,
        half_width=grid_da(half),
        half_width_ci=interval(half_lo, half_hi),
        mean_half_width=grid_da(mean_half),
        power=grid_da(pwr),
        power_ci=interval(pwr_lo, pwr_hi),
        size=grid_da(size),
        political_ratio=grid_da(ratio),
        meets_target=grid_da(meets),
        pilot_estimate=unit_da(estimate),
        s2=unit_da(s2),
        rho=unit_da(rho_used),
        sigma1=unit_da(sigma1),
        half_width_limit=unit_da(half_limit),
        power_limit=unit_da(power_limit),
        J_width=unit_da(J_width),
        J_power=unit_da(J_power),
        J_plan=unit_da(J_plan),
        J_chosen=unit_da(J_chosen),
    )
