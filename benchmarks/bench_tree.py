"""Benchmark: the batched trees of the classification studies against scikit-learn split by split.

* Problem B (Nadeau & Bengio's Table 3, learner A):
  ``DecisionTreeRegressor(min_samples_split=10, min_samples_leaf=5)`` on 0/1
  labels for the 240 splits of configuration ``(n/2, n/2)`` (main ``J = 15``
  plus ``R·J = 225`` replicate splits) of one dataset of simulation 1
  (``n = 200``) and of simulation 3 (``n = 2000``): (a) fitted and predicted
  split by split with scikit-learn, (b) grown for all splits at once by
  :func:`cvstats.studies.batched_tree.regression_tree_predict`. Same splits,
  same predictions on every example (checked exactly).
* Problem 3 (letter, Table 4's A rows):
  ``DecisionTreeClassifier(min_samples_split=10, min_samples_leaf=5)`` for the
  240 splits ``(n/2, n/2)`` of one letter dataset (``n = 300``, 16 integer
  features, 26 classes), predictions on each split's test set, against
  :func:`cvstats.studies.batched_tree.classification_tree_predict`. Checked:
  every tree it does not flag predicts as scikit-learn's; the test error
  rates agree to 0.01 (the flagged trees follow the batched tie rule, see
  :mod:`cvstats.studies.letter`).

Issue 31 asked for a ratio <= 0.02 (50x); numpy level by level is far from
it (docs/benchmarks.md), so the rows carry no target.

Run as ``python benchmarks/bench_tree.py [--splits S] [--repeats R]``.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import numpy as np
from _shared import best_of, print_rows_main, summary_row
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from cvstats import studies as st
from cvstats.studies._sklearn_tree import sklearn_tree_predict
from cvstats.studies._splits import dataset_rngs
from cvstats.studies.batched_tree import classification_tree_predict, regression_tree_predict
from cvstats.studies.classification import classification_problem
from cvstats.studies.letter import N_FEATURES, letter_problem

QUICK: dict[str, Any] = {"splits": 30, "repeats": 1, "whole": 0}
_TREE = {"min_samples_split": 10, "min_samples_leaf": 5, "random_state": 0}


def _splits(problem: Any, sim: int, splits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r_data, r_split = dataset_rngs(0, sim, 0)
    data = problem.generate(r_data)
    sp = st.draw_study_splits(r_split, problem.n, J=15, M=1, R=15, J_rep=15)
    c = "n/2,n/2"
    half = problem.n // 2
    train = np.concatenate([sp.main_train[c], sp.rep_train[c].reshape(-1, half)])
    test = np.concatenate([sp.main_test[c], sp.rep_test[c].reshape(-1, problem.n - half)])
    return data, train[:splits], test[:splits]


def _sklearn(X: np.ndarray, y: np.ndarray, train: np.ndarray) -> np.ndarray:
    tree = DecisionTreeRegressor(**_TREE)
    return np.array([tree.fit(X[tr], y[tr]).predict(X) for tr in train])


def _sklearn_letter(
    X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray
) -> np.ndarray:
    tree = DecisionTreeClassifier(**_TREE)
    pairs = zip(train, test, strict=True)
    return np.array([tree.fit(X[tr], y[tr]).predict(X[te]) for tr, te in pairs])


def _three_rows(
    label: str, estimator: str, batched: str, runs: dict[str, tuple[float, Any]], case: str
) -> list[dict[str, Any]]:
    """Rows plain → batched, plain → fast scikit-learn calls, fast calls → batched."""
    (plain_s, _), (fast_s, _), (cand_s, _) = runs["plain"], runs["fast"], runs["batched"]
    plain = f"sklearn {estimator} split by split"
    fast = f"{plain}, checks once (_sklearn_tree.sklearn_tree_predict)"
    return [
        summary_row(f"{label}: batched / plain", plain, batched, plain_s, cand_s, case=case),
        summary_row(
            f"{label}: checked once / plain", plain, fast, plain_s, fast_s, case="the same trees"
        ),
        summary_row(f"{label}: batched / checked once", fast, batched, fast_s, cand_s, case=case),
    ]


def _whole_design(problem: Any, datasets: int) -> dict[str, float]:
    """Seconds of the study's ``compute_batch`` on ``datasets`` datasets, per tree path."""
    from dataclasses import replace

    from cvstats.studies._runner import compute_batch

    out, results = {}, {}
    for path in ("sklearn", "batched"):
        t0 = time.perf_counter()
        results[path] = compute_batch(
            replace(problem, tree=path), 0, range(datasets), J=25, M=20, R=15, J_rep=15
        )
        out[path] = time.perf_counter() - t0
    return out


