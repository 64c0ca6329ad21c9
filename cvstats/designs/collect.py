"""Fit learners on the splits of a design and collect their test losses and scores.

:func:`collect` is the bridge from scikit-learn (or any ``fit_predict``
callable) to the cubes of ``docs/cube-schema.md``: every learner is trained on
the training set of every split of a design and evaluated on that split's test
set, example by example (a loss cube, ``loss=``) and/or as a whole through
scikit-learn's scorers (a score cube per metric, ``scoring=``), from the same
fit. The fits run as independent
``(split, model)`` tasks through :class:`joblib.Parallel`, so they use any
joblib backend (processes, threads, or a dask cluster inside
``with joblib.parallel_backend("dask"):``), and the result does not depend on
the backend or the number of jobs.
"""

from __future__ import annotations

import numbers
import warnings
import zlib
from collections.abc import Callable, Iterator, Mapping, Set
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import xarray as xr
from joblib import Parallel, delayed
from numpy.typing import ArrayLike, NDArray
from tqdm import tqdm

# scikit-learn (which loads scipy.stats) and scipy.sparse are imported in the functions
# that use them, so that `import cvstats` stays light (tests/architecture/test_import_cost.py)
from cvstats.cube import from_arrays
from cvstats.cube.schema import EXAMPLE, MODEL, N_TEST, SPLIT, SPLIT_COORDS, UNKNOWN_SEED
from cvstats.cube.score import from_scores, is_sklearn_scorer, metric_direction
from cvstats.designs.losses import LossFunction, get_loss
from cvstats.errors import ArgumentError, CubeError, CvstatsError, CvstatsTypeError, DesignError

__all__ = ["collect"]


@dataclass(frozen=True)
class _Learner:
    """A validated learner: its name, the object and how to run it."""

    name: str
    obj: Any
    is_estimator: bool
    #: ``get_params(deep=True)`` keys of the ``random_state`` params left at None.
    seed_keys: tuple[str, ...]


@dataclass(frozen=True)
class _Scoring:
    """The scorers asked for, resolved once before the fits."""

    #: The metric names, in order: the names of the score cubes.
    names: tuple[str, ...]
    #: name -> the scorer, called as ``scorer(estimator, X_test, y_test)``.
    scorers: dict[str, Any]
    #: name -> 1 if a larger score is better, 0 otherwise.
    directions: dict[str, int]
    #: name -> the ``metric`` attr (the scorer name, or the scorer's repr).
    metrics: dict[str, str]
    #: Whether several metrics were asked for (a list, tuple, set or dict): a Dataset.
    multi: bool
    #: scikit-learn's multimetric scorer over ``scorers`` (one prediction per response
    #: method, shared by the scorers), built with ``check_scoring(..., raise_exc=False)``;
    #: None when every scorer has a fast path.
    call: Any
    #: name -> the fast path of a scorer given by name (:func:`_with_fast_scorers`);
    #: those metrics are left out of ``call``.
    fast: Mapping[str, Any] = field(default_factory=dict)


