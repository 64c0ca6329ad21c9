"""Nadeau & Bengio, problem 3: letter recognition (docs/studies.md §C).

The UCI *Letter Recognition* data (20,000 examples, 16 integer features in
``[0, 15]``, 26 classes; P. W. Frey and D. J. Slate 1991, CC BY 4.0,
doi:10.24432/C5ZP40) ship with the package (``cvstats/data/letter.csv.gz``,
:func:`load_letter`). Each simulated dataset is ``n = 300`` examples drawn
without replacement from the 20,000; the others are the population of the
true error. Zero-one loss.

* Learner A: classification tree, the stand-in for S-Plus ``tree`` of the
  paper: scikit-learn's
  ``DecisionTreeClassifier(min_samples_split=10, min_samples_leaf=5)``
  (no ``mindev`` rule, see :mod:`cvstats.studies.classification`). Two
  paths (``tree`` option): ``"sklearn"`` fits split by split (about 1.2 ms
  per split, 1,800 splits per dataset; data and parameters checked once per
  dataset, ``cvstats.studies._sklearn_tree``); ``"batched"`` grows the
  trees of every split of a dataset at once
  (:func:`cvstats.studies.batched_tree.classification_tree_predict`, same
  Gini proxies and thresholds). The integer features are often constant in a
  node, which changes scikit-learn's order of visiting features, so where two
  features tie for the best split the batched tree may take the other one
  (its rule: the first feature in scikit-learn's visiting order at the
  node's preorder count as if no feature were constant); its error rates
  agree with scikit-learn's within Monte Carlo error (tested). ``"auto"``
  (default) takes the batched path for ``n <=`` :data:`BATCHED_MAX_N`.
* Learner B: first nearest neighbour with the distorted squared distance
  ``d(x, x') = w Σ_{C1} (x_i - x'_i)² + Σ_{C2} (x_i - x'_i)² + w⁻¹ Σ_{C3} (x_i - x'_i)²``
  (:data:`GROUPS`). Batched: per dataset, the three group-wise squared
  distance matrices ``(n, n)`` are computed once by matrix algebra
  (``|a|² + |b|² − 2 a·b`` on the integer features, exact in float64) and
  combined with the weights; a split's test × training block is gathered
  from them and the nearest training example is the argmin. **Ties** (equal
  computed distances, frequent with integer features) are broken by the
  smallest position of the training example in the dataset (the order of the
  random draw), so the prediction does not depend on the order of the split's
  index arrays; this equals ``KNeighborsClassifier(n_neighbors=1)`` on the
  feature-scaled copies (``sqrt`` of the weights) fitted on the training set
  sorted by position (tested).

The true ``n1μ`` (:func:`monte_carlo_truth`): training sets of size ``n1``
drawn without replacement from the 20,000, each tested on all the others.

With ``learners=("nn",)`` only learner B is run (quantity ``"B"``, no
contrast): fast (the whole study of a dataset is a few gathers of a
``300 × 300`` matrix).
"""

from __future__ import annotations

import functools
import os
import warnings
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
import xarray as xr
from numpy.typing import NDArray

from cvstats.errors import ArgumentError
from cvstats.studies._common import FloatArray, IntArray, study_doc
from cvstats.studies._runner import (
    add_monte_carlo_truth,
    check_simulation,
    run_study_with_truth,
)
from cvstats.studies._sklearn_tree import sklearn_tree_predict
from cvstats.studies.batched_tree import choose_tree_path, classification_tree_predict

__all__ = [
    "BATCHED_MAX_N",
    "GROUPS",
    "SIMULATIONS",
    "LetterProblem",
    "letter_problem",
    "load_letter",
    "group_sq_distances",
    "letter_distances",
    "nn_losses",
    "tree_losses",
    "monte_carlo_truth",
    "add_monte_carlo_truth",
    "run_letter",
]

#: Weights ``w`` of the six simulations (docs/studies.md §C).
SIMULATIONS: dict[int, float] = {1: 1.0, 2: 5.0, 3: 10.0, 4: 17.25, 5: 25.0, 6: 2048.0}

