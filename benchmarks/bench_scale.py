"""Benchmark: the compact form of a cube, and (on request) a cube larger than memory.

``run()`` (part of ``python -m benchmarks``) builds a ``nadeau_bengio``
cube with ``n2 = n/10`` over a ``dataset`` dim, with and without its
``"5x2"`` block (whose test sets of ``n/2`` examples set the length of the
compact ``slot`` dim), and reports for each

* the bytes of the dense cube and of its compact Dataset
  (``cvstats.cube.compact.to_compact``: test losses, ``example_index``, packed
  ``in_train``);
* the time of ``corrected_resampled_t`` and ``conservative_z`` on the
  dense cube (baseline) and on the compact cube (candidate), validation
  included on both sides, results checked equal (rtol 1e-12).

``run_large()`` is **not** run by ``python -m benchmarks`` (it writes a
cube of 7.7 GB, ~1 GB on disk once compressed): run it with ``python
benchmarks/bench_scale.py --large [--dir DIR] [--datasets D]``. It
writes a float32 cube ``(dataset, split, example, model)`` chunk by chunk
to a zarr store (dask, a seeded generator per chunk, NaN off the test sets
of one shared ``nadeau_bengio`` design; never held in memory), then, in a
fresh subprocess, opens it lazily with ``cvstats.open_cube(path,
chunks=...)`` and runs
``cvstats.compare("loss ~ model", cube, methods=[corrected t, conservative
Z])``, recording the peak RSS (``ru_maxrss``, and a psutil sampling thread)
and the throughput (values of the cube per second of wall time); the same
compare on an in-memory numpy slice of the first datasets is the baseline
throughput. The store is deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr
from _shared import best_of, summary_row

import cvstats
from cvstats import designs
from cvstats.cube.compact import compact_cube, to_compact

METHODS = ("corrected_resampled_t", "conservative_z")
FIELDS = ("estimate", "stderr", "statistic", "df", "pvalue")
QUICK: dict[str, Any] = {"n": 200, "n_datasets": 4, "J": 5, "M": 3, "R": 3, "repeats": 2}


def make_cube(
    n: int, n_datasets: int, *, J: int, M: int, R: int, five_by_two: bool, seed: int = 0
) -> xr.DataArray:
    """A validated nadeau_bengio cube with n2 = n/10, two models, random losses."""
    d = designs.nadeau_bengio(n, n_test=n // 10, J=J, M=M, R=R, seed=seed)
    if not five_by_two:
        d = designs.select_blocks(d, exclude=["5x2"])
    rng = np.random.default_rng(seed)
    losses = rng.random((n_datasets, d.sizes["split"], n, 2))
    losses[..., 1] += 0.05
    return cvstats.from_arrays(
        losses, design=d, models=["a", "b"], extra_dims=["dataset"], name="loss"
    )


def run(
    n: int = 1000, n_datasets: int = 10, J: int = 15, M: int = 10, R: int = 15, repeats: int = 3
) -> list[dict[str, Any]]:
    """Dense vs compact: bytes, and the time of two methods (validation included)."""
    rows: list[dict[str, Any]] = []
    for five_by_two in (False, True):
        cube = make_cube(n, n_datasets, J=J, M=M, R=R, five_by_two=five_by_two)
        compact = to_compact(cube)
        cc = compact_cube(compact)
        dense_bytes, compact_bytes = int(cube.nbytes), int(compact.nbytes)
        label = "with 5x2 block" if five_by_two else "no 5x2 block"
        for name in METHODS:
            method = getattr(cvstats, name)
            base_s = cand_s = np.inf
            for _ in range(repeats):  # interleaved, best of `repeats`
                t, want = best_of(lambda m=method, c=cube: m(c))
                base_s = min(base_s, t)
                t, got = best_of(lambda m=method, c=cc: m(c))
                cand_s = min(cand_s, t)
            for field in FIELDS:
                np.testing.assert_allclose(
                    np.asarray(getattr(got, field)), np.asarray(getattr(want, field)), rtol=1e-12
                )
            rows.append(
                summary_row(
                    f"compact_{name}_{'with' if five_by_two else 'no'}_5x2",
                    f"cvstats.{name}(dense cube)",
                    f"cvstats.{name}(compact cube)",
                    base_s,
                    cand_s,
                    dense_bytes=dense_bytes,
                    compact_bytes=compact_bytes,
                    memory_ratio=compact_bytes / dense_bytes,
                    case=(
                        f"nadeau_bengio n={n}, n2={n // 10}, J={J}, M={M}, R={R} ({label}), "
                        f"{n_datasets} datasets x {cube.sizes['split']} splits x 2 models, "
                        f"float64; slot dim {cc.sizes['slot']}; dense {dense_bytes / 1e6:.1f} MB, "
                        f"compact {compact_bytes / 1e6:.1f} MB "
                        f"({dense_bytes / compact_bytes:.1f}x smaller)"
                    ),
                )
            )
    rows += _dask_rows(n, n_datasets, J=J, M=M, R=R, repeats=repeats)
    return rows


def _dask_rows(
    n: int, n_datasets: int, *, J: int, M: int, R: int, repeats: int
) -> list[dict[str, Any]]:
    """In memory vs dask: the same saved cube, loaded vs opened lazily (zarr)."""
    cube = make_cube(n, n_datasets, J=J, M=M, R=R, five_by_two=True)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cube.zarr"
        cvstats.save(cube, path)
        chunks = {"dataset": max(1, n_datasets // 2)}
        for name in METHODS:
            method = getattr(cvstats, name)

            def eager(m: Any = method) -> Any:
                return m(cvstats.open_cube(path))

            def lazy(m: Any = method) -> Any:
                res = m(cvstats.open_cube(path, chunks=chunks))
                return {f: np.asarray(getattr(res, f)) for f in FIELDS}  # computes

            base_s, want = best_of(eager, repeats)
            cand_s, got = best_of(lazy, repeats)
            for field in FIELDS:
                np.testing.assert_allclose(
                    got[field], np.asarray(getattr(want, field)), rtol=1e-12
                )
            rows.append(
                summary_row(
                    f"dask_{name}",
                    f"cvstats.{name}(open_cube(path)) (numpy, in memory)",
                    f"cvstats.{name}(open_cube(path, chunks={chunks})) computed",
                    base_s,
                    cand_s,
                    case=(
                        f"zarr cube, nadeau_bengio n={n}, {n_datasets} datasets x "
                        f"{cube.sizes['split']} splits x 2 models ({cube.nbytes / 1e6:.0f} MB); "
                        "open + validate + method on both sides"
                    ),
                )
            )
    return rows


# --------------------------------------------------------------------------
# a cube larger than memory
# --------------------------------------------------------------------------


def write_large(
    path: Path,
    n_datasets: int,
    n: int,
    *,
    J: int,
    M: int,
    R: int,
    n_models: int = 3,
    chunk_datasets: int = 25,
    chunk_splits: int = 40,
    seed: int = 0,
) -> dict[str, Any]:
    """Write a float32 cube chunk by chunk to a zarr store with cvstats.save (dask, lazy)."""
    import dask.array as da

    d = designs.nadeau_bengio(n, n_test=n // 10, J=J, M=M, R=R, seed=seed)
    S = d.sizes["split"]
    test = d["test"].values  # (split, example), shared by every dataset
    shape = (n_datasets, S, n, n_models)
    chunks = (chunk_datasets, chunk_splits, n, n_models)

    def block(block_info: Any = None) -> np.ndarray:
        info = block_info[None]
        (d0, d1), (s0, s1) = info["array-location"][:2]
        rng = np.random.default_rng([seed, d0, s0])
        x = rng.random((d1 - d0, s1 - s0, n, n_models), dtype=np.float32)
        x += np.float32(0.02) * np.arange(n_models, dtype=np.float32)
        return np.where(test[None, s0:s1, :, None], x, np.float32(np.nan))

    data = da.map_blocks(
        block,
        chunks=da.core.normalize_chunks(chunks, shape),
        dtype=np.float32,
        meta=np.empty((0, 0, 0, 0), np.float32),
    )
    cube = xr.DataArray(
        data,
        dims=("dataset", "split", "example", "model"),
        coords={
            "split": d["split"].values,
            "example": d["example"].values,
            "model": np.asarray([f"m{k}" for k in range(n_models)], dtype=object),
            **{c: ("split", d[c].values) for c in cvstats.cube.schema.SPLIT_COORDS},
        },
        name="loss",
        attrs=dict(d.attrs),
    )
    t = time.perf_counter()
    cvstats.save(cube, path)  # validates (one pass), then writes chunk by chunk
    return {
        "shape": shape,
        "values": int(np.prod(shape)),
        "logical_bytes": int(np.prod(shape)) * 4,
        "disk_bytes": sum(f.stat().st_size for f in path.rglob("*") if f.is_file()),
        "chunks": dict(zip(cube.dims, chunks, strict=True)),
        "write_s": time.perf_counter() - t,
    }


def _child(path: str, chunks_json: str) -> None:
    """Open the store lazily, run compare, print JSON (peak RSS, times) on stdout."""
    import psutil

    proc, peak, stop = psutil.Process(), [0], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.05)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    t0 = time.perf_counter()
    cube = cvstats.open_cube(path, chunks=json.loads(chunks_json))
    t_open = time.perf_counter() - t0
    table = cvstats.compare("loss ~ model", cube, methods=list(METHODS))
    frame = table.to_frame()
    total = time.perf_counter() - t0
    stop.set()
    thread.join()
    cube.close()
    print(
        json.dumps(
            {
                "open_validate_s": t_open,
                "total_s": total,
                "peak_rss_sampled": peak[0],
                "ru_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "values": int(np.prod(list(cube.sizes.values()))),
                "estimate_mean": float(frame["estimate"].mean()),
            }
        )
    )


def run_large(
    directory: str | os.PathLike[str] | None = None,
    n_datasets: int = 1000,
    n: int = 2000,
    *,
    J: int = 10,
    M: int = 10,
    R: int = 10,
    slice_datasets: int = 20,
    keep: bool = False,
) -> dict[str, Any]:
    """Write a large cube, run compare on it lazily in a subprocess, and the numpy baseline.

    The default 1000 datasets x 320 splits (J + 2MJ + RJ + 10) x 2000 examples
    x 3 models is 1.92e9 float32 values (7.7 GB in memory). The store goes
    under `directory` (default: a temporary directory in /tmp) and is deleted
    afterwards unless `keep`.
    """
    base = Path(directory) if directory else Path(tempfile.gettempdir())
    work = Path(tempfile.mkdtemp(prefix="cvstats-large-", dir=base))
    path = work / "large.zarr"
    try:
        info = write_large(path, n_datasets, n, J=J, M=M, R=R)
        chunks = {"dataset": 25, "split": 40}
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(path), json.dumps(chunks)],
            capture_output=True,
            text=True,
            check=True,
        )
        lazy = json.loads(out.stdout.strip().splitlines()[-1])
        # baseline: the same compare on an in-memory numpy slice of the first datasets
        with cvstats.open_cube(path, chunks=chunks) as opened:
            part = opened.isel(dataset=slice(0, slice_datasets)).load()
        part_values = int(np.prod(list(part.sizes.values())))
        t0 = time.perf_counter()
        cvstats.validate(part)
        cvstats.compare("loss ~ model", part, methods=list(METHODS)).to_frame()
        numpy_s = time.perf_counter() - t0
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    result = {
        **info,
        **lazy,
        "chunks_read": chunks,
        "lazy_values_per_s": lazy["values"] / lazy["total_s"],
        "numpy_slice_values": part_values,
        "numpy_slice_s": numpy_s,
        "numpy_values_per_s": part_values / numpy_s,
        "loadavg": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--large", action="store_true", help="run run_large (writes GBs)")
    parser.add_argument("--dir", default=None, help="directory for the large store")
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(*args.child)
        return 0
    if args.large:
        res = run_large(args.dir, n_datasets=args.datasets)
        for key, value in res.items():
            print(f"{key}: {value}")
        print(
            f"peak RSS {max(res['ru_maxrss'], res['peak_rss_sampled']) / 2**30:.2f} GiB; "
            f"lazy {res['lazy_values_per_s'] / 1e6:.1f} M values/s vs numpy in memory "
            f"{res['numpy_values_per_s'] / 1e6:.1f} M values/s"
        )
        return 0
    for row in run(**(QUICK if args.quick else {})):
        print(
            f"{row['name']}: dense {row['baseline_s']:.3f} s, compact {row['candidate_s']:.3f} s "
            f"(ratio {row['ratio']:.2f}); memory ratio {row['memory_ratio']:.3f}\n  {row['case']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
