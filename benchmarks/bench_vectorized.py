"""Benchmark: one vectorized method call over a ``dataset`` dim against a loop over datasets.

A simulation study holds one cube per independent dataset; cvstats takes
them all at once as a cube with dims ``(dataset, split, example, model)``.
This benchmark builds such a cube — ``n_datasets`` datasets, a
``cvstats.designs.nadeau_bengio(n, n_test, J, M, R)`` design (every block:
main, conservative-Z halves, bootstrap replicates, 5x2), ``n_models`` models,
uniform random losses — and times, for each inference method,

* candidate: ``method(cube)``, one call over all datasets;
* baseline: ``[method(cube.isel(dataset=k)) for k in range(D)]``, the loop a
  user would otherwise write.

Both sides validate the cube (every method calls ``cvstats.validate``): the
candidate once on the whole cube, the baseline once per dataset. That cost is
part of both timings; a separate row times ``cvstats.validate`` alone (loop
against one call) so that its share is visible. To keep the baseline
affordable, the loop runs over the first ``loop_datasets`` datasets only and
its time is scaled linearly to ``n_datasets`` (the loop's cost per dataset
does not depend on the number of datasets). Each repeat times both sides,
interleaved; the best of ``repeats`` is kept. The loop's results are checked
against the vectorized ones (``assert_allclose``), so a wrong fast path
cannot pass. The issue's target is a speed-up of at least 20x, i.e.
``vectorized / loop <= 0.05``.

By default every dataset shares the design's splits (one NaN pattern, and an
``in_train`` coordinate over ``(split, example)``); ``--own-designs`` draws a
design per dataset (its own NaN pattern, ``in_train`` over
``(dataset, split, example)``), which is what a real simulation study does
but takes ~20 ms per dataset to build.

Run as ``python benchmarks/bench_vectorized.py [--datasets D] [--quick] ...``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import xarray as xr
from _shared import best_of, nb_cube, nb_sizes, summary_row

import cvstats

TARGET_RATIO = 0.05  # vectorized / loop, i.e. a speed-up of at least 20x
METHODS = ("corrected_resampled_t", "conservative_z", "dietterich_5x2cv")
FIELDS = ("estimate", "stderr", "statistic", "df", "pvalue")
#: keyword arguments of ``run`` for ``python -m benchmarks --quick``
QUICK: dict[str, Any] = {
    "n_datasets": 100,
    "n": 100,
    "n_test": 10,
    "loop_datasets": 10,
    "repeats": 2,
}


def _check_same(vectorized: Any, looped: Sequence[Any], method: str) -> None:
    """The loop's results equal the vectorized call's, dataset by dataset."""
    for k, res in enumerate(looped):
        for field in FIELDS:
            want = np.asarray(getattr(res, field), dtype=float)
            got = getattr(vectorized, field).isel(dataset=k).values
            np.testing.assert_allclose(
                got, want, rtol=1e-10, atol=1e-12, err_msg=f"{method}.{field}, dataset {k}"
            )


def run(
    n_datasets: int = 1000,
    *,
    loop_datasets: int = 100,
    repeats: int = 3,
    methods: Sequence[str] = METHODS,
    own_designs: bool = False,
    **sizes: int,
) -> list[dict[str, Any]]:
    """Time every method and ``validate``; one dict per row (``name``, ``ratio``, ...).

    ``sizes``: the cube's sizes, names of ``_shared.NB_SIZES`` (its defaults where not given).
    """
    sizes = nb_sizes(**sizes)
    t_build, cube = best_of(lambda: nb_cube(n_datasets, own_designs=own_designs, **sizes))
    k_loop = min(loop_datasets, n_datasets)
    scale = n_datasets / k_loop
    subsets = [cube.isel(dataset=k) for k in range(k_loop)]
    case = (
        f"{n_datasets} datasets x {cube.sizes['split']} splits x {sizes['n']} examples x "
        f"{sizes['n_models']} models ({cube.nbytes / 1e6:.0f} MB), "
        f"{'own' if own_designs else 'shared'} splits; "
        f"loop timed on {k_loop} datasets, scaled x{scale:g}"
    )

    rows = []
    targets: list[tuple[str, Callable[[xr.DataArray], Any], float | None]] = [
        ("validate", cvstats.validate, None)
    ]
    targets += [(m, getattr(cvstats, m), TARGET_RATIO) for m in methods]
    for _, fn, _ in targets:
        fn(subsets[0])  # warm-up (imports, caches)
    for label, fn, target in targets:
        base_times, cand_times = [], []
        for _ in range(repeats):
            t, looped = best_of(lambda fn=fn: [fn(sub) for sub in subsets])
            base_times.append(t * scale)
            t, vectorized = best_of(lambda fn=fn: fn(cube))
            cand_times.append(t)
        if label != "validate":
            _check_same(vectorized, looped, label)
        baseline_s, candidate_s = min(base_times), min(cand_times)
        rows.append(
            summary_row(
                f"vectorized_{label}",
                f"loop: cvstats.{label}(cube.isel(dataset=k))",
                f"cvstats.{label}(cube)",
                baseline_s,
                candidate_s,
                case=case,
                target_ratio=target,
                repeats=repeats,
                loop_per_dataset_ms=1e3 * baseline_s / n_datasets,
                vectorized_per_dataset_ms=1e3 * candidate_s / n_datasets,
                build_s=t_build,
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--n", type=int, default=200, help="examples per dataset")
    parser.add_argument("--n-test", type=int, default=20)
    parser.add_argument("--models", type=int, default=2)
    parser.add_argument("--loop-datasets", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--own-designs", action="store_true")
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    args = parser.parse_args()
    kwargs: dict[str, Any] = {
        "n_datasets": args.datasets,
        "n": args.n,
        "n_test": args.n_test,
        "n_models": args.models,
        "loop_datasets": args.loop_datasets,
        "repeats": args.repeats,
        "methods": args.methods,
        "own_designs": args.own_designs,
    }
    if args.quick:
        kwargs.update(QUICK)
    rows = run(**kwargs)
    first = rows[0]
    print(f"{first['case']}; best of {first['repeats']}; cube built in {first['build_s']:.1f} s")
    print("ratio = vectorized time / loop time (lower is better; target <= 0.05, i.e. >= 20x)")
    for row in rows:
        target = row["target_ratio"]
        status = "" if target is None else ("OK" if row["ratio"] <= target else "ABOVE TARGET")
        print(
            f"  {row['name']:<34} loop {row['baseline_s']:8.3f} s "
            f"({row['loop_per_dataset_ms']:6.2f} ms/dataset)  vectorized "
            f"{row['candidate_s']:7.3f} s ({row['vectorized_per_dataset_ms']:5.2f} ms/dataset)  "
            f"ratio {row['ratio']:.3f} = {1 / row['ratio']:5.1f}x faster  {status}"
        )


if __name__ == "__main__":
    main()
