"""Index-based split designs of the Nadeau–Bengio studies (docs/theory.md §4, §6).

The studies need thousands of splits per dataset and thousands of datasets,
so the splits are kept as integer index arrays (not boolean masks or
xarray designs). :func:`draw_study_splits` draws, for one dataset, every
block the methods of docs/theory.md §4 need for the three configurations of
docs/theory.md §6:

* ``"half"`` (shared by the three configurations): ``M`` half-splits
  ``(D_m, D_m^c)`` of size ``⌊n/2⌋`` and, inside each half, ``J`` random
  splits with test size ``n/10`` and training size ``⌊n/2⌋ - n/10``
  (the variance of the conservative Z at ``n1 = n/2``, docs/theory.md §6);
* ``"5x2"``: Dietterich's five half-splits;
* per configuration ``(n1, n2)``: a ``"main"`` block of ``J`` splits and a
  ``"replicate"`` block of ``R x J`` splits, all drawn inside the first
  ``n1 + n2`` examples (for ``(n/2, n/10)`` the dataset is cut once to its
  first ``0.6 n`` examples).

For every split the training set and the test set partition a *pool*
(the ``n1 + n2`` first examples, a half ``D_m``, or the ``2⌊n/2⌋`` examples of
a 5x2 half-split), so that sums over the training set are pool sums minus
test sums (:func:`gather_sums`).

:func:`to_design` turns the splits of one dataset and one configuration into
a :mod:`cvstats.designs`-style :class:`xarray.Dataset`, used to cross-check
the studies against :func:`cvstats.compare` on full loss cubes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from numpy.typing import NDArray

__all__ = [
    "CONFIGS",
    "Config",
    "DatasetSplits",
    "configurations",
    "dataset_rngs",
    "draw_study_splits",
    "gather_sums",
    "stack_splits",
    "to_design",
]

#: The dims and the integer ``split`` coordinates of a design, as docs/cube-schema.md
#: documents them (-1 where one does not apply).
SPLIT = "split"
EXAMPLE = "example"
INT_SPLIT_COORDS: tuple[str, ...] = ("half", "side", "replicate", "repeat", "fold", "n_train")

#: Names of the three training/test configurations of docs/theory.md §6.
CONFIGS: tuple[str, ...] = ("n/2,n/2", "n/2,n/10", "9n/10,n/10")

IntArray = NDArray[np.int32]


@dataclass(frozen=True)
class Config:
    """One training/test configuration ``(n1, n2)`` of docs/theory.md §6.

    Attributes
    ----------
    name : str
        One of :data:`CONFIGS`.
    n1, n2 : int
        Training and test sizes of the main and replicate splits.
    """

    name: str
    n1: int
    n2: int

    @property
    def pool(self) -> int:
        """Number of examples the splits are drawn from (``n1 + n2``)."""
        return self.n1 + self.n2


def configurations(n: int) -> tuple[Config, ...]:
    """Return the configurations ``(n/2, n/2)``, ``(n/2, n/10)``, ``(9n/10, n/10)`` of ``n``.

    Parameters
    ----------
    n : int
        Dataset size (a multiple of 10 in the papers).

    Returns
    -------
    tuple of Config
        In the order of :data:`CONFIGS`.

    Examples
    --------
    >>> [(c.n1, c.n2, c.pool) for c in configurations(200)]
    [(100, 100, 200), (100, 20, 120), (180, 20, 200)]
    """
    h, t = n // 2, n // 10
    return (Config(CONFIGS[0], h, h), Config(CONFIGS[1], h, t), Config(CONFIGS[2], n - t, t))


def dataset_rngs(seed: int, simulation: int, dataset: int) -> tuple[np.random.Generator, ...]:
    """Independent generators (data, splits) of one dataset of one simulation.

    Derived from ``SeedSequence(seed, spawn_key=(simulation, dataset))``, so a
    dataset's data and splits do not depend on how datasets are batched.
    """
    ss = np.random.SeedSequence(seed, spawn_key=(int(simulation), int(dataset)))
    return tuple(np.random.default_rng(s) for s in ss.spawn(2))


@dataclass
class DatasetSplits:
    """Index arrays of every block of one dataset (or a stack of datasets).

    Every array has a leading dataset axis after :func:`stack_splits`.

    Attributes
    ----------
    half_test, half_train : ndarray, shape (M, 2, J, n2'), (M, 2, J, n1')
        Inner splits of the conservative Z inside ``D_m`` (side 0) and ``D_m^c``.
    halves : ndarray, shape (M, 2, ⌊n/2⌋)
        The pools ``D_m`` and ``D_m^c``.
    five_test, five_train : ndarray, shape (5, 2, ⌊n/2⌋)
        5x2cv: side 0 trains on ``D_m`` and tests on ``D_m^c``; side 1 the reverse.
    main_test, main_train : dict of ndarray, shapes (J, n2), (J, n1)
        Main block per configuration name.
    rep_test, rep_train : dict of ndarray, shapes (R, J_rep, n2), (R, J_rep, n1)
        Replicate block per configuration name.
    """

    half_test: IntArray
    half_train: IntArray
    halves: IntArray
    five_test: IntArray
    five_train: IntArray
    main_test: dict[str, IntArray]
    main_train: dict[str, IntArray]
    rep_test: dict[str, IntArray]
    rep_train: dict[str, IntArray]


def _subsets(rng: np.random.Generator, pool: IntArray, rows: int, k: int) -> IntArray:
    """``rows`` random orderings of ``pool`` whose first ``k`` entries are a random k-subset.

    The remaining entries (the rest of the pool, in no particular order) are
    its complement: test set first, training set after. Cheaper than a full
    permutation (random float32 keys and a partial sort).
    """
    keys = rng.random((rows, pool.size), dtype=np.float32)
    order = np.argpartition(keys, k - 1, axis=1) if k < pool.size else np.argsort(keys, axis=1)
    return pool[order].astype(np.int32, copy=False)


def draw_study_splits(
    rng: np.random.Generator, n: int, *, J: int, M: int, R: int, J_rep: int
) -> DatasetSplits:
    """Draw every block of one dataset (module docstring; docs/theory.md §4, §6).

    Parameters
    ----------
    rng : numpy.random.Generator
        The dataset's split generator (:func:`dataset_rngs`).
    n : int
        Dataset size.
    J, M, R : int
        Splits per estimate ``μ̂_J`` of the main block and inside halves (the
        largest ``J`` studied), half-splits of the conservative Z (the largest
        ``M``), bootstrap replicates.
    J_rep : int
        Splits per bootstrap replicate.

    Returns
    -------
    DatasetSplits
        Index arrays (int32).
    """
    h, t = n // 2, n // 10
    everything = np.arange(n, dtype=np.int32)
    # conservative-Z halves, then J inner splits (test n/10) inside each half
    halves = np.stack([rng.permutation(everything)[: 2 * h].reshape(2, h) for _ in range(M)])
    inner = np.stack(
        [np.stack([_subsets(rng, halves[m, s], J, t) for s in (0, 1)]) for m in range(M)]
    )
    half_test, half_train = inner[..., :t], inner[..., t:]
    # Dietterich's 5x2cv
    five = np.stack([rng.permutation(everything)[: 2 * h].reshape(2, h) for _ in range(5)])
    five_train = five
    five_test = five[:, ::-1]
    main_test, main_train, rep_test, rep_train = {}, {}, {}, {}
    for c in configurations(n):
        pool = np.arange(c.pool, dtype=np.int32)  # the dataset cut once (docs/theory.md §6)
        perm = _subsets(rng, pool, J, c.n2)
        main_test[c.name], main_train[c.name] = perm[:, : c.n2], perm[:, c.n2 :]
        perm = _subsets(rng, pool, R * J_rep, c.n2).reshape(R, J_rep, c.pool)
        rep_test[c.name], rep_train[c.name] = perm[..., : c.n2], perm[..., c.n2 :]
    return DatasetSplits(
        half_test, half_train, halves, five_test, five_train, main_test, main_train, rep_test,
        rep_train,
    )  # fmt: skip


def stack_splits(splits: list[DatasetSplits]) -> DatasetSplits:
    """Stack the splits of several datasets along a new leading axis."""

    def stk(name: str) -> IntArray:
        return np.stack([getattr(s, name) for s in splits])

    def stkd(name: str) -> dict[str, IntArray]:
        return {
            k: np.stack([getattr(s, name)[k] for s in splits]) for k in getattr(splits[0], name)
        }

    return DatasetSplits(
        stk("half_test"), stk("half_train"), stk("halves"), stk("five_test"), stk("five_train"),
        stkd("main_test"), stkd("main_train"), stkd("rep_test"), stkd("rep_train"),
    )  # fmt: skip


def gather_sums(stats: NDArray[np.float64], idx: NDArray[np.integer]) -> NDArray[np.float64]:
    """Sum per-example statistics over index sets, batched over datasets.

    Parameters
    ----------
    stats : ndarray, shape (B, n, k)
        Per-example statistics of ``B`` datasets.
    idx : ndarray, shape (B, ..., m)
        Index sets (last axis) into the ``n`` examples of each dataset.

    Returns
    -------
    ndarray, shape (B, ..., k)
        ``stats[b, idx[b, ...]].sum(over the m indices)``.
    """
    B, n, k = stats.shape
    offsets = (np.arange(B, dtype=np.int64) * n).reshape((B,) + (1,) * (idx.ndim - 1))
    flat = (idx + offsets).ravel()
    # one 1-D take per statistic is much faster than fancy indexing of (B, n, k)
    return np.stack(
        [np.take(stats[..., c].ravel(), flat).reshape(idx.shape).sum(axis=-1) for c in range(k)],
        axis=-1,
    )


def to_design(splits: DatasetSplits, n: int, config: str, *, J: int, M: int, R: int) -> xr.Dataset:
    """Build a :mod:`cvstats.designs`-style design of one dataset and configuration.

    Blocks ``main`` (first ``J`` splits), ``half`` (first ``M`` half-splits,
    first ``J`` inner splits), ``replicate`` (``R`` x first ``J``) and ``5x2``,
    in that order (the layout of :func:`cvstats.designs.nadeau_bengio`).

    Parameters
    ----------
    splits : DatasetSplits
        Splits of one dataset (no leading dataset axis).
    n : int
        Dataset size.
    config : str
        One of :data:`CONFIGS`.
    J, M, R : int
        Sizes to keep.

    Returns
    -------
    xarray.Dataset
        ``train``/``test`` masks over ``(split, example)`` with the schema's
        split coordinates (``docs/cube-schema.md``).
    """
    rows: list[tuple[str, NDArray, NDArray, dict[str, int]]] = []
    for j in range(J):
        rows.append(("main", splits.main_train[config][j], splits.main_test[config][j], {}))
    for m in range(M):
        for s in (0, 1):
            for j in range(J):
                rows.append(
                    ("half", splits.half_train[m, s, j], splits.half_test[m, s, j],
                     {"half": m, "side": s})
                )  # fmt: skip
    for r in range(R):
        for j in range(J):
            rows.append(
                ("replicate", splits.rep_train[config][r, j], splits.rep_test[config][r, j],
                 {"replicate": r})
            )  # fmt: skip
    for m in range(5):
        for s in (0, 1):
            rows.append(
                ("5x2", splits.five_train[m, s], splits.five_test[m, s], {"half": m, "side": s})
            )
    S = len(rows)
    train = np.zeros((S, n), dtype=bool)
    test = np.zeros((S, n), dtype=bool)
    coords: dict[str, object] = {
        SPLIT: np.arange(S, dtype=np.int64),
        EXAMPLE: np.arange(n, dtype=np.int64),
        "block": (SPLIT, np.array([r[0] for r in rows])),
    }
    ints = {name: np.full(S, -1, dtype=np.int64) for name in INT_SPLIT_COORDS}
    for i, (_, tr, te, extra) in enumerate(rows):
        train[i, tr] = True
        test[i, te] = True
        for key, value in extra.items():
            ints[key][i] = value
    ints["n_train"] = train.sum(axis=1).astype(np.int64)
    for name in INT_SPLIT_COORDS:
        coords[name] = (SPLIT, ints[name])
    return xr.Dataset(
        {"train": ((SPLIT, EXAMPLE), train), "test": ((SPLIT, EXAMPLE), test)},
        coords=coords,
        attrs={"design": "nadeau_bengio", "n": int(n), "seed": -1, "J": J, "M": M, "R": R},
    )
