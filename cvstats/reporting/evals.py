"""Evaluations of fixed models: means, paired differences and plans (Miller, 2024).

The models are fixed (already trained); the benchmark's questions are a
sample of a population of questions, and the target is each model's mean
score on that population (Miller, 2024, "Adding error bars to evals",
arXiv:2411.00640). On a cube read by :func:`cvstats.from_evals`:

* :func:`eval_mean` — each model's mean score, its standard error and interval;
* :func:`eval_difference` — the paired difference of every pair of models
  (:func:`cvstats.pairwise`), p-values adjusted over the pairs as
  :func:`cvstats.compare` adjusts them (Holm by default);
* :func:`plan_eval` — how many questions (and generations) a target interval
  interval half-width or power needs, from a pilot's variance components.

Each question's generations are averaged first; the standard error is
clustered when the cube has a ``group`` coordinate (the formulas:
:mod:`cvstats.kernels.evals`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats
import xarray as xr

from cvstats.checks import validate_alpha
from cvstats.cube.evals import GROUP, SCORE_ATTR, SCORE_DIRECTION_ATTR, is_eval_cube
from cvstats.cube.formula import pairwise
from cvstats.cube.schema import CONTRAST, CORE_DIMS, EXAMPLE, MODEL, SPLIT
from cvstats.cube.validation import validate
from cvstats.errors import ArgumentError, CvstatsTypeError
from cvstats.kernels.cluster import MIN_GROUPS
from cvstats.kernels.evals import EvalMoments, eval_moments
from cvstats.reporting.multiplicity import adjust_pvalues, check_adjust
from cvstats.results.base import bounds
from cvstats.results.evals import EvalPlan, EvalResult

__all__ = ["INTERVALS", "eval_contrasts", "eval_difference", "eval_mean", "plan_eval"]

#: The intervals of :func:`eval_mean` (:func:`eval_difference` takes ``"t"`` and ``"bootstrap"``).
INTERVALS = ("t", "clopper-pearson", "wilson", "bootstrap")
_EXACT = {"clopper-pearson": "beta", "wilson": "wilson"}  # proportion_confint's names


def _eval_cube(cube: Any) -> tuple[xr.DataArray, np.ndarray | None, float]:
    """Validate an evals cube; return it, its questions' cluster codes and the score's sign."""
    if not isinstance(cube, xr.DataArray):
        raise CvstatsTypeError(
            f"`cube` must be a cube read by cvstats.from_evals, got {type(cube).__name__}."
        )
    validate(cube)
    if not is_eval_cube(cube):
        raise ArgumentError(
            f"`cube` has design {cube.attrs.get('design')!r}: the evaluations of fixed models "
            "need a cube read by cvstats.from_evals (a table of answers); for learners "
            "evaluated by resampling use cvstats.compare."
        )
    if tuple(cube.dims) != CORE_DIMS:
        raise ArgumentError(
            f"`cube` has dims {list(cube.dims)}; these functions take one benchmark, dims "
            f"{list(CORE_DIMS)}: select one element of the extra dims (cube.isel(...))."
        )
    codes = None
    if GROUP in cube.coords:
        codes = pd.factorize(np.asarray(cube[GROUP].values))[0]
    sign = -1.0 if cube.attrs[SCORE_DIRECTION_ATTR] else 1.0
    return cube, codes, sign


def _check_interval(interval: Any, allowed: Sequence[str]) -> str:
    if not isinstance(interval, str) or interval not in allowed:
        raise ArgumentError(f"`interval` must be one of {list(allowed)}, got {interval!r}.")
    return interval


def _t_interval(m: EvalMoments, alpha: float) -> tuple[float, float]:
    half = float(scipy.stats.t.ppf(1 - alpha / 2, m.df)) * m.stderr
    return m.estimate - half, m.estimate + half


def _bootstrap_interval(
    scores: np.ndarray, codes: np.ndarray | None, alpha: float, n_resamples: int, seed: Any
) -> tuple[float, float]:
    """BCa bootstrap interval of the mean, resampling questions or whole clusters.

    Questions (their means over generations) are resampled with replacement;
    with clusters, whole clusters are (the cluster bootstrap: Field & Welsh,
    2007, "Bootstrapping clustered data", JRSS-B 69(3)), the statistic being
    the ratio of the resampled clusters' sums to their sizes. Efron's (1987)
    BCa interval, by :func:`scipy.stats.bootstrap`.
    """
    means = scores.mean(axis=0)
    if np.ptp(means) == 0:  # every resample has the same mean: the interval is that point
        return float(means[0]), float(means[0])
    if codes is None:
        data: tuple[np.ndarray, ...] = (means,)

        def statistic(x: np.ndarray, axis: int) -> np.ndarray:
            return np.mean(x, axis=axis)

        paired = False
    else:
        data = (np.bincount(codes, weights=means), np.bincount(codes).astype(float))

        def statistic(sums: np.ndarray, sizes: np.ndarray, axis: int) -> np.ndarray:  # type: ignore[misc]
            return np.sum(sums, axis=axis) / np.sum(sizes, axis=axis)

        paired = True
    res = scipy.stats.bootstrap(
        data,
        statistic,
        paired=paired,
        vectorized=True,
        confidence_level=1 - alpha,
        n_resamples=n_resamples,
        method="BCa",
        rng=np.random.default_rng(seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _exact_interval(
    scores: np.ndarray, codes: np.ndarray | None, alpha: float, method: str, mu0: float | None
) -> tuple[float, float, float]:
    """Clopper–Pearson or Wilson interval of a proportion, and the matching test's p-value."""
    from statsmodels.stats.proportion import proportion_confint, proportions_ztest

    n_gen, n_q = scores.shape
    if n_gen != 1 or codes is not None or not np.isin(scores, (0.0, 1.0)).all():
        raise ArgumentError(
            f"`interval` = {method!r} is a binomial interval: it needs one 0/1 answer per "
            f"question (this cube has {n_gen} generation(s), "
            f"{'clusters' if codes is not None else 'no clusters'}, "
            f"{'0/1' if np.isin(scores, (0.0, 1.0)).all() else 'non-0/1'} scores); use "
            "interval='t' or 'bootstrap', which average generations and cluster."
        )
    count = int(scores.sum())
    low, high = proportion_confint(count, n_q, alpha=alpha, method=_EXACT[method])
    if mu0 is None:
        return float(low), float(high), math.nan
    if method == "clopper-pearson":
        p = scipy.stats.binomtest(count, n_q, mu0).pvalue
    else:  # Wilson's interval inverts the score test
        p = proportions_ztest(count, n_q, value=mu0, prop_var=mu0)[1]
    return float(low), float(high), float(p)


