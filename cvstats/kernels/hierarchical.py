"""Kernel of the hierarchical correlated t test across datasets (numpy/scipy only).

Corani, Benavoli, Demšar, Mangili & Zaffalon (2017), "Statistical comparison of
classifiers through Bayesian hierarchical modelling", Machine Learning 106,
§3 (the model) with the priors of baycomp's ``HierarchicalTest``.
On dataset ``i`` the ``n_i`` fold differences ``x_i`` (positive: the right
learner better) are

    x_i ~ MVN(δ_i 1, σ_i² M),  M = (1 - ρ) I + ρ 11'            (correlated folds)
    δ_i ~ t_ν(μ0, σ0)                                             (datasets)
    μ0 ~ U(-max|x|, max|x|),  σ0 ~ U(0, 1000 s_among),  σ_i ~ U(0, 1000 s_within)
    ν - 1 ~ Gamma(α, β),  α ~ U(1, 2),  β ~ U(0.01, 0.1)  (rate β)

on the differences divided by the mean of the datasets' standard deviations
(baycomp's scaling; ``s_within`` and ``s_among`` are the mean within-dataset
standard deviation and the standard deviation of the dataset means).

The likelihood depends on ``x_i`` only through its mean ``x̄_i`` and
``S_i = Σ_j (x_ij - x̄_i)²``: with ``M⁻¹ = (I - ρ/(1 + (n - 1)ρ) 11')/(1 - ρ)``
and ``det M = (1 + (n - 1)ρ)(1 - ρ)^(n-1)``,

    (x - δ1)' M⁻¹ (x - δ1) = S/(1 - ρ) + (x̄ - δ)² / c,  c = (1 + (n - 1)ρ)/n.

The sampler is a (partially collapsed) Gibbs sampler, all chains at once: the
Student t as a scale mixture (``δ_i | λ_i ~ N(μ0, σ0²/λ_i)``,
``λ_i ~ Gamma(ν/2, ν/2)``); ``σ0`` (random-walk Metropolis on ``log σ0``) and
``μ0`` (truncated normal) with the ``δ_i`` integrated out, then the ``δ_i``
(normal), ``σ0`` again given them (truncated gamma in ``σ0⁻²``), the ``σ_i``
(truncated gamma in ``σ_i⁻²``), ``ν`` (random-walk Metropolis on ``log(ν - 1)``
with the ``λ_i`` integrated out) and the ``λ_i`` given it, ``α`` (independence
Metropolis from its prior) and ``β`` (truncated gamma by inversion). The
Metropolis step sizes adapt during the warm-up only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import gammainc, gammaincinv, gammaln, ndtr, ndtri, stdtr

__all__ = [
    "PRIORS",
    "HierarchicalDraws",
    "Scaled",
    "region_probabilities",
    "sample_hierarchical",
    "scaled_statistics",
]

#: baycomp's ``HierarchicalTest`` priors: bounds of α, β and the factor of the σ bounds.
PRIORS = {"alpha": (1.0, 2.0), "beta": (0.01, 0.1), "upper_sigma": 1000.0}

_TARGET_ACCEPT = 0.44  # of a one-dimensional random-walk Metropolis (Roberts & Rosenthal 2001)


class Scaled(NamedTuple):
    """Sufficient statistics of the scaled differences and the prior bounds."""

    scale: float  # the differences were divided by it
    mean: np.ndarray  # x̄_i
    ss: np.ndarray  # S_i
    n: np.ndarray  # n_i
    max_abs: float
    sigma_hi: float
    sigma0_hi: float


class HierarchicalDraws(NamedTuple):
    """Posterior draws over ``(chain, draw)`` (and ``dataset`` for δ and σ), in data units."""

    mu0: np.ndarray
    sigma0: np.ndarray
    nu: np.ndarray
    delta: np.ndarray
    sigma: np.ndarray
    acceptance: np.ndarray  # (2,): mean acceptance rates of the σ0 and ν Metropolis steps


def scaled_statistics(diff: np.ndarray, upper_sigma: float = PRIORS["upper_sigma"]) -> Scaled:
    """Return the sufficient statistics of ``diff`` (datasets × folds) scaled as baycomp does.

    Parameters
    ----------
    diff : numpy.ndarray
        ``(q, n)`` fold differences; every row must have a positive variance.
    upper_sigma : float
        Factor of the upper bounds of ``σ_i`` and ``σ0``.

    Returns
    -------
    Scaled

    Examples
    --------
    >>> s = scaled_statistics(np.array([[1.0, 3.0], [2.0, 6.0]]))  # fold sds 1 and 2
    >>> s.scale, s.mean.round(4).tolist(), s.ss.round(4).tolist()
    (1.5, [1.3333, 2.6667], [0.8889, 3.5556])
    """
    diff = np.asarray(diff, dtype=float)
    sds = np.std(diff, axis=1)
    scale = float(np.mean(sds))
    x = diff / scale
    mean = x.mean(axis=1)
    ss = np.sum((x - mean[:, None]) ** 2, axis=1)
    within = float(np.mean(np.std(x, axis=1)))  # 1 by construction
    among = float(np.std(mean)) if x.shape[0] > 1 else within
    if among == 0:  # identical dataset means: no scale among them, use the within one
        among = within
    return Scaled(
        scale=scale,
        mean=mean,
        ss=ss,
        n=np.full(x.shape[0], x.shape[1], dtype=float),
        max_abs=float(np.max(np.abs(x))),
        sigma_hi=within * upper_sigma,
        sigma0_hi=among * upper_sigma,
    )


def _inv_gamma_sd(
    rng: np.random.Generator, shape: np.ndarray, rate: np.ndarray, upper: float
) -> np.ndarray:
    """Draw ``σ`` with ``σ⁻² ~ Gamma(shape, rate)`` truncated to ``σ < upper`` (by rejection)."""
    shape, rate = np.broadcast_arrays(shape, rate)
    tau = rng.standard_gamma(shape) / rate
    low = 1.0 / upper**2
    bad = tau < low
    for _ in range(100):  # the bound is 1000 standard deviations away: rejections are rare
        if not bad.any():
            break
        tau[bad] = rng.standard_gamma(shape[bad]) / rate[bad]
        bad = tau < low
    tau[bad] = low  # pragma: no cover - vanishingly rare
    return 1.0 / np.sqrt(tau)


def _truncated_normal(
    rng: np.random.Generator, mean: np.ndarray, sd: np.ndarray, low: float, high: float
) -> np.ndarray:
    """Draw ``N(mean, sd²)`` truncated to ``(low, high)`` by inversion."""
    a, b = ndtr((low - mean) / sd), ndtr((high - mean) / sd)
    u = a + rng.random(mean.shape) * (b - a)
    return np.clip(mean + sd * ndtri(np.clip(u, 1e-300, 1 - 1e-16)), low, high)


def _beta_draw(
    rng: np.random.Generator, alpha: np.ndarray, m: np.ndarray, low: float, high: float
) -> np.ndarray:
    """Draw ``β ∝ β^α exp(-β m)`` on ``(low, high)``: a truncated Gamma(α + 1, m), by inversion."""
    u = rng.random(alpha.shape)
    flat = m * high < 1e-6  # exp(-β m) ≈ 1: the power law β^α
    out = np.empty_like(alpha)
    k = alpha + 1
    pl, ph = low ** k[flat], high ** k[flat]
    out[flat] = (pl + u[flat] * (ph - pl)) ** (1 / k[flat])
    g = ~flat
    fl, fh = gammainc(k[g], m[g] * low), gammainc(k[g], m[g] * high)
    out[g] = gammaincinv(k[g], fl + u[g] * (fh - fl)) / m[g]
    return np.clip(out, low, high)


def _adapt(step: np.ndarray, accepted: np.ndarray, it: int) -> np.ndarray:
    """Robbins–Monro update of log step sizes toward the target acceptance."""
    return step * np.exp((accepted - _TARGET_ACCEPT) / np.sqrt(it + 1))


def sample_hierarchical(
    stats: Scaled,
    rho: float,
    *,
    chains: int,
    draws: int,
    warmup: int,
    rng: np.random.Generator,
) -> HierarchicalDraws:
    """Draw the posterior of the hierarchical correlated t model (module docstring).

    Parameters
    ----------
    stats : Scaled
        From :func:`scaled_statistics`.
    rho : float
        Correlation of the fold differences, in ``[0, 1)``.
    chains, draws, warmup : int
        Chains run side by side, kept draws per chain, warm-up iterations per chain.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    HierarchicalDraws
        In the units of the differences (the scaling undone).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> diff = rng.normal(0.02, 0.05, (8, 20)) + rng.normal(0, 0.01, (8, 1))
    >>> out = sample_hierarchical(scaled_statistics(diff), 0.1, chains=2, draws=200,
    ...                           warmup=200, rng=rng)
    >>> out.mu0.shape, out.delta.shape
    ((2, 200), (2, 200, 8))
    """
    xbar, ss, n = stats.mean, stats.ss, stats.n
    q = xbar.size
    c = (1 + (n - 1) * rho) / n  # variance factor of x̄_i given δ_i, σ_i
    w = ss / (1 - rho)
    lo, hi = -stats.max_abs, stats.max_abs
    a_lo, a_hi = PRIORS["alpha"]
    b_lo, b_hi = PRIORS["beta"]

    # dispersed initial values, one set per chain
    spread = float(np.std(xbar)) if q > 1 else 1.0
    spread = spread if spread > 0 else 1.0
    mu0 = np.clip(xbar.mean() + spread * rng.normal(size=chains), lo, hi)
    sigma0 = np.minimum(spread * np.exp(rng.normal(size=chains)), 0.5 * stats.sigma0_hi)
    delta = xbar + 0.1 * spread * rng.normal(size=(chains, q))
    sigma = np.sqrt(w / np.maximum(n - 1, 1)) * np.exp(0.1 * rng.normal(size=(chains, q)))
    m = np.exp(rng.uniform(0.0, np.log(60.0), chains))
    alpha = rng.uniform(a_lo, a_hi, chains)
    beta = rng.uniform(b_lo, b_hi, chains)
    lam = np.ones((chains, q))
    step = np.ones((2, chains))  # σ0 and ν random-walk scales (log space)
    accepted = np.zeros((2, chains))

    keep = {k: np.empty((chains, draws)) for k in ("mu0", "sigma0", "nu")}
    keep_delta = np.empty((chains, draws, q))
    keep_sigma = np.empty((chains, draws, q))

    def log_sigma0(s0: np.ndarray) -> np.ndarray:
        """Log p(σ0 | μ0, λ, σ, x̄) with δ integrated out, in log σ0 (Jacobian included)."""
        var = s0[:, None] ** 2 / lam + (sigma**2) * c
        dev = xbar - mu0[:, None]
        return -0.5 * np.sum(np.log(var) + dev * dev / var, axis=1) + np.log(s0)

    def log_nu(mm: np.ndarray, z2: np.ndarray) -> np.ndarray:
        """Log p(ν - 1 | δ, μ0, σ0, α, β) with λ integrated out, in log(ν - 1).

        ``z2`` are the squared standardized ``(δ_i - μ0)/σ0``; the terms of the t
        density that do not depend on ν are left out.
        """
        nu = 1 + mm
        const = gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu)
        lik = q * const - (nu + 1) / 2 * np.sum(np.log1p(z2 / nu[:, None]), axis=1)
        return lik + alpha * np.log(mm) - beta * mm

    for it in range(warmup + draws):
        # σ0 | μ0, λ, σ (δ integrated out): random-walk Metropolis on log σ0
        # (then a Gibbs draw given δ below)
        prop = sigma0 * np.exp(step[0] * rng.normal(size=chains))
        ok = prop < stats.sigma0_hi
        ratio = np.where(ok, log_sigma0(np.where(ok, prop, sigma0)) - log_sigma0(sigma0), -np.inf)
        acc = np.log(rng.random(chains)) < ratio
        sigma0 = np.where(acc, prop, sigma0)
        if it < warmup:
            step[0] = _adapt(step[0], acc, it)
        else:
            accepted[0] += acc
        # μ0 | σ0, λ, σ (δ integrated out): truncated normal
        var = sigma0[:, None] ** 2 / lam + (sigma**2) * c
        prec = np.sum(1 / var, axis=1)
        mu0 = _truncated_normal(rng, np.sum(xbar / var, axis=1) / prec, 1 / np.sqrt(prec), lo, hi)
        # δ_i | μ0, σ0, λ_i, σ_i: normal
        prior_prec = lam / sigma0[:, None] ** 2
        lik_prec = 1 / ((sigma**2) * c)
        post_prec = prior_prec + lik_prec
        post_mean = (prior_prec * mu0[:, None] + lik_prec * xbar) / post_prec
        delta = post_mean + rng.normal(size=(chains, q)) / np.sqrt(post_prec)
        # σ0 | δ, μ0, λ: σ0⁻² ~ Gamma((q - 1)/2, Σ λ (δ - μ0)²/2), σ0 < bound
        rate0 = 0.5 * np.sum(lam * (delta - mu0[:, None]) ** 2, axis=1)
        if q > 1:
            sigma0 = _inv_gamma_sd(rng, np.full(chains, (q - 1) / 2), rate0, stats.sigma0_hi)
        # σ_i | δ_i: σ_i⁻² ~ Gamma((n_i - 1)/2, Q_i/2), σ_i < bound
        quad = w + (xbar - delta) ** 2 / c
        sigma = _inv_gamma_sd(
            rng, np.broadcast_to((n - 1) / 2, quad.shape), quad / 2, stats.sigma_hi
        )
        # ν - 1 | δ, μ0, σ0, α, β (λ integrated out): random-walk Metropolis on log(ν - 1)
        z2 = ((delta - mu0[:, None]) / sigma0[:, None]) ** 2
        current = log_nu(m, z2)
        for _ in range(2):
            prop = m * np.exp(step[1] * rng.normal(size=chains))
            proposed = log_nu(prop, z2)
            acc = np.log(rng.random(chains)) < proposed - current
            m = np.where(acc, prop, m)
            current = np.where(acc, proposed, current)
            if it < warmup:
                step[1] = _adapt(step[1], acc, it)
            else:
                accepted[1] += acc
        nu = 1 + m
        # λ_i | ν, δ_i, μ0, σ0
        lam = rng.standard_gamma(((nu + 1) / 2)[:, None] + np.zeros((1, q))) / (
            (nu[:, None] + z2) / 2
        )
        # α | ν, β: independence Metropolis from U(1, 2); β | ν, α: truncated gamma
        prop = rng.uniform(a_lo, a_hi, chains)
        gain = (prop - alpha) * (np.log(beta) + np.log(m)) - gammaln(prop) + gammaln(alpha)
        alpha = np.where(np.log(rng.random(chains)) < gain, prop, alpha)
        beta = _beta_draw(rng, alpha, m, b_lo, b_hi)
        if it >= warmup:
            k = it - warmup
            keep["mu0"][:, k] = mu0
            keep["sigma0"][:, k] = sigma0
            keep["nu"][:, k] = nu
            keep_delta[:, k] = delta
            keep_sigma[:, k] = sigma
    s = stats.scale
    return HierarchicalDraws(
        mu0=keep["mu0"] * s,
        sigma0=keep["sigma0"] * s,
        nu=keep["nu"],
        delta=keep_delta * s,
        sigma=keep_sigma * s,
        acceptance=accepted.mean(axis=1) / (np.array([1, 2]) * max(draws, 1)),
    )


def region_probabilities(
    mu0: np.ndarray, sigma0: np.ndarray, nu: np.ndarray, rope: float
) -> np.ndarray:
    """Return ``(θ_left, θ_rope, θ_right)`` of a new dataset's ``δ ~ t_ν(μ0, σ0)`` per draw.

    Parameters
    ----------
    mu0, sigma0, nu : numpy.ndarray
        Draws of the hyper-parameters (same shape).
    rope : float
        Half-width of the rope (``>= 0``).

    Returns
    -------
    numpy.ndarray
        The draws' shape plus a last axis of 3.

    Examples
    --------
    >>> region_probabilities(np.array([0.0]), np.array([1.0]), np.array([1e6]), 1.0).round(4)
    array([[0.1587, 0.6827, 0.1587]])
    """
    left = stdtr(nu, (-rope - mu0) / sigma0)
    right = stdtr(nu, (mu0 - rope) / sigma0)  # 1 - T((rope - μ0)/σ0)
    return np.stack([left, 1.0 - left - right, right], axis=-1)
