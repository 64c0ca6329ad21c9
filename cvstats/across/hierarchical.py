"""Hierarchical correlated t test of two learners across datasets (Corani et al. 2017).

Corani, Benavoli, Demšar, Mangili & Zaffalon (2017), "Statistical comparison of
classifiers through Bayesian hierarchical modelling", Machine Learning 106:
the fold scores of two learners on each of several datasets, with the
correlation ``ρ`` of the cross-validation design, give the joint posterior of
the datasets' mean differences ``δ_i`` (shrunk toward each other) and of the
distribution ``t_ν(μ0, σ0)`` they come from; the answer is the posterior
probability that ``a`` is practically better on a new dataset, that the two are
practically equivalent, or that ``b`` is (and the same for the mean ``μ0``).
The model and priors are baycomp's ``HierarchicalTest`` (its Stan model); the
sampler is a Gibbs sampler in numpy (:mod:`cvstats.kernels.hierarchical`), so no
compiler is needed; convergence is checked with the rank-normalized R̂ and the
effective sample sizes of Vehtari et al. (2021) (:mod:`cvstats.kernels.mcmc`).
See docs/many-datasets.md.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.across.bayes_datasets import check_number, seeded_rng
from cvstats.across.ranks import DATASET_DIM, direction_of
from cvstats.errors import ArgumentError, CvstatsTypeError
from cvstats.kernels import bayes_datasets as kbd
from cvstats.kernels import hierarchical as kh
from cvstats.kernels import mcmc
from cvstats.results.bayes_datasets import HierarchicalResult

__all__ = ["HierarchicalResult", "bayesian_hierarchical_test"]

#: Fewest fold scores per dataset (a within-dataset variance, and ``n ≥ 2`` in baycomp's model).
MIN_FOLDS = 3

_FUNC = "bayesian_hierarchical_test"


def _check_count(name: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ArgumentError(f"`{name}` must be an int >= {least}, got {value!r}.")
    return int(value)


def _from_cube(
    cube: xr.DataArray, a: str, b: str, dataset_dim: Hashable, rho: float | None
) -> tuple[xr.DataArray, float | None]:
    """Return the (dataset, fold) test means of ``b`` minus those of ``a`` and the design's ρ."""
    from cvstats.inference.bayes import design_rho
    from cvstats.inference.blocks import main_means, split_means

    method = "the hierarchical correlated t"
    if "model" not in cube.dims:
        raise ArgumentError(
            f"{_FUNC}: the cube must have a `model` dim with learners {a!r} and {b!r}, got dims "
            f"{tuple(cube.dims)}."
        )
    means = main_means(split_means(cube, ["main"], method), method, min_splits=2)
    extra = [d for d in means.dims if d not in (dataset_dim, "_j", "model")]
    if extra:
        raise ArgumentError(
            f"{_FUNC}: the cube has dims {extra} besides ({dataset_dim!r}, split, example, "
            "model); select one element of them first."
        )
    pair = _pick_models(means, a, b)
    diff = pair.sel(model=b, drop=True) - pair.sel(model=a, drop=True)
    return diff.rename({"_j": "fold"}), design_rho(cube, method) if rho is None else None


def _pick_models(data: xr.DataArray, a: str, b: str) -> xr.DataArray:
    models = [str(m) for m in data["model"].values]
    for name, m in (("a", a), ("b", b)):
        if m not in models:
            raise ArgumentError(f"`{name}` = {m!r} is not a learner of the data: {models}.")
    if a == b:
        raise ArgumentError(f"`a` and `b` must be two different learners, got {a!r} twice.")
    return data.assign_coords(model=models)


def _from_long(frame: pd.DataFrame, dataset_dim: Hashable) -> xr.DataArray:
    """Return a long frame (dataset, model, fold, score) as a (dataset, model, fold) DataArray."""
    keys = [str(dataset_dim), "model", "fold"]
    missing = [k for k in keys if k not in frame.columns]
    values = [c for c in frame.columns if c not in keys]
    if missing or len(values) != 1:
        raise ArgumentError(
            f"{_FUNC}: a long DataFrame needs the columns {keys} and one column of scores, got "
            f"{list(frame.columns)}."
        )
    if frame.duplicated(keys).any():
        raise ArgumentError(f"{_FUNC}: the long DataFrame has duplicate rows for {keys}.")
    out = frame.set_index(keys)[values[0]].to_xarray()
    out.name = values[0]
    out.attrs = dict(frame.attrs)
    return out


