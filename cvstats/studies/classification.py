"""Nadeau & Bengio, problem 2: two Gaussian populations (docs/studies.md §B).

``P(Y=1) = P(Y=0) = 1/2``, ``X | Y=k ~ N(μ_k, Σ_k)`` in two dimensions,
zero-one loss.

* Learner A: least-squares regression tree of ``Y`` on ``X`` predicting
  ``I[leaf value > 1/2]``. The paper used S-Plus ``tree`` (minimum node size
  10, minimum child size 5, minimum deviance fraction ``mindev = 0.01``, no
  pruning); the stand-in is scikit-learn's
  ``DecisionTreeRegressor(min_samples_split=10, min_samples_leaf=5)``, which
  has no ``mindev`` rule (S-Plus stops splitting a node whose deviance is
  below 1 % of the root's; scikit-learn grows until the size limits or pure
  nodes), so its trees are somewhat deeper. Two equal paths (``tree``
  option): ``"batched"`` grows the trees of every split of a dataset at once
  (:func:`cvstats.studies.batched_tree.regression_tree_predict`, equal to
  scikit-learn's predictions here: continuous features, 0/1 responses, any
  tree it flags refitted by scikit-learn); ``"sklearn"`` fits split by
  split (data and parameters checked once per dataset,
  ``cvstats.studies._sklearn_tree``); ``"auto"`` (default) takes the
  batched path for ``n <=`` :data:`BATCHED_MAX_N`, where it was measured
  faster (docs/benchmarks.md).
* Learner B: OLS of ``Y`` on ``(1, X)`` predicting ``I[β̂'(1, x) > 1/2]``,
  fitted for all splits at once from training sums of
  ``(1, x1, x2, x1², x1x2, x2², y, x1y, x2y)`` (3×3 normal equations solved
  with a batched :func:`numpy.linalg.solve`).

The true ``n1μ`` has no closed form: :func:`monte_carlo_truth` trains on
fresh samples of size ``n1`` and tests them all on one large fresh sample of
:data:`TRUTH_TEST_SIZE` (100 000) examples by default (``truth_test_size``
of :func:`run_classification`, ``--truth-test-size`` on the command line).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import xarray as xr
from numpy.typing import NDArray

from cvstats.checks import check_int
from cvstats.errors import ArgumentError
from cvstats.studies._common import FloatArray, IntArray, study_doc
from cvstats.studies._runner import (
    SimulationProblem,
    add_monte_carlo_truth,
    run_study_with_truth,
)
from cvstats.studies._sklearn_tree import sklearn_tree_predict
from cvstats.studies.batched_tree import choose_tree_path, regression_tree_predict_exact

__all__ = [
    "BATCHED_MAX_N",
    "MIN_TRUTH_TEST_SIZE",
    "SIMULATIONS",
    "TRUTH_TEST_SIZE",
    "ClassificationProblem",
    "classification_problem",
    "ols_classifier_from_sums",
    "tree_losses",
    "monte_carlo_truth",
    "check_truth_test_size",
    "add_monte_carlo_truth",
    "run_classification",
]

#: Parameters of the four simulations (docs/studies.md §B): class-1 covariance ``s1 · I₂``.
SIMULATIONS: dict[int, dict[str, float]] = {
    1: {"n": 200, "s1": 0.5},
    2: {"n": 200, "s1": 1 / 6},
    3: {"n": 2000, "s1": 0.5},
    4: {"n": 2000, "s1": 0.173},
}

_TREE = {"min_samples_split": 10, "min_samples_leaf": 5}
#: ``tree="auto"`` takes the batched tree for datasets of at most this many examples:
#: the largest size measured (faster than scikit-learn at every size up to it,
#: docs/benchmarks.md), so every simulation of :data:`SIMULATIONS`.
BATCHED_MAX_N = 2000
#: Default size of the common test sample of the Monte Carlo truth (:func:`monte_carlo_truth`).
TRUTH_TEST_SIZE = 100_000
#: Smallest test sample of the truth of a run (``truth_test_size``, ``--truth-test-size``):
#: a floor against slips; a useful truth needs far more, as the test sample's noise alone
#: is up to ``sqrt(p(1 − p)/n_test)`` (0.014 at 1000 for an error ``p`` near 0.25).
MIN_TRUTH_TEST_SIZE = 1000
#: Examples (training set plus the test sample) held at once by :func:`monte_carlo_truth`:
#: its training sets are scored in chunks of ``max(1, _TRUTH_CHUNK // (n1 + n_test))``.
_TRUTH_CHUNK = 2**21


def ols_classifier_from_sums(sums: FloatArray) -> FloatArray:
    """OLS coefficients of ``y`` on ``(1, x1, x2)`` from training sums.

    Parameters
    ----------
    sums : ndarray, shape (..., 9)
        Sums of ``(1, x1, x2, x1², x1x2, x2², y, x1y, x2y)`` over each training set.

    Returns
    -------
    ndarray, shape (..., 3)
        ``β̂``; predict class 1 where ``β̂'(1, x) > 1/2``.
    """
    s = sums
    xtx = np.stack(
        [
            np.stack([s[..., 0], s[..., 1], s[..., 2]], -1),
            np.stack([s[..., 1], s[..., 3], s[..., 4]], -1),
            np.stack([s[..., 2], s[..., 4], s[..., 5]], -1),
        ],
        -2,
    )
    xty = np.stack([s[..., 6], s[..., 7], s[..., 8]], -1)
    return np.linalg.solve(xtx, xty[..., None])[..., 0]


def _take(data: FloatArray, idx: IntArray, col: int) -> FloatArray:
    B = data.shape[0]
    rows = np.arange(B).reshape((B,) + (1,) * (idx.ndim - 1))
    return data[rows, idx, col]


def _ols_losses(data: FloatArray, test_idx: IntArray, beta: FloatArray) -> FloatArray:
    x1, x2, y = (_take(data, test_idx, c) for c in range(3))
    score = beta[..., 0, None] + beta[..., 1, None] * x1 + beta[..., 2, None] * x2
    return ((score > 0.5) != (y > 0.5)).astype(float)


def tree_losses(
    data: FloatArray, test_idx: IntArray, train_idx: IntArray, tree: str = "sklearn"
) -> FloatArray:
    """Zero-one test losses of the regression tree, every split of every dataset.

    Parameters
    ----------
    data : ndarray, shape (B, n, 3)
        Columns ``(x1, x2, y)``.
    test_idx, train_idx : ndarray of int, shapes (B, ..., n2), (B, ..., n1)
        Test and training indices of each split.
    tree : {"sklearn", "batched", "auto"}, default "sklearn"
        ``"sklearn"``: fitted split by split; ``"batched"``: all splits of a
        dataset at once (:func:`cvstats.studies.batched_tree.regression_tree_predict_exact`,
        the same predictions); ``"auto"``: batched for ``n <=``
        :data:`BATCHED_MAX_N`.

    Returns
    -------
    ndarray, shape (B, ..., n2)
        ``I[prediction != y]`` per test example.
    """
    from sklearn.tree import DecisionTreeRegressor

    path = choose_tree_path(tree, data.shape[1], BATCHED_MAX_N)
    B = data.shape[0]
    te = test_idx.reshape(B, -1, test_idx.shape[-1])
    tr = train_idx.reshape(B, -1, train_idx.shape[-1])
    out = np.empty(te.shape)
    if path == "batched":  # every split of every dataset grown at once
        pred = regression_tree_predict_exact(data[..., :2], data[..., 2], tr, **_TREE, test_idx=te)
        y_te = np.take_along_axis(data[:, None, :, 2], te, axis=2)
        return ((pred > 0.5) != (y_te > 0.5)).astype(float).reshape(test_idx.shape)
    for b in range(B):
        X, y = data[b, :, :2], data[b, :, 2]
        pred = sklearn_tree_predict(
            DecisionTreeRegressor(**_TREE, random_state=0), X, y, tr[b], te[b]
        )
        out[b] = (pred > 0.5) != (y[te[b]] > 0.5)
    return out.reshape(test_idx.shape)


@dataclass(frozen=True)
class ClassificationProblem(SimulationProblem):
    """One simulation of problem B for the runner (:class:`cvstats.studies._runner.Problem`).

    Attributes
    ----------
    simulation : int
        1..4 (:data:`SIMULATIONS`).
    n : int
        Dataset size.
    s1 : float
        Class-1 covariance ``s1 · I₂`` (class 0: ``I₂``; means ``(0, 0)`` and ``(1, 1)``).
    tree : {"auto", "batched", "sklearn"}, default "auto"
        Path of the tree (:func:`tree_losses`); not a parameter of the
        results (both paths predict alike), so not in :meth:`params`.
    """

    kind: ClassVar[str] = "nb-classification"
    s1: float
    models: tuple[str, str] = ("A", "B")
    n_stats: int = 9
    tree: str = "auto"

    def params(self) -> dict[str, Any]:
        """Return the simulation parameters as a JSON-friendly dict (without ``tree``)."""
        out = super().params()
        del out["tree"]
        return out

    def sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        """Draw ``size`` examples: columns ``(x1, x2, y)``."""
        y = rng.integers(0, 2, size=size).astype(float)
        scale = np.where(y > 0.5, np.sqrt(self.s1), 1.0)
        x = y[:, None] + scale[:, None] * rng.standard_normal((size, 2))
        return np.column_stack([x, y])

    def generate(self, rng: np.random.Generator) -> FloatArray:
        """One dataset, shape ``(n, 3)``."""
        return self.sample(rng, self.n)

    def stats(self, data: FloatArray) -> FloatArray:
        """Per-example ``(1, x1, x2, x1², x1x2, x2², y, x1y, x2y)``, shape ``(B, n, 9)``."""
        x1, x2, y = data[..., 0], data[..., 1], data[..., 2]
        return np.stack(
            [np.ones_like(x1), x1, x2, x1 * x1, x1 * x2, x2 * x2, y, x1 * y, x2 * y], axis=-1
        )

    def split_means(
        self,
        data: FloatArray,
        test_idx: NDArray[np.int32],
        train_idx: NDArray[np.int32],
        test_sums: FloatArray,
        train_sums: FloatArray,
    ) -> FloatArray:
        """Mean zero-one test losses of the tree (A) and OLS (B), shape ``(B, ..., 2)``."""
        ols = _ols_losses(data, test_idx, ols_classifier_from_sums(train_sums)).mean(axis=-1)
        tree = tree_losses(data, test_idx, train_idx, self.tree).mean(axis=-1)
        return np.stack([tree, ols], axis=-1)

    def example_losses(
        self, data: FloatArray, test_idx: NDArray[np.int32], train_idx: NDArray[np.int32]
    ) -> FloatArray:
        """Per-example zero-one losses of A and B on one split per dataset."""
        sums = np.einsum("bnk->bk", np.take_along_axis(self.stats(data), train_idx[..., None], 1))
        ols = _ols_losses(data, test_idx, ols_classifier_from_sums(sums))
        return np.stack([tree_losses(data, test_idx, train_idx, self.tree), ols], axis=-1)

    def monte_carlo_truth(self, n1: int, **options: int) -> dict[str, tuple[float, float]]:
        """:func:`monte_carlo_truth` of this simulation (``options``: its keywords)."""
        return monte_carlo_truth(self, n1, **options)


@study_doc
def classification_problem(
    simulation: int, *, tree: str = "auto", **overrides: float
) -> ClassificationProblem:
    """Return simulation ``1..4`` of docs/studies.md §B (parameters overridable).

    %(parameters_simulation)s
    tree : {"auto", "batched", "sklearn"}, default "auto"
        Path of the tree (:func:`tree_losses`).
    **overrides
        Parameters to change (e.g. ``n=60``): ``n`` (an int ``>= 20``) and
        ``s1`` (``> 0``).

    Returns
    -------
    ClassificationProblem

    %(raises_simulation)s
    """
    problem = ClassificationProblem.of_simulation(
        SIMULATIONS, simulation, overrides, positive=("s1",), what="problem 2"
    )
    choose_tree_path(tree, problem.n, BATCHED_MAX_N)  # a bad value fails here, not in a batch
    return replace(problem, tree=tree)


def check_truth_test_size(value: object, name: str = "truth_test_size") -> int:
    """Return ``value`` if it is an int ``>= MIN_TRUTH_TEST_SIZE`` (the truth's test sample).

    Parameters
    ----------
    value : object
        The size given.
    name : str, default "truth_test_size"
        The option's name in the message (``"--truth-test-size"`` on the command line).

    Returns
    -------
    int
        ``value``, checked.

    Raises
    ------
    ArgumentError
        Naming ``name``, the value and the default, for a value that is not an
        int (a bool, a float) or is below :data:`MIN_TRUTH_TEST_SIZE`.
    """
    try:
        return check_int(name, value, MIN_TRUTH_TEST_SIZE)
    except ArgumentError:
        raise ArgumentError(
            f"`{name}` must be an int >= {MIN_TRUTH_TEST_SIZE} (the size of the Monte Carlo "
            f"truth's common test sample), got {value!r}; leave it out for the default "
            f"{TRUTH_TEST_SIZE}."
        ) from None


@study_doc
def monte_carlo_truth(
    problem: ClassificationProblem,
    n1: int,
    *,
    train_sets: int = 200,
    n_test: int = TRUTH_TEST_SIZE,
    seed: int = 0,
) -> dict[str, tuple[float, float]]:
    """Monte Carlo ``n1μ`` of A, B and A−B: fresh training sets, one large test sample.

    Every training set is tested on the same ``n_test`` examples, so the
    noise of that one test sample does not average out over training sets:
    the standard error counts both sources. With ``L[t, i]`` the loss of
    training set ``t`` on test example ``i`` and the two-way crossed model
    ``L[t, i] = μ + a_t + b_i + e_ti`` (independent effects, variances
    ``σa², σb², σe²``), the estimate ``mean(L)`` has variance
    ``σa²/T + σb²/n_test + σe²/(T n_test)``; it is estimated by
    ``var(row means)/T + var(column means)/n_test`` (expectation
    ``σa²/T + σb²/n_test + 2σe²/(T n_test)``: slightly conservative). The
    standard deviation of the training-set errors alone, ``sd(row means)/√T``,
    understates it several-fold for the OLS classifier, whose error varies
    little between training sets; the term ``σb²/n_test`` is why the default
    test sample is large.

    The training sets are scored in chunks (about two million examples held
    at once, test sample included), so memory does not grow with
    ``train_sets``; the results do not depend on the chunks.

    Parameters
    ----------
    problem : ClassificationProblem
        The simulation (:func:`classification_problem`).
    %(truth_training_sets)s
    n_test : int, default 100000
        Size of the common test sample (:data:`TRUTH_TEST_SIZE`; it was
        20 000 before). At least 2 here (the variance of the column means);
        the runs ask for at least :data:`MIN_TRUTH_TEST_SIZE`
        (:func:`check_truth_test_size`).
    %(truth_seed_returns)s
        Here the standard error counts the common test sample's noise too
        (above), not only the spread over training sets.

    Raises
    ------
    ArgumentError
        If ``n_test`` is not an int ``>= 2``.
    """
    n_test = check_int("n_test", n_test, 2)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(problem.simulation, n1)))
    test = problem.sample(rng, n_test)
    train = np.stack([problem.sample(rng, n1) for _ in range(train_sets)])  # (T, n1, 3)
    sums = problem.stats(train).sum(axis=1)
    # row means: error of each training set; column sums: total loss of each test example
    rows = {m: np.empty(train_sets) for m in ("A", "B")}
    col_sums = {m: np.zeros(n_test) for m in ("A", "B")}
    chunk = max(1, _TRUTH_CHUNK // (n1 + n_test))
    for lo in range(0, train_sets, chunk):
        part = slice(lo, min(lo + chunk, train_sets))
        k = part.stop - part.start
        both = np.concatenate([train[part], np.broadcast_to(test, (k, *test.shape))], axis=1)
        te = np.broadcast_to(np.arange(n1, n1 + n_test), (k, n_test))
        tr = np.broadcast_to(np.arange(n1), (k, n1))
        losses = {
            "A": tree_losses(both, te, tr, problem.tree),
            "B": _ols_losses(both, te, ols_classifier_from_sums(sums[part])),
        }  # (k, n_test) each
        for m, loss in losses.items():
            rows[m][part] = loss.mean(axis=1)
            col_sums[m] += loss.sum(axis=0)
    cols = {m: v / train_sets for m, v in col_sums.items()}
    rows["A-B"], cols["A-B"] = rows["A"] - rows["B"], cols["A"] - cols["B"]
    out = {}
    for q in ("A", "B", "A-B"):
        var = rows[q].var(ddof=1) / train_sets + cols[q].var(ddof=1) / n_test
        out[q] = (float(rows[q].mean()), float(np.sqrt(var)))
    return out


@study_doc
def run_classification(
    simulation: int,
    n_datasets: int,
    out_dir: str | os.PathLike[str],
    *,
    seed: int = 0,
    J: int = 25,
    M: int = 20,
    R: int = 15,
    J_rep: int = 15,
    batch_size: int | None = None,
    n_jobs: int = 1,
    progress: bool = False,
    client: Any = None,
    truth_sets: int = 0,
    tree: str = "auto",
    compute: bool = True,
    truth_test_size: int = TRUTH_TEST_SIZE,
    **overrides: float,
) -> xr.Dataset:
    """Run (or resume) simulation ``simulation`` of problem B (docs/studies.md §B, §D).

    %(run_simulation)s
    %(run_truth_sets)s
    truth_test_size : int, default 100000
        Size of the one test sample every truth training set is scored on
        (:func:`monte_carlo_truth`'s ``n_test``; :data:`TRUTH_TEST_SIZE`, was
        20 000); an int ``>= MIN_TRUTH_TEST_SIZE`` (1000), checked before any
        batch. With ``compute=False`` the truth is recomputed with it too.
    tree : {"auto", "batched", "sklearn"}, default "auto"
        Path of the tree (:func:`tree_losses`): the same results either way.
    **overrides
        Simulation parameters to change.

    Returns
    -------
    xarray.Dataset
        Split means of every block (:func:`cvstats.studies.compute_batch`).

    Raises
    ------
    ArgumentError
        For an option out of range (:func:`classification_problem`,
        :func:`check_truth_test_size`, :func:`cvstats.studies.run_study`),
        before any batch is computed.
    """
    problem = classification_problem(simulation, tree=tree, **overrides)
    truth_test_size = check_truth_test_size(truth_test_size)
    return run_study_with_truth(
        problem, n_datasets, out_dir, truth_sets, truth_test_size=truth_test_size,
        seed=seed, J=J, M=M, R=R, J_rep=J_rep, batch_size=batch_size, n_jobs=n_jobs,
        progress=progress, client=client, compute=compute,
    )  # fmt: skip