def _result(
    kind: str,
    cube: xr.DataArray,
    units: xr.DataArray,
    rows: list[tuple[EvalMoments, tuple[float, float], float]],
    *,
    alpha: float,
    mu0: float | None,
    interval: str,
    adjust: str | None,
    codes: np.ndarray | None,
) -> EvalResult:
    """Assemble an :class:`EvalResult` over the unit dim ``units``."""
    dim = str(units.dims[0])

    def over(values: Sequence[float]) -> xr.DataArray:
        return xr.DataArray(np.asarray(values, dtype=float), dims=(dim,), coords={dim: units})

    moments = [r[0] for r in rows]
    field = {name: over([getattr(m, name) for m in moments]) for name in EvalMoments._fields}
    pvalue = over([r[2] for r in rows])
    adjusted = pvalue
    if adjust is not None and mu0 is not None:
        adjusted, _ = adjust_pvalues(pvalue, None, adjust, alpha)
    statistic = (field["estimate"] - (math.nan if mu0 is None else mu0)) / field["stderr"]
    ci = bounds(over([r[1][0] for r in rows]), over([r[1][1] for r in rows]), alpha=alpha)
    score = str(cube.attrs[SCORE_ATTR])
    return EvalResult(
        kind=kind,
        title="Mean score of fixed models" if kind == "mean" else "Paired differences of models",
        loss=score,
        greater_is_better=bool(cube.attrs[SCORE_DIRECTION_ATTR]),
        statistic=statistic,
        pvalue=pvalue,
        pvalue_adjusted=adjusted,
        ci=ci,
        interval_method=interval,
        alpha=alpha,
        mu0=math.nan if mu0 is None else float(mu0),
        adjust="none" if adjust is None or mu0 is None else adjust,
        n_questions=cube.sizes[EXAMPLE],
        n_generations=cube.sizes[SPLIT],
        n_clusters=0 if codes is None else int(codes.max()) + 1,
        **field,
    )


