"""Benchmark: ``cvstats.collect`` against ``sklearn.model_selection.cross_validate``.

Both fit the same two classifiers on the same splits of breast_cancer
(a ``resampled`` design, J = 50, so 100 fits) with ``n_jobs=1``;
``cross_validate`` gets the design's (train, test) index pairs as ``cv=`` and
scores with the estimators' default ``score`` (accuracy), ``collect`` computes
the per-example zero-one losses and builds the cube. The best of a few
repeats is kept for each; the target is ``collect / cross_validate <= 1.05``.

Run as ``python benchmarks/bench_collect.py [--repeats R] [--splits J]``.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from _shared import best_of, summary_row
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from cvstats import designs
from cvstats.designs.collect import collect

TARGET_RATIO = 1.05
#: keyword arguments of ``run`` for ``python -m benchmarks --quick``
QUICK: dict[str, Any] = {"repeats": 2, "n_splits": 10}


def _learners() -> dict[str, Any]:
    # explicit random_state: both sides do exactly the same fits
    return {
        "tree": DecisionTreeClassifier(random_state=0),
        "logreg": make_pipeline(StandardScaler(), LogisticRegression()),
    }


def run(repeats: int = 7, n_splits: int = 50) -> dict[str, Any]:
    """Time both and return ``{"name", "baseline_s", "candidate_s", "ratio", ...}``."""
    X, y = load_breast_cancer(return_X_y=True)
    design = designs.resampled(len(y), n_test=57, J=n_splits, seed=0)
    train, test = design["train"].values, design["test"].values
    cv = [(np.flatnonzero(tr), np.flatnonzero(te)) for tr, te in zip(train, test, strict=True)]
    learners = _learners()

    def baseline() -> dict[str, Any]:
        return {
            name: cross_validate(est, X, y, cv=cv, n_jobs=1)["test_score"]
            for name, est in learners.items()
        }

    def candidate() -> Any:
        return collect(learners, X, y, design, n_jobs=1, progress=False)

    baseline(), candidate()  # warm-up (imports, caches)
    # interleave the repeats so that drifts of machine load hit both alike
    base_times, cand_times = [], []
    for _ in range(repeats):
        t, scores = best_of(baseline)
        base_times.append(t)
        t, cube = best_of(candidate)
        cand_times.append(t)

    # sanity: the same fits give the same accuracy on every split
    accuracy = 1.0 - cube.mean("example").transpose("model", "split").values
    for m, name in enumerate(learners):
        np.testing.assert_allclose(accuracy[m], scores[name], rtol=0, atol=1e-12)

    return summary_row(
        "collect_vs_cross_validate",
        "sklearn.model_selection.cross_validate",
        "cvstats.collect",
        min(base_times),
        min(cand_times),
        case=f"breast_cancer, 2 classifiers, {n_splits} splits, n_jobs=1",
        target_ratio=TARGET_RATIO,
        repeats=repeats,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--splits", type=int, default=50)
    args = parser.parse_args()
    result = run(repeats=args.repeats, n_splits=args.splits)
    print(f"{result['case']}, best of {result['repeats']}")
    print(f"  cross_validate : {result['baseline_s']:.4f} s")
    print(f"  collect        : {result['candidate_s']:.4f} s")
    status = "OK" if result["ratio"] <= TARGET_RATIO else "ABOVE TARGET"
    print(f"  ratio collect/cross_validate = {result['ratio']:.3f} ({status}, target <= 1.05)")


if __name__ == "__main__":
    main()
