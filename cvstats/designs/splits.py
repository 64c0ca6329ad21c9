"""Split designs: which examples train and which test each model fit.

Every function returns an :class:`xarray.Dataset` over ``(split, example)``
with boolean variables ``train`` and ``test`` and the split coordinates of
the cube schema (``docs/cube-schema.md``): ``block``, ``half``, ``side``,
``replicate``, ``repeat``, ``fold`` and ``n_train``; attrs ``design``, ``n``,
``seed`` and the design's parameters. The same ``seed`` gives the same
splits. Pass class labels as ``stratify=y`` for stratified splits (class
proportions kept in every training and test set, through scikit-learn's
stratified splitters).

The designs follow docs/theory.md §1, §4 and §6. A split draws its training set
of size ``n1`` and its test set of size ``n2`` at random from the examples
the design uses; by default ``n1 = n - n2`` (all examples). With a smaller
``n_train`` the data set is cut *once* to its first ``n_train + n_test``
examples and every split is drawn inside them (docs/theory.md §6: "throwing data
away" without changing ``ρ``).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import xarray as xr
from numpy.typing import ArrayLike, NDArray

from cvstats.cube.dense import NESTED_TRAIN, TIME_ORDERED, nested_train, time_ordered
from cvstats.cube.schema import (
    BLOCKS,
    EXAMPLE,
    INT_SPLIT_COORDS,
    N_TEST,
    SPLIT,
    UNKNOWN_SEED,
)
from cvstats.errors import CubeError, DesignError

__all__ = [
    "holdout",
    "resampled",
    "kfold",
    "from_folds",
    "five_by_two",
    "conservative_z",
    "bootstrap",
    "nadeau_bengio",
    "combine",
    "select_blocks",
    "nested_cv",
]

IntArray = NDArray[np.intp]


# --------------------------------------------------------------------------
# argument validation
# --------------------------------------------------------------------------


def _check_int(name: str, value: object, minimum: int, fix: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise DesignError(
            f"`{name}` must be an int, got {value!r} ({type(value).__name__})."
            + (f" {fix}" if fix else "")
        )
    value = int(value)
    if value < minimum:
        raise DesignError(
            f"`{name}` must be at least {minimum}, got {value}." + (f" {fix}" if fix else "")
        )
    return value


def _resolve_seed(seed: int | None) -> int:
    """Return a concrete non-negative int seed (drawn from fresh entropy when None)."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0])
    return _check_int("seed", seed, 0, "Pass a non-negative int, or None for a fresh one.")


def _check_sizes(n: int, n_test: int, n_train: int | None) -> tuple[int, int, int]:
    """Validate ``(n, n_test, n_train)``; return them with ``n_train`` resolved."""
    n = _check_int("n", n, 2)
    n_test = _check_int(
        "n_test",
        n_test,
        1,
        "It is the number of test examples per split; for a fraction f use round(f * n).",
    )
    if n_test >= n:
        raise DesignError(
            f"`n_test` = {n_test} leaves no training example out of n = {n}; choose n_test < n."
        )
    if n_train is None:
        n_train = n - n_test
    n_train = _check_int("n_train", n_train, 1)
    if n_train + n_test > n:
        raise DesignError(
            f"`n_train` + `n_test` = {n_train} + {n_test} exceeds the n = {n} examples; "
            "lower n_train (default n - n_test)."
        )
    return n, n_test, n_train


def _check_stratify(stratify: ArrayLike | None, n: int) -> NDArray | None:
    if stratify is None:
        return None
    labels = np.asarray(stratify)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise DesignError(
            f"`stratify` must hold one class label per example (shape ({n},)), "
            f"got shape {labels.shape}."
        )
    return labels


# --------------------------------------------------------------------------
# drawing splits
# --------------------------------------------------------------------------


def _sklearn_state(rng: np.random.Generator) -> int:
    return int(rng.integers(2**31 - 1))


def _draw_splits(
    rng: np.random.Generator,
    pool: IntArray,
    n_test: int,
    n_train: int,
    J: int,
    labels: NDArray | None,
) -> tuple[IntArray, IntArray]:
    """Draw ``J`` random (train, test) index sets of the given sizes inside ``pool``.

    Returns two integer arrays of shapes ``(J, n_train)`` and ``(J, n_test)``
    holding example indices (values of ``pool``).
    """
    if labels is None:
        perms = rng.permuted(np.tile(pool, (J, 1)), axis=1)
        return perms[:, n_test : n_test + n_train], perms[:, :n_test]
    from sklearn.model_selection import StratifiedShuffleSplit

    splitter = StratifiedShuffleSplit(
        n_splits=J, test_size=n_test, train_size=n_train, random_state=_sklearn_state(rng)
    )
    try:
        pairs = list(splitter.split(np.zeros(pool.size), labels[pool]))
    except ValueError as e:
        raise DesignError(
            f"cannot stratify {pool.size} examples into test sets of {n_test} and training "
            f"sets of {n_train}: {e} Use larger sets, merge rare classes, or pass stratify=None."
        ) from e
    train = np.stack([pool[tr] for tr, _ in pairs])
    test = np.stack([pool[te] for _, te in pairs])
    return train, test


