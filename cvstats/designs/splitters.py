"""Designs from scikit-learn splitters: the exact splits a ``cv`` object makes.

:func:`from_splitter` turns any splitter of :mod:`sklearn.model_selection`
(``KFold``, ``StratifiedKFold``, ``GroupKFold``, ``ShuffleSplit``,
``TimeSeriesSplit``, ``PredefinedSplit``, ...; Pedregosa et al. 2011) or a
plain iterable of ``(train_idx, test_idx)`` pairs into a design: an
:class:`xarray.Dataset` over ``(split, example)`` with boolean ``train`` and
``test`` masks and the split coordinates of the cube schema
(``docs/cube-schema.md``), all in block ``"main"``. See ``docs/splitters.md``.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike, NDArray

from cvstats.cube.dense import NESTED_TRAIN, TIME_ORDERED
from cvstats.cube.groups import groups_coord
from cvstats.cube.schema import EXAMPLE, GROUP, INT_SPLIT_COORDS, SPLIT, UNKNOWN_SEED
from cvstats.errors import ArgumentError, DesignError

__all__ = ["from_splitter"]

#: The ``splitter`` attr of a design built from a plain iterable of pairs.
ITERABLE = "iterable"


# --------------------------------------------------------------------------
# arguments
# --------------------------------------------------------------------------


def _n_rows(value: Any, name: str) -> int:
    """Return the number of rows (examples) of an array-like argument."""
    shape = getattr(value, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    try:
        return len(value)
    except TypeError:
        raise ArgumentError(
            f"`{name}` must be array-like with one row per example, got {type(value).__name__}."
        ) from None


def _resolve_n(n: int | None, X: Any, y: Any, groups: Any, cv: Any, is_splitter: bool) -> int:
    """Return the number of examples, from ``n``, ``X``, ``y``, ``groups`` (which must agree)."""
    found: dict[str, int] = {}
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise ArgumentError(f"`n` must be an int (the number of examples), got {n!r}.")
        found["n"] = int(n)
    for name, value in (("X", X), ("y", y), ("groups", groups)):
        if value is not None:
            found[f"len({name})"] = _n_rows(value, name)
    test_fold = getattr(cv, "test_fold", None) if is_splitter else None
    if test_fold is not None and np.ndim(test_fold) == 1:  # PredefinedSplit
        found["len(cv.test_fold)"] = int(np.shape(test_fold)[0])
    if not found:
        what = "the splitter" if is_splitter else "an iterable of (train, test) pairs"
        raise ArgumentError(
            f"cannot tell the number of examples of {what}: pass the data as `X` or their "
            "number as `n`, e.g. from_splitter(cv, X, y) or from_splitter(cv, n=len(y))."
        )
    if len(set(found.values())) > 1:
        raise ArgumentError(
            f"the arguments disagree on the number of examples ({found}); pass data with one "
            "row per example."
        )
    value = next(iter(found.values()))
    if value < 2:
        raise ArgumentError(f"a design needs at least 2 examples, got {value} ({found}).")
    return value


def _resolve_seed(cv: Any, seed: Any, is_splitter: bool) -> int:
    """Return the seed to record: the splitter's int ``random_state``, else ``seed``."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < UNKNOWN_SEED:
        raise ArgumentError(
            f"`seed` must be an int >= 0, or -1 when unknown, got {seed!r}; it is only "
            "recorded (the splitter draws the splits)."
        )
    state = getattr(cv, "random_state", None) if is_splitter else None
    if isinstance(state, numbers.Integral) and not isinstance(state, bool):
        if seed != UNKNOWN_SEED and int(seed) != int(state):
            raise ArgumentError(
                f"`seed` = {seed} disagrees with the splitter's random_state = {state}, which "
                "drew the splits and is recorded; drop `seed`."
            )
        return int(state)
    return int(seed)


def _needs(cv: Any) -> tuple[bool, bool]:
    """Whether a scikit-learn splitter needs ``y`` (stratified) and ``groups`` (grouped)."""
    from sklearn import model_selection as ms

    needs_y = isinstance(
        cv,
        ms.StratifiedKFold
        | ms.RepeatedStratifiedKFold
        | ms.StratifiedShuffleSplit
        | ms.StratifiedGroupKFold,
    )
    needs_groups = isinstance(
        cv,
        ms.GroupKFold
        | ms.StratifiedGroupKFold
        | ms.GroupShuffleSplit
        | ms.LeaveOneGroupOut
        | ms.LeavePGroupsOut,
    )
    return needs_y, needs_groups


