"""Fit learners on the splits of a design and collect their per-example test losses.

:func:`collect` is the bridge from scikit-learn (or any ``fit_predict``
callable) to the loss cube of ``docs/cube-schema.md``: every learner is
trained on the training set of every split of a design and scored, example by
example, on that split's test set. The fits run as independent
``(split, model)`` tasks through :class:`joblib.Parallel`, so they use any
joblib backend (processes, threads, or a dask cluster inside
``with joblib.parallel_backend("dask"):``), and the result does not depend on
the backend or the number of jobs.
"""

from __future__ import annotations

import numbers
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
import xarray as xr
from joblib import Parallel, delayed
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from tqdm import tqdm

from cvstats.cube import from_arrays
from cvstats.cube.schema import EXAMPLE, SPLIT, UNKNOWN_SEED
from cvstats.designs.losses import LossFunction, get_loss
from cvstats.errors import CubeError, CvstatsTypeError, DesignError

__all__ = ["collect"]


@dataclass(frozen=True)
class _Learner:
    """A validated learner: its name, the object and how to run it."""

    name: str
    obj: Any
    is_estimator: bool
    #: ``get_params(deep=True)`` keys of the ``random_state`` params left at None.
    seed_keys: tuple[str, ...]


def collect(
    learners: Mapping[str, Any],
    X: Any,
    y: ArrayLike,
    design: xr.Dataset,
    *,
    loss: str | LossFunction = "zero_one",
    n_jobs: int | None = None,
    progress: bool = True,
    seed: int | None = None,
    name: str | None = None,
) -> xr.DataArray:
    """Fit every learner on every split of a design and collect the test losses.

    For each split of `design` and each learner, the learner is trained on the
    split's training examples and predicts its test examples; the per-example
    losses (computed vectorized over the test set) fill a loss cube with NaN
    off the test sets. Every learner sees exactly the same splits.

    Parameters
    ----------
    learners : mapping of str to estimator or callable
        The models to compare, by name (the cube's ``model`` coordinate, in
        this order). Each value is either a scikit-learn estimator -- cloned
        with :func:`sklearn.base.clone` for every split, so the object passed
        is never fitted or modified -- or a callable
        ``fit_predict(X_train, y_train, X_test) -> predictions``. With
        ``loss="log"`` estimators are scored through ``predict_proba`` and
        callables must return probabilities of shape ``(n_test, n_classes)``
        with columns ordered as ``numpy.unique(y)``.
    X : array-like, sparse matrix or pandas.DataFrame of shape (n, ...)
        The features; rows are taken with ``.iloc`` for a DataFrame and by
        integer indexing otherwise.
    y : array-like of shape (n,)
        The targets.
    design : xarray.Dataset
        A split design from :mod:`cvstats.designs`: boolean ``train`` and
        ``test`` masks over ``(split, example)`` and attrs ``design``, ``n``,
        ``seed``; ``n`` must be the number of rows of `X` and `y`.
    loss : {"zero_one", "squared", "absolute", "log"} or callable, default "zero_one"
        The per-example loss; see :mod:`cvstats.designs.losses`. A callable
        ``fn(y_true, y_pred)`` must return an array of shape ``(n_test,)``.
    n_jobs : int, optional
        Number of parallel jobs for :class:`joblib.Parallel`. None means 1
        unless inside a :func:`joblib.parallel_config` (or
        ``parallel_backend``) context, whose backend and ``n_jobs`` are then
        used -- e.g. ``with joblib.parallel_backend("dask"):`` runs the fits
        on a dask.distributed cluster.
    progress : bool, default True
        Show a tqdm progress bar over the fits.
    seed : int, optional
        Root seed for the fits; defaults to the design's ``seed`` attr (fresh
        entropy when that is unknown, -1). An estimator whose
        ``random_state`` parameter -- or nested ``*__random_state``
        parameter, as in a pipeline -- is None gets on each split an integer
        from ``numpy.random.SeedSequence(seed, spawn_key=(split label,
        zlib.crc32(model name))).generate_state(k)`` (one per such parameter,
        in sorted order of the parameter names), so results are reproducible
        and do not depend on `n_jobs`, the joblib backend, the order of the
        learners or which other learners are fitted. Parameters set explicitly (to an int or a
        ``RandomState``) are kept. Callable learners are responsible for
        their own randomness.
    name : str, optional
        Name of the cube; defaults to the loss name.

    Returns
    -------
    xarray.DataArray
        The loss cube, dims ``(split, example, model)``: float64 losses on
        each split's test examples and NaN elsewhere, the design's split
        coordinates, an ``in_train`` coordinate equal to ``design.train``,
        the design's attrs, plus attrs ``loss`` (the loss name) and
        ``collect_seed`` (the root seed of the fits).

    Raises
    ------
    CvstatsTypeError
        If `learners`, `X`, `design`, `seed` or `name` has the wrong type,
        or a learner is neither an estimator nor a callable, or lacks
        ``predict_proba`` for ``loss="log"``.
    DesignError
        If `design` is not a valid design, or does not match the length of
        `X` and `y`.
    CubeError
        If `loss` names no built-in loss, a learner or loss callable returns
        the wrong shape, or a loss is not finite.

    Notes
    -----
    The fits run as one task per ``(split, model)`` pair, which balances load
    well when learners differ in cost; only the test losses of each task are
    sent back, and the cube is assembled once at the end.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from cvstats import designs
    >>> X, y = load_iris(return_X_y=True)
    >>> design = designs.kfold(len(y), K=5, seed=0)
    >>> cube = collect({"tree": DecisionTreeClassifier()}, X, y, design, progress=False)
    >>> cube.sizes["split"], cube.sizes["example"], cube.sizes["model"]
    (5, 150, 1)
    """
    loss_name, loss_fn, needs_proba = get_loss(loss)
    if name is not None and not isinstance(name, str):
        raise CvstatsTypeError(
            f"`name` must be a str or None, got an object of type {type(name).__name__}."
        )
    checked = _check_learners(learners, needs_proba=needs_proba)
    train_mask, test_mask, n = _check_design(design)
    X, y = _check_data(X, y, n)
    root = _root_seed(seed, design)
    classes = np.unique(y) if needs_proba else None

    train_idx = _row_indices(train_mask)
    test_idx = _row_indices(test_mask)
    labels = design[SPLIT].values.tolist()
    split_keys = _split_keys(design)
    model_keys = [zlib.crc32(learner.name.encode("utf-8")) for learner in checked]

    def tasks() -> Iterator[Any]:
        for s in range(len(test_idx)):
            for m, learner in enumerate(checked):
                seeds = None
                if learner.seed_keys:
                    seq = np.random.SeedSequence(root, spawn_key=(split_keys[s], model_keys[m]))
                    state = seq.generate_state(len(learner.seed_keys))
                    seeds = dict(zip(learner.seed_keys, state.tolist(), strict=True))
                yield delayed(_fit_and_loss)(
                    s, labels[s], m, learner, seeds, X, y, train_idx[s], test_idx[s],
                    loss_name, loss_fn, needs_proba, classes,
                )  # fmt: skip

    n_split, n_model = len(test_idx), len(checked)
    losses = np.full((n_split, n, n_model), np.nan)
    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    with tqdm(total=n_split * n_model, disable=not progress, desc="collect", unit="fit") as bar:
        for s, m, values in parallel(tasks()):
            losses[s, test_idx[s], m] = values
            bar.update()

    return from_arrays(
        losses,
        design=design,
        models=[learner.name for learner in checked],
        name=name or loss_name,
        attrs={"loss": loss_name, "collect_seed": root},
    )