def collect(
    learners: Mapping[str, Any],
    X: Any,
    y: ArrayLike,
    design: xr.Dataset,
    *,
    loss: str | LossFunction | None = None,
    scoring: Any = None,
    greater_is_better: bool | Mapping[str, bool] | None = None,
    n_jobs: int | None = None,
    progress: bool = True,
    seed: int | None = None,
    name: str | None = None,
    groups: ArrayLike | None = None,
) -> xr.DataArray | xr.Dataset | tuple[xr.DataArray, xr.DataArray | xr.Dataset]:
    """Fit every learner on every split of a design and collect test losses and/or scores.

    For each split of `design` and each learner, the learner is trained once on
    the split's training examples and evaluated on its test examples: the
    per-example losses (``loss=``, computed vectorized over the test set) fill
    a loss cube with NaN off the test sets, and the scikit-learn scorers
    (``scoring=``) give one score per split and model -- a score cube per
    metric (``docs/cube-schema.md``, "Score cubes"). Every learner sees exactly
    the same splits, and every (split, learner) is fitted exactly once however
    many metrics and losses are asked for.

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
        with columns ordered as ``numpy.unique(y)``. ``scoring=`` needs
        estimators (a scorer is called on the fitted estimator).
    X : array-like, sparse matrix or pandas.DataFrame of shape (n, ...)
        The features; rows are taken with ``.iloc`` for a DataFrame and by
        integer indexing otherwise.
    y : array-like of shape (n,)
        The targets.
    design : xarray.Dataset
        A split design from :mod:`cvstats.designs`: boolean ``train`` and
        ``test`` masks over ``(split, example)`` and attrs ``design``, ``n``,
        ``seed``; ``n`` must be the number of rows of `X` and `y`.
    loss : {"zero_one", "squared", "absolute", "log"} or callable, optional
        The per-example loss; see :mod:`cvstats.designs.losses`. A callable
        ``fn(y_true, y_pred)`` must return an array of shape ``(n_test,)``.
        Default: ``"zero_one"`` when `scoring` is None, no loss cube otherwise.
    scoring : str, callable, list, tuple, set or dict, optional
        What scikit-learn's ``scoring=`` takes (``cross_validate``,
        ``GridSearchCV``): a scorer name (``"roc_auc"``, ``"f1_macro"``,
        ``"average_precision"``, ``"neg_log_loss"``, ``"r2"``; see
        :func:`sklearn.metrics.get_scorer_names`), a scorer made by
        :func:`sklearn.metrics.make_scorer`, a callable
        ``scorer(estimator, X_test, y_test) -> float``, a list, tuple or set of
        scorer names, or a dict mapping metric names to any of these. Scorers
        are resolved with :func:`sklearn.metrics.check_scoring` and evaluated
        through scikit-learn's multimetric scorer on the fitted estimator and
        the split's test data (each response method -- ``predict``,
        ``predict_proba``, ``decision_function`` -- is called once per fit),
        so a score equals what ``cross_validate`` reports for that split:
        losses come negated (``"neg_log_loss"``). The name ``"roc_auc"`` on a
        binary problem is computed without scikit-learn's per-call checks, in
        the Mann--Whitney form (Hanley & McNeil, 1982; equal to scikit-learn's
        value up to rounding, ``docs/collecting.md``), and by scikit-learn's
        scorer wherever that does not apply.
    greater_is_better : bool or mapping of str to bool, optional
        The direction of the plain callables in `scoring` (those not made by
        scikit-learn): a bool for every plain callable, or a dict from metric
        names to bools. Required for them -- a direction is never guessed --
        and not needed for scorer names and scikit-learn scorer objects, whose
        values are larger-is-better by scikit-learn's convention (``False``
        there is an error: it contradicts the scorer).
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
        Name of the loss cube (default the loss name); when only one score
        cube is returned (one scorer, no loss), its name (default the scorer
        name, a function's ``__name__``, else ``"score"``). Several metrics are
        named by the keys of a `scoring` dict.
    groups : array-like of shape (n,), optional
        The group (patient, user, document) of every example, kept on the loss
        cube as the coordinate ``group`` on ``example`` (docs/grouped-data.md);
        default the design's own ``group`` coordinate
        (:func:`cvstats.designs.from_splitter` given ``groups``), else none.
        Score cubes have no ``example`` dim and do not carry it.

    Returns
    -------
    xarray.DataArray, xarray.Dataset or tuple
        * no `scoring`: the loss cube, dims ``(split, example, model)``: float64
          losses on each split's test examples and NaN elsewhere, the design's
          split coordinates, an ``in_train`` coordinate equal to
          ``design.train``, the design's attrs, plus attrs ``loss`` (the loss
          name) and ``collect_seed`` (the root seed of the fits);
        * one scorer (a name or a callable): its score cube, dims ``(split,
          model)``, named after the metric, with the design's split
          coordinates, ``n_test``, the design's attrs and ``greater_is_better``,
          ``metric`` and ``collect_seed``;
        * several (a list, tuple, set -- in sorted order -- or dict): an
          ``xarray.Dataset`` with one score-cube variable per metric, in the
          given order (``scores["roc_auc"]`` is a score cube);
        * `loss` and `scoring` both given: the tuple ``(loss cube, scores)``,
          ``scores`` being the score cube or Dataset above, from the same fits.

    Raises
    ------
    CvstatsTypeError
        If `learners`, `X`, `design`, `seed`, `name`, `scoring` or
        `greater_is_better` has the wrong type, or a learner is neither an
        estimator nor a callable, lacks ``predict_proba`` for ``loss="log"``,
        or is a callable while `scoring` is given.
    ArgumentError
        If `loss` or a scorer name is unknown, a plain callable's direction is
        not given, or `greater_is_better` contradicts a scikit-learn scorer.
    DesignError
        If `design` is not a valid design, or does not match the length of
        `X` and `y`. The design (and the cube it gives: split coordinates,
        block rules, test and training sets, labels, attrs, the cube's name) is
        checked before any model is fitted, so an invalid design costs no fit;
        a problem the cube schema finds is raised as that check's
        :class:`CubeError`.
    CubeError
        If a learner or loss callable returns the wrong shape, a loss is not
        finite, or a scorer fails or gives no finite number on a split (e.g.
        ROC AUC on a test set with one class: use a stratified design); the
        scorer's error, or its warning, is chained.

    Notes
    -----
    The fits run as one task per ``(split, model)`` pair, which balances load
    well when learners differ in cost; only the test losses and scores of each
    task are sent back, and the cubes are assembled once at the end.

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
    >>> scores = collect({"tree": DecisionTreeClassifier()}, X, y, design,
    ...                  scoring=["accuracy", "f1_macro"], progress=False)
    >>> list(scores.data_vars), dict(scores["accuracy"].sizes)
    (['accuracy', 'f1_macro'], {'split': 5, 'model': 1})
    """
    if name is not None and not isinstance(name, str):
        raise CvstatsTypeError(
            f"`name` must be a str or None, got an object of type {type(name).__name__}."
        )
    if loss is None and scoring is None:
        loss = "zero_one"
    want_loss = loss is not None
    if want_loss:
        loss_name, loss_fn, needs_proba = get_loss(loss)
    else:
        loss_name, loss_fn, needs_proba = "", None, False
    score_name = name if not want_loss else None
    scoring_ = _with_fast_scorers(_resolve_scoring(scoring, greater_is_better, score_name))
    checked = _check_learners(learners, needs_proba=needs_proba, scoring=scoring_ is not None)
    train_mask, test_mask, n = _check_design(design)
    X, y = _check_data(X, y, n)
    root = _root_seed(seed, design)
    models = [learner.name for learner in checked]
    _check_cubes(design, models, loss_name if want_loss else None, name, scoring_, root, groups)
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
                yield delayed(_fit_and_evaluate)(
                    s, labels[s], m, learner, seeds, X, y, train_idx[s], test_idx[s],
                    loss_name, loss_fn, needs_proba, classes, scoring_,
                )  # fmt: skip

    n_split, n_model = len(test_idx), len(checked)
    losses = np.full((n_split, n, n_model), np.nan) if want_loss else None
    n_metric = len(scoring_.names) if scoring_ is not None else 0
    scores = np.full((n_split, n_model, n_metric), np.nan)
    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    with tqdm(total=n_split * n_model, disable=not progress, desc="collect", unit="fit") as bar:
        for s, m, loss_values, score_values in parallel(tasks()):
            if losses is not None:
                losses[s, test_idx[s], m] = loss_values
            if score_values is not None:
                scores[s, m] = score_values
            bar.update()

    loss_cube = None
    if losses is not None:
        loss_cube = from_arrays(
            losses,
            design=design,
            models=models,
            name=name or loss_name,
            attrs={"loss": loss_name, "collect_seed": root},
            groups=groups,
        )
    if scoring_ is None:
        return loss_cube  # type: ignore[return-value]  # a loss is asked when scoring is not
    cubes = {
        key: from_scores(
            scores[:, :, i],
            design=design,
            models=models,
            name=key,
            metric=scoring_.metrics[key],
            greater_is_better=bool(scoring_.directions[key]),
            attrs={"collect_seed": root},
        )
        for i, key in enumerate(scoring_.names)
    }
    if scoring_.multi:
        out: xr.DataArray | xr.Dataset = xr.Dataset(
            cubes, attrs={**design.attrs, "collect_seed": root}
        )
    else:
        out = cubes[scoring_.names[0]]
    if loss_cube is not None:
        return loss_cube, out
    return out


