"""Classifiers of the survey's population experiment, batched where a closed form exists.

The survey (``conditional-vs-unconditional.txt`` §5, docs/studies.md §F) uses
naive Bayes, 4-NN, 10-NN, logistic regression, C4.5 and a random forest. A
learner here answers two questions for one sample ``T`` of ``N`` examples:

* :meth:`Learner.oof_predict` — the out-of-fold predictions of every
  repetition of a (repeated) k-fold cross-validation: ``folds[r, i]`` is the
  fold of example ``i`` in repetition ``r``; example ``i`` is predicted by the
  model trained on the other folds of its repetition;
* :meth:`Learner.fit_predict` — the predictions, on query points, of the
  model trained on all of ``T`` (the conditional error ``εc(L, T)`` is its
  error on the rest of the population).

Batched learners (no per-fold model objects, no loop over examples):

* :class:`GaussianNaiveBayes` — scikit-learn's ``GaussianNB`` (per-class
  means and variances, two-pass like :func:`numpy.var`, ``var_smoothing``
  times the largest feature variance added, empirical priors), fitted for all
  folds of all repetitions at once by one-hot matrix products; a class absent
  from a training set is never predicted (as in scikit-learn, which only
  knows the classes it saw). Equal to ``GaussianNB`` (tested).
* :class:`NearestNeighbours` — ``k``-NN, squared Euclidean distance, majority
  vote, a vote tie going to the smallest class label (as
  ``KNeighborsClassifier``). One distance matrix per sample; the training set
  of a repetition is "every example of another fold", so a whole repetition
  is one masked sort. **Distance ties** (frequent with integer features,
  e.g. letter) are broken by the position of the training example in ``T``;
  scikit-learn's brute-force search leaves that order unspecified, so the
  two agree whenever the ``k`` nearest are unique (tested on continuous data).

Fallback, fitted fold by fold: :class:`SklearnLearner` wraps any scikit-learn
classifier (a fresh ``clone`` per fit, every ``random_state`` parameter set
from the sample's seed). :data:`LEARNERS` holds the survey's six under short
names; logistic regression standardizes the features first, the C4.5
stand-in is an unpruned entropy tree with at least 2 examples per leaf
(C4.5's ``-m 2``; scikit-learn has no gain ratio and no error-based pruning).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from cvstats.checks import check_int
from cvstats.errors import ArgumentError
from cvstats.studies._common import FloatArray, IntArray

__all__ = [
    "LEARNERS",
    "Learner",
    "GaussianNaiveBayes",
    "NearestNeighbours",
    "SklearnLearner",
    "get_learner",
    "sq_distances",
]

#: Bytes allowed for the largest temporary array of a batched learner.
_BUDGET = 2e8


class Learner(Protocol):
    """What the population runner needs from a classifier.

    Attributes
    ----------
    name : str
        Short name (the ``model`` coordinate of the results).
    """

    name: str

    def oof_predict(
        self, X: FloatArray, y: IntArray, folds: IntArray, n_classes: int, rng: np.random.Generator
    ) -> IntArray:
        """Out-of-fold predictions, shape ``folds.shape`` ``(R, N)``."""
        ...

    def fit_predict(
        self, X: FloatArray, y: IntArray, Xq: FloatArray, n_classes: int, rng: np.random.Generator
    ) -> IntArray:
        """Predictions on ``Xq`` of the model trained on ``(X, y)``, shape ``(Q,)``."""
        ...

    def params(self) -> dict[str, Any]:
        """JSON-friendly description (part of a run's signature)."""
        ...


def _fold_onehot(folds: IntArray) -> tuple[FloatArray, int]:
    K = int(folds.max()) + 1
    return (folds[..., None] == np.arange(K)).astype(np.float64), K


def _row_chunks(rows: int, bytes_per_row: float) -> list[slice]:
    step = max(1, int(_BUDGET // max(bytes_per_row, 1.0)))
    return [slice(s, min(s + step, rows)) for s in range(0, rows, step)]


def _by_chunks(
    shape: tuple[int, ...],
    bytes_per_row: float,
    rows: Callable[[slice], np.ndarray],
    *,
    axis: int = 0,
    dtype: type = np.int64,
) -> np.ndarray:
    """Array of ``shape`` filled by ``rows(sl)`` for chunks ``sl`` of ``axis`` within the budget.

    ``bytes_per_row``: the size of ``rows``' temporaries per index of ``axis``
    (see :data:`_BUDGET`).
    """
    out = np.empty(shape, dtype=dtype)
    where: list[slice] = [slice(None)] * len(shape)
    for sl in _row_chunks(shape[axis], bytes_per_row):
        where[axis] = sl
        out[tuple(where)] = rows(sl)
    return out


# --------------------------------------------------------------------------
# Gaussian naive Bayes
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class GaussianNaiveBayes:
    """Batched ``sklearn.naive_bayes.GaussianNB`` (default ``var_smoothing=1e-9``).

    Attributes
    ----------
    name : str, default "nb"
    var_smoothing : float, default 1e-9
        Share of the largest feature variance (of the training set) added to
        every class variance, as in scikit-learn.
    """

    name: str = "nb"
    var_smoothing: float = 1e-9

    def params(self) -> dict[str, Any]:
        """Return the learner's description."""
        return {"learner": "GaussianNaiveBayes", "name": self.name, "vs": self.var_smoothing}

    def _fit(
        self, X: FloatArray, Y: FloatArray, T: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Class means, variances, log priors of every training set (rows of ``T``).

        ``X`` (N, p), ``Y`` one-hot classes (N, C), ``T`` training weights (S, N)
        of ``S`` training sets; returns ``(S, C, p)``, ``(S, C, p)``, ``(S, C)``.
        """
        S, _ = T.shape
        p = X.shape[1]
        C = Y.shape[1]
        cnt = T @ Y  # (S, C)
        s1 = (T @ (Y[:, :, None] * X[:, None, :]).reshape(len(X), C * p)).reshape(S, C, p)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(cnt[..., None] > 0, s1 / cnt[..., None], 0.0)
        ycls = Y.argmax(axis=1)
        dev = np.empty((S, C, p))
        n_tr = T.sum(axis=1)
        mean_all = (T @ X) / n_tr[:, None]  # (S, p)
        var_all = np.empty((S, p))
        for sl in _row_chunks(S, X.size * 8 * 2):  # (rows, N, p) temporaries
            d2 = (X[None, :, :] - mean[sl][:, ycls, :]) ** 2  # (s, N, p) two-pass deviations
            w = T[sl][:, :, None] * d2
            dev[sl] = np.matmul(Y.T[None], w)  # (s, C, p): sums over each class
            a2 = (X[None, :, :] - mean_all[sl][:, None, :]) ** 2
            var_all[sl] = np.matmul(T[sl][:, None, :], a2)[:, 0] / n_tr[sl, None]
        eps = self.var_smoothing * var_all.max(axis=1)  # (S,)
        with np.errstate(divide="ignore", invalid="ignore"):
            var = np.where(cnt[..., None] > 0, dev / cnt[..., None], 1.0) + eps[:, None, None]
            log_prior = np.where(cnt > 0, np.log(np.where(cnt > 0, cnt, 1.0) / n_tr[:, None]),
                                 -np.inf)  # fmt: skip
        return mean, var, log_prior

    @staticmethod
    def _base(var: FloatArray, log_prior: FloatArray) -> FloatArray:
        """``log prior - ½ Σ log(2π var)`` of every class, ``(..., C)``."""
        return log_prior - 0.5 * np.sum(np.log(2.0 * np.pi * var), axis=-1)

    @staticmethod
    def _predict(Xq: FloatArray, mean: FloatArray, var: FloatArray, base: FloatArray) -> IntArray:
        """Predict ``Xq (..., p)`` from means, variances ``(..., C, p)`` and ``_base``."""
        d = Xq[..., None, :] - mean
        d *= d
        d /= var
        return (base - 0.5 * d.sum(axis=-1)).argmax(axis=-1)

    def oof_predict(
        self, X: FloatArray, y: IntArray, folds: IntArray, n_classes: int, rng: np.random.Generator
    ) -> IntArray:
        """Out-of-fold predictions of every repetition (see the module docstring)."""
        X = np.asarray(X, dtype=np.float64)
        R, N = folds.shape
        Y = (y[:, None] == np.arange(n_classes)).astype(np.float64)
        F, K = _fold_onehot(folds)  # (R, N, K)
        T = (1.0 - F).transpose(0, 2, 1).reshape(R * K, N)  # training weights
        mean, var, log_prior = self._fit(X, Y, T)
        C, p = n_classes, X.shape[1]
        mean = mean.reshape(R, K, C, p)
        var = var.reshape(R, K, C, p)
        base = self._base(var, log_prior.reshape(R, K, C))
        r = np.arange(R)[:, None]

        def examples(sl: slice) -> IntArray:
            f = folds[:, sl]
            return self._predict(X[None, sl, :], mean[r, f], var[r, f], base[r, f])

        return _by_chunks((R, N), R * C * p * 8 * 3, examples, axis=1)

    def fit_predict(
        self, X: FloatArray, y: IntArray, Xq: FloatArray, n_classes: int, rng: np.random.Generator
    ) -> IntArray:
        """Predictions on ``Xq`` of the model trained on all of ``(X, y)``."""
        X = np.asarray(X, dtype=np.float64)
        Y = (y[:, None] == np.arange(n_classes)).astype(np.float64)
        mean, var, log_prior = self._fit(X, Y, np.ones((1, len(X))))
        Xq = np.asarray(Xq, dtype=np.float64)
        base = self._base(var[0], log_prior[0])
        return _by_chunks(
            (len(Xq),),
            n_classes * X.shape[1] * 8 * 3,
            lambda sl: self._predict(Xq[sl], mean[0], var[0], base),
        )


# --------------------------------------------------------------------------
# k nearest neighbours
# --------------------------------------------------------------------------


def sq_distances(A: FloatArray, B: FloatArray) -> FloatArray:
    """Squared Euclidean distances ``(len(A), len(B))`` from coordinate differences.

    Computed as ``Σ_f (a_f - b_f)²`` (not ``|a|² + |b|² - 2a·b``), in row
    chunks, so equal points are at distance exactly 0 and integer features
    give exact integer distances.
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    return _by_chunks(
        (len(A), len(B)),
        B.size * 8 * 2,
        lambda sl: np.sum((A[sl, None, :] - B[None, :, :]) ** 2, axis=-1),
        dtype=np.float64,
    )


def _vote(neighbour_labels: IntArray, n_classes: int) -> IntArray:
    """Majority vote over the last axis; a tie goes to the smallest label."""
    counts = (neighbour_labels[..., None] == np.arange(n_classes)).sum(axis=-2)
    return counts.argmax(axis=-1)


@dataclass(frozen=True)
class NearestNeighbours:
    """Batched ``k``-NN classifier (squared Euclidean distance, uniform votes).

    Attributes
    ----------
    k : int
        Number of neighbours.
    name : str, optional
        Default ``f"{k}nn"``.
    """

    k: int
    name: str = ""

    def __post_init__(self) -> None:
        check_int("k", self.k, 1)
        if not self.name:
            object.__setattr__(self, "name", f"{self.k}nn")

    def params(self) -> dict[str, Any]:
        """Return the learner's description."""
        return {"learner": "NearestNeighbours", "name": self.name, "k": int(self.k)}

    def _nearest(self, dist: FloatArray) -> IntArray:
        # stable sort: equal distances keep the order of the training positions
        return np.argsort(dist, axis=-1, kind="stable")[..., : self.k]

    def oof_predict(
        self, X: FloatArray, y: IntArray, folds: IntArray, n_classes: int, rng: np.random.Generator
    ) -> IntArray:
        """Out-of-fold predictions of every repetition (see the module docstring)."""
        R, N = folds.shape
        smallest = min(int(np.sum(f != k)) for f in folds for k in np.unique(f))
        if self.k > smallest:
            raise ArgumentError(
                f"{self.name}: k = {self.k} neighbours but a training set of the "
                f"cross-validation has only {smallest} examples; use fewer folds' worth of "
                "test data (more folds) or a larger sample."
            )
        D = sq_distances(X, X)

        def repetitions(sl: slice) -> IntArray:
            same = folds[sl, :, None] == folds[sl, None, :]  # same fold: not in training
            return _vote(y[self._nearest(np.where(same, np.inf, D[None]))], n_classes)

        return _by_chunks((R, N), N * N * 8 * 2, repetitions)

    def fit_predict(
        self, X: FloatArray, y: IntArray, Xq: FloatArray, n_classes: int, rng: np.random.Generator
    ) -> IntArray:
        """Predictions on ``Xq`` of the model trained on all of ``(X, y)``."""
        if self.k > len(X):
            raise ArgumentError(f"{self.name}: k = {self.k} > {len(X)} training examples.")
        return _by_chunks(
            (len(Xq),),
            len(X) * 8 * 4,
            lambda sl: _vote(y[self._nearest(sq_distances(Xq[sl], X))], n_classes),
        )


# --------------------------------------------------------------------------
# scikit-learn fallback
# --------------------------------------------------------------------------


def _seeded(estimator: Any, state: int) -> Any:
    from sklearn.base import clone

    est = clone(estimator)
    keys = [k for k in est.get_params(deep=True) if k == "random_state" or
            k.endswith("__random_state")]  # fmt: skip
    if keys:
        est.set_params(**dict.fromkeys(keys, state))
    return est


@dataclass(frozen=True)
class SklearnLearner:
    """Any scikit-learn classifier, fitted fold by fold (the slow path).

    Attributes
    ----------
    name : str
        Short name.
    estimator : sklearn estimator
        Unfitted classifier; each fit uses ``clone(estimator)`` with every
        ``random_state`` parameter (also inside pipelines) set to a fresh draw
        of the sample's generator, in a fixed order.
    """

    name: str
    estimator: Any = field(compare=False)

    def params(self) -> dict[str, Any]:
        """Return the learner's description (its ``repr``)."""
        return {"learner": "SklearnLearner", "name": self.name, "estimator": repr(self.estimator)}

    def _fit(self, X: FloatArray, y: IntArray, rng: np.random.Generator) -> Any:
        state = int(rng.integers(np.iinfo(np.int32).max))
        return _seeded(self.estimator, state).fit(X, y)

    def oof_predict(
        self, X: FloatArray, y: IntArray, folds: IntArray, n_classes: int, rng: np.random.Generator
    ) -> IntArray:
        """Out-of-fold predictions, one fit per (repetition, fold)."""
        out = np.empty(folds.shape, dtype=np.int64)
        for r, f in enumerate(folds):
            for k in np.unique(f):
                test = f == k
                out[r, test] = self._fit(X[~test], y[~test], rng).predict(X[test])
        return out

    def fit_predict(
        self, X: FloatArray, y: IntArray, Xq: FloatArray, n_classes: int, rng: np.random.Generator
    ) -> IntArray:
        """Predictions on ``Xq`` of the model trained on all of ``(X, y)``."""
        return np.asarray(self._fit(X, y, rng).predict(Xq), dtype=np.int64)


def _logistic() -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))


def _c45() -> Any:
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2)


def _forest() -> Any:
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=100, n_jobs=1)


