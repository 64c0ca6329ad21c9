"""Batched, resumable, parallel runner of the Nadeau–Bengio studies (simulations.md §D).

A *problem* (:class:`Problem`) generates one dataset and computes the mean
test loss of its learners on many splits at once. The runner draws the
splits of every dataset (:mod:`cvstats.studies._splits`), asks the problem
for the split means of every block and stores them, per batch of datasets,
in a netCDF file of the output directory. A rerun skips the batches whose
file exists and was written with the same parameters, so an interrupted run
resumes where it stopped. Batches run in parallel with joblib, or on a
dask.distributed cluster (``client=``: the workers compute the batches and
send them back; the client writes the files, so the workers need no shared
file system); each dataset has its own seeds
(:func:`~cvstats.studies._splits.dataset_rngs`), so the results do not depend
on the batch size, on ``n_jobs`` or on the cluster.

The stored split means are all the methods of theory.md §4 need (the
hold-out t also needs the mean and variance of the test losses of one
split, stored as well); :mod:`cvstats.studies._analysis` turns them into
estimates, standard errors and rejection rates for any ``J``, ``M``, ``R``
and any grid of ``μ0``.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import xarray as xr
from numpy.typing import NDArray

from cvstats.kernels._validation import check_int
from cvstats.studies._splits import (
    CONFIGS,
    DatasetSplits,
    configurations,
    dataset_rngs,
    draw_study_splits,
    gather_sums,
    stack_splits,
)

__all__ = [
    "Problem",
    "attach_truth",
    "batch_signature",
    "compute_batch",
    "default_batch_size",
    "read_batches",
    "run_batches",
    "run_study",
]

FloatArray = NDArray[np.float64]


class Problem(Protocol):
    """What a simulated problem provides to the runner.

    Attributes
    ----------
    tag : str
        Short name used in file names (e.g. ``"nb-regression-sim1"``).
    simulation : int
        Simulation number (part of every dataset's seed).
    n : int
        Dataset size.
    models : tuple of str
        Names of the two learners; the contrast is ``models[0] - models[1]``.
        A problem may also have a single learner (no contrast is stored).
    n_stats : int
        Number of per-example statistics returned by :meth:`stats`.
    """

    tag: str
    simulation: int
    n: int
    models: tuple[str, ...]
    n_stats: int

    def generate(self, rng: np.random.Generator) -> FloatArray:
        """One dataset, shape ``(n, p)``."""
        ...

    def stats(self, data: FloatArray) -> FloatArray:
        """Per-example statistics, shape ``(B, n, n_stats)``."""
        ...

    def split_means(
        self,
        data: FloatArray,
        test_idx: NDArray[np.int32],
        train_idx: NDArray[np.int32],
        test_sums: FloatArray,
        train_sums: FloatArray,
    ) -> FloatArray:
        """Mean test loss of each learner, shape ``(B, ..., n_models)``."""
        ...

    def example_losses(
        self, data: FloatArray, test_idx: NDArray[np.int32], train_idx: NDArray[np.int32]
    ) -> FloatArray:
        """Per-example test losses of one split per dataset, shape ``(B, n2, n_models)``."""
        ...

    def params(self) -> dict[str, Any]:
        """Parameters identifying the problem (stored in the attrs)."""
        ...


def default_batch_size(n: int, J: int, R: int, n_stats: int, budget: float = 4e8) -> int:
    """Datasets per batch so that the largest gathered block stays under ``budget`` bytes.

    The largest temporary array is the replicate block of ``(n/2, n/2)``:
    ``R·J`` splits of ``n/2`` test examples, ``n_stats`` floats each.
    """
    per_dataset = R * J * max(n // 2, 1) * n_stats * 8
    return int(max(1, min(100, budget // per_dataset)))


def _block(
    problem: Problem,
    data: FloatArray,
    stats: FloatArray,
    test: NDArray[np.int32],
    train: NDArray[np.int32],
    pool_sums: FloatArray,
) -> FloatArray:
    test_sums = gather_sums(stats, test)
    train_sums = pool_sums - test_sums
    return _with_contrast(problem.split_means(data, test, train, test_sums, train_sums))


def _with_contrast(values: FloatArray) -> FloatArray:
    """Append the contrast ``A - B`` to the last axis (nothing for a single learner)."""
    if values.shape[-1] == 1:
        return values
    return np.concatenate([values, (values[..., 0] - values[..., 1])[..., None]], axis=-1)


def compute_batch(
    problem: Problem,
    seed: int,
    datasets: Sequence[int],
    *,
    J: int,
    M: int,
    R: int,
    J_rep: int,
) -> xr.Dataset:
    """Split means of every block for some datasets of one simulation.

    Parameters
    ----------
    problem : Problem
        The simulated problem.
    seed : int
        Study seed.
    datasets : sequence of int
        Dataset indices (their seeds depend on the index only).
    J, M, R : int
        Largest number of splits per estimate (main block and inside halves),
        of half-splits, and bootstrap replicates.
    J_rep : int
        Splits per bootstrap replicate.

    Returns
    -------
    xarray.Dataset
        Variables ``main (dataset, config, j, quantity)``,
        ``rep (dataset, config, replicate, j_rep, quantity)``,
        ``half (dataset, m, side, j, quantity)``,
        ``five (dataset, m5, side, quantity)`` and the hold-out summaries
        ``holdout_mean``, ``holdout_var`` (ddof 1), ``holdout_n``
        ``(dataset, config, quantity)`` of the first main split;
        quantities ``(*models, "A-B")`` (``models`` alone for a one-learner problem).
    """
    n = problem.n
    data_list, split_list = [], []
    for d in datasets:
        r_data, r_split = dataset_rngs(seed, problem.simulation, d)
        data_list.append(problem.generate(r_data))
        split_list.append(draw_study_splits(r_split, n, J=J, M=M, R=R, J_rep=J_rep))
    data = np.stack(data_list)
    sp: DatasetSplits = stack_splits(split_list)
    stats = problem.stats(data)
    B = data.shape[0]
    cums = np.concatenate([np.zeros((B, 1, stats.shape[-1])), np.cumsum(stats, axis=1)], axis=1)

    half_pools = gather_sums(stats, sp.halves)  # (B, M, 2, k)
    half = _block(problem, data, stats, sp.half_test, sp.half_train, half_pools[:, :, :, None])
    five_pool = gather_sums(stats, sp.five_train).sum(axis=2)  # (B, 5, k)
    five = _block(problem, data, stats, sp.five_test, sp.five_train, five_pool[:, :, None])

    main, rep, h_mean, h_var, h_n = [], [], [], [], []
    for c in configurations(n):
        pool = cums[:, c.pool]  # (B, k): sums over the first n1 + n2 examples
        main.append(
            _block(problem, data, stats, sp.main_test[c.name], sp.main_train[c.name],
                   pool[:, None])
        )  # fmt: skip
        rep.append(
            _block(problem, data, stats, sp.rep_test[c.name], sp.rep_train[c.name],
                   pool[:, None, None])
        )  # fmt: skip
        losses = problem.example_losses(
            data, sp.main_test[c.name][:, 0], sp.main_train[c.name][:, 0]
        )
        losses = _with_contrast(losses)
        h_mean.append(losses.mean(axis=1))
        h_var.append(losses.var(axis=1, ddof=1))
        h_n.append(np.full(losses.shape[::2], losses.shape[1], dtype=np.int64))
    quantities = [*problem.models, "A-B"] if len(problem.models) == 2 else list(problem.models)
    ds = xr.Dataset(
        {
            "main": (("dataset", "config", "j", "quantity"), np.stack(main, axis=1)),
            "rep": (
                ("dataset", "config", "replicate", "j_rep", "quantity"),
                np.stack(rep, axis=1),
            ),
            "half": (("dataset", "m", "side", "j", "quantity"), half),
            "five": (("dataset", "m5", "side", "quantity"), five),
            "holdout_mean": (("dataset", "config", "quantity"), np.stack(h_mean, axis=1)),
            "holdout_var": (("dataset", "config", "quantity"), np.stack(h_var, axis=1)),
            "holdout_n": (("dataset", "config", "quantity"), np.stack(h_n, axis=1)),
        },
        coords={
            "dataset": np.asarray(datasets, dtype=np.int64),
            "config": list(CONFIGS),
            "quantity": quantities,
            "n1": ("config", [c.n1 for c in configurations(n)]),
            "n2": ("config", [c.n2 for c in configurations(n)]),
        },
    )
    return ds


def _signature(problem: Problem, seed: int, sizes: dict[str, int], batch_size: int) -> str:
    payload = json.dumps(
        {"problem": problem.params(), "seed": seed, "batch_size": batch_size, **sizes},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _batch_path(out_dir: Path, problem: Problem, k: int) -> Path:
    return out_dir / f"{problem.tag}-batch{k:05d}.nc"


def _is_complete(path: Path, signature: str) -> bool:
    if not path.exists():
        return False
    try:
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            return ds.attrs.get("signature") == signature and int(ds.attrs.get("complete", 0)) == 1
    except (OSError, ValueError):
        return False


def _compute_with_attrs(
    problem: Problem,
    seed: int,
    datasets: Sequence[int],
    sizes: dict[str, int],
) -> xr.Dataset:
    ds = compute_batch(problem, seed, datasets, **sizes)
    ds.attrs.update({"seed": seed, **sizes, "problem": json.dumps(problem.params())})
    return ds


def _write_batch(ds: xr.Dataset, path: Path) -> Path:
    tmp = path.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
    ds.to_netcdf(tmp, engine="h5netcdf")
    os.replace(tmp, path)  # atomic: a batch file is either complete or absent
    return path


def _stamped(ds: xr.Dataset, signature: str) -> xr.Dataset:
    ds.attrs.update({"signature": signature, "complete": 1})
    return ds


def _compute_and_write(
    compute: Callable[..., xr.Dataset], args: tuple, path: Path, signature: str
) -> Path:
    return _write_batch(_stamped(compute(*args), signature), path)


def batch_signature(signature: str, members: Sequence[int]) -> str:
    """Signature of one batch: the run's parameter hash and the batch's members.

    A batch file counts as complete only for the same parameters *and* the same
    datasets (or samples): rerunning with more datasets recomputes a partial
    last batch instead of returning it short.
    """
    payload = json.dumps([signature, [int(m) for m in members]])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def run_batches(
    compute: Callable[..., xr.Dataset],
    jobs: Sequence[tuple[tuple, Path, str]],
    *,
    n_jobs: int = 1,
    client: Any = None,
    progress: bool = False,
    desc: str = "batches",
) -> list[Path]:
    """Compute the batches whose files are missing or stale; write each atomically.

    The resumable, parallel engine of every study runner. A batch file is
    complete when it carries ``attrs["complete"] == 1`` and the batch's
    signature (a hash of every parameter the results depend on and of the
    batch's members, :func:`batch_signature`); such a file is kept, every
    other batch is (re)computed by ``compute(*args)``, stamped with those two
    attrs and written to a temporary file renamed into place, so an
    interrupted run leaves either a complete file or none.

    Parameters
    ----------
    compute : callable
        ``compute(*args) -> xarray.Dataset`` for one batch; must be picklable
        (a module-level function) for joblib and dask.distributed.
    jobs : sequence of (args, path, signature)
        One entry per batch: the arguments of ``compute``, the file, the
        batch's signature.
    n_jobs : int, default 1
        joblib workers (ignored with ``client``).
    client : distributed.Client, optional
        Compute the batches on a dask.distributed cluster; the files are
        written by this process (the workers need no shared file system).
    progress : bool, default False
        tqdm progress bar.
    desc : str
        Label of the progress bar and of the cluster's task keys.

    Returns
    -------
    list of pathlib.Path
        The batch files, in the order of ``jobs``.
    """
    todo = [k for k, (_, path, sig) in enumerate(jobs) if not _is_complete(path, sig)]
    if todo and client is not None:
        from distributed import as_completed

        futures = {
            client.submit(
                compute, *jobs[k][0], key=f"{desc}-{jobs[k][2]}-batch{k:05d}", pure=False
            ): k
            for k in todo
        }
        done: Any = as_completed(list(futures))
        if progress:
            from tqdm.auto import tqdm

            done = tqdm(done, total=len(todo), desc=desc, unit="batch")
        for future in done:
            _, path, sig = jobs[futures[future]]
            _write_batch(_stamped(future.result(), sig), path)
            future.release()
    elif todo:
        from joblib import Parallel, delayed

        runner = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
        results: Any = runner(delayed(_compute_and_write)(compute, *jobs[k]) for k in todo)
        if progress:
            from tqdm.auto import tqdm

            results = tqdm(results, total=len(todo), desc=desc, unit="batch")
        for _ in results:
            pass
    return [path for _, path, _ in jobs]


def read_batches(paths: Sequence[Path], dim: str) -> xr.Dataset:
    """Load batch files and concatenate them along ``dim``."""
    parts = []
    for p in paths:
        with xr.open_dataset(p, engine="h5netcdf") as ds:
            parts.append(ds.load())
    return xr.concat(parts, dim, combine_attrs="drop_conflicts")


def run_study(
    problem: Problem,
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
) -> xr.Dataset:
    """Compute (or resume) the split means of ``n_datasets`` datasets of one simulation.

    Parameters
    ----------
    problem : Problem
        The simulated problem (e.g. :class:`cvstats.studies.regression.RegressionProblem`).
    n_datasets : int
        Number of independent datasets (1000 in the papers, simulations.md §D).
    out_dir : path
        Directory of the batch files (created if needed).
    seed : int, default 0
        Study seed.
    J, M, R : int
        Largest ``J`` studied (25 for ``ρ`` and the J-study), largest ``M`` (20
        for ``r``), bootstrap replicates (15).
    J_rep : int, default 15
        Splits per bootstrap replicate (the bootstrap is available for ``J <= J_rep``).
    batch_size : int, optional
        Datasets per batch; default :func:`default_batch_size`. Results do not
        depend on it, but the batch files do: resume with the same value.
    n_jobs : int, default 1
        joblib workers over batches (ignored with ``client``).
    progress : bool, default False
        Show a tqdm progress bar.
    client : distributed.Client, optional
        Fan the batches out over a dask.distributed cluster: each batch is one
        task computed on a worker and returned to this process, which writes
        its file (the workers need ``cvstats`` installed but no access to
        ``out_dir``). The stored results are identical to the single-process
        run (the seeds depend on the dataset index only).

    Returns
    -------
    xarray.Dataset
        The batches concatenated along ``dataset`` (see :func:`compute_batch`),
        with attrs ``seed``, ``J``, ``M``, ``R``, ``n`` and the problem's parameters.
    """
    checks = [("n_datasets", n_datasets, 1), ("J", J, 2), ("M", M, 1), ("R", R, 2),
              ("J_rep", J_rep, 1), ("n_jobs", n_jobs, -1)]  # fmt: skip
    for name, value, minimum in checks:
        check_int(name, value, minimum)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if batch_size is None:
        batch_size = default_batch_size(problem.n, J_rep, R, problem.n_stats)
    sizes = {"J": J, "M": M, "R": R, "J_rep": J_rep}
    signature = _signature(problem, seed, sizes, batch_size)
    chunks = [range(s, min(s + batch_size, n_datasets)) for s in range(0, n_datasets, batch_size)]
    paths = [_batch_path(out, problem, k) for k in range(len(chunks))]
    jobs = [
        ((problem, seed, list(c), sizes), p, batch_signature(signature, c))
        for c, p in zip(chunks, paths, strict=True)
    ]
    run_batches(
        _compute_with_attrs, jobs, n_jobs=n_jobs, client=client, progress=progress,
        desc=problem.tag,
    )  # fmt: skip
    full = read_batches(paths, "dataset")
    full.attrs.update({"n": problem.n, "simulation": problem.simulation, "tag": problem.tag})
    return full


def attach_truth(
    ds: xr.Dataset,
    truth: Callable[[int], dict[str, tuple[float, float]]],
    half: int,
) -> xr.Dataset:
    """Return a copy of ``ds`` with ``truth``/``truth_se`` and ``truth_half``/``truth_half_se``.

    Parameters
    ----------
    ds : xarray.Dataset
        Output of :func:`run_study` (``n1`` over ``config``, a ``quantity`` dim).
    truth : callable
        ``truth(n1)`` → ``{quantity: (estimate, standard error)}`` of the true
        error at training size ``n1`` (e.g. a Monte Carlo estimate).
    half : int
        ``n/2``, the training size of the common target ``n/2 μ``.
    """
    quantities = list(ds["quantity"].values)
    cache = {n1: truth(n1) for n1 in sorted({*map(int, ds["n1"].values), half})}
    ds = ds.copy()
    for k, suffix in ((0, ""), (1, "_se")):
        ds[f"truth{suffix}"] = (
            ("config", "quantity"),
            np.array([[cache[int(n1)][q][k] for q in quantities] for n1 in ds["n1"].values]),
        )
        ds[f"truth_half{suffix}"] = ("quantity", [cache[half][q][k] for q in quantities])
    ds["truth"].attrs["kind"] = ds["truth_half"].attrs["kind"] = "true (MC)"
    return ds