def _check_cubes(
    design: xr.Dataset,
    models: list[str],
    loss_name: str | None,
    name: str | None,
    scoring: _Scoring | None,
    root: int,
    groups: ArrayLike | None = None,
) -> None:
    """Build the cubes :func:`collect` returns on placeholder values, before any fit.

    Whatever would make :func:`cvstats.from_arrays` or :func:`cvstats.from_scores`
    refuse the result -- a design that breaks the cube schema (a test set meeting its
    training set, ``n_train`` disagreeing with the ``train`` mask, a k-fold repeat that
    does not partition the examples, a block's rules, unequal test sizes it cannot
    state, duplicated labels, missing attrs) or a cube name that clashes with a
    coordinate -- raises here, with the same error, before any model is fitted. The
    loss cube's checks run whatever is collected, since they are the ones that read
    the design's masks; they use one model (the rules do not depend on the others)
    and float32 placeholders: the design's size, not the losses'.
    """
    S = design.sizes[SPLIT]
    try:
        # the loss cube's checks see the design's masks (test sets off the training sets,
        # n_train, partitions, halves): run them for a score cube too
        test = np.asarray(design["test"].values, dtype=bool)[..., None]
        placeholder = np.where(test, np.float32(0.0), np.float32(np.nan))
        from_arrays(
            placeholder,
            design=design,
            models=models[:1],
            name=(name or loss_name) if loss_name is not None else "loss",
            attrs={"loss": loss_name or "loss", "collect_seed": root},
            groups=groups,
        )
        if scoring is not None:
            for key in scoring.names:
                from_scores(
                    np.zeros((S, len(models))),
                    design=design,
                    models=models,
                    name=key,
                    metric=scoring.metrics[key],
                    greater_is_better=bool(scoring.directions[key]),
                    attrs={"collect_seed": root},
                )
    except CvstatsError as e:
        e.add_note(
            "cvstats.collect: raised while checking the design and the cube it would give, "
            "before any model was fitted."
        )
        raise


