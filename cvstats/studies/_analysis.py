"""From stored split means to estimates, rejection rates, tables and figures.

Everything here works on the output of :func:`cvstats.studies.run_study`
(split means of every block of every dataset) and is cheap, so ``J``, ``M``,
``R`` and the grid of null values ``μ0`` can be chosen after the run
(docs/studies.md §D, docs/theory.md §4–§6).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy
import xarray as xr

from cvstats import PublicationTable, fit_lemma1, kernels, nadeau_bengio_table
from cvstats.checks import validate_alpha
from cvstats.errors import ArgumentError, ZeroVarianceWarning
from cvstats.studies._common import study_doc
from cvstats.studies._splits import CONFIGS

__all__ = [
    "METHOD_NAMES",
    "method_results",
    "mc_truth",
    "targets",
    "mu0_grid",
    "rejection_rates",
    "binomial_line",
    "rho_r_fit",
    "study_table",
    "truth_comparison",
    "power_figure",
    "j_study",
    "m_study",
]

#: Methods of docs/theory.md §4 computed by the studies (names of :data:`cvstats.METHODS`).
METHOD_NAMES: tuple[str, ...] = (
    "holdout_t",
    "resampled_t",
    "corrected_resampled_t",
    "conservative_z",
    "bootstrap_t",
    "corrected_bootstrap_t",
    "dietterich_5x2cv",
    "dietterich_5x2cv_t4",
    "dietterich_5x2cv_t5",
    "combined_5x2cv_f",
)
_FIVE = ("dietterich_5x2cv", "dietterich_5x2cv_t4", "dietterich_5x2cv_t5", "combined_5x2cv_f")
_VARIANT = {"dietterich_5x2cv": "dietterich", "dietterich_5x2cv_t4": "t4",
            "dietterich_5x2cv_t5": "t5"}  # fmt: skip


def _check_size(name: str, value: int, available: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ArgumentError(f"`{name}` must be a positive int, got {value!r}.")
    if value > available:
        raise ArgumentError(
            f"`{name}` = {value} exceeds the {available} {what} of the run; rerun with a larger "
            f"`{name}` or choose {name} <= {available}."
        )


def method_results(ds: xr.Dataset, *, J: int = 15, M: int = 10, R: int = 15) -> xr.Dataset:
    """Estimate, standard error and degrees of freedom of every method (docs/theory.md §4).

    Each estimate ``μ̂_J`` uses the first ``J`` main splits of its
    configuration; the conservative Z uses the first ``M`` half-splits with
    the first ``J`` inner splits (test size ``n/10`` inside halves, docs/theory.md
    §6); the bootstrap the first ``R`` replicates of the first ``J`` splits
    (``J <= J_rep``, else NaN); the hold-out t the first main split. The
    5x2cv methods target ``n/2 μ`` and are kept only for configurations with
    ``n1 = n/2`` (NaN for ``(9n/10, n/10)``). Zero variances (possible with
    0/1 losses) give infinite statistics; their warnings are silenced.

    Parameters
    ----------
    ds : xarray.Dataset
        Output of :func:`cvstats.studies.run_study`.
    J, M, R : int
        Splits per estimate, half-splits, replicates.

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``stderr``, ``df`` over ``(dataset, config, quantity,
        method)`` (Alpaydın's F has NaN there: it has no interval) and
        ``p5x2 (dataset, quantity, m5, side)``, the 5x2cv half means its
        statistic needs for any ``μ0``. Attrs ``J``, ``M``, ``R``.
    """
    _check_size("J", J, ds.sizes["j"], "main splits")
    _check_size("M", M, ds.sizes["m"], "half-splits")
    _check_size("R", R, ds.sizes["replicate"], "replicates")
    if J < 2:
        raise ArgumentError(f"`J` must be >= 2 (a sample variance of split means), got {J}.")
    order = ("dataset", "config", "quantity")
    main = ds["main"].isel(j=slice(0, J)).transpose(*order, "j").values
    half = ds["half"].isel(m=slice(0, M), j=slice(0, J))
    half = half.transpose("dataset", "quantity", "m", "side", "j").values[:, None]
    n1 = ds["n1"].values[None, :, None]
    n2 = ds["n2"].values[None, :, None]
    shape = main.shape[:-1]
    out = {k: np.full((*shape, len(METHOD_NAMES)), np.nan) for k in ("estimate", "stderr", "df")}

    def put(name: str, res: Any) -> None:
        i = METHOD_NAMES.index(name)
        for key in ("estimate", "stderr", "df"):
            out[key][..., i] = np.broadcast_to(getattr(res, key), shape)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        hm = ds["holdout_mean"].transpose(*order).values
        hv = ds["holdout_var"].transpose(*order).values
        hn = ds["holdout_n"].transpose(*order).values
        i = METHOD_NAMES.index("holdout_t")
        out["estimate"][..., i], out["stderr"][..., i] = hm, np.sqrt(hv / hn)
        out["df"][..., i] = np.inf
        put("resampled_t", kernels.resampled_t(main))
        put("corrected_resampled_t", kernels.corrected_resampled_t(main, n1, n2))
        put("conservative_z", kernels.conservative_z(main, half))
        if J <= ds.sizes["j_rep"]:
            rep = ds["rep"].isel(replicate=slice(0, R), j_rep=slice(0, J))
            rep = rep.transpose(*order, "replicate", "j_rep").values
            put("bootstrap_t", kernels.bootstrap_t(main, rep))
            put("corrected_bootstrap_t", kernels.corrected_bootstrap_t(main, rep, n1, n2))
        p = ds["five"].transpose("dataset", "quantity", "m5", "side").values
        half_n1 = ds["n1"].values == int(ds["n1"].values[0])  # configurations with n1 = n/2
        for name, variant in _VARIANT.items():
            res = kernels.dietterich_5x2_t(p, variant=variant)
            i = METHOD_NAMES.index(name)
            for key in ("estimate", "stderr", "df"):
                vals = np.broadcast_to(np.asarray(getattr(res, key))[:, None], shape)
                out[key][..., i] = np.where(half_n1[None, :, None], vals, np.nan)
    coords = {
        "dataset": ds["dataset"].values,
        "config": ds["config"].values,
        "quantity": ds["quantity"].values,
        "method": list(METHOD_NAMES),
        "n1": ("config", ds["n1"].values),
        "n2": ("config", ds["n2"].values),
    }
    dims = (*order, "method")
    res = xr.Dataset({k: (dims, v) for k, v in out.items()}, coords=coords)
    res["p5x2"] = ds["five"].transpose("dataset", "quantity", "m5", "side")
    res.attrs.update({"J": J, "M": M, "R": R})
    return res


def mc_truth(
    ds: xr.Dataset, *, J: int | None = None, confidence_level: float = 0.95
) -> xr.Dataset:
    """Monte Carlo ``n1μ`` per configuration: the mean of ``μ̂_J`` over datasets.

    ``μ̂_J`` is unbiased for ``n1μ`` (docs/theory.md §1), so its average over the
    independent datasets, with the normal interval ``mean ± z sd/sqrt(N)``,
    estimates the truth (docs/studies.md §D).

    Parameters
    ----------
    ds : xarray.Dataset
        Output of :func:`cvstats.studies.run_study`.
    J : int, optional
        Main splits used (default all).
    confidence_level : float, default 0.95
        Level of the interval.

    Returns
    -------
    xarray.Dataset
        ``mean``, ``lower``, ``upper``, ``sd`` (of ``μ̂_J`` across datasets) over
        ``(config, quantity)``; ``half_*`` the same for ``n/2 μ`` from the 5x2cv
        halves (the mean of all ten ``μ̃``).
    """
    J = ds.sizes["j"] if J is None else J
    est = ds["main"].isel(j=slice(0, J)).mean("j")
    N = est.sizes["dataset"]
    z = scipy.stats.norm.ppf(0.5 + confidence_level / 2)

    def summary(x: xr.DataArray, prefix: str = "") -> dict[str, xr.DataArray]:
        m, sd = x.mean("dataset"), x.std("dataset", ddof=1)
        half = z * sd / np.sqrt(N)
        return {f"{prefix}mean": m, f"{prefix}lower": m - half, f"{prefix}upper": m + half,
                f"{prefix}sd": sd}  # fmt: skip

    out = summary(est)
    out.update(summary(ds["five"].mean(("m5", "side")), "half_"))
    return xr.Dataset(out, attrs={"J": J, "N": N, "confidence_level": confidence_level})


def targets(ds: xr.Dataset, results: xr.Dataset) -> xr.DataArray:
    """Return the quantity each method targets, ``(config, quantity, method)``.

    ``n1μ`` of its configuration (analytic ``truth`` if the run has it, else
    the Monte Carlo mean), and ``n/2 μ`` for the 5x2cv methods.
    """
    if "truth" in ds:
        truth, half = ds["truth"], ds["truth_half"]
    else:
        mc = mc_truth(ds)
        truth, half = mc["mean"], mc["half_mean"]
    five = xr.DataArray([m in _FIVE for m in results["method"].values], dims="method")
    out = xr.where(five, half, truth).transpose("config", "quantity", "method")
    return out.assign_coords(method=results["method"].values)


def mu0_grid(
    ds: xr.Dataset, results: xr.Dataset, *, width: float = 4.0, points: int = 41
) -> xr.DataArray:
    """Return a grid of null values around each target (docs/theory.md §6, surrogate power).

    ``μ0 = target + sd · linspace(-width, width, points)`` with ``sd`` the
    Monte Carlo standard deviation of ``μ̂_J`` of the configuration.

    Returns
    -------
    xarray.DataArray
        ``(config, quantity, method, point)``.
    """
    sd = mc_truth(ds, J=int(results.attrs["J"]))["sd"]
    offsets = xr.DataArray(np.linspace(-width, width, points), dims="point")
    grid = targets(ds, results) + sd * offsets
    return grid.transpose("config", "quantity", "method", "point")


def rejection_rates(
    results: xr.Dataset, mu0: xr.DataArray | float, *, alpha: float = 0.1
) -> xr.DataArray:
    """Fraction of datasets whose two-sided level-``alpha`` test rejects ``μ = μ0``.

    Reject when ``|μ̂ - μ0| > c · σ̂`` with ``c`` the critical value of each
    method's reference distribution (docs/theory.md §4); Alpaydın's F rejects when
    its p-value is below ``alpha``.

    Parameters
    ----------
    results : xarray.Dataset
        Output of :func:`method_results`.
    mu0 : xarray.DataArray or float
        Null values broadcastable against ``(config, quantity, method)``
        (e.g. :func:`mu0_grid`, with an extra ``point`` dim).
    alpha : float, default 0.1
        Level (0.1 in the papers).

    Returns
    -------
    xarray.DataArray
        Rejection rates over the dims of ``mu0`` and ``(config, quantity,
        method)``, NaN where a method does not apply.
    """
    alpha = validate_alpha(alpha)
    mu0 = xr.DataArray(mu0) if not isinstance(mu0, xr.DataArray) else mu0
    df = results["df"].fillna(1.0)
    crit = df.copy(data=kernels.critical_value(df.values, alpha=alpha))
    with np.errstate(invalid="ignore", divide="ignore"):
        reject = abs(results["estimate"] - mu0) > crit * results["stderr"]
    rate = reject.mean("dataset").where(results["estimate"].notnull().all("dataset"))
    # Alpaydın's F: statistic depends on μ0 non-linearly
    f_mu0 = mu0.sel({"method": "combined_5x2cv_f"}, drop=True) if "method" in mu0.dims else mu0
    p = results["p5x2"]
    f_mu0, p = xr.broadcast(f_mu0, p, exclude=("m5", "side"))
    p = p.transpose(..., "m5", "side")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        fres = kernels.alpaydin_f(p.values, mu0=f_mu0.transpose(*p.dims[:-2]).values)
    f_rate = xr.DataArray(fres.pvalue < alpha, dims=p.dims[:-2]).mean("dataset")
    f_rate = f_rate.assign_coords({d: rate[d] for d in f_rate.dims if d in rate.coords})
    five_ok = results["estimate"].sel({"method": "dietterich_5x2cv"}, drop=True)
    f_rate = f_rate.where(five_ok.notnull().all("dataset"))
    rate = xr.where(rate["method"] == "combined_5x2cv_f", f_rate, rate)
    rate = rate.transpose(*[d for d in mu0.dims if d not in results["estimate"].dims],
                          "config", "quantity", "method")  # fmt: skip
    rate.attrs.update({"alpha": alpha, "N": results.sizes["dataset"]})
    return rate.rename("rejection_rate")


def binomial_line(alpha: float, n_datasets: int) -> float:
    """Rejection rate significantly above ``alpha`` at the 5 % level (one-sided).

    Normal approximation ``alpha + 1.645 sqrt(alpha (1 - alpha) / N)`` of the
    binomial 95 % quantile of the rejection count over ``N`` datasets
    (docs/theory.md §6).

    Examples
    --------
    >>> round(binomial_line(0.1, 1000), 4)
    0.1156
    """
    return alpha + 1.645 * float(np.sqrt(alpha * (1 - alpha) / n_datasets))


def rho_r_fit(
    ds: xr.Dataset,
    *,
    J_rho: int | None = None,
    M_r: int | None = None,
    J_r: int | None = None,
) -> tuple[Any, Any]:
    """``ρ(n1, n2)`` per configuration and ``r`` from Lemma-1 equations (docs/theory.md §5).

    The same fits as :func:`cvstats.fit_rho` (rows: the ``J_rho`` main split
    means of each dataset) and :func:`cvstats.fit_r` (rows: the ``M_r``
    values ``(μ̂_(m) - μ̂^c_(m))²`` with ``J_r`` splits inside halves, default
    ``min(15, J)``), run
    directly on the stored split means through :func:`cvstats.fit_lemma1`.

    Returns
    -------
    tuple of EstimatesResult
        The ``ρ`` fit over ``(config, quantity)`` and the ``r`` fit over ``quantity``
        (variables of :func:`cvstats.fit_lemma1`: ``beta``, ``pi``, ``pi_ci`` ...;
        ``.dataset`` is the plain :class:`xarray.Dataset`).
    """
    J_rho = ds.sizes["j"] if J_rho is None else J_rho
    M_r = ds.sizes["m"] if M_r is None else M_r
    J_r = min(15, ds.sizes["j"]) if J_r is None else J_r
    _check_size("J_rho", J_rho, ds.sizes["j"], "main splits")
    _check_size("M_r", M_r, ds.sizes["m"], "half-splits")
    _check_size("J_r", J_r, ds.sizes["j"], "inner splits")
    rho = fit_lemma1(ds["main"].isel(j=slice(0, J_rho)), "dataset", "j")
    side = ds["half"].isel(m=slice(0, M_r), j=slice(0, J_r)).mean("j")
    sq = (side.isel(side=0) - side.isel(side=1)) ** 2
    r = fit_lemma1(sq, "dataset", "m")
    return rho, r


def _triple(fit: Any, name: str, sel: Mapping[str, Any]) -> tuple[float, float, float]:
    ci = fit[f"{name}_ci"].sel(sel)
    return (
        float(fit[name].sel(sel)),
        float(ci.sel(ci_bound="lower")),
        float(ci.sel(ci_bound="upper")),
    )


def study_table(
    runs: Mapping[str, xr.Dataset],
    *,
    J_rho: int | None = None,
    M_r: int | None = None,
    J_r: int | None = None,
    caption: str | None = None,
) -> PublicationTable:
    """Table-2-style summary of one or more simulations (docs/studies.md §D).

    Rows: the true ``n1μ`` (when the run has it: ``"analytic"`` for problem 1,
    ``"true (MC)"`` from fresh training sets for problem 2) beside the Monte Carlo
    mean of ``μ̂_J`` with its 95 % interval, per configuration and quantity;
    ``ρ(n1, n2)`` per configuration with its estimating-function interval
    (``J_rho`` main splits, 25 in the paper); ``r`` (``M_r`` = 20 half-splits,
    ``J_r`` = 15 splits inside halves). Laid out by
    :func:`cvstats.nadeau_bengio_table`.

    Parameters
    ----------
    runs : mapping
        ``{column name: output of run_study}``.
    J_rho, M_r, J_r : int
        See :func:`rho_r_fit`.
    caption : str, optional
        Table caption.

    Returns
    -------
    PublicationTable
    """
    entries: dict[str, dict[str, Any]] = {}
    for column, ds in runs.items():
        mc = mc_truth(ds)
        rho, r = rho_r_fit(ds, J_rho=J_rho, M_r=M_r, J_r=J_r)
        col: dict[str, Any] = {}
        for c, n1, n2 in zip(CONFIGS, ds["n1"].values, ds["n2"].values, strict=True):
            for q in ds["quantity"].values:
                sel = {"config": c, "quantity": q}
                if "truth" in ds:
                    kind = ds["truth"].attrs.get("kind", "true")
                    col[f"{n1}μ_{q} {kind}"] = float(ds["truth"].sel(sel))
                col[f"{n1}μ_{q} MC ({n1},{n2})"] = (
                    float(mc["mean"].sel(sel)),
                    float(mc["lower"].sel(sel)),
                    float(mc["upper"].sel(sel)),
                )
        for c, n1, n2 in zip(CONFIGS, ds["n1"].values, ds["n2"].values, strict=True):
            for q in ds["quantity"].values:
                col[f"ρ_{q}({n1},{n2})"] = _triple(rho, "pi", {"config": c, "quantity": q})
        for q in ds["quantity"].values:
            col[f"r_{q}"] = _triple(r, "pi", {"quantity": q})
        entries[column] = col
    # three significant digits, as Table 2 of Nadeau & Bengio (2003) prints them
    return nadeau_bengio_table(entries, caption=caption, precision=3)


#: Columns of :func:`truth_comparison`, after its index ``(run, config, quantity)``.
COMPARISON_COLUMNS: tuple[str, ...] = (
    "n1", "n2", "estimate", "se", "lower", "upper", "truth", "truth_se", "truth_lower",
    "truth_upper", "z", "verdict", "within_band",
)  # fmt: skip


def truth_comparison(
    runs: Mapping[str, xr.Dataset],
    *,
    confidence_level: float = 0.95,
    family_level: float = 0.05,
) -> pd.DataFrame:
    """Monte Carlo mean of ``μ̂_J`` against the truth, per cell of :func:`study_table`.

    For every ``n1μ`` cell of every run that has a truth (``truth``: analytic
    for problem 1, standard error 0; Monte Carlo from fresh training sets for
    problems 2 and 3, with its standard error ``truth_se``):

    * ``z = (estimate − truth) / sqrt(se² + truth_se²)``, with ``estimate`` the
      mean of ``μ̂_J`` over the ``N`` datasets and ``se = sd/√N``
      (:func:`mc_truth`; ``μ̂_J`` is unbiased for ``n1μ``, docs/theory.md §1),
      so ``z`` is approximately standard normal when the run is right;
    * ``verdict``: ``"inside"`` if the truth is inside the Monte Carlo
      interval ``estimate ± c·se`` (``c = Φ⁻¹(1/2 + confidence_level/2)``),
      else ``"overlapping"`` if that interval meets the truth's
      ``truth ± c·truth_se``, else ``"disjoint"``;
    * ``within_band``: ``|z| < Φ⁻¹(1 − family_level/(2K))``, the two-sided
      Bonferroni band for the ``K`` cells compared together (every cell of
      the frame), so that all ``K`` cells of correct runs are within it with
      probability at least ``1 − family_level``.

    Parameters
    ----------
    runs : mapping
        ``{column name: output of run_study with a truth}``, the columns of
        :func:`study_table` (e.g. ``{"simulation 2": ds2, "simulation 3": ds3}``).
        Runs without ``truth`` (a Monte Carlo target only) have no cell here.
    confidence_level : float, default 0.95
        Level of both intervals (the Monte Carlo interval of the table).
    family_level : float, default 0.05
        Level of the Bonferroni band over all cells.

    Returns
    -------
    pandas.DataFrame
        Index ``(run, config, quantity)``; columns ``n1``, ``n2``,
        ``estimate``, ``se``, ``lower``, ``upper``, ``truth``, ``truth_se``,
        ``truth_lower``, ``truth_upper``, ``z``, ``verdict``, ``within_band``.
        ``attrs``: ``cells`` (``K``), ``band`` (the bound of ``|z|``),
        ``confidence_level`` and ``family_level``.

    Raises
    ------
    ArgumentError
        If a level is not in ``(0, 1)``, or no run has a truth (problems 2
        and 3: run with ``truth_sets >= 2``, ``--truth-sets`` on the command line).

    Examples
    --------
    The band for the 9 cells of one simulation: ``|z| < Φ⁻¹(1 − 0.05/18)``.

    >>> import scipy.stats
    >>> round(float(scipy.stats.norm.ppf(1 - 0.05 / 18)), 3)
    2.773
    """
    for name, level in (("confidence_level", confidence_level), ("family_level", family_level)):
        if not 0 < level < 1:
            raise ArgumentError(f"`{name}` must be in the open interval (0, 1), got {level!r}.")
    c = float(scipy.stats.norm.ppf(0.5 + confidence_level / 2))
    rows = []
    for run, ds in runs.items():
        if "truth" not in ds:
            continue
        mc = mc_truth(ds, confidence_level=confidence_level)
        se_mc = mc["sd"] / np.sqrt(mc.attrs["N"])
        truth_se = ds["truth_se"] if "truth_se" in ds else xr.zeros_like(ds["truth"])
        for config, n1, n2 in zip(ds["config"].values, ds["n1"].values, ds["n2"].values,
                                  strict=True):  # fmt: skip
            for q in ds["quantity"].values:
                sel = {"config": config, "quantity": q}
                est, se = float(mc["mean"].sel(sel)), float(se_mc.sel(sel))
                lo, hi = float(mc["lower"].sel(sel)), float(mc["upper"].sel(sel))
                t, tse = float(ds["truth"].sel(sel)), float(truth_se.sel(sel))
                t_lo, t_hi = t - c * tse, t + c * tse
                with np.errstate(divide="ignore", invalid="ignore"):
                    z = float(np.float64(est - t) / np.hypot(se, tse))
                if lo <= t <= hi:
                    verdict = "inside"
                elif t_lo <= hi and lo <= t_hi:
                    verdict = "overlapping"
                else:
                    verdict = "disjoint"
                rows.append((run, str(config), str(q), int(n1), int(n2), est, se, lo, hi, t,
                             tse, t_lo, t_hi, z, verdict))  # fmt: skip
    if not rows:
        raise ArgumentError(
            f"no run of `runs` ({list(runs)}) has a truth to compare with; run problems 2 and "
            "3 with `truth_sets` >= 2 (`--truth-sets` on the command line)."
        )
    frame = pd.DataFrame(rows, columns=["run", "config", "quantity", *COMPARISON_COLUMNS[:-1]])
    frame = frame.set_index(["run", "config", "quantity"])
    band = float(scipy.stats.norm.ppf(1 - family_level / (2 * len(frame))))
    frame["within_band"] = frame["z"].abs() < band
    frame.attrs.update(
        {"cells": len(frame), "band": band, "confidence_level": confidence_level,
         "family_level": family_level}
    )  # fmt: skip
    return frame


def power_figure(
    rates: xr.DataArray,
    mu0: xr.DataArray,
    *,
    truth_ci: xr.Dataset | None = None,
    methods: Sequence[str] | None = None,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> Any:
    """Rejection rate against ``μ0`` per method (docs/theory.md §6 surrogate power curves).

    One panel per (quantity, configuration); a horizontal line at the
    nominal ``alpha`` and one at :func:`binomial_line` (normal approximation
    of the one-sided 5 % binomial quantile); the Monte Carlo 95 % interval of
    the truth as two vertical lines when ``truth_ci`` (:func:`mc_truth`) is given.

    Parameters
    ----------
    rates : xarray.DataArray
        :func:`rejection_rates` over ``(point, config, quantity, method)``.
    mu0 : xarray.DataArray
        The grid (:func:`mu0_grid`).
    truth_ci : xarray.Dataset, optional
        Output of :func:`mc_truth`.
    methods : sequence of str, optional
        Methods to draw (default every method with values).
    path : path, optional
        Save the figure there (PNG).
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    alpha, N = float(rates.attrs["alpha"]), int(rates.attrs["N"])
    configs, quantities = list(rates["config"].values), list(rates["quantity"].values)
    methods = list(rates["method"].values) if methods is None else list(methods)
    fig, axes = plt.subplots(
        len(quantities), len(configs), figsize=(4.2 * len(configs), 3.2 * len(quantities)),
        squeeze=False, constrained_layout=True,
    )  # fmt: skip
    for i, q in enumerate(quantities):
        for k, c in enumerate(configs):
            ax = axes[i, k]
            for m in methods:
                y = rates.sel({"config": c, "quantity": q, "method": m})
                if bool(y.isnull().all()):
                    continue
                x = mu0.sel({"config": c, "quantity": q, "method": m})
                ax.plot(x.values, y.transpose("point").values, label=m, lw=1.2)
            ax.axhline(alpha, color="k", lw=0.8)
            ax.axhline(binomial_line(alpha, N), color="k", lw=0.8, ls=":")
            if truth_ci is not None:
                for b in ("lower", "upper"):
                    ax.axvline(float(truth_ci[b].sel(config=c, quantity=q)), color="grey",
                               lw=0.8, ls="--")  # fmt: skip
            ax.set_title(f"{q}, (n1, n2) = {c}", fontsize=9)
            ax.set_ylim(0, 1)
            ax.set_xlabel("μ0")
            ax.set_ylabel("rejection rate")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=5, fontsize=8)
    if title:
        fig.suptitle(title)
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig


@study_doc
def j_study(
    ds: xr.Dataset,
    Js: Sequence[int] = (5, 10, 15, 25),
    *,
    config: str = "9n/10,n/10",
    M: int = 10,
    R: int = 15,
    alpha: float = 0.1,
) -> xr.DataArray:
    """Rejection rates at the target against ``J`` (docs/studies.md §D, the J-study).

    %(parameters_run_output)s
    Js : sequence of int
        Values of ``J``; those above the run's ``J`` are skipped.
    config : str, default "9n/10,n/10"
        Configuration (the paper's J-study uses ``(9n/10, n/10)``).
    M, R : int
        Half-splits and replicates (lowered to what the run has).
    alpha : float, default 0.1
        Level.

    Returns
    -------
    xarray.DataArray
        Over ``(J, quantity, method)``; the bootstrap is NaN for ``J > J_rep``.

    %(raises_sizes_of_run)s
    """
    alpha = validate_alpha(alpha)
    M, R = min(M, ds.sizes["m"]), min(R, ds.sizes["replicate"])

    def rates(J: int) -> xr.DataArray:
        res = method_results(ds, J=J, M=M, R=R)
        return rejection_rates(res, targets(ds, res), alpha=alpha).sel(config=config)

    return _against_size(ds, Js, "j", rates)