def _rows(
    values: xr.DataArray,
    codes: np.ndarray | None,
    *,
    alpha: float,
    mu0: float | None,
    interval: str,
    n_resamples: int,
    seed: Any,
) -> list[tuple[EvalMoments, tuple[float, float], float]]:
    """Return ``(moments, interval, p-value)`` of each unit of ``values`` (scores, last dim)."""
    unit = values.dims[-1]
    rows = []
    for label in values[unit].values:
        x = values.sel({unit: label}).transpose(SPLIT, EXAMPLE).values
        m = eval_moments(x, codes)
        if interval in _EXACT:
            low, high, p = _exact_interval(x, codes, alpha, interval, mu0)
            rows.append((m, (low, high), p))
            continue
        ci = (
            _t_interval(m, alpha)
            if interval == "t"
            else _bootstrap_interval(x, codes, alpha, n_resamples, seed)
        )
        rows.append((m, ci, _t_pvalue(m, mu0)))
    return rows


def _t_pvalue(m: EvalMoments, mu0: float | None) -> float:
    if mu0 is None:
        return math.nan
    return float(2 * scipy.stats.t.sf(abs((m.estimate - mu0) / m.stderr), m.df))


def _check_resamples(n_resamples: Any) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 100:
        raise ArgumentError(f"`n_resamples` must be an int >= 100, got {n_resamples!r}.")


def eval_mean(
    cube: xr.DataArray,
    *,
    alpha: float = 0.05,
    mu0: float | None = None,
    interval: str = "t",
    n_resamples: int = 9999,
    seed: int | None = 0,
) -> EvalResult:
    """Return each fixed model's mean score on a benchmark, its standard error and interval.

    Each question's generations are averaged first; the variance of one
    generation within a question (``var_within``) is reported apart from the
    variance between questions (``var_between``) (Miller, 2024, "Adding error
    bars to evals", arXiv:2411.00640, on resampling answers). The standard
    error is clustered when the cube has a ``group`` coordinate
    (:mod:`cvstats.kernels.evals`; statsmodels' cluster-robust variance).

    Parameters
    ----------
    cube : xarray.DataArray
        A cube read by :func:`cvstats.from_evals`.
    alpha : float, default 0.05
        Level of the interval (``1 - alpha``).
    mu0 : float, optional
        A score to test against, two-sided (``pvalue``); None: no test.
    interval : {"t", "clopper-pearson", "wilson", "bootstrap"}, default "t"
        ``"t"``: ``estimate ± t(df) · stderr``, df = clusters - 1 or
        questions - 1. ``"clopper-pearson"`` (exact, Clopper & Pearson, 1934)
        or ``"wilson"`` (Wilson, 1927): binomial intervals of statsmodels'
        ``proportion_confint``, for 0/1 scores with one generation and no
        clusters, where the CLT fails on small benchmarks or scores near 0
        or 1; their p-values are the exact binomial test and the score test.
        ``"bootstrap"``: BCa interval resampling questions, or whole clusters.
    n_resamples : int, default 9999
        Bootstrap resamples.
    seed : int, optional
        Seed of the bootstrap (default 0, reproducible).

    Returns
    -------
    EvalResult
        One row per model, in score units.

    Raises
    ------
    ArgumentError
        A cube not read by ``from_evals``; an unknown ``interval``; a binomial
        interval on scores that are not one 0/1 answer per unclustered question.
    DesignError
        Fewer than 2 questions, or fewer than
        :data:`~cvstats.kernels.cluster.MIN_GROUPS` clusters.

    Examples
    --------
    >>> import pandas as pd, cvstats
    >>> table = pd.DataFrame({"item": [7, 8, 9, 10], "model": "m", "ok": [1, 1, 0, 1]})
    >>> cube = cvstats.from_evals(table, question="item", model="model", score="ok",
    ...                           greater_is_better=True)
    >>> res = cvstats.eval_mean(cube, interval="wilson")
    >>> res.estimate.values.tolist()
    [0.75]
    """
    alpha = validate_alpha(alpha)
    interval = _check_interval(interval, INTERVALS)
    _check_resamples(n_resamples)
    cube, codes, sign = _eval_cube(cube)
    options = {"n_resamples": n_resamples, "seed": seed}
    rows = _rows(sign * cube, codes, alpha=alpha, mu0=mu0, interval=interval, **options)
    return _result(
        "mean",
        cube,
        cube[MODEL],
        rows,
        alpha=alpha,
        mu0=mu0,
        interval=interval,
        adjust=None,
        codes=codes,
    )