def _missing_message(name: str, arg: str) -> str:
    what = "class labels (stratification)" if arg == "y" else "group labels, one per example"
    return (
        f"{name} needs `{arg}` ({what}) to split the data; pass it: "
        f"from_splitter(cv, X, y, groups) with `{arg}` given."
    )


def _split_pairs(cv: Any, X: Any, y: Any, groups: Any, n: int) -> list[Any]:
    """Call ``cv.split(X, y, groups)`` once; its pairs, with sklearn's errors explained."""
    name = type(cv).__name__
    needs_y, needs_groups = _needs(cv)
    if needs_groups and groups is None:
        raise DesignError(_missing_message(name, "groups"))
    if needs_y and y is None:
        raise DesignError(_missing_message(name, "y"))
    if X is None:  # scikit-learn needs only the number of rows of X (a placeholder)
        X = np.zeros((n, 1))
    try:
        return list(cv.split(X, y, groups))
    except (ValueError, TypeError) as e:
        if groups is None and "groups" in str(e):
            raise DesignError(f"{_missing_message(name, 'groups')} (scikit-learn: {e})") from e
        raise DesignError(
            f"{name}.split(X, y, groups) failed: {e} Check the splitter's parameters against "
            f"the data (n = {n} examples) and pass `y`/`groups` if it needs them."
        ) from e


# --------------------------------------------------------------------------
# pairs -> masks
# --------------------------------------------------------------------------


def _index_set(value: Any, n: int, j: int, which: str) -> NDArray[np.intp]:
    """Return the example indices of one side of split ``j`` (int indices or a bool mask)."""
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise DesignError(
            f"split {j}: the {which} indices must be one-dimensional, got shape {arr.shape}."
        )
    if arr.size == 0:
        raise DesignError(
            f"split {j} has an empty {which} set; every split needs at least one training and "
            "one test example. Drop the split or fix the splitter."
        )
    if arr.dtype == bool:
        if arr.size != n:
            raise DesignError(
                f"split {j}: a boolean {which} mask needs one entry per example ({n}), got "
                f"{arr.size}."
            )
        return np.flatnonzero(arr)
    if not np.issubdtype(arr.dtype, np.integer):
        raise DesignError(
            f"split {j}: the {which} indices must be integers (row positions), got dtype "
            f"{arr.dtype}."
        )
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        raise DesignError(
            f"split {j}: {which} index {int(arr[bad][0])} is out of range for n = {n} examples "
            f"(indices are row positions 0..{n - 1}); pass the right `n` or `X`."
        )
    if np.unique(arr).size != arr.size:
        raise DesignError(
            f"split {j} repeats an example in its {which} set; a design's sets hold each "
            "example at most once (sampling with replacement is not a design)."
        )
    return arr.astype(np.intp)


def _forward(train: NDArray[np.bool_], test: NDArray[np.bool_]) -> bool:
    """Whether the splits come in time order (the ``time_ordered`` attr).

    At least two splits; each trains only on examples before its first test
    example (positions along ``example`` are the time order); the first test
    example moves forward split after split.
    """
    if train.shape[0] < 2:
        return False
    positions = np.arange(train.shape[1])
    last_train = np.where(train, positions, -1).max(axis=1)
    first_test = np.where(test, positions, train.shape[1]).min(axis=1)
    return bool((last_train < first_test).all() and (np.diff(first_test) > 0).all())


def _declared_order(
    declared: bool | None, train: NDArray[np.bool_], test: NDArray[np.bool_], name: str
) -> int:
    """Return the ``time_ordered`` attr: as declared, or detected (:func:`_forward`) if None."""
    detected = _forward(train, test)
    if declared is None:
        return int(detected)
    nested = train.shape[0] >= 2 and bool((train[:-1] <= train[1:]).all())
    if not declared and (detected or nested):
        raise ArgumentError(
            f"`time_ordered=False`, but the splits of {name} are time-ordered (each trains on "
            "examples before its test set, or on a growing training set, as TimeSeriesSplit "
            "makes them): the methods that pool splits as exchangeable draws do not apply to "
            "them. Leave `time_ordered` unset."
        )
    return int(declared)


