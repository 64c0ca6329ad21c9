"""Benchmark: the batched problem-A learners and the whole regression study.

1. *learners*: the mean test losses of the sample mean (A) and OLS (B) on
   the 240 splits of configuration ``(n/2, n/2)`` (main ``J = 15`` plus
   ``R·J = 225`` replicate splits) of one dataset of simulation 3
   (``n = 2000``), computed (a) split by split with scikit-learn's
   ``DummyRegressor`` and ``LinearRegression`` (fit, predict, mean squared
   loss) and (b) with the batched closed forms of
   :mod:`cvstats.studies.regression` (sums over the test sets, training sums
   as pool minus test sums). Same splits, same numbers (checked to 1e-8).
   Target: >= 50x faster (ratio <= 0.02).
2. *study*: the whole regression study — 4 simulations x 3 configurations x
   every method, ``datasets`` datasets each (1000 in the paper), ``J = 15``,
   ``M = 10``, ``R = 15``, ``n_jobs`` workers, then the method results and the
   rejection rates over a 41-point grid of ``μ0``. The baseline is the
   2-minute target (ratio <= 1 means on target).

Run as ``python benchmarks/bench_studies.py [--datasets N] [--n-jobs J]``.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

import numpy as np
from _shared import best_of, print_rows_main, summary_row
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression

from cvstats import studies as st
from cvstats.studies._splits import dataset_rngs, gather_sums
from cvstats.studies.regression import (
    mean_from_sums,
    mean_loss_from_sums,
    ols_from_sums,
    regression_problem,
    run_regression,
)

QUICK: dict[str, Any] = {"datasets": 20, "repeats": 1}
STUDY_TARGET_S = 120.0


def _splits(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    problem = regression_problem(3)
    r_data, r_split = dataset_rngs(seed, 3, 0)
    data = problem.generate(r_data)
    sp = st.draw_study_splits(r_split, problem.n, J=15, M=1, R=15, J_rep=15)
    c = "n/2,n/2"
    test = np.concatenate([sp.main_test[c], sp.rep_test[c].reshape(-1, problem.n // 2)])
    train = np.concatenate([sp.main_train[c], sp.rep_train[c].reshape(-1, problem.n // 2)])
    return data, test, train, problem.n


def _sklearn(data: np.ndarray, test: np.ndarray, train: np.ndarray) -> np.ndarray:
    X, y = data[:, :1], data[:, 1]
    out = np.empty((len(test), 2))
    for s, (te, tr) in enumerate(zip(test, train, strict=True)):
        for k, model in enumerate((DummyRegressor(), LinearRegression())):
            model.fit(X[tr], y[tr])
            out[s, k] = np.mean((y[te] - model.predict(X[te])) ** 2)
    return out


def _batched(data: np.ndarray, test: np.ndarray, n_pool: int) -> np.ndarray:
    problem = regression_problem(3)
    stats = problem.stats(data[None])
    test_sums = gather_sums(stats, test[None])
    train_sums = stats[:, :n_pool].sum(axis=1)[:, None] - test_sums
    return np.stack(
        [
            mean_loss_from_sums(mean_from_sums(train_sums), test_sums),
            mean_loss_from_sums(ols_from_sums(train_sums), test_sums),
        ],
        axis=-1,
    )[0]


def run(datasets: int = 1000, n_jobs: int = 2, repeats: int = 3) -> list[dict[str, Any]]:
    """Both benchmark rows (module docstring)."""
    data, test, train, n = _splits()
    base_s, base = best_of(lambda: _sklearn(data, test, train), max(1, repeats - 2))
    cand_s, cand = best_of(lambda: _batched(data, test, n), repeats)
    np.testing.assert_allclose(cand, base, rtol=1e-8)
    rows = [
        summary_row(
            "studies: problem-A learners, 240 splits, n = 2000",
            "sklearn DummyRegressor + LinearRegression split by split",
            "batched closed forms from sufficient statistics",
            base_s,
            cand_s,
            target_ratio=0.02,
            case="same splits, same mean losses (rtol 1e-8)",
        )
    ]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        for sim in (1, 2, 3, 4):
            ds = run_regression(sim, datasets, f"{tmp}/sim{sim}", J=15, M=10, R=15, n_jobs=n_jobs)
            res = st.method_results(ds, J=15, M=10, R=15)
            st.rejection_rates(res, st.mu0_grid(ds, res), alpha=0.1)
        study_s = time.perf_counter() - t0
    rows.append(
        summary_row(
            f"studies: regression study, 4 sims x {datasets} datasets",
            f"target {STUDY_TARGET_S:.0f} s",
            f"run_regression + method_results + rejection_rates, n_jobs={n_jobs}",
            STUDY_TARGET_S,
            study_s,
            target_ratio=1.0 if datasets >= 1000 else None,
            case="J = 15, M = 10, R = 15; every method of docs/theory.md §4",
        )
    )
    return rows


if __name__ == "__main__":
    print_rows_main(__doc__, run)
