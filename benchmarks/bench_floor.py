"""Benchmark: every method, and ``compare``, against the floor of one pass over the cube.

Issue 16, point 1. Every method reads each value of the cube at least once,
so one pass over the array is the physical floor. This benchmark builds the
cube of ``bench_vectorized.py`` (``_shared.nb_cube``: ``n_datasets`` datasets, the 550 splits of
``cvstats.designs.nadeau_bengio(200, n_test=20, J=15, M=10, R=15)``, 200
examples, 2 models, float64, uniform random losses, NaN off the test sets,
in memory) and reports, for each candidate, the ratio of its time to the
time of **one pass over the array it reads**,
``bottleneck.nanmean(values, axis=<example axis>)``:

* ``cvstats.validate(cube)``, ``cvstats.pairwise(cube)`` (contrast formation)
  and ``compare(pairwise(cube))`` (the user's whole call, every applicable
  method, contrast formation and validation included) against one pass over
  the loss cube;
* ``cvstats.validate(contrast)`` and every method of
  ``applicable_methods(contrast)`` called alone on ``contrast =
  cvstats.pairwise(cube)`` (its own validation included) against one pass
  over the contrast cube (half the values: one contrast for two models);
* the lazy path: the cube saved with ``cvstats.save(..., "*.zarr")`` in
  chunks of ``lazy_chunks(cube, target_bytes=16 MiB)`` (whole ``split``,
  ``example`` and ``model`` dims, a few datasets per chunk), then
  ``compare(pairwise(open_cube(path, chunks={}))).to_frame()`` (open and its
  validation, contrasts, compare, every method computed) against reading
  and decompressing the same store,
  ``dask.array.from_zarr(path, component=<name>).sum().compute()``.

Floor and candidate are timed in the same process, interleaved (floor,
candidate, floor, candidate, ...), after one untimed warm-up call of each;
the best of ``repeats`` is kept for each, and the ratio is
``candidate_s / floor_s``. The issue's targets: each method (validation
included) ``<= 2``, ``compare`` ``<= 3``, and the lazy path ``>= 0.5`` of its
storage floor's throughput, i.e. a time ratio ``<= 2``.

Results are checked, so that a faster path cannot change them:

* every method called alone equals its result inside ``compare``;
* the lazy ``compare`` equals the in-memory one;
* the in-memory ``compare`` equals the results recorded in
  ``benchmarks/floor_reference.json`` (recorded on main before issue 16's
  point 2; every 10th dataset or so of each recorded case) when the case was
  recorded; ``--record`` (re)records the case run.

All to ``rtol = atol = 1e-12``.

Run as ``python benchmarks/bench_floor.py [--quick | --large] [--profile]``;
``python -m benchmarks -k floor [--quick | --large]`` prints the same rows
in the summary table. ``--large`` is the 5x larger cube (250 datasets).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bottleneck as bn
import numpy as np
import pandas as pd
import xarray as xr
from _shared import nb_cube, nb_sizes, summary_row

import cvstats
from cvstats.cube.compact import lazy_chunks
from cvstats.inference.registry import METHODS, applicable_methods

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "floor_reference.json"
METHOD_TARGET = 2.0  # a method, its validation included, <= 2 passes
COMPARE_TARGET = 3.0  # compare(pairwise(cube)), every applicable method, <= 3 passes
LAZY_TARGET = 2.0  # >= 0.5 of the store's read-and-decompress throughput
FIELDS = ("estimate", "stderr", "statistic", "df", "pvalue", "ci_lower", "ci_upper")
TOL = {"rtol": 1e-12, "atol": 1e-12}
LAZY_CHUNK_BYTES = 16 * 2**20
#: the library code the results depend on (``--record`` lists its files modified since HEAD)
RESULT_CODE = tuple(
    f"cvstats/{p}" for p in ("cube", "designs", "inference", "kernels", "reporting", "results")
)
#: keyword arguments of ``run`` for ``python -m benchmarks --quick`` (and the test suite)
QUICK: dict[str, Any] = {
    "n_datasets": 4,
    "n": 100,
    "n_test": 10,
    "J": 5,
    "M": 3,
    "R": 3,
    "repeats": 1,
    "lazy_repeats": 1,
}
#: keyword arguments of ``run`` for ``python -m benchmarks --large``: the 5x larger cube
LARGE: dict[str, Any] = {"n_datasets": 250, "repeats": 3, "lazy_repeats": 2}


def one_pass(array: xr.DataArray) -> Callable[[], Any]:
    """The floor: ``bottleneck.nanmean`` over ``example`` of the in-memory values, one read."""
    values, axis = array.values, array.dims.index("example")
    return lambda: bn.nanmean(values, axis=axis)


def interleaved(
    floor: Callable[[], Any], candidate: Callable[[], Any], repeats: int, warmup: bool = True
) -> tuple[float, float, Any]:
    """Best-of-``repeats`` times of ``floor`` and ``candidate``, run alternately.

    One untimed warm-up call of each first (unless ``warmup`` is False);
    returns ``(floor_s, candidate_s, candidate's last output)``.
    """
    out = None
    if warmup:
        floor()
        out = candidate()
    floor_s = cand_s = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        floor()
        floor_s = min(floor_s, time.perf_counter() - t)
        t = time.perf_counter()
        out = candidate()
        cand_s = min(cand_s, time.perf_counter() - t)
    return floor_s, cand_s, out


def assert_frames_equal(got: pd.DataFrame, want: pd.DataFrame, what: str) -> None:
    """Same rows and labels; the float columns equal to 1e-12 (NaN and inf in place)."""
    if list(got.columns) != list(want.columns) or len(got) != len(want):
        raise AssertionError(
            f"{what}: frames differ in shape: {got.shape} {list(got.columns)} vs "
            f"{want.shape} {list(want.columns)}"
        )
    for col in want.columns:
        a, b = got[col].to_numpy(), want[col].to_numpy()
        if pd.api.types.is_float_dtype(want[col]):
            np.testing.assert_allclose(
                a.astype(float), b.astype(float), **TOL, err_msg=f"{what}: {col}"
            )
        elif not (a == b).all():
            raise AssertionError(f"{what}: column {col!r} differs")


def case_key(**sizes: int) -> str:
    """Key of a cube in ``floor_reference.json``: its sizes and seed."""
    return ",".join(f"{k}={v}" for k, v in sorted(sizes.items()))


def reference_rows(frame: pd.DataFrame, n_datasets: int) -> dict[str, Any]:
    """The recorded part of a compare frame: about ten datasets, every method, FIELDS."""
    keep = list(range(0, n_datasets, max(1, n_datasets // 10)))
    sub = frame[frame["dataset"].isin(keep)].reset_index(drop=True)
    labels = sub[["contrast", "dataset", "method"]].itertuples(index=False)
    out: dict[str, Any] = {"keys": [[str(c), int(d), str(m)] for c, d, m in labels]}
    out.update({f: sub[f].astype(float).tolist() for f in FIELDS})
    return out


def check_reference(frame: pd.DataFrame, n_datasets: int, key: str) -> bool:
    """Compare with the recorded results of this case; False when the case was not recorded."""
    if not REFERENCE.exists():
        return False
    recorded = json.loads(REFERENCE.read_text())["cases"].get(key)
    if recorded is None:
        return False
    got = reference_rows(frame, n_datasets)
    if got["keys"] != recorded["keys"]:
        raise AssertionError(
            f"compare's rows (contrast, dataset, method) differ from {REFERENCE} for {key}; "
            "if the change is intended, re-record with `python benchmarks/bench_floor.py "
            "--record` (and the same size options)"
        )
    for field in FIELDS:
        np.testing.assert_allclose(
            np.asarray(got[field], dtype=float),
            np.asarray(recorded[field], dtype=float),
            **TOL,
            err_msg=(
                f"compare(pairwise(cube)).{field} differs from the results recorded in "
                f"{REFERENCE} for {key}; if the change is intended, re-record with "
                "`python benchmarks/bench_floor.py --record` (and the same size options)"
            ),
        )
    return True


def record_reference(frame: pd.DataFrame, n_datasets: int, key: str) -> None:
    """Write (or replace) this case in ``floor_reference.json``."""
    data = json.loads(REFERENCE.read_text()) if REFERENCE.exists() else {"cases": {}}
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True, check=True
        ).stdout.strip()
        modified = subprocess.run(
            ["git", "status", "--porcelain", "--", *RESULT_CODE],
            cwd=HERE.parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        commit, modified = "unknown", ["unknown"]
    data["about"] = (
        "compare(pairwise(cube)) of the benchmark cube (_shared.nb_cube), about ten datasets "
        "per case; written by `python benchmarks/bench_floor.py --record`"
    )
    data["cases"][key] = {
        "commit": commit,
        "modified_since_commit": [m.strip() for m in modified if m.strip()],
        "recorded": time.strftime("%Y-%m-%d"),
        **reference_rows(frame, n_datasets),
    }
    REFERENCE.write_text(_dumps(data) + "\n")


def _dumps(data: dict[str, Any]) -> str:
    """JSON with one line per list (a readable diff when a case is re-recorded)."""
    cases = []
    for key, case in data["cases"].items():
        fields = ",\n".join(f"   {json.dumps(k)}: {json.dumps(v)}" for k, v in case.items())
        cases.append(f"  {json.dumps(key)}: {{\n{fields}\n  }}")
    return (
        f'{{\n "about": {json.dumps(data["about"])},\n "cases": {{\n'
        + ",\n".join(cases)
        + "\n }\n}"
    )


def _row(
    name: str,
    candidate: str,
    floor: str,
    floor_s: float,
    cand_s: float,
    target: float | None,
    case: str,
    values: int,
) -> dict[str, Any]:
    return summary_row(
        f"floor_{name}",
        floor,
        candidate,
        floor_s,
        cand_s,
        target_ratio=target,
        case=case,
        values=values,
        floor_values_per_s=values / floor_s,
    )


def run(
    n_datasets: int = 50,
    *,
    repeats: int = 5,
    lazy: bool = True,
    lazy_repeats: int = 3,
    record: bool = False,
    **sizes: int,
) -> list[dict[str, Any]]:
    """Time validate, pairwise, every method and compare against one pass; one row each.

    ``sizes``: the cube's sizes, names of ``_shared.NB_SIZES`` (its defaults where not given).
    """
    sizes = nb_sizes(**sizes)
    key = case_key(n_datasets=n_datasets, **sizes)
    cube = nb_cube(n_datasets, **sizes)
    contrast = cvstats.pairwise(cube)
    nv_cube, nv_contrast = int(cube.size), int(contrast.size)
    case = (
        f"{n_datasets} datasets x {cube.sizes['split']} splits of nadeau_bengio({sizes['n']}, "
        f"n_test={sizes['n_test']}, J={sizes['J']}, M={sizes['M']}, R={sizes['R']}) x "
        f"{sizes['n']} examples x {sizes['n_models']} models, float64 "
        f"({nv_cube / 1e6:.3g}M values, {cube.nbytes / 1e6:.0f} MB); contrast cube "
        f"{nv_contrast / 1e6:.3g}M values"
    )
    floor_cube, floor_contrast = one_pass(cube), one_pass(contrast)
    on_cube = "one pass: bottleneck.nanmean(cube.values, axis=example)"
    on_contrast = "one pass: bottleneck.nanmean(contrast.values, axis=example)"
    rows = []

    def timed(name: str, label: str, fn: Callable[[], Any], on: str, target: float | None) -> Any:
        if on == "cube":
            floor, floor_label, nv = floor_cube, on_cube, nv_cube
        else:
            floor, floor_label, nv = floor_contrast, on_contrast, nv_contrast
        floor_s, cand_s, out = interleaved(floor, fn, repeats)
        best = f"{case}; best of {repeats}, interleaved"
        rows.append(_row(name, label, floor_label, floor_s, cand_s, target, best, nv))
        return out

    timed("validate", "cvstats.validate(cube)", lambda: cvstats.validate(cube), "cube", None)
    timed(
        "pairwise",
        "contrast = cvstats.pairwise(cube)",
        lambda: cvstats.pairwise(cube),
        "cube",
        None,
    )
    timed(
        "validate_contrast",
        "cvstats.validate(contrast)",
        lambda: cvstats.validate(contrast),
        "contrast",
        None,
    )
    alone = {}
    for name in applicable_methods(contrast):
        spec = METHODS[name]
        fixed = ", ".join(f"{k}={v!r}" for k, v in spec.fixed.items())
        label = f"cvstats.{spec.func.__name__}(contrast{', ' + fixed if fixed else ''})"
        alone[name] = timed(
            name, label, lambda s=spec: s.func(contrast, **s.fixed), "contrast", METHOD_TARGET
        )
    # informative rows: a contrast cube the user copied (writable, so validated on every call,
    # not remembered: cvstats.cube.known) and the formula route (one validation, no re-read)
    user_contrast = contrast.copy(deep=True)
    timed(
        "validate_contrast_copy",
        "cvstats.validate(contrast.copy(deep=True)): a writable cube, read every call",
        lambda: cvstats.validate(user_contrast),
        "contrast",
        None,
    )
    timed(
        "corrected_resampled_t_copy",
        "cvstats.corrected_resampled_t(contrast.copy(deep=True)): validated every call",
        lambda: cvstats.corrected_resampled_t(user_contrast),
        "contrast",
        None,
    )
    timed(
        "compare_formula",
        f"cvstats.compare('{cube.name} ~ model', cube), every applicable method",
        lambda: cvstats.compare(f"{cube.name} ~ model", cube),
        "cube",
        None,
    )
    table = timed(
        "compare",
        "cvstats.compare(cvstats.pairwise(cube)), every applicable method",
        lambda: cvstats.compare(cvstats.pairwise(cube)),
        "cube",
        COMPARE_TARGET,
    )
    # checks: a method alone equals its result inside compare; compare equals the record
    if list(table.results) != list(alone):
        raise AssertionError(f"compare ran {list(table.results)}, expected {list(alone)}")
    for name, res in alone.items():
        assert_frames_equal(
            res.to_frame(), table.results[name].to_frame(), f"{name} alone vs in compare"
        )
    frame = table.to_frame()
    # recorded with the contrast cube's own labels and the methods' own p-values
    own = table.rows().drop(columns="pvalue").rename(columns={"pvalue_raw": "pvalue"})
    if record:
        record_reference(own, n_datasets, key)
    checked = check_reference(own, n_datasets, key)
    if lazy:
        rows.append(_lazy_row(cube, frame, lazy_repeats, case))
    for row in rows:
        row["reference_checked"] = checked
    return rows


def _lazy_row(cube: xr.DataArray, want: pd.DataFrame, repeats: int, case: str) -> dict[str, Any]:
    """Lazy compare over a zarr store vs reading and decompressing the store."""
    import dask.array as da

    chunks = lazy_chunks(cube, target_bytes=LAZY_CHUNK_BYTES)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cube.zarr"
        cvstats.save(cube.chunk(chunks), path)  # the store's chunks: whole split/example/model
        disk = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())

        def read() -> Any:
            return da.from_zarr(str(path), component=str(cube.name)).sum().compute()

        def lazy_compare() -> pd.DataFrame:
            lazy_cube = cvstats.open_cube(path, chunks={})  # the store's chunks
            try:
                return cvstats.compare(cvstats.pairwise(lazy_cube)).to_frame()
            finally:
                lazy_cube.close()

        # a smoke run (one repeat) skips the warm-up: a lazy compare takes seconds
        floor_s, cand_s, got = interleaved(read, lazy_compare, repeats, warmup=repeats > 1)
    assert_frames_equal(got, want, "lazy compare vs in-memory compare")
    row = _row(
        "lazy_compare",
        "compare(pairwise(open_cube(path, chunks={}))).to_frame() (open + validate + compute)",
        "read + decompress: dask.array.from_zarr(path, component=name).sum().compute()",
        floor_s,
        cand_s,
        LAZY_TARGET,
        f"{case}; zarr store {disk / 1e6:.1f} MB on disk, chunks {dict(chunks)}; best of "
        f"{repeats}, interleaved",
        int(cube.size),
    )
    row["disk_bytes"] = disk
    return row


def profile(n_datasets: int = 50, top: int = 30, **sizes: Any) -> str:
    """cProfile of ``compare(pairwise(cube))`` on the benchmark cube: the top cumulative lines."""
    cube = nb_cube(n_datasets, **sizes)
    cvstats.compare(cvstats.pairwise(cube))  # warm-up (imports, caches)
    prof = cProfile.Profile()
    prof.enable()
    cvstats.compare(cvstats.pairwise(cube))
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).strip_dirs().sort_stats("cumulative")
    stats.print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def print_rows(rows: list[dict[str, Any]]) -> None:
    """The ratio table, one line per candidate."""
    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(rows[0]["case"])
    print(f"{os.cpu_count()} CPUs, load average (1 min) {load1:.2f}")
    print("ratio = candidate time / time of one pass over the array it reads (lower is better)")
    for row in rows:
        target = row["target_ratio"]
        status = "" if target is None else ("OK" if row["ratio"] <= target else "ABOVE TARGET")
        goal = "" if target is None else f"<= {target:g}"
        print(
            f"  {row['name']:<36} floor {row['baseline_s']:8.4f} s  candidate "
            f"{row['candidate_s']:8.4f} s  ratio {row['ratio']:6.2f}  {goal:<6} {status}"
        )
    checked = rows[0]["reference_checked"]
    lazy = any(row["name"] == "floor_lazy_compare" for row in rows)
    print(
        "results (1e-12): methods alone == compare; "
        + ("lazy == in memory; " if lazy else "")
        + ("equal to the recorded reference" if checked else "no recorded reference for this case")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small cube (smoke run)")
    size.add_argument("--large", action="store_true", help="the 5x larger cube (250 datasets)")
    parser.add_argument("--datasets", type=int, help="number of datasets (default 50)")
    parser.add_argument("--repeats", type=int, help="best of this many (default 5)")
    parser.add_argument("--no-lazy", action="store_true", help="skip the zarr row")
    parser.add_argument("--record", action="store_true", help="record this case's results")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile compare(pairwise(cube)) instead"
    )
    args = parser.parse_args(argv)
    kwargs: dict[str, Any] = dict(QUICK if args.quick else LARGE if args.large else {})
    if args.datasets is not None:
        kwargs["n_datasets"] = args.datasets
    if args.repeats is not None:
        kwargs["repeats"] = args.repeats
    if args.profile:
        kwargs = {k: v for k, v in kwargs.items() if k not in ("repeats", "lazy_repeats")}
        print(profile(**kwargs))
        return 0
    rows = run(**kwargs, lazy=not args.no_lazy, record=args.record)
    print_rows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