@study_doc
def m_study(
    ds: xr.Dataset, Ms: Sequence[int] = (5, 10, 20), *, J: int = 15, alpha: float = 0.1
) -> xr.DataArray:
    """Rejection rates of the conservative Z at the target against ``M`` (the M-study).

    %(parameters_run_output)s
    Ms : sequence of int
        Values of ``M``; those above the run's ``M`` are skipped.
    J : int, default 15
        Splits of the numerator and inside halves (lowered to what the run has).
    alpha : float, default 0.1
        Level.

    Returns
    -------
    xarray.DataArray
        Over ``(M, config, quantity)``.

    %(raises_sizes_of_run)s
    """
    alpha = validate_alpha(alpha)
    J = min(J, ds.sizes["j"])
    R = min(15, ds.sizes["replicate"])

    def rates(M: int) -> xr.DataArray:
        res = method_results(ds, J=J, M=M, R=R)
        rate = rejection_rates(res, targets(ds, res), alpha=alpha)
        return rate.sel({"method": "conservative_z"}, drop=True)

    return _against_size(ds, Ms, "m", rates)


def _against_size(
    ds: xr.Dataset, values: Sequence[int], dim: str, rates: Callable[[int], xr.DataArray]
) -> xr.DataArray:
    """``rates(v)`` for the ``values`` within the run's size ``dim``, along a new dim ``J``/``M``.

    Raises :class:`~cvstats.errors.ArgumentError` if no value is within the run.
    """
    size = dim.upper()
    kept = [v for v in values if v <= ds.sizes[dim]]
    if not kept:
        raise ArgumentError(
            f"`{size}s` has no value <= the run's {size} = {ds.sizes[dim]}; rerun with a larger "
            f"`{size}`."
        )
    return xr.concat([rates(v) for v in kept], xr.DataArray(kept, dims=size, name=size))
