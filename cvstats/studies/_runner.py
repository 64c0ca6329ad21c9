"""Batched, resumable, parallel runner of the Nadeau–Bengio studies (docs/studies.md).

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

The stored split means are all the methods of docs/theory.md §4 need (the
hold-out t also needs the mean and variance of the test losses of one
split, stored as well); :mod:`cvstats.studies._analysis` turns them into
estimates, standard errors and rejection rates for any ``J``, ``M``, ``R``
and any grid of ``μ0``.

**Safety of the batch files.** Every option is validated, and the output
directory checked (:func:`prepare_out_dir`: an existing regular file, or a
directory that cannot be created or written, is refused with a
:class:`~cvstats.errors.StorageError`), before any batch is computed.

* *Checksums.* Before a batch is written, the SHA-256 of its contents
  (:func:`batch_checksum`: name, dims, dtype, shape and bytes of every data
  variable and coordinate, the variables' attrs and the dataset's attrs) is
  stored in ``attrs["checksum"]`` beside the batch's ``signature``. A rerun
  opens every existing batch file, decodes it and recomputes the checksum.
* *On a mismatch the batch is recomputed* (the run does not stop): a file
  that cannot be opened or decoded, holds no ``signature`` (not a cvstats
  batch file) or whose checksum differs from its contents is reported by a
  :class:`BatchFileWarning` naming the file and why, moved aside to
  ``<file>.corrupt`` (kept for inspection, never deleted; if it cannot be
  moved, the run stops with a :class:`~cvstats.errors.StorageError` rather
  than overwrite it) and its batch computed again. The seeds depend on the
  dataset index only, so the recomputed results equal those of an undamaged
  run exactly. A file with the right signature but no checksum (written by
  an older cvstats) is reported the same way and recomputed in place. A
  file with another signature (other parameters) is recomputed in place
  silently, as before.
  :func:`read_batches` verifies the checksums again and raises a
  :class:`~cvstats.errors.StorageError` naming the file if one changed after
  the run checked it.
* *Temporary files.* A batch is written to
  ``<tag>-batchNNNNN.tmp<pid>-<thread id>`` and renamed into place. At the
  start of a run, temporaries of that pattern for the run's own batch files
  (same directory, same ``<tag>``) are removed when they were left by a
  process that no longer runs on this machine and are older than the run's
  start: temporaries of a concurrent runner (alive) are kept. On platforms
  without a reliable process check (no ``os.kill(pid, 0)``; psutil is used if
  installed) nothing is removed. No other file is ever removed (only the
  run's own batch files are replaced, by their recomputed batch).
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self

import numpy as np
import xarray as xr
from numpy.typing import NDArray

from cvstats.checks import check_int
from cvstats.errors import ArgumentError, CvstatsWarning, StorageError
from cvstats.studies._common import FloatArray
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
    "BatchFileWarning",
    "Problem",
    "SimulationProblem",
    "add_monte_carlo_truth",
    "attach_truth",
    "batch_checksum",
    "batch_signature",
    "compute_batch",
    "default_batch_size",
    "prepare_out_dir",
    "read_batches",
    "run_batches",
    "run_study",
    "run_study_with_truth",
]

#: Attribute of a batch file holding :func:`batch_checksum` of its contents.
CHECKSUM_ATTR = "checksum"

#: Smallest dataset size of a study (``n/10 >= 2`` test examples in the small configurations).
MIN_N = 20


class BatchFileWarning(CvstatsWarning):
    """A batch file of a study run failed verification; its batch is recomputed.

    The message names the file and why: it cannot be read, it is not a
    cvstats batch file, it has no checksum, or its checksum does not match
    its contents.
    """


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


def check_n_jobs(n_jobs: object) -> int:
    """Return ``n_jobs`` if it is a non-zero int (``-1``: all cores), else raise ArgumentError."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int | np.integer) or n_jobs == 0:
        raise ArgumentError(f"`n_jobs` must be a non-zero int (-1: all cores), got {n_jobs!r}.")
    return int(n_jobs)


