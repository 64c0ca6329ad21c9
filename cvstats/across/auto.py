"""The automatic choice of test across datasets, and the one report (``compare_datasets``).

Given a table of datasets × learners (one score per cell), :func:`choose_test`
decides as autorank does (Herbold 2020, JOSS 5(48):2173; Demšar 2006, §3 for
the tests) and says why:

1. **normality**: Shapiro–Wilk on each learner's scores over the datasets
   (:func:`scipy.stats.shapiro`), each at ``alpha / k`` (Bonferroni over the
   ``k`` learners);
2. **equal variances**: Bartlett's test when every learner passed
   (:func:`scipy.stats.bartlett`), else Levene's (:func:`scipy.stats.levene`,
   centred on the median), at ``alpha``;
3. **the test**: two learners → the paired t test (:func:`scipy.stats.ttest_rel`)
   when both passed, else the Wilcoxon signed-rank test
   (:func:`~cvstats.across.ranks.wilcoxon_test`); more → the repeated-measures
   ANOVA (statsmodels' ``AnovaRM``) with Tukey's HSD on the ANOVA's error term
   (:data:`scipy.stats.studentized_range`) when all passed and the variances
   are equal, else the
   Friedman test with the Nemenyi post-hoc test
   (:func:`~cvstats.across.ranks.friedman_test`).

:func:`compare_datasets` adds what a reviewer asks for: the ranking (its
direction read from the table or given, never assumed), the effect sizes
(:func:`~cvstats.across.ranks.effect_size`) and the Bayesian signed-rank
probabilities (:func:`~cvstats.across.bayes_datasets.bayesian_signed_rank_test`)
of the best-ranked learner against each other one, and the critical-difference
diagram. See docs/comparing-datasets.md for the worked examples and where
cvstats departs from autorank and baycomp.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd
import scipy
import xarray as xr

from cvstats.across.bayes_datasets import N_SAMPLES, bayesian_signed_rank_test
from cvstats.across.ranks import (
    DATASET_DIM,
    checked_table,
    direction_of,
    effect_size,
    friedman_test,
    rank_table,
    wilcoxon_test,
)
from cvstats.cube.checks import validate_alpha
from cvstats.errors import ArgumentError, CvstatsTypeError
from cvstats.results.auto import TEST_NAMES, ChosenTest, DatasetsComparison
from cvstats.results.ranks import FriedmanResult, WilcoxonResult

__all__ = ["MIN_DATASETS", "ChosenTest", "DatasetsComparison", "choose_test", "compare_datasets"]

#: Fewest datasets the choice accepts (autorank's minimum: below it the
#: Shapiro–Wilk checks have next to no power, and the choice would mean little).
MIN_DATASETS = 5


def _checked(table: Any, greater_is_better: bool | None, dataset_dim: Hashable, func: str):
    """Return the checked table, its direction, and refuse what no test can compare."""
    frame = checked_table(table, dataset_dim=dataset_dim)
    greater = direction_of(table, greater_is_better, func=func)
    N = frame.shape[0]
    if N < MIN_DATASETS:
        raise ArgumentError(
            f"{func}: the automatic choice needs at least {MIN_DATASETS} datasets (as "
            f"autorank), got {N}: with fewer, the normality checks it rests on cannot reject. "
            "Run a test yourself (cvstats.wilcoxon_test, cvstats.friedman_test) and read it "
            "with care, or add datasets."
        )
    if not np.ptp(frame.to_numpy(), axis=1).any():
        raise ArgumentError(
            f"{func}: every learner has the same score on every dataset (ties everywhere), "
            "so there is nothing to compare; check that the table holds the learners' "
            "scores and not a copy of one of them."
        )
    return frame, greater


def _over_models(values: Any, models: list[str], name: str) -> xr.DataArray:
    """Per-learner values as a DataArray over ``model``."""
    return xr.DataArray(np.asarray(values), dims=("model",), coords={"model": models}, name=name)


def _fmt(p: float) -> str:
    return f"{p:.3g}"


def _normality(frame: pd.DataFrame, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shapiro–Wilk ``W``, p-value and pass/fail per learner (NaN, fail for a constant one)."""
    k = frame.shape[1]
    w, p = np.full(k, np.nan), np.full(k, np.nan)
    for j, col in enumerate(frame.columns):
        x = frame[col].to_numpy()
        if np.ptp(x) > 0:
            res = scipy.stats.shapiro(x)
            w[j], p[j] = res.statistic, res.pvalue
    return w, p, ~np.isnan(p) & (p >= alpha / k)