def _draw_halves(
    rng: np.random.Generator, n: int, M: int, labels: NDArray | None
) -> tuple[IntArray, IntArray]:
    """Draw ``M`` random pairs of disjoint halves of size ``⌊n/2⌋`` (odd ``n``: one left out)."""
    h = n // 2
    first, second = _draw_splits(rng, np.arange(n), h, h, M, labels)
    # _draw_splits returns (train, test); call them D_m and D_m^c
    return first, second


def _masks(n: int, train_idx: IntArray, test_idx: IntArray) -> tuple[NDArray, NDArray]:
    S = train_idx.shape[0]
    train = np.zeros((S, n), dtype=bool)
    test = np.zeros((S, n), dtype=bool)
    np.put_along_axis(train, train_idx, True, axis=1)
    np.put_along_axis(test, test_idx, True, axis=1)
    return train, test


class _Block:
    """One block of splits, before it becomes a Dataset."""

    def __init__(self, block: str, train: NDArray, test: NDArray, **coords: ArrayLike):
        S = train.shape[0]
        self.block = block
        self.train = train
        self.test = test
        self.coords = {name: np.full(S, -1, dtype=np.int64) for name in INT_SPLIT_COORDS}
        self.coords["n_train"] = train.sum(axis=1).astype(np.int64)
        for name, value in coords.items():
            self.coords[name] = np.broadcast_to(np.asarray(value, dtype=np.int64), (S,)).copy()


def _dataset(blocks: Sequence[_Block], n: int, name: str, seed: int, **params: int) -> xr.Dataset:
    train = np.concatenate([b.train for b in blocks])
    test = np.concatenate([b.test for b in blocks])
    S = train.shape[0]
    coords: dict[str, object] = {
        SPLIT: np.arange(S, dtype=np.int64),
        EXAMPLE: np.arange(n, dtype=np.int64),
        "block": (SPLIT, np.concatenate([[b.block] * b.train.shape[0] for b in blocks])),
    }
    for cname in INT_SPLIT_COORDS:
        coords[cname] = (SPLIT, np.concatenate([b.coords[cname] for b in blocks]))
    attrs = {"design": name, "n": int(n), "seed": int(seed)}
    attrs.update({k: int(v) for k, v in params.items()})
    return xr.Dataset(
        {"train": ((SPLIT, EXAMPLE), train), "test": ((SPLIT, EXAMPLE), test)},
        coords=coords,
        attrs=attrs,
    )


def _main_block(
    rng: np.random.Generator,
    n: int,
    n_test: int,
    n_train: int,
    J: int,
    labels: NDArray | None,
) -> _Block:
    pool = np.arange(n_train + n_test)  # the data set cut once (docs/theory.md §6)
    tr, te = _draw_splits(rng, pool, n_test, n_train, J, labels)
    return _Block("main", *_masks(n, tr, te))


def _half_block(
    rng: np.random.Generator, n: int, n_test: int, J: int, M: int, labels: NDArray | None
) -> _Block:
    h = n // 2
    halves = _draw_halves(rng, n, M, labels)
    trains, tests, half, side = [], [], [], []
    for m in range(M):
        for s in (0, 1):
            pool = np.sort(halves[s][m])
            tr, te = _draw_splits(rng, pool, n_test, h - n_test, J, labels)
            mtr, mte = _masks(n, tr, te)
            trains.append(mtr)
            tests.append(mte)
            half.append(np.full(J, m))
            side.append(np.full(J, s))
    return _Block(
        "half",
        np.concatenate(trains),
        np.concatenate(tests),
        half=np.concatenate(half),
        side=np.concatenate(side),
    )


def _replicate_block(
    rng: np.random.Generator,
    n: int,
    n_test: int,
    n_train: int,
    J: int,
    R: int,
    labels: NDArray | None,
) -> _Block:
    pool = np.arange(n_train + n_test)
    tr, te = _draw_splits(rng, pool, n_test, n_train, J * R, labels)
    return _Block("replicate", *_masks(n, tr, te), replicate=np.repeat(np.arange(R), J))


def _five_by_two_block(rng: np.random.Generator, n: int, labels: NDArray | None) -> _Block:
    first, second = _draw_halves(rng, n, 5, labels)
    # side 0 trains on D_m and tests on D_m^c; side 1 the reverse
    tr = np.stack([first, second], axis=1).reshape(10, -1)
    te = np.stack([second, first], axis=1).reshape(10, -1)
    return _Block(
        "5x2",
        *_masks(n, tr, te),
        half=np.repeat(np.arange(5), 2),
        side=np.tile([0, 1], 5),
    )