def check_truth_sets(truth_sets: object) -> int:
    """Return ``truth_sets`` if it is 0 (no Monte Carlo truth) or an int ``>= 2``, else raise.

    Raises
    ------
    ArgumentError
        Otherwise (one training set gives no standard error).
    """
    if (
        isinstance(truth_sets, bool)
        or not isinstance(truth_sets, numbers.Integral)
        or (truth_sets != 0 and truth_sets < 2)
    ):
        raise ArgumentError(
            f"`truth_sets` must be 0 (no Monte Carlo truth) or an int >= 2, got {truth_sets!r}."
        )
    return int(truth_sets)


def check_simulation_params(
    defaults: dict[str, float],
    overrides: dict[str, Any],
    *,
    positive: Sequence[str] = (),
    what: str = "the simulation",
) -> dict[str, Any]:
    """Merge ``overrides`` into a simulation's ``defaults`` after checking them.

    Parameters
    ----------
    defaults : dict
        The simulation's parameters (``"n"`` among them).
    overrides : dict
        Parameters to change; names must be among ``defaults``.
    positive : sequence of str
        Parameters that must be ``> 0`` (variances).
    what : str
        Name of the simulation in messages.

    Returns
    -------
    dict
        The parameters, ``n`` as an int.

    Raises
    ------
    ArgumentError
        For an unknown name, ``n`` not an integer ``>= 20``, a value that is not
        a finite real number, or a non-positive value of ``positive``.
    """
    unknown = sorted(set(overrides) - set(defaults))
    if unknown:
        raise ArgumentError(
            f"unknown parameter(s) {unknown} of {what}; choose from {sorted(defaults)}."
        )
    params = dict(defaults, **overrides)
    n = params["n"]
    if (
        isinstance(n, bool)
        or not isinstance(n, numbers.Real)
        or not np.isfinite(n)
        or n != int(n)
        or n < MIN_N
    ):
        raise ArgumentError(f"`n` must be an int >= {MIN_N}, got {n!r}.")
    params["n"] = int(n)
    for name, value in params.items():
        ok = not isinstance(value, bool) and isinstance(value, numbers.Real)
        if not ok or not np.isfinite(value) or (name in positive and value <= 0):
            kind = "a positive" if name in positive else "a finite"
            raise ArgumentError(f"`{name}` must be {kind} real number, got {value!r}.")
    return params


def check_simulation(simulation: int, table: Mapping[int, Any]) -> int:
    """Return ``simulation`` if it is a key of ``table`` (a module's ``SIMULATIONS``), else raise.

    Raises
    ------
    ArgumentError
        For a simulation that ``table`` does not hold.
    """
    if simulation not in table:
        raise ArgumentError(f"`simulation` must be one of {sorted(table)}, got {simulation!r}.")
    return simulation


@dataclass(frozen=True)
class SimulationProblem:
    """Base of the problems whose simulations are the rows of a ``SIMULATIONS`` table.

    A subclass (a frozen dataclass) sets :attr:`kind`, adds its parameters
    as fields after ``simulation`` and ``n``, then ``models`` and
    ``n_stats`` (see :class:`Problem`); :attr:`tag`, :meth:`params` and
    :meth:`of_simulation` follow.

    Attributes
    ----------
    kind : str
        Class attribute: the problem's name, e.g. ``"nb-regression"``.
    simulation : int
        Simulation number (part of every dataset's seed).
    n : int
        Dataset size.
    """

    kind: ClassVar[str] = ""
    simulation: int
    n: int

    @property
    def tag(self) -> str:
        """File-name tag ``"<kind>-sim<simulation>"``, e.g. ``"nb-regression-sim1"``."""
        return f"{self.kind}-sim{self.simulation}"

    def params(self) -> dict[str, Any]:
        """Return the simulation parameters as a JSON-friendly dict."""
        return {"problem": self.kind, **asdict(self), "models": list(self.models)}

    @classmethod
    def of_simulation(
        cls,
        table: Mapping[int, dict[str, float]],
        simulation: int,
        overrides: dict[str, Any],
        *,
        positive: Sequence[str] = (),
        what: str = "the simulation",
    ) -> Self:
        """Return simulation ``simulation`` of ``table``, its parameters changed by ``overrides``.

        Raises
        ------
        ArgumentError
            For an unknown simulation or parameter, or a value out of range
            (:func:`check_simulation`, :func:`check_simulation_params`).
        """
        check_simulation(simulation, table)
        params = check_simulation_params(
            table[simulation], overrides, positive=positive, what=what
        )
        return cls(simulation=simulation, **params)