def eval_difference(
    cube: xr.DataArray,
    *,
    models: Sequence[str] | None = None,
    alpha: float = 0.05,
    mu0: float = 0.0,
    interval: str = "t",
    adjust: str | None = "holm",
    n_resamples: int = 9999,
    seed: int | None = 0,
) -> EvalResult:
    """Return the paired score difference of every pair of fixed models on a benchmark.

    Every model answers the same questions, so the difference is taken per
    question (Miller, 2024, "Adding error bars to evals", arXiv:2411.00640, on
    paired differences): the question-to-question variance the models share
    cancels. The pairs are those of :func:`cvstats.pairwise`; each question's
    generations are averaged first, ``var_within`` and ``var_between`` are the
    difference's within- and between-question variances, and the standard
    error is clustered when the cube has a ``group`` coordinate
    (:mod:`cvstats.kernels.evals`).

    Parameters
    ----------
    cube : xarray.DataArray
        A cube read by :func:`cvstats.from_evals`, with at least two models.
    models : sequence of str, optional
        The models to compare, in the order that sets each difference's sign
        (``"a - b"`` is a's score minus b's); default every model.
    alpha : float, default 0.05
        Level of the intervals and tests.
    mu0 : float, default 0.0
        The difference under the null (two-sided tests).
    interval : {"t", "bootstrap"}, default "t"
        ``"t"``: ``estimate ± t(df) · stderr``. ``"bootstrap"``: a paired BCa
        interval (Efron, 1987) resampling questions, or whole clusters
        (Field & Welsh, 2007), for small benchmarks where the CLT is in doubt.
        The p-value is the t test's either way.
    adjust : str or None, default "holm"
        ``multipletests`` method adjusting the p-values over the pairs
        (``pvalue_adjusted``), as :func:`cvstats.compare` does; None: none.
    n_resamples, seed : int
        The bootstrap's, as in :func:`eval_mean`.

    Returns
    -------
    EvalResult
        One row per pair ``"a - b"`` (dim ``contrast``), in score units.

    Raises
    ------
    ArgumentError
        As :func:`eval_mean`; an unknown ``adjust``; ``models`` naming an
        unknown model.
    DesignError
        As :func:`eval_mean`.

    Examples
    --------
    >>> import pandas as pd, cvstats
    >>> table = pd.DataFrame({"q": [1, 1, 2, 2, 3, 3, 4, 4], "llm": ["a", "b"] * 4,
    ...                       "correct": [1, 0, 1, 1, 0, 0, 1, 0]})
    >>> cube = cvstats.from_evals(table, question="q", model="llm", score="correct",
    ...                           greater_is_better=True)
    >>> float(cvstats.eval_difference(cube).estimate[0])
    0.5
    """
    alpha = validate_alpha(alpha)
    interval = _check_interval(interval, ("t", "bootstrap"))
    adjust = check_adjust(adjust)
    _check_resamples(n_resamples)
    cube, codes, sign = _eval_cube(cube)
    diffs = sign * pairwise(cube, models=models)
    rows = _rows(
        diffs, codes, alpha=alpha, mu0=mu0, interval=interval, n_resamples=n_resamples, seed=seed
    )
    unit = diffs.dims[-1]
    units = xr.DataArray(diffs[unit].values, dims=(unit,))
    return _result(
        "difference",
        cube,
        units,
        rows,
        alpha=alpha,
        mu0=mu0,
        interval=interval,
        adjust=adjust,
        codes=codes,
    )


