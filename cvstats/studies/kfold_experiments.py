"""Bengio & Grandvalet's experiments on the variance of K-fold CV (docs/studies.md §E).

Both experiments use the regression ``x ∈ R^d ~ N(0, I)`` (``d = 30``),
``y = sqrt(3/d) Σ_k x_k + ε``, ``ε ~ N(0, 1)`` (``R² = 3/4``), learned by
ordinary least squares with an intercept, squared-error loss. The outlier
variant draws, with probability ``1 - p = 0.05``, ``x ~ N(0, 100 I)`` and a
noise variance multiplied by 100, rescaled so that ``Var[y]`` keeps its
overall proportions (docs/studies.md §E). All fits are batched closed-form
OLS (:func:`ols_coefficients`: normal equations solved by
:func:`numpy.linalg.solve` over replicates and folds; fold training sums are
full-sample sums minus fold sums).

* :func:`experiment1` — the ideal hold-out: ``K`` independent training sets
  and ``K`` independent test sets of size ``n``; the ``K n`` test losses
  ``L_ki``. ``θ`` is the empirical variance of ``μ̂ = mean(L)`` over
  replicated experiments, compared with the means of ``θ̂1`` (ignores the
  correlations, biased low) and ``θ̂2`` (the variance of the ``K`` test-set
  means over ``K``: unbiased since ``γ = 0``). The same ratios follow from the
  estimated ``σ², ω, γ`` (:func:`cvstats.kernels.kfold.kfold_moments`, the
  kernel of :func:`cvstats.kfold_moments`) and
  :func:`cvstats.quadratic_estimator_bias`.
* :func:`experiment2` — one sample of size ``n``, K-fold CV; ``σ², ω, γ``
  from replicated runs and the three contributions ``σ²/n``, ``(m-1)ω/n``,
  ``(n-m)γ/n`` of ``Var[CV]`` (docs/theory.md §7 eq. 4), against the training
  size ``n - m`` (fixed ``K``) or against ``K`` (fixed ``n``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from cvstats import quadratic_estimator_bias
from cvstats.checks import check_int
from cvstats.errors import ArgumentError
from cvstats.kernels.kfold import kfold_moments as _kfold_moments
from cvstats.studies._common import FloatArray

__all__ = [
    "simulate",
    "ols_coefficients",
    "experiment1",
    "experiment2",
    "experiment1_figure",
    "experiment2_figure",
]

_COMPONENTS = ("contribution_sigma2", "contribution_omega", "contribution_gamma")


def simulate(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    *,
    d: int = 30,
    outliers: bool = False,
    p: float = 0.95,
) -> tuple[FloatArray, FloatArray]:
    """Draw examples of the regression of docs/studies.md §E.

    Parameters
    ----------
    rng : numpy.random.Generator
        Random generator.
    shape : tuple of int
        Batch shape of the examples (e.g. ``(replicates, n)``).
    d : int, default 30
        Input dimension.
    outliers : bool, default False
        The outlier variant (contamination ``1 - p``).
    p : float, default 0.95
        Probability of a regular example in the outlier variant.

    Returns
    -------
    x : ndarray, shape (*shape, d)
    y : ndarray, shape shape
    """
    x = rng.standard_normal((*shape, d))
    eps = rng.standard_normal(shape)
    if not outliers:
        return x, np.sqrt(3.0 / d) * x.sum(-1) + eps
    scale = p + 100.0 * (1.0 - p)
    wild = rng.random(shape) >= p
    x = np.where(wild[..., None], 10.0 * x, x)
    eps = eps * np.where(wild, 10.0, 1.0) / np.sqrt(scale)
    return x, np.sqrt(3.0 / (d * scale)) * x.sum(-1) + eps


def _design(x: FloatArray) -> FloatArray:
    return np.concatenate([np.ones((*x.shape[:-1], 1)), x], axis=-1)


def ols_coefficients(xtx: FloatArray, xty: FloatArray) -> FloatArray:
    """Batched OLS from normal-equation sums.

    Parameters
    ----------
    xtx : ndarray, shape (..., q, q)
        ``Zᵀ Z`` of each training set (``Z`` the design with intercept).
    xty : ndarray, shape (..., q)
        ``Zᵀ y``.

    Returns
    -------
    ndarray, shape (..., q)
    """
    return np.linalg.solve(xtx, xty[..., None])[..., 0]


def _check_sizes(values: Sequence[int], name: str, minimum: int) -> list[int]:
    out = [int(v) for v in values]
    if not out or any(v < minimum for v in out):
        raise ArgumentError(f"`{name}` must hold ints >= {minimum}, got {list(values)!r}.")
    return out


def experiment1(
    ns: Sequence[int] = (40, 60, 80, 120, 160, 240, 320),
    *,
    K: int = 10,
    replicates: int = 1000,
    d: int = 30,
    seed: int = 0,
    chunk: int = 100,
) -> xr.Dataset:
    """Bengio & Grandvalet's experiment 1: ideal hold-out, ``θ̂1/θ`` and ``θ̂2/θ`` against ``n``.

    Parameters
    ----------
    ns : sequence of int
        Sizes ``n`` of every training and every test set (``> d + 1``).
    K : int, default 10
        Independent training/test pairs per experiment.
    replicates : int, default 1000
        Independent experiments per ``n`` (``θ`` is the variance of ``μ̂`` over them).
    d : int, default 30
        Input dimension.
    seed : int, default 0
        Seed (each ``n`` has its own stream).
    chunk : int, default 100
        Replicates simulated at once (memory).

    Returns
    -------
    xarray.Dataset
        Over ``n``: ``theta`` (empirical variance of ``μ̂``), ``theta1``,
        ``theta2`` (means of the estimators over replicates), ``ratio1``,
        ``ratio2`` (``E[θ̂]/θ``) with Monte Carlo standard errors
        ``ratio1_se``, ``ratio2_se`` (delta method), the moments ``mu``,
        ``sigma2``, ``omega``, ``gamma`` of the ``K n`` losses (blocks: the test
        sets) and ``ratio1_moments``, ``ratio2_moments`` (``E[θ̂]/θ`` from the
        moments by :func:`cvstats.quadratic_estimator_bias`).
    """
    ns = _check_sizes(ns, "ns", d + 3)
    K, replicates = _check_sizes([K], "K", 2)[0], _check_sizes([replicates], "replicates", 3)[0]
    seed = check_int("seed", seed, 0)
    rows = []
    for n in ns:
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, n)))
        losses = []
        for start in range(0, replicates, chunk):
            b = min(chunk, replicates - start)
            xtr, ytr = simulate(rng, (b, K, n), d=d)
            xte, yte = simulate(rng, (b, K, n), d=d)
            ztr, zte = _design(xtr), _design(xte)
            zt = np.swapaxes(ztr, -1, -2)
            beta = ols_coefficients(zt @ ztr, (zt @ ytr[..., None])[..., 0])
            pred = (zte @ beta[..., None])[..., 0]
            losses.append(((yte - pred) ** 2).reshape(b, K * n))
        L = np.concatenate(losses)  # (replicates, K n)
        fold = np.repeat(np.arange(K), n)
        mu_hat = L.mean(-1)
        theta1 = ((L - mu_hat[:, None]) ** 2).sum(-1) / (K * n * (K * n - 1))
        block = L.reshape(-1, K, n).mean(-1)
        theta2 = block.var(-1, ddof=1) / K
        theta = mu_hat.var(ddof=1)
        mom = _kfold_moments(L, fold)
        moments = {f: float(getattr(mom, f)) for f in ("mu", "sigma2", "omega", "gamma")}
        row = {"n": n, "theta": theta, "theta1": theta1.mean(), "theta2": theta2.mean(), **moments}
        for k, est in (("1", theta1), ("2", theta2)):
            row[f"ratio{k}"] = est.mean() / theta
            # delta method: Var[mean] / θ² + ratio² · Var[s²]/θ² ≈ 2/(R-1) for the sample variance
            rel = np.sqrt(est.var(ddof=1) / replicates / est.mean() ** 2 + 2.0 / (replicates - 1))
            row[f"ratio{k}_se"] = row[f"ratio{k}"] * rel
            q = quadratic_estimator_bias(f"theta{k}", moments, n=K * n, K=K)
            row[f"ratio{k}_moments"] = float(q["expected"] / q["theta"])
        rows.append(row)
    ds = xr.Dataset(
        {k: ("n", np.array([r[k] for r in rows], dtype=float)) for k in rows[0] if k != "n"},
        coords={"n": ns},
        attrs={"experiment": 1, "K": K, "replicates": replicates, "d": d, "seed": seed},
    )
    return ds


def _kfold_errors(
    rng: np.random.Generator, b: int, n: int, K: int, d: int, outliers: bool
) -> FloatArray:
    """Out-of-fold squared errors of ``b`` independent K-fold runs, shape ``(b, n)``."""
    m = n // K
    x, y = simulate(rng, (b, n), d=d, outliers=outliers)
    z = _design(x).reshape(b, K, m, d + 1)
    yk = y.reshape(b, K, m)
    zt = np.swapaxes(z, -1, -2)
    fold_xtx = zt @ z
    fold_xty = (zt @ yk[..., None])[..., 0]
    beta = ols_coefficients(
        fold_xtx.sum(1, keepdims=True) - fold_xtx, fold_xty.sum(1, keepdims=True) - fold_xty
    )  # (b, K, q): trained without fold k
    pred = (z @ beta[..., None])[..., 0]
    return ((yk - pred) ** 2).reshape(b, n)


def experiment2(
    ns: Sequence[int] = (40, 60, 80, 100, 120, 160, 200, 240, 320, 400),
    *,
    K: int | Sequence[int] = 10,
    replicates: int = 1000,
    outliers: bool = False,
    d: int = 30,
    seed: int = 0,
    chunk: int = 200,
) -> xr.Dataset:
    """Bengio & Grandvalet's experiment 2: ``σ², ω, γ`` and their contributions to ``Var[CV]``.

    Give several ``ns`` and one ``K`` (contributions against the training size
    ``n - m``), or one ``n`` and several ``K`` (against ``K``; ``n = 120``
    in the paper).

    Parameters
    ----------
    ns : sequence of int
        Sample sizes (multiples of every ``K``, with ``n - n/K > d + 1``).
    K : int or sequence of int, default 10
        Numbers of folds.
    replicates : int, default 1000
        Independent samples (K-fold runs) per ``(n, K)``.
    outliers : bool, default False
        The outlier variant of docs/studies.md §E.
    d : int, default 30
        Input dimension.
    seed : int, default 0
        Seed (each ``(n, K)`` has its own stream).
    chunk : int, default 200
        Replicates simulated at once (memory).

    Returns
    -------
    xarray.Dataset
        Over ``(n, K)``: the fields of :class:`cvstats.kernels.kfold.KFoldMoments`
        (``mu``, ``sigma2``, ``omega``, ``gamma``, ``contribution_sigma2``,
        ``contribution_omega``, ``contribution_gamma``, ``theta``, the
        eigenvalues, ``empirical_var``) and ``n_train`` (``n - m``); NaN where
        ``K`` does not divide ``n``.
    """
    ns = _check_sizes(ns, "ns", d + 3)
    Ks = _check_sizes([K] if isinstance(K, int | np.integer) else K, "K", 2)
    replicates = _check_sizes([replicates], "replicates", 3)[0]
    seed = check_int("seed", seed, 0)
    fields = (
        "mu", "sigma2", "omega", "gamma", *_COMPONENTS, "theta",
        "lambda1", "lambda2", "lambda3", "empirical_var",
    )  # fmt: skip
    out = {f: np.full((len(ns), len(Ks)), np.nan) for f in fields}
    n_train = np.full((len(ns), len(Ks)), np.nan)
    for i, n in enumerate(ns):
        for j, k in enumerate(Ks):
            if n % k or n - n // k <= d + 1:
                continue
            rng = np.random.default_rng(
                np.random.SeedSequence(seed, spawn_key=(2, int(outliers), n, k))
            )
            e = np.concatenate(
                [
                    _kfold_errors(rng, min(chunk, replicates - s), n, k, d, outliers)
                    for s in range(0, replicates, chunk)
                ]
            )
            mom = _kfold_moments(e, np.repeat(np.arange(k), n // k))
            for f in fields:
                out[f][i, j] = float(getattr(mom, f))
            n_train[i, j] = n - n // k
    ds = xr.Dataset(
        {f: (("n", "K"), v) for f, v in out.items()},
        coords={"n": ns, "K": Ks},
        attrs={"experiment": 2, "replicates": replicates, "outliers": int(outliers), "d": d,
               "seed": seed},
    )  # fmt: skip
    ds["n_train"] = (("n", "K"), n_train)
    return ds


def experiment1_figure(ds: xr.Dataset, path: str | None = None) -> object:
    """Plot ``E[θ̂1]/θ`` and ``E[θ̂2]/θ`` against ``n`` (with ±2 s.e. bands)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    n = ds["n"].values
    for k, label in (("1", "θ̂1 (ignores correlations)"), ("2", "θ̂2 (test-set means)")):
        r, se = ds[f"ratio{k}"].values, ds[f"ratio{k}_se"].values
        ax.plot(n, r, marker="o", label=label)
        ax.fill_between(n, r - 2 * se, r + 2 * se, alpha=0.2)
        ax.plot(n, ds[f"ratio{k}_moments"].values, ls=":", color="grey")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xlabel("n (size of each training and test set)")
    ax.set_ylabel("E[θ̂] / θ")
    ax.set_title(f"Ideal hold-out, K = {ds.attrs['K']}")
    ax.legend()
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def experiment2_figure(
    panels: dict[str, xr.Dataset], *, against: str = "n_train", path: str | None = None
) -> object:
    """Stacked contributions of ``σ², ω, γ`` to ``Var[CV]``, one panel per dataset.

    Parameters
    ----------
    panels : dict of str to xarray.Dataset
        Title → output of :func:`experiment2` (one ``K`` for ``against="n_train"``,
        one ``n`` for ``against="K"``).
    against : {"n_train", "K"}
        Horizontal axis.
    path : str, optional
        Where to save the figure.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.5), squeeze=False)
    labels = {"contribution_sigma2": "σ²/n", "contribution_omega": "(m−1)ω/n",
              "contribution_gamma": "(n−m)γ/n"}  # fmt: skip
    for ax, (title, ds) in zip(axes[0], panels.items(), strict=True):
        flat = ds.stack(point=("n", "K")).dropna("point", subset=["theta"])
        x = flat["n_train"].values if against == "n_train" else flat["K"].values
        order = np.argsort(x)
        for comp in _COMPONENTS:
            ax.plot(x[order], flat[comp].values[order], marker="o", label=labels[comp])
        ax.plot(x[order], flat["theta"].values[order], color="black", label="Var[CV]")
        ax.axhline(0.0, color="grey", lw=0.6)
        ax.set_xlabel("training size n − m" if against == "n_train" else "K")
        if against == "K":
            ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1e-4)
        ax.set_title(title)
    axes[0, 0].set_ylabel("contribution to Var[CV]")
    axes[0, 0].legend()
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