def run(splits: int = 240, repeats: int = 3, whole: int = 1) -> list[dict[str, Any]]:
    """Rows per simulation 1 (n = 200), 3 (n = 2000) and letter (docstring).

    ``whole``: datasets of the whole-design rows (0: none).
    """
    rows = []
    for sim in (1, 3):
        data, train, test = _splits(classification_problem(sim), sim, splits)
        X, y = data[:, :2], data[:, 2]
        every = np.broadcast_to(np.arange(len(y)), (len(train), len(y)))
        runs = {
            "plain": best_of(partial(_sklearn, X, y, train), repeats),
            "fast": best_of(
                partial(sklearn_tree_predict, DecisionTreeRegressor(**_TREE), X, y, train, every),
                repeats,
            ),
            "batched": best_of(partial(regression_tree_predict, X, y, train), repeats),
        }
        cand, tied = runs["batched"][1]
        assert not tied.any()
        np.testing.assert_array_equal(cand, runs["plain"][1])
        np.testing.assert_array_equal(runs["fast"][1], runs["plain"][1])
        rows += _three_rows(
            f"studies: problem-B tree, {len(train)} splits, n = {len(y)}",
            "DecisionTreeRegressor",
            "batched_tree.regression_tree_predict (numpy, level by level)",
            runs,
            "same splits, predictions on every example equal exactly",
        )
    data, train, test = _splits(letter_problem(1, learners="tree"), 1, splits)
    X, y = data[:, :N_FEATURES], data[:, N_FEATURES]
    runs = {
        "plain": best_of(partial(_sklearn_letter, X, y, train, test), repeats),
        "fast": best_of(
            partial(sklearn_tree_predict, DecisionTreeClassifier(**_TREE), X, y, train, test),
            repeats,
        ),
        "batched": best_of(
            partial(classification_tree_predict, X, y, train, test_idx=test), repeats
        ),
    }
    base = runs["plain"][1]
    cand, tied = runs["batched"][1]
    np.testing.assert_array_equal(runs["fast"][1], base)
    np.testing.assert_array_equal(cand[~tied], base[~tied])
    assert abs(np.mean(cand != y[test]) - np.mean(base != y[test])) < 0.01
    rows += _three_rows(
        f"studies: letter tree, {len(train)} splits, n = {len(y)}",
        "DecisionTreeClassifier",
        "batched_tree.classification_tree_predict (numpy, level by level)",
        runs,
        f"test predictions; {int(tied.sum())} trees flagged (tie rule), others equal",
    )
    problems = {
        "problem-B sim 1": classification_problem(1),
        "problem-B sim 3": classification_problem(3),
        "letter (tree)": letter_problem(1, learners="tree"),
    }
    for name, problem in problems.items() if whole else ():
        t = _whole_design(problem, whole)
        rows.append(
            summary_row(
                f"studies: {name}, whole design of {whole} dataset(s)",
                "compute_batch, tree='sklearn' (checks once)",
                "compute_batch, tree='batched'",
                t["sklearn"],
                t["batched"],
                case="every block of the study, J = 25, M = 20, R = 15",
            )
        )
    return rows


if __name__ == "__main__":
    print_rows_main(__doc__, run)