def _fit_and_evaluate(
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
    loss_fn: LossFunction | None,
    needs_proba: bool,
    classes: Any,
    scoring: _Scoring | None,
) -> tuple[int, int, NDArray[np.float64] | None, NDArray[np.float64] | None]:
    """Fit one learner on one split; return its test losses and scores (runs in a worker)."""
    from sklearn.base import clone

    X_train, X_test = _take(X, train), _take(X, test)
    y_train, y_test = y[train], y[test]
    where = f"model {learner.name!r} on split {label!r}"
    pred = None
    try:
        if learner.is_estimator:
            estimator = clone(learner.obj)
            if seeds:
                estimator.set_params(**seeds)
            estimator.fit(X_train, y_train)
            if loss_fn is not None and needs_proba:
                pred = _align_proba(estimator.predict_proba(X_test), estimator.classes_, classes)
            elif loss_fn is not None:
                pred = estimator.predict(X_test)
        else:
            estimator = None
            pred = learner.obj(X_train, y_train, X_test)
    except Exception as e:
        e.add_note(f"cvstats.collect: raised while fitting/predicting {where}.")
        raise
    losses = None
    if loss_fn is not None:
        losses = _losses(pred, y_test, learner, label, loss_name, loss_fn, needs_proba, classes)
    scores = None
    if scoring is not None:
        scores = _scores(scoring, estimator, X_test, y_test, learner.name, label)
    return s, m, losses, scores


def _losses(
    pred: Any,
    y_test: NDArray,
    learner: _Learner,
    label: Any,
    loss_name: str,
    loss_fn: LossFunction,
    needs_proba: bool,
    classes: Any,
) -> NDArray[np.float64]:
    """Check a learner's test predictions and return its per-example test losses."""
    n_test = y_test.shape[0]
    where = f"model {learner.name!r} on split {label!r}"
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
    return values