#: The survey's learners by short name (builders: each call returns a new learner).
LEARNERS: dict[str, Callable[[], Learner]] = {
    "nb": GaussianNaiveBayes,
    "4nn": lambda: NearestNeighbours(4),
    "10nn": lambda: NearestNeighbours(10),
    "lr": lambda: SklearnLearner("lr", _logistic()),
    "dt": lambda: SklearnLearner("dt", _c45()),
    "rf": lambda: SklearnLearner("rf", _forest()),
}


def get_learner(learner: str | Learner) -> Learner:
    """Return a learner from :data:`LEARNERS` by name, or ``learner`` itself.

    Raises
    ------
    ArgumentError
        For an unknown name or an object without ``oof_predict``/``fit_predict``.
    """
    if isinstance(learner, str):
        if learner not in LEARNERS:
            raise ArgumentError(
                f"unknown learner {learner!r}; choose from {sorted(LEARNERS)} or pass a "
                "learner object (e.g. SklearnLearner('svm', SVC()))."
            )
        return LEARNERS[learner]()
    for attr in ("name", "oof_predict", "fit_predict", "params"):
        if not hasattr(learner, attr):
            raise ArgumentError(
                f"a learner needs `{attr}` (see cvstats.studies.learners.Learner); got "
                f"{type(learner).__name__}. Wrap a scikit-learn classifier in SklearnLearner."
            )
    return learner
