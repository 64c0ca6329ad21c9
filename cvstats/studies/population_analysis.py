"""Tables and figures of the survey's Algorithm 1 (docs/studies.md §F).

Input: the Dataset of :func:`cvstats.studies.population.run_population`.

* :func:`running_estimates` — the repeated k-fold estimate after ``1..R``
  repetitions (the running mean of the per-repetition estimates);
* :func:`convergence_figure` — the survey's Figure 2: running estimate
  against the number of repetitions, with ``εc`` of the sample and ``εu``
  (mean ``εc`` over samples) as horizontal lines;
* :func:`bias_table` — bias and accuracy of the estimate for ``εc`` and
  ``εu`` after 1 and ``R`` repetitions (:func:`cvstats.across.conditional.cv_bias`);
* :func:`decomposition_table` — sample vs internal variance of a single
  repetition (:func:`cvstats.across.conditional.variance_decomposition`);
* :func:`winner_tables` — the 2×2 contingency tables of two learners'
  CV verdicts against their conditional errors over the samples, with
  ``P(true winner | CV winner)`` and ``P(CV winner | true winner)``
  (:func:`cvstats.across.conditional.winner_table`);
* :func:`population_report` — all of the above, written to a directory.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from cvstats import WinnerTable, cv_bias, variance_decomposition, winner_table
from cvstats.errors import ArgumentError

#: The dim of the repetitions of a cross-validation estimate (:func:`cvstats.cv_estimates`).
REPETITION = "repetition"

__all__ = [
    "running_estimates",
    "unconditional_error",
    "bias_table",
    "decomposition_table",
    "winner_tables",
    "convergence_figure",
    "population_report",
]

_SAMPLE = "sample"


def running_estimates(ds: xr.Dataset) -> xr.DataArray:
    """Compute the repeated k-fold estimate after ``1..R`` repetitions.

    Returns
    -------
    xarray.DataArray
        ``(sample, k, repetition, model)``: at ``repetition = r`` the mean of the
        first ``r`` per-repetition estimates.
    """
    cv = ds["cv"]
    counts = xr.DataArray(np.arange(1, cv.sizes[REPETITION] + 1), dims=REPETITION)
    out = cv.cumsum(REPETITION) / counts
    out.name = "cv_running"
    return out.assign_coords({REPETITION: cv[REPETITION]})


def unconditional_error(ds: xr.Dataset) -> pd.DataFrame:
    """``εu`` (mean of ``εc`` over samples) per model with its standard error and spread."""
    ec = ds["conditional"]
    n = ec.sizes[_SAMPLE]
    return pd.DataFrame(
        {
            "eps_u": ec.mean(_SAMPLE).to_pandas(),
            "se": (ec.std(_SAMPLE, ddof=1) / np.sqrt(n)).to_pandas(),
            "sd_eps_c": ec.std(_SAMPLE, ddof=1).to_pandas(),
        }
    )


def _repetitions(ds: xr.Dataset, repetitions: Sequence[int] | None) -> list[int]:
    R = int(ds.sizes[REPETITION])
    reps = sorted({1, R}) if repetitions is None else [int(r) for r in repetitions]
    bad = [r for r in reps if not 1 <= r <= R]
    if bad:
        raise ArgumentError(f"`repetitions` must lie in [1, {R}] (the run's R), got {bad}.")
    return reps


def _estimates(ds: xr.Dataset, k: int, r: int) -> xr.DataArray:
    est = ds["cv"].sel(k=k).isel({REPETITION: slice(0, r)})
    est.name = "zero_one"
    return est.transpose(_SAMPLE, REPETITION, "model")


def bias_table(
    ds: xr.Dataset, *, repetitions: Sequence[int] | None = None, alpha: float = 0.05
) -> pd.DataFrame:
    """Bias and accuracy of repeated k-fold CV for ``εc`` and ``εu``.

    For each ``k`` and each number of repetitions ``r`` (default 1 and ``R``)
    the estimate of a sample is the mean of its first ``r`` repetitions;
    :func:`cvstats.across.conditional.cv_bias` compares it over the samples with the
    conditional errors and with ``εu`` (their mean).

    Returns
    -------
    pandas.DataFrame
        Index ``(k, repetitions, model)``; columns ``cv_estimate``, ``eps_c``
        (mean), ``eps_u``, ``bias`` with ``bias_lo``/``bias_hi`` (``1 - alpha``
        ``t`` interval; the same bias for ``εc`` and ``εu``, see ``cv_bias``),
        ``rmse_c``, ``rmse_u`` (root mean squared distance of a sample's
        estimate to its ``εc``, resp. to ``εu``), ``sd_cv``, ``sd_eps_c``,
        ``corr`` (estimate vs ``εc`` across samples) with ``corr_lo``/``corr_hi``.
    """
    rows = []
    for k in ds["k"].values.tolist():
        for r in _repetitions(ds, repetitions):
            out = cv_bias(_estimates(ds, k, r), ds["conditional"], dataset_dim=_SAMPLE,
                          alpha=alpha)  # fmt: skip
            for m in out["model"].values.tolist():
                o = out.sel(model=m)
                rows.append({
                    "k": k, "repetitions": r, "model": m,
                    "cv_estimate": float(o.cv_estimate), "eps_c": float(o.conditional_error),
                    "eps_u": float(o.unconditional_error), "bias": float(o.bias_conditional),
                    "bias_lo": float(o.bias_conditional_ci[0]),
                    "bias_hi": float(o.bias_conditional_ci[1]),
                    "rmse_c": float(o.rmse_conditional), "rmse_u": float(o.rmse_unconditional),
                    "sd_cv": float(o.sd_cv), "sd_eps_c": float(o.sd_conditional),
                    "corr": float(o.correlation), "corr_lo": float(o.correlation_ci[0]),
                    "corr_hi": float(o.correlation_ci[1]),
                })  # fmt: skip
    return pd.DataFrame(rows).set_index(["k", "repetitions", "model"])


def decomposition_table(ds: xr.Dataset, *, alpha: float = 0.05) -> pd.DataFrame:
    """Sample vs internal variance of one repetition's estimate, per ``k`` and model.

    :func:`cvstats.across.conditional.variance_decomposition` on the ``R`` repetitions
    of every sample (needs ``R >= 2`` and 2 samples). The internal variance is
    what repeating the cross-validation averages away: the estimate of ``r``
    repetitions has variance ``sample + internal / r``.

    Returns
    -------
    pandas.DataFrame
        Index ``(k, model)``; columns ``total``, ``sample``, ``internal``,
        ``sample_fraction`` and their standard errors (``_se``).
    """
    R = int(ds.sizes[REPETITION])
    if R < 2:
        raise ArgumentError(f"the variance decomposition needs R >= 2 repetitions, got {R}.")
    frames = []
    for k in ds["k"].values.tolist():
        out = variance_decomposition(_estimates(ds, k, R), dataset_dim=_SAMPLE, alpha=alpha)
        names = {
            "total_variance": "total",
            "sample_variance": "sample",
            "internal_variance": "internal",
            "sample_fraction": "sample_fraction",
        }
        cols = {}
        for var, short in names.items():
            cols[short] = out[var].to_pandas()
            cols[f"{short}_se"] = out[f"{var}_se"].to_pandas()
        frame = pd.DataFrame(cols)
        frame.index = pd.MultiIndex.from_product([[k], frame.index], names=["k", "model"])
        frames.append(frame)
    return pd.concat(frames)


def winner_tables(
    ds: xr.Dataset,
    pairs: Sequence[tuple[str, str]] | None = None,
    *,
    repetitions: Sequence[int] | None = None,
    ties: str = "not_worse",
) -> tuple[pd.DataFrame, dict[tuple[str, str, int, int], WinnerTable]]:
    """Build the survey's 2×2 tables: CV verdict × true verdict over the samples (§5.2).

    Parameters
    ----------
    ds : xarray.Dataset
        Output of :func:`~cvstats.studies.population.run_population`.
    pairs : sequence of (str, str), optional
        Learner pairs ``(a, b)``; default every pair in the run's model order.
    repetitions : sequence of int, optional
        Numbers of repetitions of the CV estimate (default 1 and ``R``, the
        survey's "1 and 30 repetitions").
    ties : {"not_worse", "exclude"}
        See :func:`cvstats.across.conditional.winner_table`.

    Notes
    -----
    The CV verdict of ``r`` repetitions compares the learners' numbers of
    out-of-fold errors over those repetitions (the same as comparing the mean
    estimates, without rounding, so equal counts are ties). The survey's text
    says "``L1 > L2``: ``L1`` wins (smaller error)" while its table ``M`` is
    written in errors; the columns here are in errors: "a worse" means
    ``εc_a > εc_b``. With ``ties="not_worse"`` a tie counts as "a not worse",
    so the table is not symmetric in ``(a, b)`` when there are ties (frequent
    with one repetition of 2-fold CV); ``ties_cv`` and ``ties_true`` count them.

    Returns
    -------
    frame : pandas.DataFrame
        Index ``(a, b, k, repetitions)``; columns the four cells
        ``cv_worse_true_worse``, ``cv_worse_true_not``, ``cv_not_true_worse``,
        ``cv_not_true_not`` ("worse": ``a`` has the larger error), the
        probabilities ``P(a worse | CV a worse)``, ``P(a not worse | CV a not
        worse)``, ``P(CV a worse | a worse)``, ``P(CV a not worse | a not worse)``,
        ``agreement``, ``ties_cv``, ``ties_true``.
    tables : dict
        The :class:`~cvstats.across.conditional.WinnerTable` of each row, keyed like
        the index.
    """
    models = [str(m) for m in ds["model"].values.tolist()]
    if pairs is None:
        pairs = list(itertools.combinations(models, 2))
    if not pairs:
        raise ArgumentError(f"winner tables need two learners; the run has {models}.")
    ec = ds["conditional"]
    rows, tables = [], {}
    for a, b in pairs:
        for k in ds["k"].values.tolist():
            for r in _repetitions(ds, repetitions):
                # verdicts on integer error counts (same N for every learner): exact ties
                cv = ds["loss"].sel(k=k).isel({REPETITION: slice(0, r)})
                cv = cv.sum((REPETITION, "example"), dtype=np.int64)
                wt = winner_table(cv, ec, (a, b), dataset_dim=_SAMPLE, ties=ties)
                c = wt.table.values
                rows.append({
                    "a": a, "b": b, "k": k, "repetitions": r,
                    "cv_worse_true_worse": int(c[0, 0]), "cv_worse_true_not": int(c[0, 1]),
                    "cv_not_true_worse": int(c[1, 0]), "cv_not_true_not": int(c[1, 1]),
                    "P(a worse | CV a worse)": float(wt.p_true_given_cv.iloc[0]),
                    "P(a not worse | CV a not worse)": float(wt.p_true_given_cv.iloc[1]),
                    "P(CV a worse | a worse)": float(wt.p_cv_given_true.iloc[0]),
                    "P(CV a not worse | a not worse)": float(wt.p_cv_given_true.iloc[1]),
                    "agreement": wt.agreement, "ties_cv": wt.ties_cv, "ties_true": wt.ties_true,
                })  # fmt: skip
                tables[(a, b, int(k), int(r))] = wt
    return pd.DataFrame(rows).set_index(["a", "b", "k", "repetitions"]), tables


def convergence_figure(
    ds: xr.Dataset,
    *,
    samples: int | Sequence[int] = 3,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> Any:
    """Draw the survey's Figure 2: running CV estimate vs the number of repetitions.

    One panel per (learner, k); one coloured curve per sample with its ``εc``
    as a dashed line of the same colour; ``εu`` (mean ``εc`` over all samples)
    as a thick grey line. Errors (not accuracies, as the survey plots).

    Parameters
    ----------
    ds : xarray.Dataset
        Output of :func:`~cvstats.studies.population.run_population`.
    samples : int or sequence of int, default 3
        How many samples to draw (the first ones), or their ``sample`` labels.
    path : path, optional
        Save the figure there (PNG, 120 dpi).
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    labels = ds[_SAMPLE].values.tolist()
    chosen = labels[: int(samples)] if isinstance(samples, int | np.integer) else list(samples)
    unknown = [s for s in chosen if s not in labels]
    if unknown or not chosen:
        raise ArgumentError(f"`samples` {unknown or chosen} are not samples of the run.")
    run = running_estimates(ds)
    eu = ds["conditional"].mean(_SAMPLE)
    models = ds["model"].values.tolist()
    ks = ds["k"].values.tolist()
    fig, axes = plt.subplots(len(models), len(ks), figsize=(3.2 * len(ks), 2.4 * len(models)),
                             sharex=True, squeeze=False)  # fmt: skip
    reps = ds[REPETITION].values
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, m in enumerate(models):
        for j, k in enumerate(ks):
            ax = axes[i, j]
            for c, s in enumerate(chosen):
                col = colours[c % len(colours)]
                ax.plot(reps, run.sel(sample=s, k=k, model=m), color=col, lw=1.2)
                ax.axhline(float(ds["conditional"].sel(sample=s, model=m)), color=col, ls="--",
                           lw=1)  # fmt: skip
            ax.axhline(float(eu.sel(model=m)), color="0.4", lw=2.5, alpha=0.6)
            if i == 0:
                ax.set_title(f"{k}-fold")
            if j == 0:
                ax.set_ylabel(f"{m}: error")
            if i == len(models) - 1:
                ax.set_xlabel("repetitions")
    fig.suptitle(
        title or "repeated CV estimate (solid), εc of the sample (dashed), εu (grey)", fontsize=10
    )
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def population_report(
    ds: xr.Dataset,
    out_dir: str | os.PathLike[str],
    *,
    pairs: Sequence[tuple[str, str]] | None = None,
    alpha: float = 0.05,
    samples: int = 3,
    title: str | None = None,
) -> dict[str, Any]:
    """Every table and the figure of Algorithm 1, written to ``out_dir``.

    Writes ``<tag>-convergence.png``, ``<tag>-bias.csv``,
    ``<tag>-decomposition.csv`` (when ``R >= 2``) and ``<tag>-winners.csv``
    (when the run has two learners or more).

    Returns
    -------
    dict
        ``unconditional``, ``bias``, ``decomposition`` (or None), ``winners``
        (DataFrame or None), ``winner_tables`` (dict), ``paths``.
    """
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tag = str(ds.attrs.get("tag", "population"))
    paths = []
    fig = convergence_figure(
        ds, samples=min(samples, ds.sizes[_SAMPLE]), path=out / f"{tag}-convergence.png",
        title=title,
    )  # fmt: skip
    plt.close(fig)
    paths.append(out / f"{tag}-convergence.png")
    bias = bias_table(ds, alpha=alpha)
    bias.to_csv(out / f"{tag}-bias.csv")
    paths.append(out / f"{tag}-bias.csv")
    decomposition = None
    if ds.sizes[REPETITION] >= 2:
        decomposition = decomposition_table(ds, alpha=alpha)
        decomposition.to_csv(out / f"{tag}-decomposition.csv")
        paths.append(out / f"{tag}-decomposition.csv")
    winners, tables = None, {}
    if ds.sizes["model"] >= 2:
        winners, tables = winner_tables(ds, pairs)
        winners.to_csv(out / f"{tag}-winners.csv")
        paths.append(out / f"{tag}-winners.csv")
    return {
        "population": json.loads(ds.attrs.get("population", "{}")),
        "unconditional": unconditional_error(ds),
        "bias": bias,
        "decomposition": decomposition,
        "winners": winners,
        "winner_tables": tables,
        "paths": paths,
    }
