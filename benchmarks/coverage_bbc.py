"""Monte Carlo coverage of BBC-CV's intervals for the selection's true error.

Not a timing benchmark (no ``bench_`` prefix: ``python -m benchmarks`` skips
it). Run from the repository root::

    python benchmarks/coverage_bbc.py            # full table (minutes)
    python benchmarks/coverage_bbc.py --reps 100 # quicker

Two worlds where each candidate's true error is known:

* ``gauss``: ``M = 10`` candidates whose per-example losses are Gaussian with
  unit variance and means ``1 + 0.05 |m - 4|`` (pairs of equal means around
  the best, candidate 4); no training, so a candidate's true error is its mean.
* ``ridge``: linear regression ``y = 1 + x·β + ε``, ``x ~ N(0, I_p)``, ``p = 20``,
  ``β_j = 1/j``, ``ε ~ N(0, 1)``; 10 ridge penalties ``logspace(-1, 3)`` (the
  intercept not penalized), 5-fold CV losses per example (squared loss). A
  fitted ``(a, b)`` has the exact true error
  ``1 + (a - 1)² + |b - β|²`` (Gaussian ``x``), so the target is exact.
* ``ridge1``: the studies' simple linear regression (Nadeau & Bengio problem
  1, simulation 1 of :mod:`cvstats.studies.regression`: ``x ~ N(10, 1)``,
  ``y = 100 + x + ε``, ``Var ε = 97``) with ridge on the slope, same grid: a
  world where every candidate has nearly the same error.

Target: the true error of the candidate with the smallest mean CV loss,
refitted on the whole data (for ``gauss``, its mean). Each search runs
:func:`cvstats.kernels.bbc.bbc_cv` on the per-example CV losses and forms the
intervals from the same replications:

* ``percentile``: the ``alpha/2``, ``1 - alpha/2`` percentiles of the
  out-of-bag losses (Tsamardinos et al. 2018);
* ``scaled``: the estimate plus the percentiles' deviations from it times
  ``sqrt(f / (1 - f))``, ``f = (1 - 1/n)^n`` (:func:`cvstats.kernels.bbc.oob_scale`,
  ``bbc_cv(..., interval="rescaled")``);
* ``scaled_f``: the same with the factor ``sqrt(f)``;
* ``normal``: the estimate ± ``z`` × the replications' standard deviation × ``sqrt(f/(1-f))``;
* ``ij``: the estimate ± ``z`` × the bias-corrected infinitesimal-jackknife
  standard deviation of a bootstrap mean (Efron 2014, JASA 109, eq. 3.3;
  Wager, Hastie & Efron 2014, JMLR 15, eq. 7).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from cvstats.kernels.bbc import bbc_cv, oob_scale, rescaled_percentiles, unit_counts
from cvstats.studies.regression import SIMULATIONS

M = 10
K = 5
PENALTIES = np.logspace(-1, 3, M)


def gauss_world(rng: np.random.Generator, n: int) -> tuple[np.ndarray, float, float]:
    """``(losses (n, M), true error of the CV winner, its expected error)``."""
    mu = 1.0 + 0.05 * np.abs(np.arange(M) - 4)
    losses = rng.normal(mu, 1.0, size=(n, M))
    true = float(mu[np.argmin(losses.mean(axis=0))])
    return losses, true, true


def _ridge(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ridge fits for every penalty: ``a (M,)``, ``b (M, p)`` (intercept unpenalized)."""
    xm, ym = x.mean(axis=0), y.mean()
    xc = x - xm
    d, v = np.linalg.eigh(xc.T @ xc)
    proj = v.T @ (xc.T @ (y - ym))  # (p,)
    b = (v[None] * (proj / (d[None] + PENALTIES[:, None]))[:, None, :]).sum(axis=-1)
    return ym - b @ xm, b


_EXPECTED: dict[tuple[float, int], np.ndarray] = {}


def _draw(rng: np.random.Generator, n: int, world: dict) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(world["x_mean"], 1.0, size=(n, world["beta"].size))
    noise = rng.normal(0.0, np.sqrt(world["noise_var"]), size=n)
    return x, world["intercept"] + x @ world["beta"] + noise


def _errors(x: np.ndarray, y: np.ndarray, world: dict) -> np.ndarray:
    """Exact true error of each penalty's fit on ``(x, y)``, ``x ~ N(x_mean 1, I)``."""
    a, b = _ridge(x, y)
    gap = b - world["beta"]
    bias = a - world["intercept"] + world["x_mean"] * gap.sum(axis=1)
    return world["noise_var"] + bias**2 + (gap**2).sum(axis=1)