def _homogeneity(frame: pd.DataFrame, all_normal: bool) -> tuple[str, float, float]:
    """Bartlett's test when every learner passed the normality check, else Levene's."""
    name = "bartlett" if all_normal else "levene"
    if not np.ptp(frame.to_numpy(), axis=0).any():  # every learner constant: no spread at all
        return name, np.nan, np.nan
    samples = [frame[c].to_numpy() for c in frame.columns]
    res = scipy.stats.bartlett(*samples) if all_normal else scipy.stats.levene(*samples)
    return name, float(res.statistic), float(res.pvalue)


def _rm_anova(frame: pd.DataFrame, alpha: float) -> tuple[tuple[float, ...], pd.DataFrame]:
    """Repeated-measures ANOVA (statsmodels' ``AnovaRM``) and Tukey's HSD on its error term.

    Tukey's HSD compares every pair of mean scores with the studentized range
    (:data:`scipy.stats.studentized_range`) of the ANOVA's residual mean square
    ``MS_e`` (the learner × dataset interaction, ``(N-1)(k-1)`` df)::

        q = |mean_a - mean_b| / sqrt(MS_e / N)

    the pooled-error post-hoc test of a repeated-measures design (Demšar 2006,
    §3.2.1). autorank runs statsmodels' ``pairwise_tukeyhsd`` on the stacked
    scores instead, which takes the datasets as independent samples: its error
    holds the between-dataset variance, so it separates fewer pairs.
    """
    from statsmodels.stats.anova import AnovaRM

    N, k = frame.shape
    long = pd.DataFrame(
        {
            "dataset": np.repeat(np.arange(N), k),
            "model": np.tile(np.asarray(frame.columns, dtype=object), N),
            "score": frame.to_numpy().ravel(),
        }
    )
    row = AnovaRM(long, "score", "dataset", within=["model"]).fit().anova_table.iloc[0]
    y = frame.to_numpy()
    means = y.mean(axis=0)
    resid = y - y.mean(axis=1, keepdims=True) - means + y.mean()
    df_error = (N - 1) * (k - 1)
    se = np.sqrt(np.sum(resid**2) / df_error / N)
    a, b = np.triu_indices(k, 1)
    diff = means[a] - means[b]
    q = np.abs(diff) / se
    rng = scipy.stats.studentized_range
    half = rng.ppf(1 - alpha, k, df_error) * se
    pvalue = rng.sf(q, k, df_error)
    table = pd.DataFrame(
        {
            "model_a": np.asarray(frame.columns)[a],
            "model_b": np.asarray(frame.columns)[b],
            "mean_difference": diff,
            "statistic": q,
            "pvalue": pvalue,
            "lower": diff - half,
            "upper": diff + half,
            "significant": pvalue < alpha,
        }
    )
    stats = (float(row["F Value"]), float(row["Num DF"]), float(row["Den DF"]))
    return (*stats, float(row["Pr > F"])), table