def _fit_and_loss(
    s: int,
    label: Any,
    m: int,
    learner: _Learner,
    seeds: dict[str, int] | None,
    X: Any,
    y: NDArray,
    train: NDArray[np.intp],
    test: NDArray[np.intp],
    loss_name: str,
    loss_fn: LossFunction,
    needs_proba: bool,
    classes: Any,
) -> tuple[int, int, NDArray[np.float64]]:
    """Fit one learner on one split and return its test losses (runs in a worker)."""
    X_train, X_test = _take(X, train), _take(X, test)
    y_train, y_test = y[train], y[test]
    n_test = test.shape[0]
    where = f"model {learner.name!r} on split {label!r}"
    try:
        if learner.is_estimator:
            estimator = clone(learner.obj)
            if seeds:
                estimator.set_params(**seeds)
            estimator.fit(X_train, y_train)
            if needs_proba:
                pred = _align_proba(estimator.predict_proba(X_test), estimator.classes_, classes)
            else:
                pred = estimator.predict(X_test)
        else:
            pred = learner.obj(X_train, y_train, X_test)
    except Exception as e:
        e.add_note(f"cvstats.collect: raised while fitting/predicting {where}.")
        raise
    pred = np.asarray(pred)
    if needs_proba:
        expected: tuple[int, ...] = (n_test, classes.shape[0])
        if pred.shape != expected:
            raise CubeError(
                f"learner {learner.name!r} returned probabilities of shape {pred.shape} on "
                f"split {label!r}; with loss='log' it must return an array of shape "
                f"(n_test, n_classes) = {expected}, columns ordered as numpy.unique(y)."
            )
        values = loss_fn(y_test, pred, classes)
    else:
        if pred.ndim == 0 or pred.shape[0] != n_test:
            raise CubeError(
                f"learner {learner.name!r} returned predictions of shape {pred.shape} on split "
                f"{label!r}; it must return one prediction per test example "
                f"({n_test} rows)."
            )
        values = loss_fn(y_test, pred)
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise CubeError(
            f"loss {loss_name!r} returned values that are not numbers for {where}; a loss "
            "must return a float array of shape (n_test,)."
        ) from e
    if values.shape != (n_test,):
        raise CubeError(
            f"loss {loss_name!r} returned shape {values.shape} for {where}; a loss callable "
            f"must return one loss per test example, shape (n_test,) = ({n_test},)."
        )
    if not np.all(np.isfinite(values)):
        bad = int(np.count_nonzero(~np.isfinite(values)))
        raise CubeError(
            f"loss {loss_name!r} is NaN or infinite on {bad} test example(s) for {where}; "
            "check the learner's predictions (a loss cube holds finite losses on test sets)."
        )
    return s, m, values