def _ridge_world(rng: np.random.Generator, n: int, world: dict) -> tuple[np.ndarray, float, float]:
    x, y = _draw(rng, n, world)
    fold = rng.permutation(np.arange(n) % K)
    losses = np.empty((n, M))
    for k in range(K):
        test = fold == k
        a, b = _ridge(x[~test], y[~test])
        losses[test] = (y[test, None] - a[None] - x[test] @ b.T) ** 2
    best = int(np.argmin(losses.mean(axis=0)))
    key = (world["intercept"], n)
    if key not in _EXPECTED:  # each penalty's expected error at n, over 4000 data sets
        sims = np.random.default_rng(12345)
        _EXPECTED[key] = np.mean([_errors(*_draw(sims, n, world), world) for _ in range(4000)], 0)
    return losses, float(_errors(x, y, world)[best]), float(_EXPECTED[key][best])


RIDGE = {"intercept": 1.0, "beta": 1.0 / np.arange(1, 21), "x_mean": 0.0, "noise_var": 1.0}
_SIM1 = SIMULATIONS[1]  # the studies' simulation 1; the true error below needs var_x = 1
assert _SIM1["var_x"] == 1.0
RIDGE1 = {
    "intercept": _SIM1["alpha"],
    "beta": np.array([_SIM1["beta"]]),
    "x_mean": _SIM1["mu_x"],
    "noise_var": _SIM1["var_y"],
}


def ridge_world(rng: np.random.Generator, n: int) -> tuple[np.ndarray, float, float]:
    """20 features, ``β_j = 1/j``, unit noise."""
    return _ridge_world(rng, n, RIDGE)


def ridge1_world(rng: np.random.Generator, n: int) -> tuple[np.ndarray, float, float]:
    """The studies' simulation 1 (one feature), ridge on the slope."""
    return _ridge_world(rng, n, RIDGE1)


WORLDS = {"gauss": gauss_world, "ridge": ridge_world, "ridge1": ridge1_world}
METHODS = ("percentile", "scaled", "scaled_f", "normal", "ij")


def intervals(
    losses: np.ndarray, rng: np.random.Generator, n_boot: int, alpha: float
) -> tuple[float, dict[str, tuple[float, float]]]:
    n = losses.shape[0]
    draws = rng.integers(0, n, size=(n_boot, n))
    oob, _ = bbc_cv(losses, draws)
    used = np.isfinite(oob)
    oob, draws = oob[used], draws[used]
    est = float(oob.mean())
    f = (1 - 1 / n) ** n
    c = oob_scale(n)
    lo, hi = np.quantile(oob, [alpha / 2, 1 - alpha / 2])
    z = stats.norm.ppf(1 - alpha / 2)
    sd = oob.std(ddof=1)
    counts = unit_counts(draws, n)
    cov = ((counts - counts.mean(axis=0)) * (oob - est)[:, None]).mean(axis=0)
    v_ij = (cov**2).sum() - n / oob.size * sd**2  # Wager, Hastie & Efron (2014), eq. 7
    s_ij = np.sqrt(max(v_ij, 0.0))
    return est, {
        "percentile": (lo, hi),
        "scaled": rescaled_percentiles(oob, alpha, c),
        "scaled_f": rescaled_percentiles(oob, alpha, np.sqrt(f)),
        "normal": (est - z * c * sd, est + z * c * sd),
        "ij": (est - z * s_ij, est + z * s_ij),
    }


def run(world: str, n: int, reps: int, n_boot: int, alpha: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    hits = dict.fromkeys(METHODS, 0)
    hits_e = dict.fromkeys(METHODS, 0)
    width = dict.fromkeys(METHODS, 0.0)
    err, err_e = [], []
    for _ in range(reps):
        losses, true, expected = WORLDS[world](rng, n)
        est, ints = intervals(losses, rng, n_boot, alpha)
        err.append(est - true)
        err_e.append(est - expected)
        for m, (lo, hi) in ints.items():
            hits[m] += lo <= true <= hi
            hits_e[m] += lo <= expected <= hi
            width[m] += (hi - lo) / reps
    err = np.array(err)
    return {
        "world": world,
        "n": n,
        "bias": err.mean(),
        "sd": err.std(ddof=1),
        "bias_e": np.mean(err_e),
        "sd_e": np.std(err_e, ddof=1),
        **{m: hits[m] / reps for m in METHODS},
        **{f"e_{m}": hits_e[m] / reps for m in METHODS},
        **{f"w_{m}": width[m] for m in ("percentile", "scaled", "ij")},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--n-boot", type=int, default=500)
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--worlds", default="gauss,ridge,ridge1")
    parser.add_argument("--ns", default="100,200,500")
    args = parser.parse_args()
    se = np.sqrt(args.alpha * (1 - args.alpha) / args.reps)
    print(f"nominal {1 - args.alpha:g}, {args.reps} searches (MC se {se:.3f}), B={args.n_boot}")
    for i, world in enumerate(args.worlds.split(",")):
        for j, n in enumerate(int(v) for v in args.ns.split(",")):
            t0 = time.perf_counter()
            row = run(world, n, args.reps, args.n_boot, args.alpha, seed=1000 * i + j)
            cells = "  ".join(
                f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
            )
            print(f"{cells}  ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