def _batch_path(out_dir: Path, problem: Problem, k: int) -> Path:
    return out_dir / f"{problem.tag}-batch{k:05d}.nc"


def prepare_out_dir(out_dir: str | os.PathLike[str], name: str = "out_dir") -> Path:
    """Return ``out_dir`` as a path to a writable directory, creating it if needed.

    Parameters
    ----------
    out_dir : path
        Output directory of a study run.
    name : str, default "out_dir"
        How the argument is named in error messages (``"--out"`` on the command line).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    StorageError
        If ``out_dir`` exists and is not a directory (e.g. a regular file),
        cannot be created, or is not writable. Nothing is removed or overwritten.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise StorageError(
            f"`{name}` {str(out)!r} exists and is not a directory; give a directory "
            "(it is created if missing)."
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StorageError(
            f"cannot create `{name}` {str(out)!r}: {e.strerror or type(e).__name__}."
        ) from e
    if not os.access(out, os.W_OK | os.X_OK):
        raise StorageError(f"`{name}` {str(out)!r} is not a writable directory.")
    return out


def _update(h: Any, piece: bytes) -> None:
    """Feed one length-prefixed piece to a hash (no two sequences of pieces collide)."""
    h.update(len(piece).to_bytes(8, "little"))
    h.update(piece)


def _canonical(value: Any) -> Any:
    """JSON-friendly form of an attribute value that survives a netCDF round trip.

    Strings stay strings; numbers and sequences become lists (netCDF stores a
    scalar attribute as a length-1 array and reads lists back as arrays).
    """
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value
    arr = np.atleast_1d(np.asarray(value))
    if arr.dtype.kind in "OUS":
        return [_canonical(v) for v in arr.tolist()]
    return arr.tolist()


def _array_bytes(values: Any) -> tuple[str, bytes]:
    """Canonical dtype label and bytes of an array (little-endian numbers, UTF-8 text)."""
    arr = np.asarray(values)
    if arr.dtype.kind in "OUS":
        text = [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
                for v in arr.ravel().tolist()]  # fmt: skip
        return "text", json.dumps(text, ensure_ascii=False).encode()
    arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
    return arr.dtype.str, arr.tobytes()


def batch_checksum(ds: xr.Dataset) -> str:
    """SHA-256 of the contents of a batch: every variable and the attrs but the checksum.

    Covers, for every data variable and coordinate in name order, its name,
    dims, shape, dtype, values (numbers as little-endian bytes, strings as
    UTF-8) and attrs, then the dataset's attrs except ``"checksum"``. The
    value is the same for a Dataset in memory and after a round trip through
    netCDF (:func:`xarray.open_dataset` with the default decoding), so it is
    computed before writing and compared after reading.

    Parameters
    ----------
    ds : xarray.Dataset
        A batch (:func:`compute_batch` or any runner's ``compute``).

    Returns
    -------
    str
        ``"sha256:<64 hex digits>"``.
    """
    h = hashlib.sha256()
    for name in sorted(map(str, ds.variables)):
        var = ds.variables[name]
        kind, payload = _array_bytes(var.values)
        header = {
            "name": name,
            "dims": [str(d) for d in var.dims],
            "shape": list(var.shape),
            "dtype": kind,
            "attrs": {str(k): _canonical(v) for k, v in var.attrs.items()},
        }
        _update(h, json.dumps(header, sort_keys=True, ensure_ascii=False).encode())
        _update(h, payload)
    attrs = {str(k): _canonical(v) for k, v in ds.attrs.items() if k != CHECKSUM_ATTR}
    _update(h, json.dumps(attrs, sort_keys=True, ensure_ascii=False).encode())
    return "sha256:" + h.hexdigest()


def _reason(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def _load(path: Path) -> xr.Dataset:
    with xr.open_dataset(path, engine="h5netcdf") as f:
        return f.load()


def _verify(ds: xr.Dataset) -> str | None:
    """Return why ``ds`` fails its checksum, or None if it matches."""
    stored = ds.attrs.get(CHECKSUM_ATTR)
    if stored is None:
        return "has no checksum (written by an older cvstats)"
    try:
        actual = batch_checksum(ds)
    except Exception as e:  # noqa: BLE001 - undecodable contents are a mismatch
        return f"cannot be checked ({_reason(e)})"
    if stored != actual:
        return f"does not match its checksum (stored {str(stored)[:23]}…, contents {actual[:23]}…)"
    return None


def _batch_state(path: Path, signature: str) -> tuple[str, str]:
    """Classify an existing batch file: ``(state, reason)``.

    States: ``"missing"``; ``"ok"`` (complete, same signature, checksum
    matches: kept); ``"stale"`` (other parameters or incomplete: recomputed
    in place, silently); ``"legacy"`` (same signature, no checksum:
    recomputed in place with a warning); ``"corrupt"`` (unreadable, not a
    batch file, or a checksum mismatch: moved aside, warned, recomputed).
    """
    if not path.exists():
        return "missing", ""
    try:
        ds = _load(path)
    except Exception as e:  # noqa: BLE001 - whatever h5py/xarray raise, the file is unusable
        return "corrupt", f"cannot be read ({_reason(e)})"
    if "signature" not in ds.attrs:
        return "corrupt", "is not a cvstats batch file (no `signature` attr)"
    problem = _verify(ds)
    if problem is not None and CHECKSUM_ATTR in ds.attrs:
        return "corrupt", problem
    try:
        complete = int(np.asarray(ds.attrs.get("complete", 0)).ravel()[0]) == 1
    except (TypeError, ValueError, IndexError):
        complete = False
    if str(ds.attrs["signature"]) != signature or not complete:
        return "stale", ""
    if problem is not None:
        return "legacy", problem
    return "ok", ""


def _set_aside(path: Path, reason: str) -> Path | None:
    """Rename a damaged batch file to ``<name>.corrupt`` (kept, never deleted).

    Raises
    ------
    StorageError
        If it cannot be renamed: the run stops rather than overwrite it.
    """
    aside = path.with_name(path.name + ".corrupt")
    try:
        os.replace(path, aside)
    except FileNotFoundError:  # a concurrent runner moved it first
        return None
    except OSError as e:
        raise StorageError(
            f"batch file {str(path)!r} {reason}, and it cannot be moved aside to "
            f"{aside.name!r} ({_reason(e)}); move or remove it, then rerun."
        ) from e
    return aside


def _needs_compute(path: Path, signature: str) -> bool:
    """Whether the batch of ``path`` must be computed; warn about damaged files."""
    state, reason = _batch_state(path, signature)
    if state == "ok":
        return False
    if state in ("corrupt", "legacy"):
        if state == "corrupt":
            aside = _set_aside(path, reason)
            reason += f"; moved to {aside.name}" if aside is not None else "; already moved"
        message = f"batch file {str(path)!r} {reason}; recomputing the batch."
        warnings.warn(BatchFileWarning(message), stacklevel=3)
    return True


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (True when it cannot be told)."""
    if pid == os.getpid():
        return True
    if os.name != "posix":  # os.kill(pid, 0) would terminate the process on Windows
        try:
            import psutil
        except ImportError:
            return True
        return bool(psutil.pid_exists(pid))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    except (OverflowError, ValueError):  # not a valid pid: no such process
        return False
    return True


def _remove_stale_temps(paths: Sequence[Path], started: float) -> list[Path]:
    """Remove the temporaries of ``paths``' batch files left by dead processes.

    Only ``<tag>-batchNNNNN.tmp<pid>-<tid>`` regular files, in the directory
    of a batch file of the run and with that file's ``<tag>``, whose process
    is not alive and whose last change is before ``started``.

    Returns
    -------
    list of pathlib.Path
        The files removed.
    """
    patterns: dict[Path, set[str]] = {}
    for p in paths:
        m = re.fullmatch(r"(.*-batch)\d+", p.stem)
        if m is not None and p.suffix == ".nc":
            patterns.setdefault(p.parent, set()).add(m.group(1))
    removed = []
    for folder, prefixes in patterns.items():
        temp = re.compile(
            "(?:" + "|".join(map(re.escape, sorted(prefixes))) + r")\d+\.tmp(\d+)-(\d+)"
        )
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            m = temp.fullmatch(entry.name)
            if m is None or not entry.is_file(follow_symlinks=False):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_mtime >= started:
                    continue
                if _pid_alive(int(m.group(1))):
                    continue
                os.unlink(entry.path)
            except OSError:  # vanished, or not ours to remove: leave it
                continue
            removed.append(Path(entry.path))
    return removed


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
    try:
        ds.to_netcdf(tmp, engine="h5netcdf")
        os.replace(tmp, path)  # atomic: a batch file is either complete or absent
    except BaseException:
        tmp.unlink(missing_ok=True)  # our own temporary: never leave it behind
        raise
    return path


def _stamped(ds: xr.Dataset, signature: str) -> xr.Dataset:
    ds.attrs.update({"signature": signature, "complete": 1})
    ds.attrs[CHECKSUM_ATTR] = batch_checksum(ds)
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
    counts: Sequence[int] | None = None,
    unit: str = "batch",
) -> list[Path]:
    """Compute the batches whose files are missing, stale or damaged; write each atomically.

    The resumable, parallel engine of every study runner. A batch file is
    complete when it carries ``attrs["complete"] == 1``, the batch's
    signature (a hash of every parameter the results depend on and of the
    batch's members, :func:`batch_signature`) and a checksum
    (:func:`batch_checksum`) that matches its contents; such a file is kept,
    every other batch is (re)computed by ``compute(*args)``, stamped with
    those three attrs and written to a temporary file renamed into place, so
    an interrupted run leaves either a complete file or none. Damaged files
    are reported with a :class:`BatchFileWarning` and moved aside to
    ``<file>.corrupt``; temporaries left by dead processes are removed first
    (see the module docstring).

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
    counts : sequence of int, optional
        How many datasets (or samples) each batch of ``jobs`` holds: the progress
        bar then counts them, its total the datasets still to compute, advancing
        by a batch's count as it completes. Default: one per batch.
    unit : str, default "batch"
        What the progress bar counts (``"dataset"``, ``"sample"``).

    Returns
    -------
    list of pathlib.Path
        The batch files, in the order of ``jobs``.

    Warns
    -----
    BatchFileWarning
        For each batch file that cannot be read, is not a cvstats batch file,
        has no checksum or does not match it.
    """
    started = time.time()
    _remove_stale_temps([path for _, path, _ in jobs], started)
    todo = [k for k, (_, path, sig) in enumerate(jobs) if _needs_compute(path, sig)]
    if todo and client is not None:
        from distributed import as_completed

        futures = {
            client.submit(
                compute, *jobs[k][0], key=f"{desc}-{jobs[k][2]}-batch{k:05d}", pure=False
            ): k
            for k in todo
        }
        with _progress_bar(progress, todo, counts, desc, unit) as bar:
            for future in as_completed(list(futures)):
                k = futures[future]
                _, path, sig = jobs[k]
                _write_batch(_stamped(future.result(), sig), path)
                future.release()
                bar.update(1 if counts is None else int(counts[k]))
    elif todo:
        from joblib import Parallel, delayed

        runner = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
        results: Any = runner(delayed(_compute_and_write)(compute, *jobs[k]) for k in todo)
        position = {Path(jobs[k][1]): k for k in todo}
        with _progress_bar(progress, todo, counts, desc, unit) as bar:
            for path in results:  # in order of completion: each returns its file
                k = position[Path(path)]
                bar.update(1 if counts is None else int(counts[k]))
    return [path for _, path, _ in jobs]