def _rngs(seed: int, k: int) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(k)]


def _check_half_sizes(n: int, n_test: int) -> None:
    h = n // 2
    if n_test >= h:
        raise DesignError(
            f"the conservative Z trains inside halves of floor(n/2) = {h} examples with "
            f"training size floor(n/2) - n_test, so `n_test` = {n_test} must be < {h} "
            "(docs/theory.md §4, method 4); choose a smaller n_test."
        )


# --------------------------------------------------------------------------
# public designs
# --------------------------------------------------------------------------


def holdout(
    n: int,
    n_test: int,
    *,
    n_train: int | None = None,
    stratify: ArrayLike | None = None,
    seed: int | None = None,
) -> xr.Dataset:
    """Design with one random hold-out split (docs/theory.md §4, method 1).

    Parameters
    ----------
    n : int
        Number of examples available.
    n_test : int
        Test-set size ``n2``.
    n_train : int, optional
        Training-set size ``n1``; default ``n - n_test``. A smaller value uses
        only the first ``n_train + n_test`` examples.
    stratify : array-like, optional
        Class labels, one per example, for a stratified split.
    seed : int, optional
        Seed of the random split; drawn from fresh entropy (and recorded in
        the ``seed`` attr) when None.

    Returns
    -------
    xarray.Dataset
        ``train``/``test`` masks over ``(split, example)`` with one split in block
        ``"main"``.

    Examples
    --------
    >>> from cvstats import designs
    >>> d = designs.holdout(100, 20, seed=0)
    >>> int(d.test.sum()), int(d.train.sum())
    (20, 80)
    """
    n, n_test, n_train = _check_sizes(n, n_test, n_train)
    labels = _check_stratify(stratify, n)
    seed = _resolve_seed(seed)
    (rng,) = _rngs(seed, 1)
    block = _main_block(rng, n, n_test, n_train, 1, labels)
    return _dataset([block], n, "holdout", seed, n_test=n_test, J=1)


def resampled(
    n: int,
    n_test: int,
    J: int = 15,
    *,
    n_train: int | None = None,
    stratify: ArrayLike | None = None,
    seed: int | None = None,
) -> xr.Dataset:
    """Design with ``J`` independent random train/test splits (docs/theory.md §1).

    The main block of the resampled t, the corrected resampled t (methods 2
    and 6) and of every estimate ``μ̂_J``.

    Parameters
    ----------
    n : int
        Number of examples available.
    n_test : int
        Test-set size ``n2`` of every split.
    J : int, default 15
        Number of splits.
    n_train : int, optional
        Training-set size ``n1``; default ``n - n_test``. A smaller value cuts
        the data set once to its first ``n_train + n_test`` examples
        (docs/theory.md §6).
    stratify : array-like, optional
        Class labels for stratified splits.
    seed : int, optional
        Seed; drawn from fresh entropy and recorded when None.

    Returns
    -------
    xarray.Dataset
        ``J`` splits in block ``"main"``.

    Examples
    --------
    >>> from cvstats import designs
    >>> d = designs.resampled(50, 10, J=5, seed=1)
    >>> d.sizes["split"], d.test.sum("example").values.tolist()
    (5, [10, 10, 10, 10, 10])
    """
    n, n_test, n_train = _check_sizes(n, n_test, n_train)
    J = _check_int("J", J, 1)
    labels = _check_stratify(stratify, n)
    seed = _resolve_seed(seed)
    (rng,) = _rngs(seed, 1)
    block = _main_block(rng, n, n_test, n_train, J, labels)
    return _dataset([block], n, "resampled", seed, n_test=n_test, J=J)


