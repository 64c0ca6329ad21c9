"""Benchmark: after a search, the set of the best candidates and BBC-CV, vectorized.

Issue 30's size: ``n_models`` candidates × a 10×10 repeated K-fold × ``n``
examples (per-example losses: candidate ``m`` has mean loss ``0.3 + 0.0005 m``,
Gaussian noise shared in part across candidates). Each row times a public call
(candidate) against the same arithmetic with the bootstrap replications in a
Python loop (baseline), on the same losses and the same draws, and checks that
both give the same numbers. The candidate is the vectorized kernel on the same
arrays as the baseline; ``call_s`` is the whole public call (validating the
cube and averaging the repeats included), the figure a user waits for:

* ``bbc_cv``: :func:`cvstats.bbc_cv` (``n_boot`` replications) against its
  kernel called one replication at a time;
* ``mcs_max``: :func:`cvstats.model_confidence_set` with ``statistic="max"``
  against the same elimination with each replication's bootstrap means taken
  in a loop (``losses[draws[b]].mean(0)``);
* ``cvc``: :func:`cvstats.cv_confidence_set` on the first repeat (Lei's test
  takes one V-fold split) against its kernel called one replication at a
  time; to keep it affordable the loop runs over the first ``loop_boot``
  replications and its time is scaled to ``n_boot`` (its cost per replication
  does not depend on their number), the p-values checked on those.

Target: each set / interval in seconds (the issue's "Done when"); the ratio
shows what the vectorization over replications buys.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _shared import best_of, print_rows_main, summary_row

import cvstats
from cvstats import designs
from cvstats.kernels.bbc import bbc_cv as bbc_kernel
from cvstats.kernels.cvc import cvc_pvalues
from cvstats.kernels.mcs import mcs as mcs_kernel
from cvstats.reporting.selection import _bootstrap_units, candidate_losses

QUICK: dict[str, Any] = {"n_models": 40, "n": 300, "n_boot": 200, "loop_boot": 5}


def _cube(n_models: int, n: int, seed: int = 0) -> Any:
    """Losses of ``n_models`` candidates on a 10×10 K-fold of ``n`` examples."""
    design = designs.kfold(n, K=10, repeats=10, seed=seed)
    rng = np.random.default_rng(seed)
    n_splits = design.sizes["split"]
    shared = rng.normal(size=(n_splits, n, 1))
    noise = rng.normal(size=(n_splits, n, n_models))
    losses = 0.3 + 0.0005 * np.arange(n_models) + 0.1 * (shared + 0.5 * noise)
    return cvstats.from_arrays(losses, design=design, name="loss")


def _mcs_max_loop(losses: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """T_max MCS p-values (Hansen, Lunde & Nason 2011, §3.1.2), the bootstrap in a loop."""
    mean = losses.mean(axis=0)
    boot = np.stack([losses[d].mean(axis=0) for d in draws]) - mean
    M = losses.shape[1]
    included, pvals, step = np.ones(M, dtype=bool), [], np.zeros(M, dtype=int)
    while included.sum() > 1:
        idx = np.flatnonzero(included)
        x = boot[:, idx] - boot[:, idx].mean(axis=1, keepdims=True)
        sd = np.sqrt((x**2).mean(axis=0))
        std_d = (mean[idx] - mean[idx].mean()) / sd
        pvals.append(float((std_d.max() < (x / sd).max(axis=1)).mean()))
        removed = idx[std_d == std_d.max()]
        included[removed] = False
        step[removed] = len(pvals)
    step[included] = len(pvals) + 1
    return np.maximum.accumulate(np.array([*pvals, 1.0]))[step - 1]


def run(
    n_models: int = 200, n: int = 1000, n_boot: int = 1000, loop_boot: int = 10
) -> list[dict[str, Any]]:
    """Time the three calls against their loops over replications."""
    cube = _cube(n_models, n)
    case = f"{n_models} candidates x 10x10 CV x {n} examples, {n_boot} replications"
    losses = candidate_losses(cube, "benchmark")[0]
    draws = _bootstrap_units(losses, n_boot, 0)[0]
    values = losses.values
    rows = []

    call_s, bbc = best_of(lambda: cvstats.bbc_cv(cube, n_boot=n_boot, seed=0))
    fast_s, arrays = best_of(lambda: bbc_kernel(values, draws))
    slow_s, oob = best_of(lambda: [bbc_kernel(values, draws[[b]]).oob[0] for b in range(n_boot)])
    np.testing.assert_allclose(oob, arrays.oob, rtol=1e-12)
    np.testing.assert_allclose(np.mean(oob), float(bbc.estimate), rtol=1e-12)
    rows.append(
        summary_row(
            "selection_bbc_cv",
            "kernel, one replication at a time",
            "kernel, all replications (cvstats.bbc_cv)",
            slow_s,
            fast_s,
            call_s=call_s,
            case=case,
        )
    )

    call_s, mcs = best_of(
        lambda: cvstats.model_confidence_set(cube, statistic="max", n_boot=n_boot, seed=0)
    )
    fast_s, _ = best_of(lambda: mcs_kernel(values, draws, statistic="max"))
    slow_s, p = best_of(lambda: _mcs_max_loop(values, draws))
    np.testing.assert_allclose(p, mcs.pvalue.values, atol=1e-12)
    rows.append(
        summary_row(
            "selection_mcs_max",
            "bootstrap means in a loop over replications",
            'kernel (cvstats.model_confidence_set(statistic="max"))',
            slow_s,
            fast_s,
            call_s=call_s,
            case=case,
        )
    )

    one = cube.isel(split=cube["repeat"].values == 0)
    call_s, cvc = best_of(lambda: cvstats.cv_confidence_set(one, n_boot=n_boot, seed=0))
    main = candidate_losses(one, "benchmark")[0].values
    fold = one["fold"].values[np.argmax(np.isfinite(one.isel(model=0).values), axis=0)]
    zeta = np.random.default_rng(0).standard_normal((n_boot, n))
    slow_s, p_loop = best_of(
        lambda: np.mean([cvc_pvalues(main, fold, zeta[[b]]) for b in range(loop_boot)], axis=0)
    )
    np.testing.assert_allclose(p_loop, cvc_pvalues(main, fold, zeta[:loop_boot]), atol=1e-12)
    fast_s, p_cvc = best_of(lambda: cvc_pvalues(main, fold, zeta))
    np.testing.assert_allclose(p_cvc, cvc.pvalue.values, atol=1e-12)
    rows.append(
        summary_row(
            "selection_cvc",
            f"kernel, one replication at a time (x{n_boot // loop_boot} of {loop_boot})",
            "kernel (cvstats.cv_confidence_set, one 10-fold)",
            slow_s * n_boot / loop_boot,
            fast_s,
            call_s=call_s,
            case=case,
            members=len(cvc.members),
        )
    )
    rows[0]["members"] = None
    rows[1]["members"] = len(mcs.members)
    return rows


if __name__ == "__main__":
    print_rows_main(__doc__, run)