def eval_contrasts(
    contrasts: xr.DataArray,
    *,
    alpha: float = 0.05,
    mu0: float = 0.0,
    adjust: str | None = "holm",
) -> EvalResult:
    """Return the t analysis of every contrast of fixed models' answers, in score units.

    What :func:`cvstats.compare` returns on a cube read by
    :func:`cvstats.from_evals`: the differences of a :func:`cvstats.pairwise`
    cube (or each model on its own) are linear in the models' scores, so each
    is a per-question score difference analysed
    as :func:`eval_difference` analyses a pair (generations averaged,
    clustered standard error, ``t`` interval, p-values adjusted over the
    contrasts), or, on the ``model`` dim, as :func:`eval_mean` does.

    Parameters
    ----------
    contrasts : xarray.DataArray
        Dims ``(split, example, contrast | model)`` of a cube read by
        :func:`cvstats.from_evals` (its attrs kept), in the cube's units
        (minus the score when greater is better).
    alpha : float, default 0.05
        Level of the intervals and tests.
    mu0 : float, default 0.0
        The null value in the cube's units, as :func:`cvstats.compare` takes
        it (turned to score units with the score's direction).
    adjust : str or None, default "holm"
        ``multipletests`` method over the contrasts (not used on ``model``).

    Returns
    -------
    EvalResult
        One row per contrast (``kind="difference"``) or model (``kind="mean"``).

    Raises
    ------
    ArgumentError
        If `contrasts` is not of a cube read by ``from_evals``, has extra dims,
        or holds contrasts other than differences ``"a - b"`` (a formula's
        coding, whose intercept is a model's level).
    DesignError
        Fewer than 2 questions, or fewer than
        :data:`~cvstats.kernels.cluster.MIN_GROUPS` clusters.
    """
    alpha = validate_alpha(alpha)
    adjust = check_adjust(adjust)
    unit = MODEL if MODEL in contrasts.dims else CONTRAST
    if not is_eval_cube(contrasts) or set(contrasts.dims) != {SPLIT, EXAMPLE, unit}:
        raise ArgumentError(
            f"`contrasts` must be the contrasts of one benchmark read by cvstats.from_evals, "
            f"dims {[SPLIT, EXAMPLE, CONTRAST]}, got dims {list(contrasts.dims)} and design "
            f"{contrasts.attrs.get('design')!r}; select one element of the extra dims "
            "(cube.isel(...))."
        )
    labels = [str(c) for c in contrasts[unit].values]
    if unit == CONTRAST and not all(" - " in c for c in labels):
        raise ArgumentError(
            f"the contrasts {labels} are not differences of two models ('a - b'): on fixed "
            "models' answers compare reads each model's score (cvstats.compare(cube)) or the "
            "difference of every pair (cvstats.compare(cvstats.pairwise(cube))); a formula's "
            "coding mixes a model's level with differences."
        )
    codes = None
    if GROUP in contrasts.coords:
        codes = pd.factorize(np.asarray(contrasts[GROUP].values))[0]
    sign = -1.0 if contrasts.attrs[SCORE_DIRECTION_ATTR] else 1.0
    values = (sign * contrasts).transpose(SPLIT, EXAMPLE, unit)
    null = sign * float(mu0) + 0.0  # 0.0: no negative zero in the result
    rows = _rows(values, codes, alpha=alpha, mu0=null, interval="t", n_resamples=100, seed=0)
    units = xr.DataArray(values[unit].values, dims=(unit,))
    return _result(
        "mean" if unit == MODEL else "difference",
        contrasts,
        units,
        rows,
        alpha=alpha,
        mu0=null,
        interval="t",
        adjust=None if unit == MODEL else adjust,
        codes=codes,
    )