def kfold(
    n: int,
    K: int,
    repeats: int = 1,
    *,
    stratify: ArrayLike | None = None,
    seed: int | None = None,
) -> xr.Dataset:
    """Design of (repeated) K-fold cross-validation (docs/theory.md §4 k-fold t, §7).

    Every repeat partitions the ``n`` examples into ``K`` folds of sizes
    ``⌊n/K⌋`` or ``⌈n/K⌉``; each fold is the test set of one split, trained on
    the other folds.

    Parameters
    ----------
    n : int
        Number of examples.
    K : int
        Number of folds, ``2 <= K <= n``.
    repeats : int, default 1
        Number of independent repetitions (Bouckaert & Frank's corrected
        repeated k-fold t uses ``repeats > 1``).
    stratify : array-like, optional
        Class labels for stratified folds (every class needs at least ``K``
        examples).
    seed : int, optional
        Seed; drawn from fresh entropy and recorded when None.

    Returns
    -------
    xarray.Dataset
        ``K * repeats`` splits in block ``"main"`` with ``repeat`` and ``fold``
        coordinates.

    Examples
    --------
    >>> from cvstats import designs
    >>> d = designs.kfold(10, 5, repeats=2, seed=0)
    >>> d.test.groupby("repeat").sum().values.tolist()
    [[1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]]
    """
    n = _check_int("n", n, 2)
    K = _check_int("K", K, 2)
    if K > n:
        raise DesignError(f"`K` = {K} folds need at least K examples, but n = {n}; lower K.")
    repeats = _check_int("repeats", repeats, 1)
    labels = _check_stratify(stratify, n)
    seed = _resolve_seed(seed)
    (rng,) = _rngs(seed, 1)
    if labels is None:
        perms = rng.permuted(np.tile(np.arange(n), (repeats, 1)), axis=1)
        fold_of = np.empty((repeats, n), dtype=np.int64)
        # fold k holds positions [bounds[k], bounds[k+1]) of each permutation
        bounds = np.linspace(0, n, K + 1).round().astype(int)
        pos_fold = np.searchsorted(bounds, np.arange(n), side="right") - 1
        np.put_along_axis(fold_of, perms, np.broadcast_to(pos_fold, perms.shape), axis=1)
    else:
        from sklearn.model_selection import StratifiedKFold

        counts = np.unique(labels, return_counts=True)[1]
        if counts.min() < K:
            raise DesignError(
                f"stratified {K}-fold needs at least {K} examples of every class, but the "
                f"rarest class has {counts.min()}; lower K, merge rare classes, or pass "
                "stratify=None."
            )
        fold_of = np.empty((repeats, n), dtype=np.int64)
        for r in range(repeats):
            skf = StratifiedKFold(K, shuffle=True, random_state=_sklearn_state(rng))
            for k, (_, te) in enumerate(skf.split(np.zeros(n), labels)):
                fold_of[r, te] = k
    return _dataset([_fold_block(fold_of, K)], n, "kfold", seed, K=K, repeats=repeats)


def _fold_block(fold_of: NDArray, K: int) -> _Block:
    repeats, n = fold_of.shape
    test = fold_of[:, None, :] == np.arange(K)[None, :, None]  # (repeats, K, n)
    test = test.reshape(repeats * K, n)
    return _Block(
        "main",
        ~test,
        test,
        repeat=np.repeat(np.arange(repeats), K),
        fold=np.tile(np.arange(K), repeats),
    )


def from_folds(fold_of: ArrayLike, *, seed: int = -1) -> xr.Dataset:
    """Design of (repeated) K-fold cross-validation from given fold labels.

    For fold assignments made elsewhere (a saved experiment, a custom
    stratification, a study runner): repeat ``r`` puts example ``i`` in fold
    ``fold_of[r, i]``; each fold is the test set of one split, trained on the
    other folds of its repeat. The result is the design
    :func:`kfold` would build had it drawn these folds.

    Parameters
    ----------
    fold_of : array-like of int, shape (repeats, n) or (n,)
        Fold labels ``0..K-1``; every repeat must use every label at least once.
    seed : int, default -1
        Recorded in the attrs (-1: unknown).

    Returns
    -------
    xarray.Dataset
        ``K * repeats`` splits in block ``"main"`` with ``repeat`` and ``fold``
        coordinates, ``K = max(fold_of) + 1``.

    Raises
    ------
    DesignError
        If the labels are not integers ``0..K-1``, ``K < 2``, or a repeat leaves a
        fold empty.

    Examples
    --------
    >>> from cvstats import designs
    >>> d = designs.from_folds([[0, 1, 0, 1], [1, 1, 0, 0]])
    >>> d.test.astype(int).values.tolist()
    [[1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 1], [1, 1, 0, 0]]
    """
    arr = np.asarray(fold_of)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.size == 0:
        raise DesignError(
            f"`fold_of` must have shape (repeats, n) or (n,), got shape {np.shape(fold_of)}."
        )
    if not np.issubdtype(arr.dtype, np.integer):
        raise DesignError(f"`fold_of` must hold integer fold labels, got dtype {arr.dtype}.")
    if arr.min() < 0:
        raise DesignError(f"`fold_of` holds negative labels ({arr.min()}); use 0..K-1.")
    K = int(arr.max()) + 1
    if K < 2:
        raise DesignError("`fold_of` has a single fold; K-fold needs K >= 2 folds.")
    used = np.zeros((arr.shape[0], K), dtype=bool)
    np.put_along_axis(used, arr.astype(np.int64), True, axis=1)
    empty = np.argwhere(~used)
    if empty.size:
        r, k = empty[0]
        raise DesignError(
            f"repeat {r} of `fold_of` has no example in fold {k} (labels must be 0..K-1 "
            f"with K = {K}, every fold non-empty in every repeat); relabel the folds."
        )
    repeats, n = arr.shape
    return _dataset([_fold_block(arr.astype(np.int64), K)], n, "kfold", seed, K=K, repeats=repeats)