def _progress_bar(
    progress: bool, todo: Sequence[int], counts: Sequence[int] | None, desc: str, unit: str
) -> Any:
    """Return a tqdm bar over the batches to compute (their datasets, given ``counts``)."""
    from tqdm.auto import tqdm

    total = len(todo) if counts is None else sum(int(counts[k]) for k in todo)
    return tqdm(total=total, desc=desc, unit=unit, disable=not progress)


def read_batches(paths: Sequence[Path], dim: str) -> xr.Dataset:
    """Load batch files, verify their checksums and concatenate them along ``dim``.

    Raises
    ------
    StorageError
        Naming the file, if one cannot be read or does not match its checksum
        (rerun the study: :func:`run_batches` recomputes it).
    """
    parts = []
    for p in paths:
        try:
            ds = _load(Path(p))
        except Exception as e:  # noqa: BLE001 - whatever h5py/xarray raise, the file is unusable
            raise StorageError(
                f"batch file {str(p)!r} cannot be read ({_reason(e)}); rerun the study to "
                "recompute it."
            ) from e
        problem = _verify(ds)
        if problem is not None:
            raise StorageError(
                f"batch file {str(p)!r} {problem}; rerun the study to recompute it."
            )
        parts.append(ds)
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
    compute: bool = True,
) -> xr.Dataset:
    """Compute (or resume) the split means of ``n_datasets`` datasets of one simulation.

    Parameters
    ----------
    problem : Problem
        The simulated problem (e.g. :class:`cvstats.studies.regression.RegressionProblem`).
    n_datasets : int
        Number of independent datasets (1000 in the papers).
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
    compute : bool, default True
        ``False``: only read the batch files of a finished run (the report of
        a saved run, ``cvstats study ... --report-only``): nothing is
        computed or written, and a batch whose file is missing, was written
        with other parameters or is damaged raises a
        :class:`~cvstats.errors.StorageError` naming it.

    Returns
    -------
    xarray.Dataset
        The batches concatenated along ``dataset`` (see :func:`compute_batch`),
        with attrs ``seed``, ``J``, ``M``, ``R``, ``n`` and the problem's parameters.

    Raises
    ------
    ArgumentError
        For a size, seed, ``batch_size`` or ``n_jobs`` out of range (checked
        before any batch is computed).
    StorageError
        If ``out_dir`` is not a usable directory (:func:`prepare_out_dir`), or
        a batch file changed after it was verified (:func:`read_batches`);
        with ``compute=False``, if ``out_dir`` is not a directory or a batch
        file is not a complete batch of these parameters.

    Warns
    -----
    BatchFileWarning
        For each damaged batch file, recomputed (see :func:`run_batches`).
    """
    n_datasets = check_int("n_datasets", n_datasets, 1)
    J, M, R, J_rep = (check_int(name, value, minimum) for name, value, minimum in
                      (("J", J, 2), ("M", M, 1), ("R", R, 2), ("J_rep", J_rep, 1)))  # fmt: skip
    seed = check_int("seed", seed, 0)
    n_jobs = check_n_jobs(n_jobs)
    if int(problem.n) < MIN_N:
        raise ArgumentError(f"the dataset size `n` must be >= {MIN_N}, got {problem.n!r}.")
    if batch_size is None:
        batch_size = default_batch_size(problem.n, J_rep, R, problem.n_stats)
    batch_size = check_int("batch_size", batch_size, 1)
    if not compute and not Path(out_dir).is_dir():
        raise StorageError(
            f"no finished run to report: {str(out_dir)!r} is not a directory; give the "
            "directory of the run, or run the study (without `compute=False`/`--report-only`)."
        )
    out = prepare_out_dir(out_dir)
    sizes = {"J": J, "M": M, "R": R, "J_rep": J_rep}
    signature = _signature(problem, seed, sizes, batch_size)
    chunks = [range(s, min(s + batch_size, n_datasets)) for s in range(0, n_datasets, batch_size)]
    paths = [_batch_path(out, problem, k) for k in range(len(chunks))]
    jobs = [
        ((problem, seed, list(c), sizes), p, batch_signature(signature, c))
        for c, p in zip(chunks, paths, strict=True)
    ]
    if compute:
        run_batches(
            _compute_with_attrs, jobs, n_jobs=n_jobs, client=client, progress=progress,
            desc=problem.tag, counts=[len(c) for c in chunks], unit="dataset",
        )  # fmt: skip
    else:
        _check_finished(jobs)
    full = read_batches(paths, "dataset")
    full.attrs.update({"n": problem.n, "simulation": problem.simulation, "tag": problem.tag})
    return full