def _positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    ok = isinstance(value, int | float | np.floating | np.integer) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        what = "a finite number >= 0" if allow_zero else "a finite number > 0"
        raise ArgumentError(f"`{name}` must be {what}, got {value!r}.")
    return float(value)


def _questions_for(
    var: float,
    alpha: float,
    half_width: float | None,
    effect: float | None,
    power: float,
    cap: int,
    per_cluster: float,
    fewest: int,
) -> int:
    """Smallest number of questions (>= `fewest`) reaching the half-width or power (t reference).

    The t reference has ``C - 1`` degrees of freedom, ``C = ceil(q / per_cluster)``
    clusters (``q - 1`` for independent questions, ``per_cluster = 1``).
    """

    def df(q: int) -> int:
        return max(math.ceil(q / per_cluster) - 1, 1)

    if var == 0:  # no variance: the smallest benchmark with a standard error
        return fewest
    z = scipy.stats.norm.ppf(1 - alpha / 2)
    if half_width is not None:
        start = z**2 * var / half_width**2

        def reached(q: int) -> bool:
            return bool(scipy.stats.t.ppf(1 - alpha / 2, df(q)) * math.sqrt(var / q) <= half_width)
    else:
        assert effect is not None
        start = (z + scipy.stats.norm.ppf(power)) ** 2 * var / effect**2

        def reached(q: int) -> bool:
            crit = scipy.stats.t.ppf(1 - alpha / 2, df(q))
            nc = abs(effect) / math.sqrt(var / q)
            got = scipy.stats.nct.sf(crit, df(q), nc) + scipy.stats.nct.cdf(-crit, df(q), nc)
            return bool(got >= power)

    q = max(fewest, math.ceil(start))
    while not reached(q):
        q += 1
        if q > cap:
            raise ArgumentError(
                f"the target needs more than `max_questions` = {cap} questions; relax the "
                "target or raise `max_questions`."
            )
    return q