def five_by_two(
    n: int, *, stratify: ArrayLike | None = None, seed: int | None = None
) -> xr.Dataset:
    """Design of Dietterich's 5x2cv (docs/theory.md §4, method 3).

    Five times, the data are split at random into halves ``D_m`` and
    ``D_m^c`` of size ``⌊n/2⌋`` (odd ``n``: one example left out). Side 0 trains
    on ``D_m`` and tests on ``D_m^c``; side 1 the reverse.

    Parameters
    ----------
    n : int
        Number of examples, at least 4.
    stratify : array-like, optional
        Class labels for stratified halves.
    seed : int, optional
        Seed; drawn from fresh entropy and recorded when None.

    Returns
    -------
    xarray.Dataset
        Ten splits in block ``"5x2"`` with ``half`` (replication) and ``side``.

    Examples
    --------
    >>> from cvstats import designs
    >>> d = designs.five_by_two(20, seed=0)
    >>> d.sizes["split"], int(d.test.isel(split=0).sum())
    (10, 10)
    """
    n = _check_int("n", n, 4)
    labels = _check_stratify(stratify, n)
    seed = _resolve_seed(seed)
    (rng,) = _rngs(seed, 1)
    return _dataset([_five_by_two_block(rng, n, labels)], n, "five_by_two", seed)


def conservative_z(
    n: int,
    n_test: int,
    J: int = 15,
    M: int = 10,
    *,
    n_train: int | None = None,
    stratify: ArrayLike | None = None,
    seed: int | None = None,
) -> xr.Dataset:
    """Design of the conservative Z (docs/theory.md §4, method 4, eq. 11).

    A main block of ``J`` splits of the whole data (test size ``n_test``,
    training size ``n_train``, default ``n - n_test``) for ``μ̂_J``, and a
    ``"half"`` block for the variance: ``M`` times the data are split into
    disjoint halves ``D_m, D_m^c`` of size ``⌊n/2⌋`` (odd ``n``: one example
    left out), and inside each half ``J`` resampling splits are drawn with
    test size ``n_test`` and training size ``⌊n/2⌋ - n_test``. Cost:
    ``J (1 + 2M)`` fits.

    Parameters
    ----------
    n : int
        Number of examples.
    n_test : int
        Test size ``n2``; must be below ``⌊n/2⌋``.
    J : int, default 15
        Splits per resampled estimate.
    M : int, default 10
        Number of half-splits (``5 <= M <= 10`` recommended).
    n_train : int, optional
        Training size of the main block; default ``n - n_test``.
    stratify : array-like, optional
        Class labels for stratified splits.
    seed : int, optional
        Seed; drawn from fresh entropy and recorded when None.

    Returns
    -------
    xarray.Dataset
        ``J + 2MJ`` splits in blocks ``"main"`` and ``"half"``.

    Examples
    --------
    >>> from cvstats import designs
    >>> d = designs.conservative_z(100, 10, J=3, M=2, seed=0)
    >>> d.sizes["split"], sorted(set(d.block.values.tolist()))
    (15, ['half', 'main'])
    """
    n, n_test, n_train = _check_sizes(n, n_test, n_train)
    _check_half_sizes(n, n_test)
    J = _check_int("J", J, 1)
    M = _check_int("M", M, 1)
    labels = _check_stratify(stratify, n)
    seed = _resolve_seed(seed)
    r_main, r_half = _rngs(seed, 2)
    blocks = [
        _main_block(r_main, n, n_test, n_train, J, labels),
        _half_block(r_half, n, n_test, J, M, labels),
    ]
    return _dataset(blocks, n, "conservative_z", seed, n_test=n_test, J=J, M=M)