def _take(X: Any, idx: NDArray[np.intp]) -> Any:
    """Rows `idx` of `X` (``.iloc`` for pandas, integer indexing otherwise)."""
    if hasattr(X, "iloc"):
        return X.iloc[idx]
    return X[idx]


def _align_proba(proba: ArrayLike, fitted: ArrayLike, classes: NDArray) -> NDArray:
    """Reorder/expand `proba` columns from the fitted classes to all `classes`.

    A class absent from a training set gets probability 0 on that split.
    """
    proba = np.asarray(proba, dtype=np.float64)
    fitted = np.asarray(fitted)
    if fitted.shape == classes.shape and np.array_equal(fitted, classes):
        return proba
    if proba.ndim != 2 or proba.shape[1] != fitted.shape[0]:
        raise CubeError(
            f"predict_proba returned shape {proba.shape} but the estimator has "
            f"{fitted.shape[0]} classes_; cannot compute the log loss."
        )
    full = np.zeros((proba.shape[0], classes.shape[0]))
    full[:, np.searchsorted(classes, fitted)] = proba
    return full


def _check_learners(learners: Any, *, needs_proba: bool) -> list[_Learner]:
    """Validate `learners` and record how to run each one."""
    if not isinstance(learners, Mapping):
        raise CvstatsTypeError(
            "`learners` must be a dict mapping model names to scikit-learn estimators or "
            f"fit_predict callables, got an object of type {type(learners).__name__}; e.g. "
            "pass {'tree': DecisionTreeClassifier()}."
        )
    if len(learners) == 0:
        raise CvstatsTypeError(
            "`learners` is empty; pass at least one model, e.g. "
            "{'tree': DecisionTreeClassifier()}."
        )
    out = []
    for key, obj in learners.items():
        if not isinstance(key, str):
            raise CvstatsTypeError(
                f"`learners` keys must be str model names, got {key!r} of type "
                f"{type(key).__name__}."
            )
        if isinstance(obj, type):
            raise CvstatsTypeError(
                f"learner {key!r} is the class {obj.__name__}, not an instance; pass "
                f"{obj.__name__}() instead."
            )
        if hasattr(obj, "fit") and hasattr(obj, "get_params"):
            try:
                params = clone(obj).get_params(deep=True)
            except Exception as e:
                raise CvstatsTypeError(
                    f"learner {key!r} ({type(obj).__name__}) cannot be cloned with "
                    "sklearn.base.clone; pass a scikit-learn compatible estimator or a "
                    "fit_predict(X_train, y_train, X_test) callable."
                ) from e
            if needs_proba and not hasattr(obj, "predict_proba"):
                raise CvstatsTypeError(
                    f"learner {key!r} ({type(obj).__name__}) has no predict_proba, which "
                    "loss='log' needs; use a probabilistic classifier (e.g. "
                    "SVC(probability=True)) or another loss."
                )
            seed_keys = tuple(
                sorted(
                    k
                    for k, v in params.items()
                    if (k == "random_state" or k.endswith("__random_state")) and v is None
                )
            )
            out.append(_Learner(key, obj, True, seed_keys))
        elif callable(obj):
            out.append(_Learner(key, obj, False, ()))
        else:
            raise CvstatsTypeError(
                f"learner {key!r} must be a scikit-learn estimator (with fit and get_params) "
                "or a callable fit_predict(X_train, y_train, X_test) -> predictions, got an "
                f"object of type {type(obj).__name__}."
            )
    return out