def _check_finished(jobs: Sequence[tuple[tuple, Path, str]]) -> None:
    """Raise StorageError for the first batch file that is not complete for its signature."""
    why = {
        "missing": "is missing",
        "stale": "was written with other parameters (`--datasets`, `--seed`, `--J`, `--M`, "
        "`--R`, `--batch-size` or the simulation) or is incomplete",
    }
    for _, path, signature in jobs:
        state, reason = _batch_state(path, signature)
        if state != "ok":
            raise StorageError(
                f"cannot report without computing: batch file {str(path)!r} "
                f"{why.get(state, reason)}; give the options of the run, or run the study "
                "without `--report-only` (`compute=False`) to compute it."
            )


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


class TruthProblem(Problem, Protocol):
    """A :class:`Problem` with a Monte Carlo estimate of its true errors."""

    def monte_carlo_truth(
        self, n1: int, *, train_sets: int, seed: int, **options: int
    ) -> dict[str, tuple[float, float]]:
        """``{quantity: (estimate, standard error)}`` of the true error at training size ``n1``.

        ``options``: further keywords of the problem's truth (problem 2: ``n_test``).
        """
        ...


def add_monte_carlo_truth(
    ds: xr.Dataset,
    problem: TruthProblem,
    *,
    train_sets: int = 200,
    seed: int = 0,
    n_test: int | None = None,
) -> xr.Dataset:
    """Add ``truth (config, quantity)``, ``truth_half`` and their ``_se`` (Monte Carlo).

    Parameters
    ----------
    ds : xarray.Dataset
        Output of :func:`cvstats.studies.run_study` for ``problem``.
    problem : ClassificationProblem or LetterProblem
        The simulation (its ``monte_carlo_truth``: the module's
        :func:`~cvstats.studies.classification.monte_carlo_truth` or
        :func:`~cvstats.studies.letter.monte_carlo_truth`).
    train_sets : int, default 200
        Training sets per training size.
    seed : int, default 0
        Seed.
    n_test : int, optional
        Size of the common test sample of problem 2's truth (default: that of
        :func:`~cvstats.studies.classification.monte_carlo_truth`, 100 000).
        Problem 3's truth tests each training set on the rest of the letter
        population and takes none.

    Returns
    -------
    xarray.Dataset
        A copy of ``ds`` with the truths and their Monte Carlo standard errors
        ``truth_se``, ``truth_half_se`` (:func:`attach_truth`).
    """
    options = {"train_sets": train_sets, "seed": seed}
    if n_test is not None:
        options["n_test"] = n_test
    return attach_truth(ds, lambda n1: problem.monte_carlo_truth(n1, **options), problem.n // 2)


def run_study_with_truth(
    problem: TruthProblem,
    n_datasets: int,
    out_dir: str | os.PathLike[str],
    truth_sets: object,
    *,
    truth_test_size: int | None = None,
    **options: Any,
) -> xr.Dataset:
    """:func:`run_study`, then with ``truth_sets >= 2`` :func:`add_monte_carlo_truth`.

    ``truth_sets`` is checked first (:func:`check_truth_sets`); ``options``
    are those of :func:`run_study` (the truths use its ``seed``);
    ``truth_test_size`` is the truth's ``n_test`` (checked by the caller;
    None: the truth's default).
    """
    truth_sets = check_truth_sets(truth_sets)
    ds = run_study(problem, n_datasets, out_dir, **options)
    if truth_sets > 0:
        ds = add_monte_carlo_truth(
            ds, problem, train_sets=truth_sets, seed=options["seed"], n_test=truth_test_size
        )
    return ds
