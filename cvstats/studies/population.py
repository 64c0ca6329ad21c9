r"""The survey's Algorithm 1: conditional vs. unconditional error on a population.

docs/studies.md §F, ``conditional-vs-unconditional.txt`` §5. A large dataset
``D`` is the population. For each of ``n_samples`` samples ``T`` of ``N``
examples drawn from ``D`` without replacement:

* ``εc(L, T)``: the model learned on ``T``, tested on ``D \ T`` (zero-one
  loss);
* repeated k-fold cross-validation on ``T`` for each ``k`` in ``folds``
  (default ``{2, 10, 30}``) with ``repetitions`` (default 30) independent
  (stratified) partitions; the estimate of repetition ``r`` is the mean of the
  out-of-fold zero-one losses of its ``N`` examples.

``εu(L, N)`` is the mean of ``εc`` over the samples. The analysis
(:mod:`cvstats.studies.population_analysis`) plots the running mean of the
CV estimates against the number of repetitions with ``εc`` and ``εu`` as
lines, and builds the 2×2 winner tables of two learners over the samples.

Populations: :func:`letter_population` (UCI letter, 20,000 examples, 26
classes, shipped) and :func:`synthetic_population` (a fixed draw from the two
Gaussian populations of Nadeau & Bengio's problem 2). Any ``(X, y)`` works
through :class:`Population`.

**Folds.** Stratified: each repetition sorts ``T`` by class label with a
random order inside each class and deals the examples to the folds in turn,
then relabels the folds at random. As with scikit-learn's
``StratifiedKFold``, per-class fold counts differ by at most one and fold
sizes by at most one; unlike it, this stays defined when a class has fewer
than ``k`` examples (letter with ``N = 300`` and ``k = 30``).
``stratified=False`` deals a random permutation.

**Runs that last.** Samples are computed in batches (joblib workers or a
dask.distributed ``client``), each batch written atomically to a netCDF file
of the output directory; a rerun with the same parameters keeps the complete
files (:func:`cvstats.studies._runner.run_batches`, which verifies their
checksums and recomputes a damaged file). The draw of a sample,
the folds of each repetition of each ``k`` and each learner's random states
have their own seeds (``SeedSequence(seed, spawn_key=(sample, ...))``), so
results do not depend on the batch size, ``n_jobs``, the cluster, the other
learners, the other ``k`` or the number of repetitions.

The stored out-of-fold losses and folds rebuild, for any ``k``, a cvstats
cube over ``(sample, split, example, model)`` (:func:`to_cube`) for the
methods of the package.
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr
from numpy.typing import NDArray

from cvstats.checks import check_int
from cvstats.errors import ArgumentError
from cvstats.studies._common import FloatArray, IntArray
from cvstats.studies._runner import (
    batch_signature,
    check_n_jobs,
    prepare_out_dir,
    read_batches,
    run_batches,
)
from cvstats.studies.learners import Learner, get_learner

__all__ = [
    "Population",
    "letter_population",
    "synthetic_population",
    "stratified_folds",
    "compute_samples",
    "run_population",
    "to_cube",
]

#: Largest number of folds (fold labels are stored as int16).
_MAX_FOLDS = int(np.iinfo(np.int16).max)


@dataclass(frozen=True)
class Population:
    """A finite population ``D`` of labelled examples.

    Attributes
    ----------
    name : str
        Short name (file names, attrs).
    X : ndarray, shape (size, p)
        Features.
    y : ndarray of int, shape (size,)
        Class labels ``0..n_classes-1``.
    description : dict
        JSON-friendly parameters identifying the population (part of a run's
        signature).
    """

    name: str
    X: FloatArray = field(repr=False)
    y: IntArray = field(repr=False)
    description: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        X = np.asarray(self.X, dtype=np.float64)
        y = np.asarray(self.y)
        if X.ndim != 2 or y.ndim != 1 or len(X) != len(y):
            raise ArgumentError(
                f"a population needs X of shape (size, p) and y of shape (size,), got "
                f"{np.shape(self.X)} and {np.shape(self.y)}."
            )
        if not np.isfinite(X).all():
            raise ArgumentError("the population's features hold NaN or inf; drop or impute them.")
        if not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
            raise ArgumentError(
                "the population's labels must be integers 0..C-1; encode them first "
                "(e.g. sklearn.preprocessing.LabelEncoder)."
            )
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y.astype(np.int64))

    @property
    def size(self) -> int:
        """Number of examples in the population."""
        return len(self.y)

    @property
    def n_classes(self) -> int:
        """Number of classes ``max(y) + 1``."""
        return int(self.y.max()) + 1

    def params(self) -> dict[str, Any]:
        """Return the description with the size, classes and a checksum of the data."""
        digest = hashlib.sha256(self.X.tobytes() + self.y.tobytes()).hexdigest()[:16]
        return {"name": self.name, "size": self.size, "n_classes": self.n_classes,
                "sha": digest, **self.description}  # fmt: skip


def letter_population() -> Population:
    """Return the shipped UCI letter data (20,000 examples, 16 features, 26 classes)."""
    from cvstats.studies.letter import load_letter

    X, y = load_letter()
    return Population("letter", X.astype(np.float64), y, {"source": "UCI letter recognition"})


def synthetic_population(size: int = 20_000, *, simulation: int = 1, seed: int = 0) -> Population:
    """Draw a fixed population of ``size`` examples from N&B problem 2 (docs/studies.md §B).

    Two classes with probability 1/2, ``X | Y=0 ~ N((0,0), I₂)``,
    ``X | Y=1 ~ N((1,1), s1 I₂)`` (``s1`` of the simulation).

    Parameters
    ----------
    size : int, default 20000
        Population size.
    simulation : int, default 1
        Simulation of problem 2 (1: ``s1 = 1/2``; 2: ``1/6``; ...).
    seed : int, default 0
        Seed of the draw.
    """
    from cvstats.studies.classification import classification_problem

    size = check_int("size", size, 2)
    problem = classification_problem(simulation)
    data = problem.sample(np.random.default_rng(seed), int(size))
    return Population(
        f"synthetic{simulation}",
        data[:, :2],
        data[:, 2].astype(np.int64),
        {"source": "Nadeau-Bengio problem 2", "simulation": simulation, "s1": problem.s1,
         "seed": seed},
    )  # fmt: skip


def stratified_folds(
    rng: np.random.Generator,
    y: IntArray | None,
    K: int,
    repetitions: int,
    n: int | None = None,
) -> NDArray[np.int16]:
    """Fold labels of ``repetitions`` independent (stratified) K-fold partitions.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    y : ndarray of int or None
        Class labels (stratified), or None (a random permutation dealt in turn).
    K : int
        Number of folds.
    repetitions : int
        Number of partitions.
    n : int, optional
        Number of examples when ``y`` is None.

    Returns
    -------
    ndarray of int16, shape (repetitions, n)
        ``folds[r, i]``: the fold of example ``i`` in repetition ``r``.
    """
    if not 2 <= K <= _MAX_FOLDS:
        raise ArgumentError(f"`K` must lie in [2, {_MAX_FOLDS}], got {K}.")
    size = len(y) if y is not None else int(n)  # type: ignore[arg-type]
    key = rng.random((repetitions, size))
    if y is not None:
        key = key + np.asarray(y)[None, :]  # class first, random order inside a class
    order = np.argsort(key, axis=1, kind="stable")
    relabel = rng.permuted(np.tile(np.arange(K), (repetitions, 1)), axis=1)
    dealt = np.take_along_axis(relabel, np.broadcast_to(np.arange(size) % K, order.shape), 1)
    folds = np.empty((repetitions, size), dtype=np.int16)
    np.put_along_axis(folds, order, dealt.astype(np.int16), axis=1)
    return folds


def _rng(seed: int, *key: int | str) -> np.random.Generator:
    """Return the generator of ``SeedSequence(seed, spawn_key=key)`` (str keys: CRC-32)."""
    spawn = tuple(zlib.crc32(k.encode()) if isinstance(k, str) else int(k) for k in key)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=spawn))


def _check_design(
    population: Population, N: object, folds: Sequence[int], repetitions: object, seed: object
) -> tuple[int, list[int], int, int]:
    """Validate the sizes of Algorithm 1; return them as ints."""
    if not isinstance(population, Population):
        raise ArgumentError(f"`population` must be a Population, got {type(population).__name__}.")
    N = check_int("N", N, 4)
    repetitions = check_int("repetitions", repetitions, 1)
    seed = check_int("seed", seed, 0)
    if N >= population.size:
        raise ArgumentError(
            f"`N` = {N} leaves no test population (the population has {population.size} "
            "examples); draw smaller samples."
        )
    ks = [check_int("folds", k, 2) for k in folds]
    if not ks or len(set(ks)) != len(ks) or max(ks) > min(N, _MAX_FOLDS):
        raise ArgumentError(
            f"`folds` must be distinct ints in [2, {min(N, _MAX_FOLDS)}] (at most N = {N}), at "
            f"least one, got {list(folds)}."
        )
    return N, ks, repetitions, seed


def compute_samples(
    population: Population,
    learners: Sequence[Learner],
    samples: Sequence[int],
    *,
    N: int,
    folds: Sequence[int],
    repetitions: int,
    seed: int,
    stratified: bool = True,
) -> xr.Dataset:
    """Algorithm 1 for some samples: ``εc`` and the repeated k-fold estimates.

    Parameters
    ----------
    population : Population
        The population ``D``.
    learners : sequence of Learner
        The learners (see :mod:`cvstats.studies.learners`).
    samples : sequence of int
        Sample indices. The draw of sample ``s``, the folds of repetition ``r``
        of its ``k``-fold CV, and each learner's random states have their own
        seeds (``SeedSequence(seed, spawn_key=(s, ...))``), so a number does not
        depend on the batch, on the other samples, learners, ``k`` or on ``R``
        (the first ``r`` repetitions of a run with more are the same).
    N : int
        Sample size.
    folds : sequence of int
        The ``k`` of the k-fold estimates.
    repetitions : int
        Independent partitions per ``k``.
    seed : int
        Study seed.
    stratified : bool, default True
        Stratified folds (:func:`stratified_folds`).

    Returns
    -------
    xarray.Dataset
        ``conditional (sample, model)``: ``εc``;
        ``cv (sample, k, repetition, model)``: the estimate of each repetition;
        ``loss (sample, k, repetition, example, model)`` (int8): out-of-fold
        zero-one losses; ``fold (sample, k, repetition, example)`` (int16);
        ``index (sample, example)``: rows of ``T`` in the population, in the
        order drawn (the "position" of an example).
    """
    N, ks, repetitions, seed = _check_design(population, N, folds, repetitions, seed)
    X, y, C = population.X, population.y, population.n_classes
    out: dict[str, list[NDArray]] = {"conditional": [], "cv": [], "loss": [], "fold": [],
                                     "index": []}  # fmt: skip
    for s in samples:
        idx = _rng(seed, s, "sample").choice(population.size, N, replace=False)
        rest = np.ones(population.size, dtype=bool)
        rest[idx] = False
        XT, yT = X[idx], y[idx]
        strata = yT if stratified else None
        fold = np.stack(
            [
                np.concatenate(
                    [
                        stratified_folds(_rng(seed, s, "folds", k, r), strata, k, 1, N)
                        for r in range(repetitions)
                    ]
                )  # fmt: skip
                for k in ks
            ]
        )  # (k, R, N): repetition r of k-fold has its own seed
        cond, loss = [], []
        for learner in learners:
            pred = learner.fit_predict(XT, yT, X[rest], C, _rng(seed, s, "fit", learner.name))
            cond.append(np.mean(pred != y[rest]))
            oof = np.stack(
                [learner.oof_predict(XT, yT, f.astype(np.int64), C,
                                     _rng(seed, s, "cv", learner.name, k))
                 for k, f in zip(ks, fold, strict=True)]
            )  # fmt: skip
            loss.append((oof != yT).astype(np.int8))
        loss_arr = np.stack(loss, axis=-1)  # (k, R, N, model)
        out["conditional"].append(np.array(cond))
        out["loss"].append(loss_arr)
        out["cv"].append(loss_arr.mean(axis=2, dtype=np.float64))
        out["fold"].append(fold)
        out["index"].append(idx.astype(np.int32))
    dims = {
        "conditional": ("sample", "model"),
        "cv": ("sample", "k", "repetition", "model"),
        "loss": ("sample", "k", "repetition", "example", "model"),
        "fold": ("sample", "k", "repetition", "example"),
        "index": ("sample", "example"),
    }
    ds = xr.Dataset(
        {name: (dims[name], np.stack(values)) for name, values in out.items()},
        coords={
            "sample": np.asarray(samples, dtype=np.int64),
            "k": np.asarray(ks, dtype=np.int64),
            "repetition": np.arange(1, repetitions + 1, dtype=np.int64),
            "example": np.arange(N, dtype=np.int64),
            "model": [lr.name for lr in learners],
        },
    )
    ds["conditional"].attrs["long_name"] = "conditional error εc (tested on D \\ T)"
    ds["cv"].attrs["long_name"] = "k-fold CV estimate of one repetition"
    return ds


def _compute_with_attrs(
    population: Population,
    learners: Sequence[Learner],
    samples: Sequence[int],
    sizes: dict[str, Any],
) -> xr.Dataset:
    return compute_samples(population, learners, samples, **sizes)


def run_population(
    population: Population | str,
    learners: Sequence[str | Learner],
    n_samples: int,
    out_dir: str | os.PathLike[str],
    *,
    N: int = 300,
    folds: Sequence[int] = (2, 10, 30),
    repetitions: int = 30,
    seed: int = 0,
    stratified: bool = True,
    batch_size: int = 4,
    n_jobs: int = 1,
    progress: bool = False,
    client: Any = None,
) -> xr.Dataset:
    """Run (or resume) the survey's Algorithm 1 (docs/studies.md §F).

    Parameters
    ----------
    population : Population or {"letter", "synthetic"}
        The population ``D`` (:func:`letter_population`,
        :func:`synthetic_population`, or your own).
    learners : sequence of str or Learner
        Names of :data:`cvstats.studies.learners.LEARNERS` (``"nb"``,
        ``"4nn"``, ``"10nn"``, ``"lr"``, ``"dt"``, ``"rf"``) or learner objects
        (e.g. ``SklearnLearner("svm", SVC())``); names must be distinct.
    n_samples : int
        Number of samples ``T``, at least 2 (100 in the survey's winner tables).
    out_dir : path
        Directory of the batch files (created if needed).
    N : int, default 300
        Sample size (the survey does not give it; 300 is divisible by 2, 10
        and 30, and is problem 3's dataset size).
    folds : sequence of int, default (2, 10, 30)
        The ``k`` of the k-fold estimates, each ``2 <= k <= N`` (``k = N``:
        leave-one-out).
    repetitions : int, default 30
        Partitions per ``k``.
    seed : int, default 0
        Study seed.
    stratified : bool, default True
        Stratified folds.
    batch_size : int, default 4
        Samples per batch file. Results do not depend on it, the files do:
        resume with the same value.
    n_jobs : int, default 1
        joblib workers over batches (ignored with ``client``).
    progress : bool, default False
        tqdm progress bar.
    client : distributed.Client, optional
        Compute the batches on a dask.distributed cluster (same results).

    Returns
    -------
    xarray.Dataset
        :func:`compute_samples` over all samples, with attrs ``population``
        (JSON), ``N``, ``seed``, ``stratified``, ``tag``.

    Raises
    ------
    ArgumentError
        For sizes out of range, an unknown population or learner, duplicate
        learner names (all checked before any batch is computed).
    StorageError
        If ``out_dir`` is not a usable directory
        (:func:`cvstats.studies._runner.prepare_out_dir`).

    Warns
    -----
    cvstats.studies.BatchFileWarning
        For each damaged batch file, recomputed
        (:func:`cvstats.studies._runner.run_batches`).
    """
    if isinstance(population, str):
        builders = {"letter": letter_population, "synthetic": synthetic_population}
        if population not in builders:
            raise ArgumentError(
                f"unknown population {population!r}; use 'letter', 'synthetic' or a Population."
            )
        population = builders[population]()
    n_samples = check_int("n_samples", n_samples, 2)
    N, ks, repetitions, seed = _check_design(population, N, folds, repetitions, seed)
    batch_size = check_int("batch_size", batch_size, 1)
    n_jobs = check_n_jobs(n_jobs)
    objs = [get_learner(learner) for learner in learners]
    names = [lr.name for lr in objs]
    if not objs or len(set(names)) != len(names):
        raise ArgumentError(f"`learners` must be at least one, with distinct names, got {names}.")
    sizes = {"N": N, "folds": ks, "repetitions": repetitions, "seed": int(seed),
             "stratified": bool(stratified)}  # fmt: skip
    payload = {"population": population.params(), "learners": [lr.params() for lr in objs],
               "batch_size": batch_size, **sizes}  # fmt: skip
    signature = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
    out = prepare_out_dir(out_dir)
    tag = f"population-{population.name}-N{N}"
    chunks = [range(s, min(s + batch_size, n_samples)) for s in range(0, n_samples, batch_size)]
    jobs = [
        ((population, objs, list(c), sizes), out / f"{tag}-batch{b:05d}.nc",
         batch_signature(signature, c))
        for b, c in enumerate(chunks)
    ]  # fmt: skip
    paths = run_batches(
        _compute_with_attrs, jobs, n_jobs=n_jobs, client=client, progress=progress, desc=tag,
        counts=[len(c) for c in chunks], unit="sample",
    )  # fmt: skip
    ds = read_batches(paths, "sample")
    ds.attrs = {"population": json.dumps(population.params()), "N": N, "seed": int(seed),
                "stratified": int(stratified), "tag": tag,
                "learners": json.dumps([lr.params() for lr in objs])}  # fmt: skip
    return ds


def to_cube(ds: xr.Dataset, k: int) -> xr.DataArray:
    """Build the zero-one loss cube of the ``k``-fold runs (one dataset per sample).

    Parameters
    ----------
    ds : xarray.Dataset
        Output of :func:`run_population`.
    k : int
        One of ``ds.k``.

    Returns
    -------
    xarray.DataArray
        A validated cvstats cube ``(sample, split, example, model)``: every
        sample's ``repetitions`` partitions as a repeated k-fold main block
        (:func:`cvstats.designs.from_folds`; the same split layout for every
        sample, the folds differ; within a repetition the folds are numbered
        by decreasing size, so a split has the same training size in every
        sample), NaN outside each split's test fold. The conditional errors
        are ``ds.conditional``.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from cvstats import cv_estimates
    >>> pop = synthetic_population(2000)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     ds = run_population(pop, ["nb"], 3, d, N=40, folds=(2, 4), repetitions=2)
    >>> cube = to_cube(ds, 4)
    >>> dict(cube.sizes)
    {'sample': 3, 'split': 8, 'example': 40, 'model': 1}
    >>> bool(np.allclose(cv_estimates(cube), ds.cv.sel(k=4)))
    True
    """
    from cvstats import from_arrays, validate
    from cvstats.designs import from_folds

    if int(k) not in ds["k"].values.tolist():
        raise ArgumentError(f"`k` = {k} was not run; the run has k in {ds['k'].values.tolist()}.")
    sub = ds.sel(k=int(k))
    fold = sub["fold"].values.astype(np.int64)  # (sample, R, N)
    loss = sub["loss"].values.astype(np.float64)  # (sample, R, N, model)
    S, R, N = fold.shape
    # relabel the folds of every repetition by decreasing size (ties: by label), so that
    # split j has the same training size in every sample when k does not divide N
    sizes = (fold[..., None] == np.arange(int(k))).sum(axis=2)  # (S, R, K)
    order = np.argsort(-sizes, axis=-1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(int(k)), axis=-1)
    fold = np.take_along_axis(rank, fold, axis=-1)
    template = from_folds(fold[0])
    test = fold[:, :, None, :] == np.arange(int(k))[None, None, :, None]  # (S, R, K, N)
    values = np.where(test[..., None], loss[:, :, None], np.nan)
    values = values.reshape(S, R * int(k), N, loss.shape[-1])
    train = ~test.reshape(S, R * int(k), N)
    cube = from_arrays(
        values,
        ~train,
        design=template,
        extra_dims=["sample"],
        extra_coords={"sample": ds["sample"].values},
        models=[str(m) for m in ds["model"].values],
        name="zero_one",
    )
    cube = cube.assign_coords(in_train=(("sample", "split", "example"), train))
    validate(cube)
    return cube