def _check_design(design: Any) -> tuple[NDArray[np.bool_], NDArray[np.bool_], int]:
    """Validate `design` and return its train and test masks and ``n``."""
    if not isinstance(design, xr.Dataset):
        raise CvstatsTypeError(
            "`design` must be an xarray.Dataset from cvstats.designs (e.g. "
            f"designs.kfold(n, K=10)), got an object of type {type(design).__name__}."
        )
    masks = []
    for var in ("train", "test"):
        if var not in design.data_vars:
            raise DesignError(
                f"`design` has no {var!r} variable; build it with a function of cvstats.designs."
            )
        mask = design[var]
        if mask.dims != (SPLIT, EXAMPLE) or mask.dtype != bool:
            raise DesignError(
                f"`design[{var!r}]` must be a boolean array over dims ({SPLIT!r}, {EXAMPLE!r}), "
                f"got dtype {mask.dtype} over dims {mask.dims}."
            )
        masks.append(mask.values)
    train, test = masks
    n = design.sizes[EXAMPLE]
    n_attr = design.attrs.get("n", n)
    if not isinstance(n_attr, numbers.Integral) or int(n_attr) != n:
        raise DesignError(
            f"`design.attrs['n']` is {n_attr!r} but the design has {n} examples; rebuild the "
            "design with cvstats.designs."
        )
    if train.shape[0] == 0:
        raise DesignError("`design` has no splits; build it with a function of cvstats.designs.")
    for mask, what in ((test, "test"), (train, "training")):
        empty = np.flatnonzero(~mask.any(axis=1))
        if empty.size:
            labels = design[SPLIT].values[empty[:5]].tolist()
            raise DesignError(
                f"`design` has {empty.size} split(s) with an empty {what} set (split labels "
                f"{labels}{'...' if empty.size > 5 else ''}); every split needs training and "
                "test examples."
            )
    return train, test, n


def _check_data(X: Any, y: Any, n: int) -> tuple[Any, NDArray]:
    """Check that `X` and `y` have `n` rows; convert them to indexable forms."""
    if X is None:
        raise CvstatsTypeError("`X` must be an array-like or a pandas DataFrame, got None.")
    if hasattr(X, "iloc"):
        pass
    elif sp.issparse(X):
        if X.format not in ("csr", "csc"):
            X = X.tocsr()
    elif not isinstance(X, np.ndarray):
        X = np.asarray(X)
    n_x = X.shape[0] if hasattr(X, "shape") and len(X.shape) else None
    if n_x is None:
        raise CvstatsTypeError(
            f"`X` must have one row per example, got an object of shape {np.shape(X)}."
        )
    y = np.asarray(y)
    if y.ndim == 0:
        raise CvstatsTypeError(
            "`y` must be an array-like with one target per example, got a scalar."
        )
    if n_x != n or y.shape[0] != n:
        raise DesignError(
            f"`X` has {n_x} rows and `y` has {y.shape[0]}, but the design has n = {n} examples; "
            "build the design with n = len(y)."
        )
    return X, y


def _root_seed(seed: Any, design: xr.Dataset) -> int:
    """Return the root entropy of the fits: `seed`, else the design's seed, else fresh entropy."""
    if seed is None:
        seed = design.attrs.get("seed", UNKNOWN_SEED)
        if isinstance(seed, numbers.Integral) and int(seed) >= 0:
            return int(seed)
        return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise CvstatsTypeError(
            f"`seed` must be a non-negative int or None, got an object of type "
            f"{type(seed).__name__}."
        )
    if seed < 0:
        raise DesignError(f"`seed` must be a non-negative int or None, got {seed}.")
    return int(seed)


def _row_indices(mask: NDArray[np.bool_]) -> list[NDArray[np.intp]]:
    """Column indices of the True entries of each row of a 2-D mask (vectorized)."""
    rows, cols = np.nonzero(mask)
    return np.split(cols, np.cumsum(np.bincount(rows, minlength=mask.shape[0]))[:-1])


def _split_keys(design: xr.Dataset) -> list[int]:
    """Non-negative seed keys for the splits: the split labels if integer, else positions."""
    labels = design[SPLIT].values
    if np.issubdtype(labels.dtype, np.integer):
        return [int(v) % 2**64 for v in labels.tolist()]
    return list(range(labels.shape[0]))