def bootstrap(
    n: int,
    n_test: int,
    J: int = 15,
    R: int = 15,
    *,
    n_train: int | None = None,
    stratify: ArrayLike | None = None,
    seed: int | None = None,
) -> xr.Dataset:
    """Design of the (corrected) bootstrap (docs/theory.md §4, methods 5 and 7).

    A main block of ``J`` splits plus ``R`` replicate blocks of ``J`` fresh,
    independent splits of the same data (``(R + 1) J`` fits).

    Parameters
    ----------
    n : int
        Number of examples.
    n_test : int
        Test size ``n2``.
    J : int, default 15
        Splits per resampled estimate.
    R : int, default 15
        Number of replicates; at least 2 for a variance.
    n_train : int, optional
        Training size; default ``n - n_test``.
    stratify : array-like, optional
        Class labels for stratified splits.
    seed : int, optional
        Seed; drawn from fresh entropy and recorded when None.

    Returns
    -------
    xarray.Dataset
        ``(R + 1) J`` splits in blocks ``"main"`` and ``"replicate"``.

    Examples
    --------
    >>> from cvstats import designs
    >>> d = designs.bootstrap(60, 10, J=4, R=3, seed=0)
    >>> d.sizes["split"]
    16
    """
    n, n_test, n_train = _check_sizes(n, n_test, n_train)
    J = _check_int("J", J, 1)
    R = _check_int("R", R, 2, "The bootstrap variance is a sample variance over replicates.")
    labels = _check_stratify(stratify, n)
    seed = _resolve_seed(seed)
    r_main, r_rep = _rngs(seed, 2)
    blocks = [
        _main_block(r_main, n, n_test, n_train, J, labels),
        _replicate_block(r_rep, n, n_test, n_train, J, R, labels),
    ]
    return _dataset(blocks, n, "bootstrap", seed, n_test=n_test, J=J, R=R)


def nadeau_bengio(
    n: int,
    n_test: int,
    J: int = 15,
    M: int = 10,
    R: int = 15,
    *,
    n_train: int | None = None,
    stratify: ArrayLike | None = None,
    seed: int | None = None,
) -> xr.Dataset:
    """Design that serves every method of docs/theory.md §4 in one cube.

    Main block (``J`` splits), ``"half"`` block of the conservative Z (``M``
    half-splits, ``J`` splits inside each half), ``"replicate"`` block of the
    bootstrap (``R`` x ``J`` splits) and Dietterich's ``"5x2"`` block.
    Cost: ``J (1 + 2M) + R J + 10`` fits.

    Parameters
    ----------
    n : int
        Number of examples.
    n_test : int
        Test size ``n2`` of the main, half and replicate blocks; below ``⌊n/2⌋``.
    J : int, default 15
        Splits per resampled estimate.
    M : int, default 10
        Half-splits of the conservative Z.
    R : int, default 15
        Bootstrap replicates.
    n_train : int, optional
        Training size of the main and replicate blocks; default ``n - n_test``.
    stratify : array-like, optional
        Class labels for stratified splits.
    seed : int, optional
        Seed; drawn from fresh entropy and recorded when None.

    Returns
    -------
    xarray.Dataset
        All four blocks.

    Examples
    --------
    >>> from cvstats import designs
    >>> d = designs.nadeau_bengio(60, 6, J=2, M=2, R=2, seed=0)
    >>> d.sizes["split"]
    24
    """
    n, n_test, n_train = _check_sizes(n, n_test, n_train)
    _check_half_sizes(n, n_test)
    J = _check_int("J", J, 1)
    M = _check_int("M", M, 1)
    R = _check_int("R", R, 2, "The bootstrap variance is a sample variance over replicates.")
    labels = _check_stratify(stratify, n)
    seed = _resolve_seed(seed)
    r_main, r_half, r_rep, r_5x2 = _rngs(seed, 4)
    blocks = [
        _main_block(r_main, n, n_test, n_train, J, labels),
        _half_block(r_half, n, n_test, J, M, labels),
        _replicate_block(r_rep, n, n_test, n_train, J, R, labels),
        _five_by_two_block(r_5x2, n, labels),
    ]
    return _dataset(blocks, n, "nadeau_bengio", seed, n_test=n_test, J=J, M=M, R=R)