def plan_eval(
    pilot: EvalResult | None = None,
    *,
    var_between: float | None = None,
    var_within: float | None = None,
    design_effect: float = 1.0,
    cluster_size: float = 1.0,
    target_width: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    generations: Sequence[int] = (1,),
    alpha: float = 0.05,
    max_questions: int = 10**7,
) -> EvalPlan:
    """Return how many questions (and generations) a benchmark needs for a half-width or power.

    With ``G`` generations per question, the variance of a question's mean is
    ``σ²_b + σ²_w / G`` (Miller, 2024, "Adding error bars to evals",
    arXiv:2411.00640, on resampling answers and on power analysis), times the
    design effect of clustering (Kish, 1965, *Survey Sampling*), so the
    standard error with ``Q`` questions is ``sqrt(deff (σ²_b + σ²_w / G) / Q)``.
    The plan is the smallest ``Q`` whose t interval (df: clusters - 1, or
    ``Q - 1``) has a half-width at most ``target_width`` (as :func:`cvstats.plan`'s),
    or whose two-sided t test at level ``alpha`` has power ``power`` against
    ``effect`` (noncentral t, :data:`scipy.stats.nct`). A clustered plan (a
    pilot with clusters, or ``cluster_size > 1``) has at least
    :data:`~cvstats.kernels.cluster.MIN_GROUPS` clusters, the fewest the
    clustered standard error accepts.

    Parameters
    ----------
    pilot : EvalResult, optional
        A pilot's :func:`eval_mean` or :func:`eval_difference`: its
        ``var_between`` (clipped at 0), ``var_within`` and design effect
        ``(stderr / stderr_iid)²``, per row. Otherwise give the components.
    var_between, var_within : float, optional
        The components, without a pilot (``var_within`` may be 0; needed for
        more than one generation).
    design_effect : float, default 1.0
        Without a pilot: variance inflation by clustering (>= 1 usually).
    cluster_size : float, default 1.0
        Without a pilot: questions per cluster, which sets the clusters'
        count and so the t reference's degrees of freedom (clusters - 1), and
        the fewest questions (``MIN_GROUPS · cluster_size``). A pilot gives
        its own (questions / clusters).
    target_width : float, optional
        Target half-width of the ``1 - alpha`` interval, in the score's units.
    effect : float, optional
        Difference the test should detect (give ``target_width`` or ``effect``).
    power : float, default 0.8
        Target power, with ``effect``.
    generations : sequence of int, default (1,)
        Numbers of generations per question to plan for.
    alpha : float, default 0.05
        Level.
    max_questions : int, default 10**7
        Refuse a plan beyond this.

    Returns
    -------
    EvalPlan
        Over ``generations`` (and the pilot's ``model`` or ``contrast``).

    Raises
    ------
    ArgumentError
        Neither or both of ``target_width`` and ``effect``; a pilot and components
        both given, or neither; a non-positive target; more than one
        generation asked with ``var_within`` unknown (a pilot of one generation).

    Examples
    --------
    >>> import cvstats
    >>> plan = cvstats.plan_eval(var_between=0.2, var_within=0.05, target_width=0.05,
    ...                          generations=[1, 4])
    >>> plan.questions.values.tolist()
    [387, 329]
    """
    alpha = validate_alpha(alpha)
    if (target_width is None) == (effect is None):
        raise ArgumentError(
            "give one target: `target_width` (the interval's half-width) or `effect` (power)."
        )
    half_width = None if target_width is None else _positive("target_width", target_width)
    target_effect = None if effect is None else _positive("effect", abs(effect))
    if not isinstance(power, float) or not 0 < power < 1:
        raise ArgumentError(f"`power` must be a float in (0, 1), got {power!r}.")
    gens = [int(g) for g in generations]
    if not gens or any(g < 1 for g in gens) or len(set(gens)) < len(gens):
        raise ArgumentError(f"`generations` must be distinct ints >= 1, got {generations!r}.")
    if pilot is not None:
        if not isinstance(pilot, EvalResult):
            raise CvstatsTypeError(
                f"`pilot` must be an EvalResult (eval_mean, eval_difference), got "
                f"{type(pilot).__name__}."
            )
        if var_between is not None or var_within is not None:
            raise ArgumentError("give a `pilot` or `var_between`/`var_within`, not both.")
        between = pilot.var_between.clip(min=0)
        within = pilot.var_within
        deff = (pilot.stderr / pilot.stderr_iid) ** 2
        per_cluster = pilot.n_questions / pilot.n_clusters if pilot.n_clusters else 1.0
        clustered = bool(pilot.n_clusters)
    else:
        if var_between is None:
            raise ArgumentError(
                "give a `pilot`, or the components `var_between` and `var_within`."
            )
        between = xr.DataArray(_positive("var_between", var_between, allow_zero=True))
        known = var_within is not None
        within = xr.DataArray(
            _positive("var_within", var_within, allow_zero=True) if known else math.nan
        )
        deff = xr.DataArray(_positive("design_effect", design_effect))
        per_cluster = max(_positive("cluster_size", cluster_size), 1.0)
        clustered = per_cluster > 1
    # a clustered benchmark is analysed only with MIN_GROUPS clusters (cluster_stderr);
    # round: 10 * 2.3 is 23.000000000000004 in floats
    fewest = math.ceil(round(MIN_GROUPS * per_cluster, 6)) if clustered else 2
    if np.isnan(within.values).any() and gens != [1]:
        raise ArgumentError(
            "`var_within` is unknown (a pilot with one generation, or not given): plan for "
            "`generations=[1]`, or run the pilot with several generations."
        )
    g = xr.DataArray(gens, dims=("generations",), coords={"generations": gens})
    var = deff * (between + within.fillna(0) / g)
    flat = var.transpose(..., "generations")
    counts = [
        _questions_for(
            float(v), alpha, half_width, target_effect, power, max_questions, per_cluster, fewest
        )
        for v in flat.values.ravel()
    ]
    questions = flat.copy(data=np.reshape(counts, flat.shape).astype(np.int64))
    target = (
        f"half-width {half_width:g}"
        if half_width is not None
        else f"power {power:g} at {target_effect:g}"
    )
    return EvalPlan(
        questions=questions,
        stderr=np.sqrt(flat / questions),
        var_between=between,
        var_within=within,
        design_effect=deff,
        target=target,
        alpha=alpha,
    )