# --------------------------------------------------------------------------
# scoring
# --------------------------------------------------------------------------

#: The forms `scoring` takes, for messages.
_SCORING_FORMS = (
    "`scoring` takes what scikit-learn's scoring= takes: a scorer name (e.g. 'roc_auc'; "
    "sklearn.metrics.get_scorer_names() lists them), a scorer from "
    "sklearn.metrics.make_scorer, a callable scorer(estimator, X, y) -> float, a list, tuple "
    "or set of scorer names, or a dict mapping metric names to any of these"
)

#: Names a score cube cannot take: its dims and coordinates.
_RESERVED = frozenset({SPLIT, MODEL, EXAMPLE, N_TEST, *SPLIT_COORDS})


def _callable_name(fn: Any) -> str | None:
    """Return a function's ``__name__`` if it is an identifier (not ``<lambda>``), else None."""
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) and name.isidentifier() else None


def _check_metric_name(key: str) -> None:
    if not key.strip():
        raise ArgumentError(
            f"metric name {key!r} is empty; a score cube is named after its metric (the left "
            "side of formulas, 'roc_auc ~ model'): use a non-empty name."
        )
    if key in _RESERVED:
        raise ArgumentError(
            f"metric name {key!r} is the name of a dim or coordinate of a score cube "
            f"({sorted(_RESERVED)}); name the metric otherwise, e.g. with a dict "
            "{'my_metric': scorer} (or name= for one scorer)."
        )


def _resolve_scoring(scoring: Any, greater_is_better: Any, name: str | None) -> _Scoring | None:
    """Resolve `scoring` to scikit-learn scorers and their directions (before any fit)."""
    from sklearn.metrics import check_scoring, get_scorer

    if scoring is None:
        if greater_is_better is not None:
            raise ArgumentError(
                "`greater_is_better` gives the direction of the plain callables in `scoring`, "
                "but no `scoring` was given; drop it, or pass scoring=..."
            )
        return None
    entries: dict[str, Any]
    if isinstance(scoring, str) or (callable(scoring) and not isinstance(scoring, Mapping)):
        multi = False
        key = name if name is not None else scoring if isinstance(scoring, str) else None
        if key is None and not is_sklearn_scorer(scoring):
            key = _callable_name(scoring)
        entries = {key or "score": scoring}
    elif isinstance(scoring, Mapping):
        multi = True
        bad = [k for k in scoring if not isinstance(k, str)]
        if bad:
            raise CvstatsTypeError(
                f"the keys of a `scoring` dict are metric names (str), got {bad[0]!r} of type "
                f"{type(bad[0]).__name__}."
            )
        entries = dict(scoring)
    elif isinstance(scoring, list | tuple | Set):
        multi = True
        bad = [v for v in scoring if not isinstance(v, str)]
        if bad:
            raise CvstatsTypeError(
                "a list, tuple or set of scorers holds scorer names only (scikit-learn's "
                f"rule), got {bad[0]!r}; pass callables in a dict, e.g. "
                "scoring={'roc_auc': 'roc_auc', 'mine': my_scorer}."
            )
        items = sorted(scoring) if isinstance(scoring, Set) else list(scoring)
        if len(set(items)) != len(items):
            dup = sorted({v for v in items if items.count(v) > 1})
            raise ArgumentError(f"`scoring` names the scorer(s) {dup} more than once.")
        entries = {v: v for v in items}
    else:
        raise CvstatsTypeError(
            f"{_SCORING_FORMS}; got an object of type {type(scoring).__name__}."
        )
    if not entries:
        raise ArgumentError(f"`scoring` is empty; {_SCORING_FORMS}.")
    if multi and name is not None:
        raise ArgumentError(
            "`name` names the one cube collect returns, but `scoring` asks for several metrics "
            "(a Dataset of score cubes, one per metric); name the metrics with the keys of a "
            "`scoring` dict instead, e.g. scoring={'auc': 'roc_auc', 'ap': 'average_precision'}."
        )

    scorers: dict[str, Any] = {}
    metrics: dict[str, str] = {}
    for key, value in entries.items():
        _check_metric_name(key)
        if isinstance(value, str):
            try:
                scorers[key] = get_scorer(value)
            except ValueError as e:
                raise ArgumentError(
                    f"{value!r} is not a scikit-learn scorer name; sklearn.metrics."
                    "get_scorer_names() lists them (e.g. 'roc_auc', 'f1_macro', "
                    "'average_precision', 'neg_log_loss', 'r2')."
                ) from e
            metrics[key] = value
        elif callable(value):
            try:
                scorers[key] = check_scoring(scoring=value)
            except (ValueError, TypeError) as e:
                raise ArgumentError(
                    f"scorer {key!r} is not a scorer: {e} A scorer is called as "
                    "scorer(estimator, X_test, y_test); turn a metric fn(y_true, y_pred) into "
                    "one with sklearn.metrics.make_scorer(fn, greater_is_better=...)."
                ) from e
            metrics[key] = (
                repr(value) if is_sklearn_scorer(value) else _callable_name(value) or key
            )
        else:
            raise CvstatsTypeError(
                f"scorer {key!r} must be a scorer name or a callable scorer(estimator, X, y), "
                f"got an object of type {type(value).__name__}; {_SCORING_FORMS}."
            )
    directions = _directions(greater_is_better, entries)
    call = check_scoring(scoring=scorers, raise_exc=False)
    return _Scoring(tuple(entries), scorers, directions, metrics, multi, call)


