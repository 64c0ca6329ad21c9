"""Benchmark: the hierarchical correlated t test vs baycomp's ``HierarchicalTest`` (Stan).

Two learners' fold scores on ``datasets`` datasets × ``folds`` folds (10 runs of
10-fold CV: ``ρ = 0.1``), rope 0.01. The candidate is
:func:`cvstats.bayesian_hierarchical_test` (numpy Gibbs sampler, 4 chains ×
``draws`` after ``warmup``); the baseline baycomp 1.0.3's
``HierarchicalTest.sample`` (pystan 3, NUTS, 4 chains × ``baycomp_draws``
after Stan's 1000 warm-up iterations; the model already compiled by httpstan, so
the compile time of a first run, ~3 minutes, is not counted; run in a temporary
folder so that baycomp's ``last-sample.pickle`` cache is not reused).

The samplers differ in how much each draw is worth, so the comparison is at the
same number of *effective* draws: the effective sample size (bulk ESS,
Vehtari et al. 2021) of the new-dataset probabilities ``θ_left, θ_rope, θ_right``
of the draws, the smallest of the three, is computed for both, and the baseline
time is baycomp's time scaled to the candidate's ESS:
``baseline_s = baycomp_s × ESS_cvstats / ESS_baycomp``. Target: >= 20x faster
(ratio <= 0.05).

baycomp's Stan back end is not a dependency of cvstats; where ``stan`` (pystan)
cannot be imported the baseline is the figure recorded in docs/benchmarks.md
(printed as such; no target). Run side by side with a Python that has both, e.g.
``PYTHONPATH=$PWD .stanvenv/bin/python -m benchmarks -k hierarchical``.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any

import numpy as np
from _shared import print_rows_main

import cvstats
from cvstats.kernels import mcmc

QUICK: dict[str, Any] = {"draws": 2000, "baycomp_draws": 500}
TARGET_RATIO = 0.05
#: baycomp seconds per effective draw measured side by side (docs/benchmarks.md), used when
#: pystan is missing.
RECORDED_BAYCOMP_S_PER_ESS = 0.037


def _scores(datasets: int, folds: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Accuracies of two learners: per-dataset levels and gaps, correlated fold noise."""
    rng = np.random.default_rng(seed)
    level = rng.uniform(0.65, 0.95, (datasets, 1))
    gap = rng.normal(0.005, 0.01, (datasets, 1))
    shared = rng.normal(0, 0.02, (datasets, folds))
    a = level + shared + rng.normal(0, 0.01, (datasets, folds))
    b = level + gap + shared + rng.normal(0, 0.01, (datasets, folds))
    return a, b


def _ess(theta: np.ndarray) -> float:
    """Smallest bulk ESS of the three columns of ``theta`` over ``(chain, draw, 3)``."""
    return min(mcmc.ess_bulk(theta[..., k]) for k in range(3))


def _baycomp(a: np.ndarray, b: np.ndarray, rope: float, draws: int) -> tuple[float, float] | None:
    """baycomp's time and ESS, or None when pystan is missing."""
    try:
        import baycomp
        import stan  # noqa: F401
    except ImportError:
        return None
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # baycomp caches its last sample in the working folder
        try:
            t0 = time.perf_counter()
            sample = baycomp.HierarchicalTest.sample(a, b, rope, runs=10, chains=4, nsamples=draws)
            seconds = time.perf_counter() - t0
        finally:
            os.chdir(here)
    theta = sample.reshape(draws, 4, 3).transpose(1, 0, 2)  # pystan: draw-major, chains inside
    return seconds, _ess(theta)


def run(
    datasets: int = 20,
    folds: int = 100,
    draws: int = 10_000,
    warmup: int = 1000,
    baycomp_draws: int = 2000,
) -> list[dict[str, Any]]:
    """Time both samplers on the same scores and compare at equal effective draws."""
    a, b = _scores(datasets, folds)
    rope = 0.01
    t0 = time.perf_counter()
    res = cvstats.bayesian_hierarchical_test(
        b - a,
        "a",
        "b",
        rho=0.1,
        rope=rope,
        draws=draws,
        warmup=warmup,
        seed=0,
        greater_is_better=True,
    )
    ours_s = time.perf_counter() - t0
    ours_ess = _ess(res.posterior["theta"].transpose("chain", "draw", "region").values)
    measured = _baycomp(a, b, rope, baycomp_draws)
    row: dict[str, Any] = {
        "name": "hierarchical_vs_baycomp",
        "candidate": f"cvstats.bayesian_hierarchical_test, 4 x {draws} draws (+{warmup})",
        "candidate_s": ours_s,
        "cvstats_ess": ours_ess,
        "cvstats_p": [float(res.p_left), float(res.p_rope), float(res.p_right)],
        "case": f"{datasets} datasets x {folds} fold scores, rho 0.1, rope {rope}",
    }
    if measured is None:
        print(
            "  baycomp's HierarchicalTest needs pystan, not installed here: the baseline is "
            "the recorded figure of docs/benchmarks.md, not measured"
        )
        row |= {
            "baseline": "baycomp HierarchicalTest (recorded s per effective draw; not installed)",
            "baseline_s": RECORDED_BAYCOMP_S_PER_ESS * ours_ess,
        }
        row["ratio"] = row["candidate_s"] / row["baseline_s"]
        return [row]
    seconds, ess = measured
    row |= {
        "baseline": (
            f"baycomp HierarchicalTest (pystan), 4 x {baycomp_draws} draws, scaled to the "
            "candidate's ESS"
        ),
        "baseline_s": seconds * ours_ess / ess,
        "baycomp_s": seconds,
        "baycomp_ess": ess,
        "target_ratio": TARGET_RATIO,
    }
    row["ratio"] = row["candidate_s"] / row["baseline_s"]
    return [row]


if __name__ == "__main__":
    print_rows_main(__doc__, run)
