"""Evaluations of fixed models: the moments of a benchmark of questions (Miller, 2024).

One unit (a model's score, or a difference of two models' scores) on a
benchmark: an array ``x`` of shape ``(G, Q)``, ``G`` generations (repeated
answers) of each of ``Q`` questions, and optionally each question's cluster.
Miller (2024, "Adding error bars to evals", arXiv:2411.00640) writes a score
as ``x_qg = μ_q + ε_qg``: the question's mean and the noise of one
generation. Averaging the ``G`` generations of each question first,

* the estimate is the mean of the question means ``x̄_q``;
* the within-question variance ``σ²_w = E[Var(ε_qg)]`` is the mean over
  questions of the sample variance of their generations (Miller's section on
  reducing variance by resampling answers);
* the between-question variance ``σ²_b = Var(μ_q)`` is the sample variance
  of the question means less ``σ²_w / G`` (its expectation is
  ``σ²_b + σ²_w / G``), unbiased and possibly negative in small samples;
* the standard error is ``sqrt(s²(x̄) / Q)`` for independent questions, and
  for clustered questions (Miller's section on clustered standard errors)
  the cluster-robust one of a regression
  on a constant with statsmodels' small-sample correction ``C / (C - 1)``
  (Cameron & Miller, 2015, the CR1 correction; ``statsmodels`` ``cov_type="cluster"``):
  ``sqrt(C / (C - 1) · Σ_c (Σ_{q∈c} (x̄_q - x̄))² / Q²)``.

numpy only (the numeric layer).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from cvstats.errors import DesignError
from cvstats.kernels.cluster import check_enough_groups, cluster_moments

__all__ = ["EvalMoments", "cluster_stderr", "eval_moments"]

#: What to do with too few clusters on a benchmark (:func:`cluster_stderr`).
_CLUSTER_FIX = (
    "add clusters (questions from more passages or documents), or drop `cluster=` in "
    "cvstats.from_evals (cube.drop_vars('group')) if the questions are independent"
)


class EvalMoments(NamedTuple):
    """The moments of one unit on a benchmark (:func:`eval_moments`).

    Attributes
    ----------
    estimate : float
        Mean of the question means.
    stderr, df : float
        Standard error of the estimate and the degrees of freedom of its t
        reference: clustered (``C - 1``) when clusters are given, else
        independent questions (``Q - 1``).
    stderr_iid : float
        The standard error for independent questions, ``sqrt(s²(x̄) / Q)``.
    var_within : float
        ``σ̂²_w``, the within-question variance of one generation (NaN for ``G = 1``).
    var_between : float
        ``σ̂²_b = s²(x̄) - σ̂²_w / G`` (``s²(x̄)`` for ``G = 1``: then the two are not
        separable).
    """

    estimate: float
    stderr: float
    df: float
    stderr_iid: float
    var_within: float
    var_between: float


def cluster_stderr(means: ArrayLike, codes: ArrayLike) -> float:
    """Return the cluster-robust standard error of the mean of ``means``.

    Parameters
    ----------
    means : array-like, shape (Q,)
        One value per question.
    codes : array-like of int, shape (Q,)
        Each question's cluster, coded ``0..C-1``, every code used.

    Returns
    -------
    float
        ``sqrt(C / (C - 1) · Σ_c (Σ_{q∈c} e_q)² / Q²)`` with ``e_q = x̄_q - x̄``:
        statsmodels' ``OLS(means, ones).fit(cov_type="cluster")`` standard error
        (Cameron & Miller, 2015, with the ``C / (C - 1)`` correction;
        the ``(Q - 1) / (Q - K)`` factor is 1 for the one regressor).

    Raises
    ------
    DesignError
        Fewer than :data:`~cvstats.kernels.cluster.MIN_GROUPS` clusters, the
        rule of every cluster-robust variance in cvstats
        (:func:`~cvstats.kernels.cluster.check_enough_groups`).
    """
    x = np.asarray(means, dtype=np.float64)
    c = np.asarray(codes, dtype=np.int64)
    n_clusters = int(c.max()) + 1 if c.size else 0
    check_enough_groups(
        n_clusters, "a benchmark's standard error", unit="cluster", fix=_CLUSTER_FIX
    )
    return float(np.sqrt(cluster_moments(x, c).variance))


def eval_moments(scores: ArrayLike, codes: ArrayLike | None = None) -> EvalMoments:
    """Return the estimate, standard errors and variance components of one unit.

    Parameters
    ----------
    scores : array-like, shape (G, Q)
        ``G >= 1`` generations of ``Q >= 2`` questions, finite.
    codes : array-like of int, shape (Q,), optional
        Each question's cluster coded ``0..C-1`` (:func:`cluster_stderr`);
        None for independent questions.

    Returns
    -------
    EvalMoments

    Raises
    ------
    DesignError
        Fewer than 2 questions, or fewer than
        :data:`~cvstats.kernels.cluster.MIN_GROUPS` clusters.
    """
    x = np.asarray(scores, dtype=np.float64)
    n_gen, n_q = x.shape
    if n_q < 2:
        raise DesignError(
            f"the benchmark has {n_q} question(s); a standard error needs at least 2."
        )
    means = x.mean(axis=0)
    total = float(np.var(means, ddof=1))
    within = float(np.mean(np.var(x, axis=0, ddof=1))) if n_gen > 1 else np.nan
    between = total - within / n_gen if n_gen > 1 else total
    iid = float(np.sqrt(total / n_q))
    if codes is None:
        stderr, df = iid, float(n_q - 1)
    else:
        c = np.asarray(codes, dtype=np.int64)
        stderr, df = cluster_stderr(means, c), float(c.max())  # C - 1
    return EvalMoments(float(means.mean()), stderr, df, iid, within, between)