def _directions(given: Any, entries: Mapping[str, Any]) -> dict[str, int]:
    """Return the direction of every metric (:func:`cvstats.cube.score.metric_direction`).

    `greater_is_better` is read here: a bool gives the direction of every plain callable
    (with no plain callable, of the scikit-learn scorers, which False contradicts); a
    mapping gives it per metric name. The rule itself -- scikit-learn's scorers are
    greater-is-better, any other metric needs its direction given -- is
    :func:`cvstats.cube.score.metric_direction`, shared with
    :func:`cvstats.from_cv_results`.
    """
    keys = list(entries)
    sklearn = {k: is_sklearn_scorer(v) for k, v in entries.items()}
    plain = [k for k in keys if not sklearn[k]]
    per: dict[str, bool] = {}
    if given is None:
        pass
    elif isinstance(given, bool | np.bool_):
        per = dict.fromkeys(plain or keys, bool(given))
    elif isinstance(given, Mapping):
        unknown = [k for k in given if k not in keys]
        if unknown:
            raise ArgumentError(
                f"`greater_is_better` names the metric(s) {unknown}, which `scoring` does not "
                f"have (its metrics: {keys})."
            )
        for k, v in given.items():
            if not isinstance(v, bool | np.bool_):
                raise CvstatsTypeError(
                    f"greater_is_better[{k!r}] must be True or False, got {v!r}."
                )
            per[k] = bool(v)
    else:
        raise CvstatsTypeError(
            "`greater_is_better` must be True, False or a dict from metric names to bools, got "
            f"an object of type {type(given).__name__}."
        )
    return {
        k: metric_direction(
            k,
            per.get(k),
            sklearn_scorer=sklearn[k],
            unknown=f"{k!r} is a plain callable, not a scikit-learn scorer",
            hint=(
                f" (a dict names the metric: greater_is_better={{{k!r}: False}}), or build the "
                "scorer with sklearn.metrics.make_scorer(metric, greater_is_better=...)"
            ),
        )
        for k in keys
    }


def _number(value: Any) -> float | None:
    """Return a scorer's value as a float, or None if it is not one real number."""
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        return float(value)
    return None


def _scores(
    scoring: _Scoring, estimator: Any, X_test: Any, y_test: NDArray, model: str, label: Any
) -> NDArray[np.float64]:
    """Evaluate every scorer on one fitted estimator and test set (runs in a worker)."""
    results = scoring.call(estimator, X_test, y_test) if scoring.call is not None else {}
    out = np.empty(len(scoring.names))
    for i, key in enumerate(scoring.names):
        if key in scoring.fast:
            value = _fast_score(scoring.fast[key], scoring.scorers[key], estimator, X_test, y_test)
        else:
            value = results.get(key) if isinstance(results, Mapping) else None
        number = _number(value)
        if number is None or not np.isfinite(number):
            _score_failure(scoring, key, value, estimator, X_test, y_test, model, label)
        out[i] = number
    return out