def _differences(
    data: Any,
    a: str | None,
    b: str | None,
    greater_is_better: bool | None,
    dataset_dim: Hashable,
    rho: float | None,
) -> tuple[xr.DataArray, bool, float | None, str, str]:
    """Return the (dataset, fold) differences, the direction, the design's ρ and the names.

    The differences are positive where ``b`` is better; ρ is the design's for a cube
    (else None).
    """
    if isinstance(data, np.ndarray):
        data = xr.DataArray(data, dims=(dataset_dim, "fold"))
    if isinstance(data, pd.DataFrame):
        data = _from_long(data, dataset_dim)
    if not isinstance(data, xr.DataArray):
        raise CvstatsTypeError(
            f"{_FUNC}: `data` must be a cvstats cube, an xarray.DataArray, a long pandas "
            f"DataFrame or a 2-d numpy array, got {type(data).__name__}."
        )
    if dataset_dim not in data.dims:
        raise ArgumentError(
            f"{_FUNC}: `data` has no {dataset_dim!r} dim (dims {tuple(data.dims)}); pass "
            "`dataset_dim`."
        )
    greater = direction_of(data, greater_is_better, name="data", func=_FUNC)
    design = None
    if "split" in data.dims:  # a cvstats cube: the test means of its main splits
        if a is None or b is None:
            raise ArgumentError(f"{_FUNC}: `a` and `b` (two learners of the cube) are required.")
        diff, design = _from_cube(data, a, b, dataset_dim, rho)
    elif data.ndim == 3 and "model" in data.dims:
        if a is None or b is None:
            raise ArgumentError(f"{_FUNC}: `a` and `b` (two learners of `data`) are required.")
        pair = _pick_models(data, a, b)
        diff = pair.sel(model=b, drop=True) - pair.sel(model=a, drop=True)
        other = next(d for d in diff.dims if d != dataset_dim)
        diff = diff.rename({other: "fold"})
    elif data.ndim == 2:  # differences b - a
        a, b = ("a" if a is None else a), ("b" if b is None else b)
        other = next(d for d in data.dims if d != dataset_dim)
        diff = data.rename({other: "fold"})
    else:
        raise ArgumentError(
            f"{_FUNC}: `data` must be a cube, a (dataset, model, fold) DataArray of scores or a "
            f"(dataset, fold) DataArray of differences, got dims {tuple(data.dims)}."
        )
    diff = diff.transpose(dataset_dim, "fold")
    return (diff if greater else -diff), greater, design, str(a), str(b)


def _check_differences(diff: xr.DataArray, dataset_dim: Hashable) -> np.ndarray:
    values = np.asarray(diff.values, dtype=float)
    q, n = values.shape
    if q < 2:
        raise ArgumentError(
            f"{_FUNC}: needs at least 2 datasets, got {q}; for one dataset use "
            "cvstats.bayesian_correlated_t."
        )
    if n < MIN_FOLDS:
        raise ArgumentError(
            f"{_FUNC}: needs at least {MIN_FOLDS} fold scores per dataset, got {n}."
        )
    names = [str(d) for d in diff[dataset_dim].values]
    bad = ~np.isfinite(values).all(axis=1)
    if bad.any():
        which = [names[i] for i in np.flatnonzero(bad)]
        raise ArgumentError(
            f"{_FUNC}: the fold scores must be finite; datasets {which} "
            "have NaN or infinite ones (drop them, or the folds, first: every dataset needs the "
            "same folds)."
        )
    flat = np.ptp(values, axis=1) == 0
    if flat.any():
        raise ArgumentError(
            f"{_FUNC}: the differences of datasets {[names[i] for i in np.flatnonzero(flat)]} do "
            "not vary over the folds (e.g. identical predictions), so their fold standard "
            "deviation is 0 and the model's likelihood degenerates; drop those datasets (baycomp "
            "replaces them with random noise inside the rope)."
        )
    return values


def _diagnostics(draws: kh.HierarchicalDraws, names: list[str]) -> pd.DataFrame:
    series = {"mu0": draws.mu0, "sigma0": draws.sigma0, "nu": draws.nu}
    series.update({f"delta[{d}]": draws.delta[..., i] for i, d in enumerate(names)})
    rows = {
        k: {"rhat": mcmc.rhat(v), "ess_bulk": mcmc.ess_bulk(v), "ess_tail": mcmc.ess_tail(v)}
        for k, v in series.items()
    }
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "parameter"
    return frame


