"""Kernels of the Bayesian sign and signed-rank tests across datasets (numpy only).

Benavoli, Corani, Demšar & Zaffalon (2017), "Time for a change: a tutorial for
comparing multiple classifiers through Bayesian analysis", JMLR 18(77), §4–5;
the signed-rank test is Benavoli, Corani, Mangili, Zaffalon & Ruggeri (2014),
"A Bayesian Wilcoxon signed-rank test based on the Dirichlet process", ICML.

The input is the vector of per-dataset differences ``d_i`` oriented so that a
positive difference favours the *right* model. Three regions partition the
difference: *left* (``d < -rope``), the region of practical equivalence
*rope* (``|d| <= rope``) and *right* (``d > rope``). Each draw of the posterior
is a point ``(θ_left, θ_rope, θ_right)`` of the simplex:

* **sign test**: ``θ ~ Dirichlet(n_left, n_rope, n_right)`` plus the
  prior's pseudo-counts (``prior`` on one region, ``1e-4`` on each for numerical
  stability, as baycomp);
* **signed-rank test**: a Dirichlet process with a pseudo-observation at
  ``d_0 = 0`` of weight ``prior``; a draw is the weight vector
  ``w ~ Dirichlet(prior, 1, ..., 1)`` over ``(d_0, d_1, ..., d_n)`` and
  ``θ_right = Σ_ij w_i w_j H(d_i + d_j - 2·rope)``,
  ``θ_left = Σ_ij w_i w_j H(-d_i - d_j - 2·rope)`` over every ordered pair,
  the diagonal included (the Walsh averages), with ``H`` the Heaviside step
  (``1/2`` at ``0``), and ``θ_rope = 1 - θ_left - θ_right``.

The probabilities reported are those of each region being the most probable:
the share of draws in which it has the largest ``θ`` (baycomp's
``Posterior.probs``); without a rope (``rope = 0``) those of left and right are
renormalised to sum to one, as baycomp does. All draws are computed at once
(no loop over draws or datasets).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "REGIONS",
    "STABILITY",
    "region_counts",
    "sign_posterior",
    "signed_rank_posterior",
    "winner_probabilities",
]

#: The regions of a draw, in column order.
REGIONS = ("left", "rope", "right")
#: Pseudo-count added to every region of the sign test (numerical stability, as baycomp).
STABILITY = 1e-4


def region_counts(diff: np.ndarray, rope: float) -> np.ndarray:
    """Return ``[n_left, n_rope, n_right]``: the differences below, inside and above the rope.

    Parameters
    ----------
    diff : numpy.ndarray
        Per-dataset differences, positive when the right model is better.
    rope : float
        Half-width of the region of practical equivalence (``>= 0``).

    Returns
    -------
    numpy.ndarray
        Three integers.

    Examples
    --------
    >>> region_counts(np.array([-0.3, 0.0, 0.05, 0.2]), 0.1).tolist()
    [1, 2, 1]
    """
    diff = np.asarray(diff, dtype=float)
    left = int(np.sum(diff < -rope))
    right = int(np.sum(diff > rope))
    return np.array([left, diff.size - left - right, right])


def sign_posterior(
    diff: np.ndarray,
    rope: float,
    *,
    prior: float,
    prior_region: int,
    n_samples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Return draws of the Bayesian sign test's posterior (Benavoli et al. 2017, §4–5).

    Parameters
    ----------
    diff : numpy.ndarray
        Per-dataset differences, positive when the right model is better.
    rope : float
        Half-width of the rope (``>= 0``; ``0``: the rope is the ties).
    prior : float
        Strength of the prior (pseudo-count, ``>= 0``).
    prior_region : int
        Index in :data:`REGIONS` of the region the prior's pseudo-count goes to.
    n_samples : int
        Number of draws.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        ``(n_samples, 3)``: ``θ_left, θ_rope, θ_right`` of each draw.

    Examples
    --------
    >>> draws = sign_posterior(np.array([0.2, 0.3, 0.25]), 0.1, prior=1.0, prior_region=1,
    ...                        n_samples=1000, rng=np.random.default_rng(0))
    >>> draws.shape, bool(np.allclose(draws.sum(axis=1), 1.0))
    ((1000, 3), True)
    """
    alpha = region_counts(diff, rope).astype(float) + STABILITY
    alpha[prior_region] += prior
    return rng.dirichlet(alpha, n_samples)


def signed_rank_posterior(
    diff: np.ndarray,
    rope: float,
    *,
    prior: float,
    n_samples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Return draws of the Bayesian signed-rank test's posterior (Benavoli et al. 2017, §4–5).

    Parameters
    ----------
    diff : numpy.ndarray
        Per-dataset differences, positive when the right model is better.
    rope : float
        Half-width of the rope (``>= 0``; ``0``: no rope, ``θ_rope = 0``).
    prior : float
        Weight of the pseudo-observation at ``0`` (``> 0``).
    n_samples : int
        Number of draws.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        ``(n_samples, 3)``: ``θ_left, θ_rope, θ_right`` of each draw.

    Examples
    --------
    >>> draws = signed_rank_posterior(np.array([0.2, 0.3, 0.25]), 0.1, prior=0.5,
    ...                               n_samples=1000, rng=np.random.default_rng(0))
    >>> draws.shape, bool(np.allclose(draws.sum(axis=1), 1.0))
    ((1000, 3), True)
    """
    z = np.concatenate([[0.0], np.asarray(diff, dtype=float)])
    sums = z[:, None] + z[None, :]
    weights = np.ones(z.size)
    weights[0] = prior
    draws = rng.dirichlet(weights, n_samples)
    above = np.heaviside(sums - 2 * rope, 0.5)
    out = np.zeros((n_samples, 3))
    out[:, 2] = np.sum((draws @ above) * draws, axis=1)  # w' H w for every draw at once
    if rope > 0:
        below = np.heaviside(-sums - 2 * rope, 0.5)
        out[:, 0] = np.sum((draws @ below) * draws, axis=1)
        out[:, 1] = 1.0 - out[:, 0] - out[:, 2]
    else:
        out[:, 0] = 1.0 - out[:, 2]
    return out


def winner_probabilities(draws: np.ndarray, with_rope: bool) -> np.ndarray:
    """Return the share of draws in which each region is the most probable.

    Parameters
    ----------
    draws : numpy.ndarray
        ``(n_samples, 3)`` draws of ``(θ_left, θ_rope, θ_right)``.
    with_rope : bool
        ``False``: left and right are renormalised to sum to one and the rope's is
        ``0`` (a test without a rope, as baycomp); both are NaN when the rope
        region won every draw.

    Returns
    -------
    numpy.ndarray
        ``[P(left), P(rope), P(right)]``.

    Examples
    --------
    >>> winner_probabilities(np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]]), True).tolist()
    [0.5, 0.5, 0.0]
    """
    counts = np.bincount(np.argmax(draws, axis=1), minlength=3).astype(float)
    if with_rope:
        return counts / counts.sum()
    sides = counts[0] + counts[2]
    if sides == 0:  # the ties' region won every draw: no side to prefer
        return np.array([np.nan, 0.0, np.nan])
    return np.array([counts[0] / sides, 0.0, counts[2] / sides])