# --------------------------------------------------------------------------
# fast paths of scorer names
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _BinaryRocAuc:
    """scikit-learn's ``"roc_auc"`` scorer on a binary problem, without its per-call checks.

    The AUC is the Mann-Whitney form of the area under the ROC curve (Hanley &
    McNeil, 1982, Radiology 143(1), eq. 2): with ``r`` the mid-ranks
    (:func:`scipy.stats.rankdata`, ties averaged) of the scores of the ``n1``
    positive and ``n0`` negative test examples,
    ``AUC = (sum of r over the positives - n1 (n1 + 1) / 2) / (n1 n0)``, the
    probability that a positive scores above a negative, a tie counting one
    half -- the trapezoidal area :func:`sklearn.metrics.roc_auc_score` gives.
    The scores are what the scorer uses: the first of ``decision_function``,
    ``predict_proba`` the estimator has (scikit-learn's ``response_method``
    order), the column of ``classes_[1]`` for ``predict_proba``; the positive
    class is the larger label, ``classes_[1]``, as for ``roc_auc_score``.

    A picklable object (it travels to joblib and dask workers with the tasks).
    Calling it returns None when the fast path does not apply -- not a
    classifier with two ``classes_`` equal to the test set's labels, labels
    that are not booleans, integers, integral floats or strings, neither
    response method, a response of an unexpected shape, scores that are not
    finite, or anything raising -- and the caller then runs scikit-learn's
    scorer, which gives its value or its error.
    """

    response_method: tuple[str, ...] = ("decision_function", "predict_proba")

    def __call__(self, estimator: Any, X_test: Any, y_test: NDArray) -> float | None:
        from scipy.stats import rankdata
        from sklearn.base import is_classifier

        classes = getattr(estimator, "classes_", None)
        if not (
            isinstance(classes, np.ndarray)
            and classes.shape == (2,)
            and y_test.ndim == 1
            and _plain_labels(y_test)
            and is_classifier(estimator)
        ):
            return None
        labels = np.unique(y_test)
        if not (labels.shape == (2,) and np.array_equal(labels, classes)):
            return None
        method = next((m for m in self.response_method if hasattr(estimator, m)), None)
        if method is None:
            return None
        scores = np.asarray(getattr(estimator, method)(X_test))
        if method == "predict_proba":
            if scores.shape != (y_test.shape[0], 2):
                return None
            scores = scores[:, 1]
        if scores.shape != y_test.shape or scores.dtype.kind not in "iuf":
            return None
        if not np.all(np.isfinite(scores)):
            return None
        positive = y_test == classes[1]
        n1 = int(np.count_nonzero(positive))
        n0 = y_test.shape[0] - n1
        u = float(rankdata(scores)[positive].sum()) - n1 * (n1 + 1) / 2
        return u / (n1 * n0)


def _plain_labels(y: NDArray) -> bool:
    """Whether `y` holds labels scikit-learn reads as classes as they are.

    Booleans, integers, strings, or floats of integral values (non-integral
    floats are a continuous target to :func:`sklearn.utils.multiclass.type_of_target`).
    """
    if y.dtype.kind in "biuU":
        return True
    return y.dtype.kind == "f" and bool(np.all(np.isfinite(y)) and np.all(y == np.round(y)))


#: The scorer names with a fast path: name -> its fast scorer.
_FAST_SCORERS: dict[str, Callable[[], Any]] = {"roc_auc": _BinaryRocAuc}


