"""Run every ``benchmarks/bench_*.py`` and print one table of ratios.

Usage (from the repository root)::

    python -m benchmarks            # full sizes (a few minutes)
    python -m benchmarks --quick    # small sizes, a smoke run (< 1 min)
    python -m benchmarks -k floor --large   # the modules' LARGE sizes (5x the floor cube)
    python -m benchmarks -k vectorized --json results.json

Each module exposes ``run(**kwargs)`` returning a dict or a list of dicts with
at least ``name``, ``baseline``, ``candidate``, ``baseline_s``, ``candidate_s``
and ``ratio`` (= ``candidate_s / baseline_s``), optionally ``target_ratio``
(the ratio must be ``<=`` it) and ``case``; and, for ``--quick``, a module-level
dict ``QUICK`` of keyword arguments for ``run``; for ``--large``, optionally a dict
``LARGE`` (a module without one runs at its default sizes).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

HERE = Path(__file__).resolve().parent
REQUIRED = ("name", "baseline", "candidate", "baseline_s", "candidate_s", "ratio")
HEADER = (
    "ratio = candidate time / baseline time, both measured in this process "
    "(lower is better: < 1 means the candidate is faster, 0.05 means 20x faster); "
    "status OK when ratio <= target."
)


def discover(pattern: str | None = None) -> Iterator[Path]:
    """The ``bench_*.py`` files next to this one, sorted, filtered by substring."""
    for path in sorted(HERE.glob("bench_*.py")):
        if pattern is None or pattern in path.stem:
            yield path


def load(path: Path) -> ModuleType:
    """Import a benchmark module from its file (``benchmarks`` need not be importable).

    Its folder goes on ``sys.path`` first, as when the file runs as a script, so that
    a benchmark imports the shared helpers the same way both ways (``from _shared import``).
    """
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    name = f"_cvstats_benchmarks_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def rows_of(module: ModuleType, quick: bool, large: bool = False) -> list[dict[str, Any]]:
    """Call ``module.run`` (with ``module.QUICK`` under ``--quick``, ``module.LARGE`` under
    ``--large``); always a list of rows."""
    kwargs = dict(getattr(module, "QUICK", {})) if quick else {}
    if large:
        kwargs = dict(getattr(module, "LARGE", {}))
    out = module.run(**kwargs)
    rows = [out] if isinstance(out, dict) else list(out)
    for row in rows:
        missing = [k for k in REQUIRED if k not in row]
        if missing:
            raise KeyError(f"{module.__file__}: run() returned a row without {missing}")
        # one convention everywhere: ratio = candidate / baseline
        row["ratio"] = row["candidate_s"] / row["baseline_s"]
    return rows


def table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The summary table: one line per row, ratios and targets."""
    frame = pd.DataFrame(rows)
    if "target_ratio" not in frame:
        frame["target_ratio"] = None
    target = pd.to_numeric(frame["target_ratio"], errors="coerce")
    frame["status"] = [
        "" if pd.isna(t) else ("OK" if r <= t else "ABOVE TARGET")
        for r, t in zip(frame["ratio"], target, strict=True)
    ]
    frame["target"] = ["" if pd.isna(t) else f"<= {t:g}" for t in target]
    cols = ["name", "baseline_s", "candidate_s", "ratio", "target", "status"]
    return frame[cols]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.splitlines()[0]
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    size.add_argument(
        "--large", action="store_true", help="the modules' LARGE sizes (others: full sizes)"
    )
    parser.add_argument("-k", dest="pattern", help="only the bench_*.py whose name contains this")
    parser.add_argument("--json", type=Path, help="also write every row (all fields) here")
    args = parser.parse_args(argv)

    paths = list(discover(args.pattern))
    if not paths:
        parser.error(f"no benchmarks/bench_*.py matches {args.pattern!r}")
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for path in paths:
        print(f"running {path.name} ...", flush=True)
        t = time.perf_counter()
        module_rows = rows_of(load(path), args.quick, args.large)
        for row in module_rows:
            row.setdefault("module", path.stem)
        rows.extend(module_rows)
        print(f"  done in {time.perf_counter() - t:.1f} s", flush=True)

    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print()
    print(
        f"{'quick' if args.quick else 'large' if args.large else 'full'} run, "
        f"{time.perf_counter() - t0:.0f} s, "
        f"{os.cpu_count()} CPUs, load average (1 min) {load1:.2f}"
    )
    print(HEADER)
    with pd.option_context("display.float_format", "{:.4g}".format, "display.width", 200):
        print(table(rows).to_string(index=False))
    cases = {}
    for row in rows:
        cases.setdefault(row.get("case", ""), []).append(row["name"])
    print("\nbaseline vs candidate, and case:")
    for row in rows:
        print(f"  {row['name']}: {row['baseline']}  vs  {row['candidate']}")
    for case, names in cases.items():
        if case:
            print(f"  case of {', '.join(names)}: {case}")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2, default=str))
        print(f"\nrows written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