def _choose(frame: pd.DataFrame, greater: bool, alpha: float, tie_correction: bool) -> ChosenTest:
    N, k = frame.shape
    models = list(frame.columns)
    w, p, normal = _normality(frame, alpha)
    all_normal = bool(normal.all())
    checks = ", ".join(
        f"{m} constant" if np.isnan(pj) else f"{m} W = {wj:.3f}, p = {_fmt(pj)}"
        for m, wj, pj in zip(models, w, p, strict=True)
    )
    failed = [m for m, ok in zip(models, normal, strict=True) if not ok]
    reasons = [
        f"Normality: Shapiro–Wilk on each learner's scores over the {N} datasets at "
        f"alpha/k = {alpha:g}/{k} = {alpha / k:.4g} (Bonferroni): {checks}; "
        + ("all look normal." if all_normal else f"not normal: {', '.join(failed)}.")
    ]
    h_name, h_stat, h_p = _homogeneity(frame, all_normal)
    homoscedastic = bool(h_p >= alpha)
    which = "Bartlett's test, as all look normal" if all_normal else "Levene's test (median)"
    if np.isnan(h_p):
        reasons.append("Equal variances: every learner is constant over the datasets.")
    else:
        reasons.append(
            f"Equal variances: {which}, statistic {h_stat:.4g}, p = {_fmt(h_p)} "
            + (f">= {alpha:g}: equal." if homoscedastic else f"< {alpha:g}: unequal.")
        )
    average = rank_table(frame, greater_is_better=greater).mean()
    reference = str(average.sort_values(kind="stable").index[0])
    other = next(m for m in models if m != reference) if k == 2 else ""
    friedman: FriedmanResult | None = None
    wilcoxon: WilcoxonResult | None = None
    posthoc_table: pd.DataFrame | None = None
    df1 = df2 = np.nan
    if k == 2:
        posthoc = None
        if all_normal:
            test, why = "paired_t", "two learners, both normal"
            res = scipy.stats.ttest_rel(frame[reference], frame[other])
            stat, df1, pvalue = float(res.statistic), float(res.df), float(res.pvalue)
        else:
            test, why = "wilcoxon", "two learners, not both normal"
            wilcoxon = wilcoxon_test(frame, reference, other, greater_is_better=greater)
            stat, pvalue = float(wilcoxon.statistic), float(wilcoxon.pvalue)
        said = f"t = {stat:.4g} (df {df1:g})" if test == "paired_t" else f"T = {stat:.4g}"
        on = f"{reference} - {other}"
    elif all_normal and homoscedastic:
        test, posthoc, why = "rm_anova", "tukey_hsd", f"{k} learners, all normal, equal variances"
        (stat, df1, df2, pvalue), posthoc_table = _rm_anova(frame, alpha)
        said, on = f"F = {stat:.4g} (df {df1:g}, {df2:g})", "all learners"
    else:
        posthoc, test = "nemenyi", "friedman"
        why = f"{k} learners, " + ("not all normal" if not all_normal else "unequal variances")
        friedman = friedman_test(
            frame, greater_is_better=greater, alpha=alpha, tie_correction=tie_correction
        )
        stat, df1, pvalue = float(friedman.statistic), float(friedman.df), float(friedman.pvalue)
        posthoc_table = friedman.nemenyi()
        cd = float(friedman.critical_difference)
        said = f"χ²_F = {stat:.4g} (df {df1:g}; Nemenyi CD = {cd:.3g})"
        on = "all learners"
    post = f" with {TEST_NAMES[posthoc]}" if posthoc else ""
    reasons.append(f"Test: {why} → {TEST_NAMES[test]}{post} (Demšar 2006; autorank's rule).")
    outcome = (
        f"p = {_fmt(pvalue)} < {alpha:g}: the learners differ"
        if pvalue < alpha
        else f"p = {_fmt(pvalue)} >= {alpha:g}: no evidence that the learners differ"
    )
    reasons.append(f"Result on {on}: {said}, two-sided {outcome}.")

    def over_models(values: Any, name: str) -> xr.DataArray:
        return xr.DataArray(
            np.asarray(values), dims=("model",), coords={"model": models}, name=name
        )

    return ChosenTest(
        test=test,
        posthoc=posthoc,
        normality_statistic=_over_models(w, models, "normality_statistic"),
        normality_pvalue=_over_models(p, models, "normality_pvalue"),
        normal=_over_models(normal, models, "normal"),
        all_normal=all_normal,
        homogeneity_test=h_name,
        homogeneity_statistic=h_stat,
        homogeneity_pvalue=h_p,
        homoscedastic=homoscedastic,
        statistic=stat,
        df1=float(df1),
        df2=float(df2),
        pvalue=pvalue,
        reference=reference,
        other=other,
        posthoc_table=posthoc_table,
        friedman=friedman,
        wilcoxon=wilcoxon,
        reasons=tuple(reasons),
        alpha=alpha,
        n_datasets=N,
        n_models=k,
        greater_is_better=greater,
        tie_correction=bool(tie_correction),
    )