def _with_fast_scorers(scoring: _Scoring | None) -> _Scoring | None:
    """Give the metrics asked for by a scorer name with a fast path their fast scorer.

    A metric asked for by name (``scoring="roc_auc"``, ``["roc_auc", ...]``,
    ``{"auc": "roc_auc"}``) whose name is in :data:`_FAST_SCORERS` is computed by
    its fast scorer, which falls back to scikit-learn's scorer wherever it does not
    apply; the other metrics stay in scikit-learn's multimetric scorer. Scorer
    objects and callables are always scikit-learn's or the user's.
    """
    from sklearn.metrics import check_scoring

    if scoring is None:
        return None
    fast = {
        key: _FAST_SCORERS[scoring.metrics[key]]()
        for key in scoring.names
        if scoring.metrics[key] in _FAST_SCORERS and is_sklearn_scorer(scoring.scorers[key])
    }
    if not fast:
        return scoring
    rest = {key: s for key, s in scoring.scorers.items() if key not in fast}
    call = check_scoring(scoring=rest, raise_exc=False) if rest else None
    return replace(scoring, call=call, fast=fast)


def _fast_score(fast: Any, scorer: Any, estimator: Any, X_test: Any, y_test: NDArray) -> Any:
    """Return a metric's fast value; where the fast path does not apply, scikit-learn's.

    A scorer that raises gives None (reported by :func:`_score_failure`, which runs
    it again to chain its error), as in scikit-learn's multimetric scorer.
    """
    try:
        value = fast(estimator, X_test, y_test)
    except Exception:
        value = None
    if value is not None:
        return value
    try:
        return scorer(estimator, X_test, y_test)
    except Exception:
        return None


def _score_failure(
    scoring: _Scoring,
    key: str,
    value: Any,
    estimator: Any,
    X_test: Any,
    y_test: NDArray,
    model: str,
    label: Any,
) -> None:
    """Raise a CubeError for a scorer that failed on one split, its error or warning chained.

    The multimetric scorer returns a failing scorer's traceback as text; the scorer
    is run again alone to get its exception (or the warning that came with a NaN).
    """
    cause: BaseException | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            again = scoring.scorers[key](estimator, X_test, y_test)
        except Exception as e:
            cause = e
        else:
            if caught:
                cause = caught[-1].message  # type: ignore[assignment]
    if cause is not None and not isinstance(cause, Warning):
        detail = f"it raised {type(cause).__name__}: {cause}"
    elif _number(again) is None:
        detail = f"it returned {type(again).__name__} {str(again)[:80]!r}, not one number"
        if isinstance(again, Mapping):
            detail += " (for several metrics pass a dict of scorers)"
    elif not np.isfinite(_number(again)):  # type: ignore[arg-type]
        detail = f"it returned {again}"
        if cause is not None:
            detail += f" with {type(cause).__name__}: {cause}"
    else:  # failed in the multimetric call only
        text = value.strip().splitlines()[-1] if isinstance(value, str) else repr(value)
        detail = f"it failed: {text}"
    try:
        k: Any = np.unique(y_test).size
    except TypeError:
        k = "several"
    raise CubeError(
        f"scorer {key!r} failed for model {model!r} on split {label!r}: {detail.rstrip('.')}. "
        f"A score is computed on a split's whole test set (here {y_test.shape[0]} examples "
        f"with {k} distinct target value(s)), and a score cube holds a finite score for every "
        "split and model, so none is left NaN. If a test set lacks a class the metric needs "
        "(ROC AUC, average precision, log loss), use a stratified design, e.g. "
        "cvstats.designs.kfold(len(y), K, stratify=y, seed=0) or "
        "cvstats.designs.from_splitter(StratifiedKFold(...), X, y), or larger test sets; if "
        "the model lacks the response the scorer uses (predict_proba, decision_function), "
        "choose another model or scorer."
    ) from cause


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


def _check_learners(learners: Any, *, needs_proba: bool, scoring: bool = False) -> list[_Learner]:
    """Validate `learners` and record how to run each one."""
    from sklearn.base import clone

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
            if scoring:
                raise CvstatsTypeError(
                    f"learner {key!r} is a fit_predict callable, but `scoring` calls its scorers "
                    "on a fitted scikit-learn estimator; wrap the model as an estimator (with "
                    "fit, predict and get_params), or collect a loss cube with loss= only."
                )
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
    import scipy.sparse as sp

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