def _masks(pairs: list[Any], n: int) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Boolean ``train``/``test`` masks ``(split, example)`` of the pairs, checked."""
    if not pairs:
        raise DesignError(
            "the splitter made no split; a design needs at least one (train, test) split."
        )
    S = len(pairs)
    train = np.zeros((S, n), dtype=bool)
    test = np.zeros((S, n), dtype=bool)
    for j, pair in enumerate(pairs):
        if isinstance(pair, str | bytes) or not isinstance(pair, Iterable):
            raise DesignError(
                f"split {j} is {pair!r}, not a (train_idx, test_idx) pair of index arrays."
            )
        pair = tuple(pair)
        if len(pair) != 2:
            raise DesignError(
                f"split {j} has {len(pair)} parts; each split must be a (train_idx, test_idx) "
                "pair of index arrays."
            )
        tr = _index_set(pair[0], n, j, "training")
        te = _index_set(pair[1], n, j, "test")
        train[j, tr] = True
        test[j, te] = True
        both = train[j] & test[j]
        if both.any():
            raise DesignError(
                f"split {j} puts example {int(np.argmax(both))} in both its training and its "
                "test set; the two must be disjoint."
            )
    return train, test


def _repeats(test: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.int64]] | None:
    """``(repeat, fold)`` if the splits run through repeats that partition the examples.

    The splits are cut, in order, into consecutive runs whose test sets are
    disjoint and cover every example; every run must have the same number of
    folds. Returns None otherwise.
    """
    S, n = test.shape
    bounds = [0]
    covered = np.zeros(n, dtype=np.int64)
    for j in range(S):
        covered += test[j]
        if (covered > 1).any():
            return None
        if (covered == 1).all():
            bounds.append(j + 1)
            covered[:] = 0
    if bounds[-1] != S:
        return None
    sizes = np.diff(bounds)
    if np.unique(sizes).size != 1:
        return None
    K = int(sizes[0])
    return np.repeat(np.arange(S // K), K), np.tile(np.arange(K), S // K)


# --------------------------------------------------------------------------
# public
# --------------------------------------------------------------------------


def from_splitter(
    cv: Any,
    X: ArrayLike | None = None,
    y: ArrayLike | None = None,
    groups: ArrayLike | None = None,
    *,
    n: int | None = None,
    seed: int = UNKNOWN_SEED,
    time_ordered: bool | None = None,
) -> xr.Dataset:
    """Design holding exactly the splits of a scikit-learn splitter.

    Calls ``cv.split(X, y, groups)`` once and keeps its splits, in the
    splitter's order, as the block ``"main"`` of a design: split ``j`` trains
    on ``train_idx`` and tests on ``test_idx`` of the ``j``-th pair. Every
    cross-validator of :mod:`sklearn.model_selection` works (Pedregosa et al.,
    2011; scikit-learn user guide, "Cross-validation: evaluating estimator
    performance"): ``KFold``, ``StratifiedKFold``, ``RepeatedKFold``,
    ``RepeatedStratifiedKFold``, ``ShuffleSplit``, ``StratifiedShuffleSplit``,
    ``GroupKFold``, ``StratifiedGroupKFold``, ``GroupShuffleSplit``,
    ``LeaveOneOut``, ``LeaveOneGroupOut``, ``LeavePGroupsOut``,
    ``TimeSeriesSplit``, ``PredefinedSplit``; so does a plain iterable of
    ``(train_idx, test_idx)`` pairs (integer row positions, or boolean masks
    of length ``n``).

    The k-fold coordinates are read from the indices, not from the class:
    the splits are cut, in order, into consecutive runs whose test sets are
    disjoint and together test every example once. If that succeeds with the
    same number ``K`` of splits in every run, run ``r`` is ``repeat = r`` and
    its splits are ``fold = 0..K-1`` (``KFold``, ``StratifiedKFold``,
    ``GroupKFold``, ``StratifiedGroupKFold``, ``LeaveOneOut``,
    ``LeaveOneGroupOut`` and a ``PredefinedSplit`` that tests every example
    give one repeat; ``RepeatedKFold`` and ``RepeatedStratifiedKFold`` give
    ``n_repeats``); otherwise ``repeat = fold = -1`` (``ShuffleSplit``,
    ``StratifiedShuffleSplit``, ``GroupShuffleSplit``, ``TimeSeriesSplit``,
    ``LeavePGroupsOut`` with ``n_groups >= 2``, iterables that do not
    partition).

    Examples no split tests (``TimeSeriesSplit``'s first chunk, a
    ``ShuffleSplit`` with ``train_size + test_size < n``) are allowed: their
    losses are NaN in every split of a cube.

    Parameters
    ----------
    cv : splitter or iterable of (array-like, array-like)
        A scikit-learn splitter instance (anything with a ``split(X, y, groups)``
        method yielding ``(train_idx, test_idx)``), or the pairs themselves.
    X : array-like, optional
        The data, one row per example (only its number of rows is used). When
        None, a placeholder of ``n`` rows is passed to ``cv.split``.
    y : array-like, optional
        Targets or class labels; needed by the stratified splitters.
    groups : array-like, optional
        Group labels, one per example; needed by the group splitters.
    n : int, optional
        Number of examples; needed when neither ``X``, ``y``, ``groups`` nor
        (``PredefinedSplit``) ``cv.test_fold`` gives it. Must agree with them.
    seed : int, default -1
        Recorded in the ``seed`` attr when the splitter has no int
        ``random_state`` (-1: unknown). An int ``random_state`` is recorded
        instead; a different ``seed`` is an error.
    time_ordered : bool, optional
        ``True`` declares the examples a time series in their order (rows of
        ``X``) whatever the splits, e.g. contiguous ``KFold`` blocks of a
        series (Bergmeir & Benítez 2012, "On the use of cross-validation for
        time series predictor evaluation", Information Sciences 191, §2):
        the attr ``time_ordered`` is then 1, so the methods that pool the
        splits as exchangeable random draws refuse the cubes built on it and
        the Diebold–Mariano test applies where its test sets are disjoint and
        consecutive (docs/splitters.md, "Time-ordered splits"). ``None``
        (default): detected from the splits, as below. ``False`` only
        confirms splits that are not detected as time-ordered.

    Returns
    -------
    xarray.Dataset
        ``train``/``test`` masks over ``(split, example)``, one split per pair,
        block ``"main"``; coordinates ``repeat`` and ``fold`` as above,
        ``half = side = replicate = -1``, ``n_train`` and ``n_test`` (the
        training- and test-set sizes). Attrs: ``design = "splitter"``,
        ``splitter`` (the class name, or ``"iterable"``), ``n``, ``seed``,
        ``n_splits`` and the flags (ints 0/1, since netCDF files cannot hold
        bools) ``partition`` (every repeat's test sets partition the
        examples), ``equal_n_train``, ``equal_n_test`` (all splits have the
        same training / test size), ``nested_train`` (at least two splits,
        each training set containing the previous one, as in
        ``TimeSeriesSplit``) and ``time_ordered`` (at least two splits, each
        training only on examples before its test set, the test sets starting
        later split after split: ``TimeSeriesSplit`` with growing windows or a
        sliding one, ``max_train_size``); with ``partition``, also ``K`` and
        ``repeats``. ``nested_train`` and ``time_ordered`` are carried by the
        cubes built on the design (through :func:`cvstats.from_arrays`,
        :func:`cvstats.collect`, :func:`cvstats.from_scores`,
        ``save``/``open_cube``), and every method that pools splits as
        exchangeable random draws refuses a cube with either = 1
        (``docs/splitters.md``, "Time-ordered splits"); the hold-out methods on
        one split (``holdout_t(cube, split=...)``) and the Diebold–Mariano test
        over all of them remain.
        Given ``groups``, the design keeps them as the coordinate ``group``
        on ``example``, which the cubes built on it carry (docs/grouped-data.md).

    Raises
    ------
    ArgumentError
        If the number of examples is unknown or the arguments disagree on it,
        or ``seed`` is not an int >= -1 (or contradicts ``random_state``).
    DesignError
        If ``cv`` is neither a splitter instance nor an iterable of pairs; if
        the splitter needs ``y`` or ``groups`` and did not get them (or
        scikit-learn refuses the data: its message is kept); if there is no
        split; if a split has an empty training or test set, an index out of
        ``0..n-1``, a repeated index, or an example in both sets.
    ArgumentError
        If ``time_ordered`` is not a bool or None, or is False for splits that
        are time-ordered (``TimeSeriesSplit``).

    References
    ----------
    .. [1] Pedregosa, F. et al. (2011). Scikit-learn: Machine Learning in
       Python. *Journal of Machine Learning Research* 12, 2825-2830.
    .. [2] scikit-learn user guide, section 3.1, "Cross-validation: evaluating
       estimator performance" (``sklearn.model_selection``).

    Examples
    --------
    >>> from sklearn.model_selection import KFold, TimeSeriesSplit
    >>> from cvstats import designs
    >>> d = designs.from_splitter(KFold(5, shuffle=True, random_state=0), n=20)
    >>> d.fold.values.tolist(), d.attrs["partition"], d.attrs["seed"]
    ([0, 1, 2, 3, 4], 1, 0)
    >>> ts = designs.from_splitter(TimeSeriesSplit(3), n=12)
    >>> ts.n_train.values.tolist(), ts.n_test.values.tolist(), ts.attrs["nested_train"]
    ([3, 6, 9], [3, 3, 3], 1)
    >>> pairs = [([0, 1], [2, 3]), ([2, 3], [0, 1])]
    >>> designs.from_splitter(pairs, n=4).attrs["splitter"]
    'iterable'
    """
    if isinstance(cv, type):
        raise DesignError(
            f"`cv` is the class {cv.__name__}, not a splitter; pass an instance, e.g. "
            f"{cv.__name__}(...)."
        )
    is_splitter = not isinstance(cv, str | bytes) and callable(getattr(cv, "split", None))
    if not is_splitter and (isinstance(cv, str | bytes | Mapping) or not isinstance(cv, Iterable)):
        hint = (
            f" For {cv} folds pass sklearn.model_selection.KFold({cv})."
            if isinstance(cv, numbers.Integral) and not isinstance(cv, bool)
            else ""
        )
        raise DesignError(
            f"`cv` must be a scikit-learn splitter (an object with a split(X, y, groups) "
            f"method) or an iterable of (train_idx, test_idx) pairs, got "
            f"{type(cv).__name__}.{hint}"
        )
    if time_ordered is not None and not isinstance(time_ordered, bool | np.bool_):
        raise ArgumentError(
            f"`time_ordered` must be True, False or None (detect it from the splits), got "
            f"{time_ordered!r}."
        )
    n_ex = _resolve_n(n, X, y, groups, cv, is_splitter)
    recorded = _resolve_seed(cv, seed, is_splitter)
    if is_splitter:
        pairs = _split_pairs(cv, X, y, groups, n_ex)
        name = type(cv).__name__
    else:
        pairs = list(cv)
        name = ITERABLE
    train, test = _masks(pairs, n_ex)
    S = train.shape[0]
    coords_int = {c: np.full(S, -1, dtype=np.int64) for c in INT_SPLIT_COORDS}
    n_train = train.sum(axis=1).astype(np.int64)
    n_test = test.sum(axis=1).astype(np.int64)
    coords_int["n_train"] = n_train
    folds = _repeats(test)
    attrs: dict[str, Any] = {
        "design": "splitter",
        "splitter": name,
        "n": int(n_ex),
        "seed": recorded,
        "n_splits": int(S),
        "partition": int(folds is not None),
        "equal_n_train": int(np.unique(n_train).size == 1),
        "equal_n_test": int(np.unique(n_test).size == 1),
        NESTED_TRAIN: int(S >= 2 and bool((train[:-1] <= train[1:]).all())),
        TIME_ORDERED: _declared_order(time_ordered, train, test, name),
    }
    if folds is not None:
        coords_int["repeat"], coords_int["fold"] = folds
        attrs["K"] = int(folds[1].max()) + 1
        attrs["repeats"] = int(folds[0].max()) + 1
    coords: dict[str, Any] = {
        SPLIT: np.arange(S, dtype=np.int64),
        EXAMPLE: np.arange(n_ex, dtype=np.int64),
        "block": (SPLIT, np.array(["main"] * S)),
    }
    coords.update({c: (SPLIT, coords_int[c]) for c in INT_SPLIT_COORDS})
    coords["n_test"] = (SPLIT, n_test)
    if groups is not None:
        coords[GROUP] = (EXAMPLE, groups_coord(groups, n_ex))
    return xr.Dataset(
        {"train": ((SPLIT, EXAMPLE), train), "test": ((SPLIT, EXAMPLE), test)},
        coords=coords,
        attrs=attrs,
    )