def choose_test(
    table: Any,
    *,
    alpha: float = 0.05,
    tie_correction: bool = True,
    greater_is_better: bool | None = None,
    dataset_dim: Hashable = DATASET_DIM,
) -> ChosenTest:
    """Choose the test for learners over datasets as autorank does, run it, and say why.

    Shapiro–Wilk on each learner's scores at ``alpha / k``; Bartlett's test of
    equal variances when all pass, else Levene's; then two learners → paired t
    (both normal) or Wilcoxon signed-rank; more → repeated-measures ANOVA with
    Tukey's HSD on the ANOVA's error term (all normal, equal variances) or
    Friedman with Nemenyi (Herbold 2020; Demšar 2006, §3). Every p-value is two-sided (autorank's
    Wilcoxon p-value is one-sided, towards the learner with the larger median:
    half of this one).

    Parameters
    ----------
    table : xarray.DataArray or pandas.DataFrame
        Per-dataset scores or losses, datasets × learners (one number per cell).
    alpha : float, default 0.05
        Level of the tests; each normality check runs at ``alpha / k``.
    tie_correction : bool, default True
        Divide Friedman's statistic by the ties factor, as
        :func:`scipy.stats.friedmanchisquare` and autorank do (``False``: Demšar's
        2006 formula, which ignores ties).
    greater_is_better : bool, optional
        Whether a larger value is better: read from the table
        (:func:`~cvstats.across.ranks.direction_of`); required when the table
        does not record it, and must agree when it does.
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray table.

    Returns
    -------
    ChosenTest

    Raises
    ------
    ArgumentError
        With fewer than 5 datasets or 2 learners, a missing or non-finite score,
        an unknown direction, or the same score for every learner on every dataset.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> acc = pd.DataFrame({"a": rng.normal(0.8, 0.05, 12), "b": rng.normal(0.7, 0.05, 12)})
    >>> choose_test(acc, greater_is_better=True).test
    'paired_t'
    """
    alpha = validate_alpha(alpha)
    frame, greater = _checked(table, greater_is_better, dataset_dim, "choose_test")
    return _choose(frame, greater, alpha, tie_correction)


def _generator(seed: Any) -> tuple[np.random.Generator, int | None]:
    """Return one Generator for every posterior and the int seed to record."""
    if isinstance(seed, np.random.Generator):
        return seed, None
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0
    ):
        raise CvstatsTypeError(
            f"compare_datasets: `seed` must be a non-negative int, a numpy Generator or None, "
            f"got {seed!r}."
        )
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0])
    return np.random.default_rng(int(seed)), int(seed)