def combine(*designs: xr.Dataset) -> xr.Dataset:
    """Concatenate designs over the same examples into one design.

    Splits are renumbered ``0..S-1`` in the order given. Each block may come
    from one design only (two main blocks would mix two estimates ``μ̂_J``);
    take a block out of a design with :func:`select_blocks`.

    A design may state its test sizes in an ``n_test`` coordinate
    (:func:`cvstats.designs.from_splitter` does); when some of the designs do,
    the others get it too, computed from their own ``test`` masks (the number
    of test examples of each split: a fact of the design, not a guess), and a
    stated ``n_test`` must agree with its design's ``test`` mask.

    Parameters
    ----------
    *designs : xarray.Dataset
        Designs over the same ``n`` examples.

    Returns
    -------
    xarray.Dataset
        The combined design; ``design`` attr ``"combine(a+b+...)"``, ``seed``
        the common seed (or -1 when they differ; the seeds are listed in
        ``component_seeds``); ``nested_train`` = 1 when a component's training
        sets are nested (``TimeSeriesSplit``), and ``time_ordered`` = 1 when a
        component's splits are time-ordered: the methods that pool splits as
        random draws then refuse the combined design's cubes, so keep such a
        design on its own.

    Raises
    ------
    DesignError
        If an argument is not a design, the designs are over different examples,
        a block comes from two designs, a stated ``n_test`` disagrees with its
        design's ``test`` mask, or a design has a split coordinate the others
        lack (other than ``n_test``).

    Examples
    --------
    >>> from cvstats import designs
    >>> d = designs.combine(designs.resampled(40, 4, J=3, seed=0), designs.five_by_two(40, seed=1))
    >>> d.block.values.tolist().count("5x2"), d.attrs["design"]
    (10, 'combine(resampled+five_by_two)')
    """
    if not designs:
        raise DesignError("`combine` needs at least one design.")
    for i, d in enumerate(designs):
        if not isinstance(d, xr.Dataset) or "train" not in d or "test" not in d:
            raise DesignError(
                f"argument {i} of `combine` is not a design (an xarray.Dataset with `train` and "
                "`test` masks); build designs with the functions of cvstats.designs."
            )
    n0 = designs[0].attrs.get("n")
    seen: dict[str, int] = {}
    for i, d in enumerate(designs):
        if d.attrs.get("n") != n0 or not np.array_equal(d[EXAMPLE].values, designs[0][EXAMPLE]):
            raise DesignError(
                f"design {i} is over n = {d.attrs.get('n')} examples but design 0 over n = {n0}; "
                "combine only designs of the same data."
            )
        for b in np.unique(d["block"].values).tolist():
            if b in seen:
                raise DesignError(
                    f"block {b!r} comes from design {seen[b]} and design {i}; each block may come "
                    "from one design only. Drop it from one of them with "
                    f"cvstats.designs.select_blocks(design, exclude=[{b!r}])."
                )
            seen[str(b)] = i
    parts = _same_split_coords(designs)
    out = xr.concat(parts, dim=SPLIT, combine_attrs="drop")
    out = out.assign_coords({SPLIT: np.arange(out.sizes[SPLIT], dtype=np.int64)})
    seeds = [int(d.attrs.get("seed", UNKNOWN_SEED)) for d in designs]
    out.attrs = {
        "design": "combine(" + "+".join(str(d.attrs.get("design")) for d in designs) + ")",
        "n": int(n0),
        "seed": seeds[0] if len(set(seeds)) == 1 else UNKNOWN_SEED,
        "component_seeds": seeds,
    }
    try:
        nested = [nested_train(d) for d in designs]
        ordered = [time_ordered(d) for d in designs]
    except CubeError as e:
        raise DesignError(str(e)) from e
    if any(NESTED_TRAIN in d.attrs for d in designs):
        out.attrs[NESTED_TRAIN] = int(any(nested))
    if any(TIME_ORDERED in d.attrs for d in designs):
        out.attrs[TIME_ORDERED] = int(any(ordered))
    return out


def _same_split_coords(designs: Sequence[xr.Dataset]) -> list[xr.Dataset]:
    """Return the designs with one set of split coordinates (``n_test`` added where missing).

    ``n_test`` (the test size of each split) is computed from a design's own ``test``
    mask; a stated one must agree with it. Any other coordinate on ``split`` that only
    some designs have is refused: its values for the others are unknown.
    """

    def on_split(d: xr.Dataset) -> set[str]:
        return {str(c) for c in d.coords if c != SPLIT and d[c].dims == (SPLIT,)}

    counts = [np.asarray(d["test"].sum(EXAMPLE).values, dtype=np.int64) for d in designs]
    for i, (d, counted) in enumerate(zip(designs, counts, strict=True)):
        if N_TEST not in d.coords:
            continue
        differs = np.asarray(d[N_TEST].values) != counted
        if differs.any():
            j = int(np.argmax(differs))
            raise DesignError(
                f"design {i} states `{N_TEST}` = {int(d[N_TEST].values[j])} for split "
                f"{d[SPLIT].values[j].item()!r}, but its `test` mask holds {counted[j]} test "
                f"example(s) there; fix `{N_TEST}` (or drop it: design.drop_vars({N_TEST!r})) "
                "or rebuild the design."
            )
    parts = list(designs)
    if any(N_TEST in d.coords for d in parts):
        parts = [
            d if N_TEST in d.coords else d.assign_coords({N_TEST: (SPLIT, counted)})
            for d, counted in zip(parts, counts, strict=True)
        ]
    every = set.union(*(on_split(d) for d in parts))
    for i, d in enumerate(parts):
        missing = sorted(every - on_split(d))
        if missing:
            raise DesignError(
                f"design {i} lacks the split coordinate(s) {missing} that another design has; "
                "combine designs with the same split coordinates: add them to design "
                f"{i} with design.assign_coords(...), or drop them from the others with "
                f"design.drop_vars({missing})."
            )
    return parts