def bayesian_hierarchical_test(
    data: Any,
    a: str | None = None,
    b: str | None = None,
    *,
    rho: float | None = None,
    rope: float = 0.0,
    chains: int = 4,
    draws: int = 10_000,
    warmup: int = 1000,
    seed: int | np.random.Generator | None = None,
    greater_is_better: bool | None = None,
    dataset_dim: Hashable = DATASET_DIM,
) -> HierarchicalResult:
    """Hierarchical correlated t test of ``a`` and ``b`` over datasets (Corani et al. 2017).

    On dataset ``i`` the ``n`` fold differences ``x_i`` (``b`` minus ``a`` in
    the direction of the scores: positive when ``b`` is better) are
    ``MVN(δ_i 1, σ_i² ((1 - ρ) I + ρ 11'))``, the correlated t model of one
    dataset; the ``δ_i`` come from ``t_ν(μ0, σ0)``. With baycomp's priors
    (``μ0`` uniform on ``±max|x|``, ``σ0`` and ``σ_i`` uniform up to 1000 times
    the spread of the dataset means and the mean fold standard deviation,
    ``ν - 1 ~ Gamma(α, β)``, ``α ~ U(1, 2)``, ``β ~ U(0.01, 0.1)``; on the
    differences divided by their mean fold standard deviation) the posterior is
    drawn by a Gibbs sampler (:mod:`cvstats.kernels.hierarchical`). Each draw
    gives the probabilities ``θ`` that a new dataset's difference
    ``δ_new ~ t_ν(μ0, σ0)`` falls below, inside or above the rope; ``p_left``
    is the share of draws in which *left* (``a`` practically better) is the
    most probable, and so on (baycomp's ``HierarchicalTest``).

    Parameters
    ----------
    data : xarray.DataArray, pandas.DataFrame or numpy.ndarray
        The fold scores (or losses): a cvstats cube with a ``dataset`` dim (the
        test means of its main splits are the fold scores; ``ρ`` from its
        design); a ``(dataset, model, fold)`` DataArray; a long DataFrame with
        columns ``dataset``, ``model``, ``fold`` and one of scores; or a
        ``(dataset, fold)`` DataArray or array of differences ``b - a``.
    a, b : str
        The two learners (``a`` is *left*); names only, for differences (default
        ``"a"``, ``"b"``).
    rho : float, optional
        Correlation of two folds' differences, in ``[0, 1)``: ``n_test/n_total``
        (``1/K`` for ``K``-fold cross-validation, repeated or not; baycomp's
        ``runs/n_scores``). Read from a cube's design; required otherwise.
    rope : float, default 0.0
        Half-width of the region of practical equivalence, in the units of the
        scores (baycomp's default is 0). ``0``: ``p_rope = 0``.
    chains, draws, warmup : int, default 4, 10000, 1000
        Chains (run side by side), kept draws and warm-up iterations per chain
        (baycomp's Stan defaults).
    seed : int, numpy.random.Generator or None
        Seed of the sampler; ``None`` draws one from fresh entropy and records it.
    greater_is_better : bool, optional
        Whether a larger score is better: read from the data
        (:func:`~cvstats.across.ranks.direction_of`); required when they do not
        record it, and must agree when they do.
    dataset_dim : hashable, default "dataset"
        The datasets dim (and a long frame's datasets column).

    Returns
    -------
    HierarchicalResult

    Raises
    ------
    ArgumentError
        Fewer than 2 datasets or 3 folds, a non-finite score, a dataset whose
        differences do not vary, an unknown learner or direction, ``rho`` missing
        or outside ``[0, 1)``, ``rope < 0``.

    Warns
    -----
    UserWarning
        When a parameter's R̂ exceeds 1.01 or an ESS is below 400 (rerun with more
        ``draws``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> diff = rng.normal(0.01, 0.03, (12, 10)) + rng.normal(0, 0.01, (12, 1))
    >>> res = bayesian_hierarchical_test(diff, "nb", "j48", rho=0.1, rope=0.01, draws=2000,
    ...                                  seed=1, greater_is_better=True)
    >>> res.n_datasets, res.posterior["delta"].dims
    (12, ('chain', 'draw', 'dataset'))
    """
    diff, greater, design, a, b = _differences(data, a, b, greater_is_better, dataset_dim, rho)
    if rho is None and design is None:
        raise ArgumentError(
            f"{_FUNC}: `rho` is required: the data do not record their cross-validation design. "
            "Pass rho = n_test/n_total, e.g. rho=0.1 for (repeated) 10-fold CV (baycomp: "
            "runs/n_scores)."
        )
    rho = design if rho is None else float(check_number("rho", rho, positive=False, fix=""))
    if not 0 <= rho < 1:
        raise ArgumentError(f"`rho` must be in [0, 1), got {rho!r}; it is n_test/n_total.")
    values = _check_differences(diff, dataset_dim)
    rope = check_number(
        "rope", rope, positive=False, fix="It is a half-width, in the units of the scores."
    )
    chains = _check_count("chains", chains, 1)
    draws = _check_count("draws", draws, 4)
    warmup = _check_count("warmup", warmup, 0)
    rng, recorded = seeded_rng(seed)

    out = kh.sample_hierarchical(
        kh.scaled_statistics(values), rho, chains=chains, draws=draws, warmup=warmup, rng=rng
    )
    theta = kh.region_probabilities(out.mu0, out.sigma0, out.nu, rope)
    winner = np.argmax(theta, axis=-1)
    with_rope = rope > 0
    if not with_rope:
        theta[..., 1] = 0.0
    indicators = [(winner == k).astype(float) for k in range(3)]
    probs = kbd.winner_probabilities(theta.reshape(-1, 3), with_rope)
    mcse = tuple(mcmc.mcse_mean(ind) for ind in indicators)
    mean_probs = [
        float(np.mean(out.mu0 < -rope)),
        float(np.mean(np.abs(out.mu0) <= rope)),
        float(np.mean(out.mu0 > rope)),
    ]
    delta_new = out.mu0 + out.sigma0 * rng.standard_t(out.nu)

    names = [str(d) for d in diff[dataset_dim].values]
    coords = {"chain": np.arange(chains), "draw": np.arange(draws)}
    posterior = xr.Dataset(
        {
            "mu0": (("chain", "draw"), out.mu0),
            "sigma0": (("chain", "draw"), out.sigma0),
            "nu": (("chain", "draw"), out.nu),
            "delta": (("chain", "draw", "dataset"), out.delta),
            "sigma": (("chain", "draw", "dataset"), out.sigma),
            "delta_new": (("chain", "draw"), delta_new),
            "theta": (("chain", "draw", "region"), theta),
        },
        coords={**coords, "dataset": names, "region": list(kbd.REGIONS)},
        attrs={
            "description": (
                f"posterior of the hierarchical correlated t test ({b} minus {a}, positive: "
                f"{b} better)"
            ),
            "rope": rope,
            "rho": rho,
            "method": _FUNC,
        },
    )
    posterior["delta"].attrs["observed"] = values.mean(axis=1)
    diagnostics = _diagnostics(out, names)
    converged = bool(
        (diagnostics["rhat"] <= mcmc.RHAT_MAX).all()
        and (diagnostics[["ess_bulk", "ess_tail"]] >= mcmc.ESS_MIN).all().all()
    )
    if not converged:
        worst = diagnostics["rhat"].idxmax()
        warnings.warn(
            f"{_FUNC}: the chains have not converged: max R̂ = {diagnostics['rhat'].max():.3f} "
            f"({worst}), min ESS = {diagnostics[['ess_bulk', 'ess_tail']].min().min():.0f} "
            f"(want R̂ <= {mcmc.RHAT_MAX} and ESS >= {mcmc.ESS_MIN}); rerun with more `draws` "
            "(and `warmup`).",
            UserWarning,
            stacklevel=2,
        )
    return HierarchicalResult(
        method=_FUNC,
        title="Bayesian hierarchical correlated t test",
        model_a=a,
        model_b=b,
        p_left=float(probs[0]),
        p_rope=float(probs[1]),
        p_right=float(probs[2]),
        mean_left=mean_probs[0],
        mean_rope=mean_probs[1],
        mean_right=mean_probs[2],
        posterior=posterior,
        diagnostics=diagnostics,
        mcse=mcse,  # type: ignore[arg-type]
        rope=rope,
        rho=float(rho),
        n_datasets=len(names),
        n_folds=int(values.shape[1]),
        chains=chains,
        draws=draws,
        warmup=warmup,
        converged=converged,
        greater_is_better=greater,
        seed=recorded,
    )