#: Feature groups ``C1, C2, C3`` (0-based columns after the label; 1-based in docs/studies.md §C:
#: ``{1,3,9,16}``, ``{2,4,6,7,8,10,12,14,15}``, ``{5,11,13}``), weights ``w, 1, 1/w``.
GROUPS: tuple[tuple[int, ...], ...] = (
    (0, 2, 8, 15),
    (1, 3, 5, 6, 7, 9, 11, 13, 14),
    (4, 10, 12),
)

N_FEATURES = 16
_TREE = {"min_samples_split": 10, "min_samples_leaf": 5}
#: ``tree="auto"`` takes the batched tree for datasets of at most this many examples.
BATCHED_MAX_N = 0
_LABEL, _INDEX = N_FEATURES, N_FEATURES + 1  # columns of a dataset after the features


@functools.lru_cache(maxsize=1)
def load_letter() -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Load the shipped UCI Letter Recognition data (cached).

    Returns
    -------
    features : ndarray of int, shape (20000, 16)
        The 16 integer features in the UCI (file) order.
    labels : ndarray of int, shape (20000,)
        Letter codes ``0..25`` (A..Z).
    """
    import pandas as pd

    ref = resources.files("cvstats").joinpath("data", "letter.csv.gz")
    with resources.as_file(ref) as path:
        frame = pd.read_csv(path)
    features = frame.iloc[:, 1:].to_numpy(dtype=np.int64)
    labels = np.array([ord(c) - ord("A") for c in frame.iloc[:, 0].astype(str)], dtype=np.int64)
    features.setflags(write=False)
    labels.setflags(write=False)
    return features, labels


def group_sq_distances(xa: FloatArray, xb: FloatArray) -> FloatArray:
    """Squared Euclidean distances within each feature group.

    Parameters
    ----------
    xa, xb : ndarray, shapes (..., na, 16), (..., nb, 16)
        Feature rows (integer-valued: the results are then exact).

    Returns
    -------
    ndarray, shape (..., 3, na, nb)
        ``Σ_{i ∈ C_k} (a_i - b_i)²`` for ``k = 1, 2, 3``.
    """
    out = []
    for g in GROUPS:
        a, b = xa[..., list(g)], xb[..., list(g)]
        sq = (a * a).sum(-1)[..., :, None] + (b * b).sum(-1)[..., None, :]
        out.append(sq - 2.0 * (a @ np.swapaxes(b, -1, -2)))
    return np.stack(out, axis=-3)


def letter_distances(xa: FloatArray, xb: FloatArray, w: float) -> FloatArray:
    """Distorted squared distances ``w S1 + S2 + S3 / w``, shape ``(..., na, nb)``."""
    s = group_sq_distances(xa, xb)
    return w * s[..., 0, :, :] + s[..., 1, :, :] + s[..., 2, :, :] / w


def _nearest(dist: FloatArray, train: IntArray, sentinel: int) -> IntArray:
    """Dataset position of the nearest training example, ties to the smallest position."""
    closest = dist.min(axis=-1, keepdims=True)
    cand = np.where(dist == closest, train[..., None, :], sentinel)
    return cand.min(axis=-1)


def nn_losses(data: FloatArray, test_idx: IntArray, train_idx: IntArray, w: float) -> FloatArray:
    """Zero-one test losses of the distorted 1-NN on many splits.

    Parameters
    ----------
    data : ndarray, shape (B, n, 18)
        Datasets: 16 features, the label code, the population row.
    test_idx, train_idx : ndarray of int, shapes (B, ..., n2), (B, ..., n1)
        Test and training positions of each split.
    w : float
        Distortion weight.

    Returns
    -------
    ndarray, shape (B, ..., n2)
        ``I[prediction != label]`` per test example.
    """
    B, n = data.shape[:2]
    out = np.empty(test_idx.shape)
    for b in range(B):
        x, y = data[b, :, :N_FEATURES], data[b, :, _LABEL]
        dist = letter_distances(x, x, w)  # (n, n), computed once per dataset
        te = test_idx[b].reshape(-1, test_idx.shape[-1])
        tr = train_idx[b].reshape(-1, train_idx.shape[-1])
        step = max(1, int(4e6 // (te.shape[1] * tr.shape[1])))  # bound the gathered block
        res = np.empty(te.shape)
        for s in range(0, te.shape[0], step):
            t, r = te[s : s + step], tr[s : s + step]
            pos = _nearest(dist[t[:, :, None], r[:, None, :]], r, n)
            res[s : s + step] = y[pos] != y[t]
        out[b] = res.reshape(test_idx.shape[1:])
    return out


def tree_losses(
    data: FloatArray, test_idx: IntArray, train_idx: IntArray, tree: str = "sklearn"
) -> FloatArray:
    """Zero-one test losses of the classification tree, every split of every dataset.

    Parameters
    ----------
    data : ndarray, shape (B, n, 18)
        Datasets (see :func:`nn_losses`).
    test_idx, train_idx : ndarray of int, shapes (B, ..., n2), (B, ..., n1)
        Test and training positions of each split.
    tree : {"sklearn", "batched", "auto"}, default "sklearn"
        ``"sklearn"``: fitted split by split; ``"batched"``: all splits of a
        dataset at once (module docstring); ``"auto"``: batched for ``n <=``
        :data:`BATCHED_MAX_N`.

    Returns
    -------
    ndarray, shape (B, ..., n2)
    """
    from sklearn.tree import DecisionTreeClassifier

    path = choose_tree_path(tree, data.shape[1], BATCHED_MAX_N)
    B = data.shape[0]
    te = test_idx.reshape(B, -1, test_idx.shape[-1])
    tr = train_idx.reshape(B, -1, train_idx.shape[-1])
    out = np.empty(te.shape)
    if path == "batched":  # every split of every dataset grown at once
        X, y = data[:, :, :N_FEATURES], data[:, :, _LABEL]
        pred, _ = classification_tree_predict(X, y, tr, **_TREE, test_idx=te)
        return (
            (pred != np.take_along_axis(y[:, None, :], te, axis=2))
            .astype(float)
            .reshape(test_idx.shape)
        )
    with warnings.catch_warnings():
        # small training sets hold many of the 26 classes: sklearn's "regression?" hint
        warnings.filterwarnings(
            "ignore", message="The number of unique classes", category=UserWarning
        )
        for b in range(B):
            X, y = data[b, :, :N_FEATURES], data[b, :, _LABEL]
            tree = DecisionTreeClassifier(**_TREE, random_state=0)
            out[b] = sklearn_tree_predict(tree, X, y, tr[b], te[b]) != y[te[b]]
    return out.reshape(test_idx.shape)


@dataclass(frozen=True)
class LetterProblem:
    """One simulation of problem 3 for the runner (:class:`cvstats.studies._runner.Problem`).

    Attributes
    ----------
    simulation : int
        1..6 (:data:`SIMULATIONS`); part of every dataset's seed, so the
        datasets and splits of a simulation do not depend on ``learners``.
    w : float
        Distortion weight of the 1-NN distance.
    n : int, default 300
        Dataset size.
    learners : tuple of str, default ("tree", "nn")
        ``("tree", "nn")``: quantities A (tree), B (1-NN) and A−B;
        ``("nn",)``: B only.
    tree : {"auto", "batched", "sklearn"}, default "auto"
        Path of the tree (:func:`tree_losses`); in :meth:`params` when the
        tree runs batched (its tie rule may change a few trees).
    """

    simulation: int
    w: float
    n: int = 300
    learners: tuple[str, ...] = ("tree", "nn")
    n_stats: int = 1
    tree: str = "auto"

    @property
    def models(self) -> tuple[str, ...]:
        """``("A", "B")`` or ``("B",)``."""
        return tuple({"tree": "A", "nn": "B"}[name] for name in self.learners)

    @property
    def tag(self) -> str:
        """File-name tag, e.g. ``"nb-letter-sim1"`` or ``"nb-letter-sim1-nn"``."""
        suffix = "" if self.learners == ("tree", "nn") else "-" + "-".join(self.learners)
        return f"nb-letter-sim{self.simulation}{suffix}"

    def params(self) -> dict[str, Any]:
        """Return the simulation parameters as a JSON-friendly dict."""
        out = {"problem": "nb-letter", "simulation": self.simulation, "w": self.w, "n": self.n,
               "learners": list(self.learners), "models": list(self.models)}  # fmt: skip
        if "tree" in self.learners and self.tree_path == "batched":
            out["tree"] = "batched"
        return out

    @property
    def tree_path(self) -> str:
        """``"batched"`` or ``"sklearn"``: :attr:`tree` resolved for ``n``."""
        return choose_tree_path(self.tree, self.n, BATCHED_MAX_N)

    def generate(self, rng: np.random.Generator) -> FloatArray:
        """``n`` rows drawn without replacement: 16 features, label code, population row."""
        features, labels = load_letter()
        rows = rng.choice(features.shape[0], size=self.n, replace=False)
        return np.column_stack([features[rows], labels[rows], rows]).astype(float)

    def stats(self, data: FloatArray) -> FloatArray:
        """No sufficient statistics are needed: ones, shape ``(B, n, 1)``."""
        return np.ones((*data.shape[:2], 1))

    def _losses(self, data: FloatArray, test_idx: IntArray, train_idx: IntArray) -> FloatArray:
        out = []
        for name in self.learners:
            if name == "tree":
                out.append(tree_losses(data, test_idx, train_idx, self.tree_path))
            else:
                out.append(nn_losses(data, test_idx, train_idx, self.w))
        return np.stack(out, axis=-1)

    def split_means(
        self,
        data: FloatArray,
        test_idx: NDArray[np.int32],
        train_idx: NDArray[np.int32],
        test_sums: FloatArray,
        train_sums: FloatArray,
    ) -> FloatArray:
        """Mean zero-one test losses of the learners, shape ``(B, ..., n_models)``."""
        return self._losses(data, test_idx, train_idx).mean(axis=-2)

    def example_losses(
        self, data: FloatArray, test_idx: NDArray[np.int32], train_idx: NDArray[np.int32]
    ) -> FloatArray:
        """Per-example zero-one losses on one split per dataset, shape ``(B, n2, n_models)``."""
        return self._losses(data, test_idx, train_idx)

    def monte_carlo_truth(self, n1: int, **options: int) -> dict[str, tuple[float, float]]:
        """:func:`monte_carlo_truth` of this simulation (``options``: its keywords)."""
        return monte_carlo_truth(self, n1, **options)


def letter_problem(
    w: float | None = None,
    *,
    simulation: int | None = None,
    learners: str | tuple[str, ...] = ("tree", "nn"),
    n: int = 300,
    tree: str = "auto",
) -> LetterProblem:
    """Return the simulation of problem 3 with weight ``w`` (or number ``simulation``).

    Parameters
    ----------
    w : float, optional
        One of 1, 5, 10, 17.25, 25, 2048.
    simulation : int, optional
        1..6 instead of ``w``.
    learners : str or tuple of str, default ("tree", "nn")
        ``"nn"``, ``"tree"``, ``"both"`` or a tuple of ``"tree"``/``"nn"``.
    n : int, default 300
        Dataset size.
    tree : {"auto", "batched", "sklearn"}, default "auto"
        Path of the tree (:func:`tree_losses`).

    Returns
    -------
    LetterProblem
    """
    if (w is None) == (simulation is None):
        raise ArgumentError("Give exactly one of `w` and `simulation`.")
    if simulation is None:
        match = [k for k, v in SIMULATIONS.items() if v == float(w)]  # type: ignore[arg-type]
        if not match:
            raise ArgumentError(f"`w` must be one of {list(SIMULATIONS.values())}, got {w!r}.")
        simulation = match[0]
    check_simulation(simulation, SIMULATIONS)
    if isinstance(learners, str):
        learners = ("tree", "nn") if learners == "both" else tuple(learners.split(","))
    learners = tuple(learners)
    if not learners or len(learners) > 2 or not set(learners) <= {"tree", "nn"}:
        raise ArgumentError(f"`learners` must be drawn from 'tree', 'nn', got {learners!r}.")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or not 20 <= n <= 10_000:
        raise ArgumentError(f"`n` must be an int in [20, 10000], got {n!r}.")
    choose_tree_path(tree, int(n), BATCHED_MAX_N)  # a bad value fails here, not in a batch
    return LetterProblem(simulation, SIMULATIONS[simulation], int(n), learners, tree=tree)


@study_doc
def monte_carlo_truth(
    problem: LetterProblem, n1: int, *, train_sets: int = 200, seed: int = 0
) -> dict[str, tuple[float, float]]:
    """Monte Carlo ``n1μ``: training sets of size ``n1`` from the 20,000, tested on the rest.

    Parameters
    ----------
    problem : LetterProblem
        The simulation, of problem 3 (:func:`letter_problem`).
    %(truth_training_sets)s
    %(truth_seed_returns)s
    """
    features, labels = load_letter()
    N = features.shape[0]
    X = features.astype(float)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(problem.simulation, n1)))
    errors: dict[str, list[float]] = {m: [] for m in problem.models}
    for _ in range(train_sets):
        rows = rng.choice(N, size=n1, replace=False)
        rest = np.setdiff1d(np.arange(N), rows)
        for name, m in zip(problem.learners, problem.models, strict=True):
            if name == "nn":
                pred = np.empty(rest.size, dtype=np.int64)
                for s in range(0, rest.size, 2000):
                    dist = letter_distances(X[rest[s : s + 2000]], X[rows], problem.w)
                    pred[s : s + 2000] = labels[rows][_nearest(dist, np.arange(n1), n1)]
            else:
                from sklearn.tree import DecisionTreeClassifier

                tree = DecisionTreeClassifier(**_TREE, random_state=0).fit(X[rows], labels[rows])
                pred = tree.predict(X[rest])
            errors[m].append(float(np.mean(pred != labels[rest])))
    err = {m: np.asarray(e) for m, e in errors.items()}
    if len(problem.models) == 2:
        err["A-B"] = err["A"] - err["B"]
    return {q: (float(e.mean()), float(e.std(ddof=1) / np.sqrt(e.size))) for q, e in err.items()}


@study_doc
def run_letter(
    w: float,
    n_datasets: int,
    out_dir: str | os.PathLike[str],
    *,
    learners: str | tuple[str, ...] = ("tree", "nn"),
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
    n: int = 300,
    tree: str = "auto",
    compute: bool = True,
) -> xr.Dataset:
    """Run (or resume) the simulation of problem 3 with weight ``w`` (docs/studies.md §C, §D).

    Parameters
    ----------
    w : float
        1, 5, 10, 17.25, 25 or 2048.
    n_datasets : int
        Independent datasets.
    out_dir : path
        Directory of the batch files.
    learners : str or tuple of str, default ("tree", "nn")
        See :func:`letter_problem` (``"nn"``: the fast 1-NN alone).
    seed, J, M, R, J_rep, batch_size, n_jobs, progress, client, compute
        See :func:`cvstats.studies.run_study`; ``batch_size`` defaults to 5
        datasets with the tree, 25 without.
    %(run_truth_sets)s
    n : int, default 300
        Dataset size.
    tree : {"auto", "batched", "sklearn"}, default "auto"
        Path of the tree (:func:`tree_losses`).

    Returns
    -------
    xarray.Dataset
        Split means of every block (:func:`cvstats.studies.compute_batch`).
    """
    problem = letter_problem(w, learners=learners, n=n, tree=tree)
    if batch_size is None:
        batch_size = 5 if "tree" in problem.learners else 25
    return run_study_with_truth(
        problem, n_datasets, out_dir, truth_sets, seed=seed, J=J, M=M, R=R, J_rep=J_rep,
        batch_size=batch_size, n_jobs=n_jobs, progress=progress, client=client,
        compute=compute,
    )  # fmt: skip