def select_blocks(
    design: xr.Dataset,
    include: Sequence[str] | None = None,
    *,
    exclude: Sequence[str] = (),
) -> xr.Dataset:
    """Keep some blocks of a design (or of a cube's split dim).

    Parameters
    ----------
    design : xarray.Dataset or xarray.DataArray
        A design or a cube.
    include : sequence of str, optional
        Blocks to keep (default: all).
    exclude : sequence of str, default ()
        Blocks to drop.

    Returns
    -------
    xarray.Dataset or xarray.DataArray
        The same object restricted to the chosen splits (labels unchanged).

    Examples
    --------
    >>> from cvstats import designs
    >>> d = designs.conservative_z(100, 10, J=3, M=2, seed=0)
    >>> designs.select_blocks(d, exclude=["main"]).sizes["split"]
    12
    """
    for name in [*(include or ()), *exclude]:
        if name not in BLOCKS:
            raise DesignError(f"unknown block {name!r}; the blocks are {list(BLOCKS)}.")
    blocks = design["block"].values
    keep = np.ones(blocks.shape, dtype=bool) if include is None else np.isin(blocks, include)
    keep &= ~np.isin(blocks, list(exclude))
    if not keep.any():
        raise DesignError(
            f"no split left after selecting blocks include={include}, exclude={list(exclude)}; "
            f"the design has blocks {sorted(set(blocks.tolist()))}."
        )
    return design.isel({SPLIT: keep})


def nested_cv(n: int, K: int, repeats: int = 1, *, seed: int | None = None) -> xr.Dataset:
    """Design of Bates, Hastie & Tibshirani's nested cross-validation (docs/nested-cv.md).

    Every repeat partitions the ``n`` examples into ``K`` folds exactly as
    :func:`kfold` does with the same ``seed`` (block ``"main"``: fold ``k``
    tests on fold ``k``, trains on the rest; these give the outer errors
    ``e_out``). Block ``"nested"`` holds, for every unordered pair of folds
    ``a < b`` of every repeat, one fit that leaves both out: it trains on the
    other ``K - 2`` folds and tests on folds ``a`` and ``b``. Its losses on fold
    ``b`` belong to the inner cross-validation of outer fold ``a`` and its
    losses on fold ``a`` to that of outer fold ``b`` (a fit leaving out a pair
    of folds serves both). Cost: ``repeats * K (K + 1) / 2`` fits.

    Parameters
    ----------
    n : int
        Number of examples, at least ``K``.
    K : int
        Number of folds, at least 3 (the inner cross-validation has ``K - 1``
        folds).
    repeats : int, default 1
        Number of independent repetitions (the paper averages many; 50 or more
        for a stable standard error).
    seed : int, optional
        Seed; drawn from fresh entropy and recorded when None.

    Returns
    -------
    xarray.Dataset
        ``repeats * K`` splits in block ``"main"`` (``repeat``, ``fold``) and
        ``repeats * K (K - 1) / 2`` splits in block ``"nested"`` with ``repeat``,
        ``fold = a`` and the extra coordinate ``fold2 = b`` (-1 on main splits).

    Examples
    --------
    >>> from cvstats import designs
    >>> d = designs.nested_cv(20, 4, repeats=2, seed=0)
    >>> d.block.values.tolist().count("main"), d.block.values.tolist().count("nested")
    (8, 12)
    >>> sorted(set(d.n_train.values[d.block.values == "nested"].tolist()))
    [10]
    """
    K = _check_int(
        "K", K, 3, "The inner cross-validation of an outer fold needs K - 1 >= 2 folds."
    )
    main = kfold(n, K, repeats, seed=seed)
    seed = int(main.attrs["seed"])
    repeats = int(main.attrs["repeats"])
    test = main["test"].values.reshape(repeats, K, -1)  # (repeat, fold, example)
    pairs = [(a, b) for a in range(K) for b in range(a + 1, K)]
    pair_test = np.concatenate([test[:, a] | test[:, b] for a, b in pairs], axis=0)
    # (pair, repeat, example) -> repeat-major order
    pair_test = pair_test.reshape(len(pairs), repeats, n).transpose(1, 0, 2).reshape(-1, n)
    a_of = np.tile([a for a, _ in pairs], repeats)
    b_of = np.tile([b for _, b in pairs], repeats)
    blocks = [
        _Block(
            "main",
            ~test.reshape(repeats * K, n),
            test.reshape(repeats * K, n),
            repeat=np.repeat(np.arange(repeats), K),
            fold=np.tile(np.arange(K), repeats),
        ),
        _Block(
            "nested",
            ~pair_test,
            pair_test,
            repeat=np.repeat(np.arange(repeats), len(pairs)),
            fold=a_of,
        ),
    ]
    out = _dataset(blocks, n, "nested_cv", seed, K=K, repeats=repeats)
    fold2 = np.concatenate([np.full(repeats * K, -1), b_of]).astype(np.int64)
    return out.assign_coords(fold2=(SPLIT, fold2))
