"""Benchmarks of ``cvstats.collect``: against ``cross_validate``, and its ROC AUC.

``collect_vs_cross_validate``: both fit the same two classifiers on the same
splits of breast_cancer (a ``resampled`` design, J = 50, so 100 fits) with
``n_jobs=1``; ``cross_validate`` gets the design's (train, test) index pairs as
``cv=`` and scores with the estimators' default ``score`` (accuracy),
``collect`` computes the per-example zero-one losses and builds the cube. The
best of a few repeats is kept for each; the target is
``collect / cross_validate <= 1.05``.

``collect_roc_auc_name_vs_scorer``: the demo's collect (its three classifiers,
zero-one losses and ROC AUC from the same fits) with the scorer name
``scoring="roc_auc"`` (cvstats's fast path) against the same collect with
scikit-learn's scorer object ``get_scorer("roc_auc")`` (scikit-learn's route,
which the name took before); the same fits, so the ratio is the cost of
scoring. The target is ``name / scorer <= 0.85``.

Run as ``python benchmarks/bench_collect.py [--repeats R] [--splits J]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from _shared import best_of, summary_row
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import get_scorer
from sklearn.model_selection import cross_validate
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from cvstats import designs
from cvstats.designs.collect import collect

TARGET_RATIO = 1.05
#: target of ``collect_roc_auc_name_vs_scorer``
AUC_TARGET_RATIO = 0.85
#: keyword arguments of ``run`` for ``python -m benchmarks --quick``
QUICK: dict[str, Any] = {"repeats": 2, "n_splits": 10}


def _learners() -> dict[str, Any]:
    # explicit random_state: both sides do exactly the same fits
    return {
        "tree": DecisionTreeClassifier(random_state=0),
        "logreg": make_pipeline(StandardScaler(), LogisticRegression()),
    }


def run(repeats: int = 7, n_splits: int = 50) -> list[dict[str, Any]]:
    """Time both benchmarks; a row ``{"name", "baseline_s", "candidate_s", "ratio", ...}`` each."""
    return [_vs_cross_validate(repeats, n_splits), _roc_auc_name_vs_scorer(repeats, n_splits)]


def _interleaved(
    baseline: Callable[[], Any], candidate: Callable[[], Any], repeats: int
) -> tuple[float, float, Any, Any]:
    """Best times of ``baseline`` and ``candidate`` over interleaved repeats; their last values.

    Interleaving makes drifts of machine load hit both alike; one call of each
    first warms up imports and caches.
    """
    baseline(), candidate()
    base_times, cand_times = [], []
    for _ in range(repeats):
        t, base = best_of(baseline)
        base_times.append(t)
        t, cand = best_of(candidate)
        cand_times.append(t)
    return min(base_times), min(cand_times), base, cand


def _vs_cross_validate(repeats: int, n_splits: int) -> dict[str, Any]:
    """``collect`` of zero-one losses against ``cross_validate`` of the same fits."""
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

    base_s, cand_s, scores, cube = _interleaved(baseline, candidate, repeats)

    # sanity: the same fits give the same accuracy on every split
    accuracy = 1.0 - cube.mean("example").transpose("model", "split").values
    for m, name in enumerate(learners):
        np.testing.assert_allclose(accuracy[m], scores[name], rtol=0, atol=1e-12)

    return summary_row(
        "collect_vs_cross_validate",
        "sklearn.model_selection.cross_validate",
        "cvstats.collect",
        base_s,
        cand_s,
        case=f"breast_cancer, 2 classifiers, {n_splits} splits, n_jobs=1",
        target_ratio=TARGET_RATIO,
        repeats=repeats,
    )


def _roc_auc_name_vs_scorer(repeats: int, n_splits: int) -> dict[str, Any]:
    """The demo's collect with ``scoring="roc_auc"`` against scikit-learn's scorer object."""
    X, y = load_breast_cancer(return_X_y=True)
    design = designs.resampled(len(y), n_test=57, J=n_splits, seed=0)
    # the demo's learners, seeded: both sides do exactly the same fits
    learners = {
        "logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        "tree": DecisionTreeClassifier(min_samples_leaf=5, random_state=0),
        "naive_bayes": GaussianNB(),
    }

    def collect_with(scoring: Any) -> Any:
        return collect(
            learners, X, y, design, loss="zero_one", scoring=scoring, n_jobs=1, progress=False
        )[1]

    base_s, cand_s, by_scorer, by_name = _interleaved(
        lambda: collect_with({"roc_auc": get_scorer("roc_auc")}),
        lambda: collect_with("roc_auc"),
        repeats,
    )
    # sanity: the fast path gives scikit-learn's scorer's values (Mann-Whitney form)
    np.testing.assert_allclose(by_name.values, by_scorer["roc_auc"].values, rtol=0, atol=1e-12)
    return summary_row(
        "collect_roc_auc_name_vs_scorer",
        "collect(scoring={'roc_auc': get_scorer('roc_auc')})",
        "collect(scoring='roc_auc')",
        base_s,
        cand_s,
        case=f"breast_cancer, the demo's 3 classifiers, zero_one + AUC, {n_splits} splits",
        target_ratio=AUC_TARGET_RATIO,
        repeats=repeats,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--splits", type=int, default=50)
    args = parser.parse_args()
    for row in run(repeats=args.repeats, n_splits=args.splits):
        print(f"{row['name']}: {row['case']}, best of {row['repeats']}")
        print(f"  baseline  {row['baseline']}: {row['baseline_s']:.4f} s")
        print(f"  candidate {row['candidate']}: {row['candidate_s']:.4f} s")
        target = row["target_ratio"]
        status = "OK" if row["ratio"] <= target else "ABOVE TARGET"
        print(f"  ratio candidate/baseline = {row['ratio']:.3f} ({status}, target <= {target})")


if __name__ == "__main__":
    main()
