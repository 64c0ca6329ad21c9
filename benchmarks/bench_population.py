"""Benchmark: the batched learners of the survey's Algorithm 1 against scikit-learn.

For one sample of ``N = 300`` letter examples and repeated 10-fold
cross-validation (``R`` repetitions, ``10 R`` fits per learner), the
out-of-fold predictions of

* naive Bayes: scikit-learn's ``GaussianNB`` fitted fold by fold (baseline)
  vs :class:`cvstats.studies.learners.GaussianNaiveBayes` (all folds of all
  repetitions at once; equal predictions, checked);
* 4-NN: ``KNeighborsClassifier(4)`` fold by fold vs
  :class:`~cvstats.studies.learners.NearestNeighbours` (one distance matrix,
  one masked sort per repetition). The features get a tiny jitter so that
  there are no distance ties and the predictions must be equal (checked).

Target: >= 10x faster (ratio <= 0.1). Run as
``python benchmarks/bench_population.py [--repetitions R]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _shared import best_of, print_rows_main, summary_row
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier

from cvstats.studies.learners import GaussianNaiveBayes, NearestNeighbours, SklearnLearner
from cvstats.studies.population import letter_population, stratified_folds

QUICK: dict[str, Any] = {"repetitions": 3, "repeats": 1}


def run(repetitions: int = 30, repeats: int = 3) -> list[dict[str, Any]]:
    """One row per learner (module docstring)."""
    pop = letter_population()
    rng = np.random.default_rng(0)
    idx = rng.choice(pop.size, 300, replace=False)
    X = pop.X[idx] + rng.normal(scale=1e-6, size=(300, pop.X.shape[1]))
    y = pop.y[idx]
    folds = stratified_folds(rng, y, 10, repetitions).astype(np.int64)
    rows = []
    for name, ours, estimator in (
        ("naive Bayes", GaussianNaiveBayes(), GaussianNB()),
        ("4-NN", NearestNeighbours(4), KNeighborsClassifier(4)),
    ):
        # baseline: the same estimator fitted fold by fold (clone per fit)
        base = SklearnLearner(name, estimator)
        base_s, base = best_of(
            lambda b=base: b.oof_predict(X, y, folds, 26, np.random.default_rng(0)),
            max(1, repeats - 2),
        )
        cand_s, cand = best_of(
            lambda ours=ours: ours.oof_predict(X, y, folds, 26, np.random.default_rng(0)), repeats
        )
        np.testing.assert_array_equal(cand, base)
        rows.append(
            summary_row(
                f"population: {name}, 10-fold x {repetitions}, N = 300 (letter)",
                "scikit-learn fold by fold",
                "batched over folds and repetitions",
                base_s,
                cand_s,
                target_ratio=0.1,
                case="same folds, equal out-of-fold predictions",
            )
        )
    return rows


if __name__ == "__main__":
    print_rows_main(__doc__, run)