def compare_datasets(
    table: Any,
    *,
    reference: str | None = None,
    alpha: float = 0.05,
    rope: float = 0.0,
    n_samples: int = N_SAMPLES,
    seed: int | np.random.Generator | None = None,
    tie_correction: bool = True,
    greater_is_better: bool | None = None,
    dataset_dim: Hashable = DATASET_DIM,
) -> DatasetsComparison:
    """Compare learners over many datasets: the chosen test and why, ranks, effects, posteriors.

    One call for the table of a benchmark (datasets × learners, one score per
    cell): :func:`choose_test` picks and runs the frequentist test, stating each
    check; the learners are ranked per dataset (Demšar 2006, §3.2.2: the
    average ranks and the Nemenyi critical difference, drawn by ``plot()``);
    the ``reference`` (the best-ranked learner unless given) is compared with
    every other learner by Cohen's d, Akinshin's γ and Cliff's δ
    (:func:`~cvstats.across.ranks.effect_size`; ``headline_effect`` is d when
    every learner looked normal, γ otherwise, as autorank chooses) and by the Bayesian signed-rank
    test (Benavoli, Corani, Demšar & Zaffalon 2017,
    :func:`~cvstats.across.bayes_datasets.bayesian_signed_rank_test`): the
    probabilities that the reference is practically better on a new dataset,
    that the two are practically equivalent, that the other is. Against the
    best-ranked learner only, not every pair: the question a benchmark asks is
    whether anything matches the best.

    Parameters
    ----------
    table : xarray.DataArray or pandas.DataFrame
        Per-dataset scores or losses, datasets × learners (one number per cell).
    reference : str, optional
        The learner the others are measured against; default the best-ranked
        (the first in table order on a tie of average ranks).
    alpha : float, default 0.05
        Level of the frequentist tests.
    rope : float, default 0.0
        Half-width of the region of practical equivalence of the Bayesian tests,
        in the table's units (``0.01``: one point of accuracy on a 0–1 scale).
        ``0`` (baycomp's default) claims no practical equivalence.
    n_samples : int, default 50000
        Posterior draws of each Bayesian test.
    seed : int, numpy.random.Generator or None
        Seed of the posterior draws (one stream for every test); ``None`` draws
        one from fresh entropy and records it in the result's ``seed``.
    tie_correction : bool, default True
        As :func:`choose_test`.
    greater_is_better : bool, optional
        Whether a larger value is better: read from the table; required when it
        does not record it, and must agree when it does.
    dataset_dim : hashable, default "dataset"
        The datasets dim of a DataArray table.

    Returns
    -------
    DatasetsComparison
        ``verdict()``, ``summary()``, ``to_frame()`` (one row per learner,
        best first), ``plot()`` (the critical-difference diagram) and the
        LaTeX/Markdown/HTML exports.

    Raises
    ------
    ArgumentError
        As :func:`choose_test`; also for an unknown ``reference``, and as the
        effect sizes and Bayesian tests do (two learners constant over the
        datasets; two learners equal on every dataset with ``rope = 0``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> acc = pd.DataFrame({"a": rng.normal(0.80, 0.05, 10), "b": rng.normal(0.75, 0.05, 10),
    ...                     "c": rng.normal(0.70, 0.05, 10)})
    >>> res = compare_datasets(acc, rope=0.01, n_samples=2000, seed=0, greater_is_better=True)
    >>> res.reference, res.choice.test
    ('a', 'friedman')
    """
    alpha = validate_alpha(alpha)
    frame, greater = _checked(table, greater_is_better, dataset_dim, "compare_datasets")
    if reference is not None and reference not in frame.columns:
        raise ArgumentError(
            f"compare_datasets: `reference` {reference!r} is not a learner of the table; "
            f"choose from {list(frame.columns)}, or leave it out for the best-ranked."
        )
    rng, recorded = _generator(seed)
    choice = _choose(frame, greater, alpha, tie_correction)
    friedman = choice.friedman or friedman_test(
        frame, greater_is_better=greater, alpha=alpha, tie_correction=tie_correction
    )
    order = list(friedman.average_ranks.sort_values(kind="stable").index)
    reference = order[0] if reference is None else str(reference)
    others = [m for m in order if m != reference]
    effects = tuple(effect_size(frame, reference, m, greater_is_better=greater) for m in others)
    posteriors = tuple(
        bayesian_signed_rank_test(
            frame,
            reference,
            m,
            rope=rope,
            n_samples=n_samples,
            seed=rng,
            greater_is_better=greater,
        )
        for m in others
    )

    return DatasetsComparison(
        choice=choice,
        friedman=friedman,
        reference=reference,
        average_rank=_over_models(friedman.average_ranks[order], order, "average_rank"),
        mean=_over_models(frame.mean()[order], order, "mean"),
        median=_over_models(frame.median()[order], order, "median"),
        effect_sizes=effects,
        bayesian=posteriors,
        rope=float(posteriors[0].rope),
        alpha=alpha,
        n_datasets=frame.shape[0],
        n_models=frame.shape[1],
        greater_is_better=greater,
        seed=recorded,
    )
