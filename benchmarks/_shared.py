"""What the ``bench_*.py`` modules share; not a benchmark (``python -m benchmarks`` runs
only ``bench_*.py``).

A benchmark imports it as ``from _shared import ...``: run as a script, its folder is
on ``sys.path``, and ``python -m benchmarks`` puts the folder there before it loads one.
"""

from __future__ import annotations

import argparse
import inspect
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import xarray as xr

import cvstats
from cvstats import designs

#: Sizes of :func:`nb_cube`: ``nadeau_bengio(n, n_test=n_test, J=J, M=M, R=R, seed=seed)``
#: (550 splits of 200 examples), ``n_models`` models.
NB_SIZES: dict[str, int] = {"n": 200, "n_test": 20, "J": 15, "M": 10, "R": 15}
NB_SIZES |= {"n_models": 2, "seed": 0}


def nb_sizes(**sizes: int) -> dict[str, int]:
    """:data:`NB_SIZES` with ``sizes`` in place of its defaults; any other name is an error."""
    unknown = sorted(set(sizes) - set(NB_SIZES))
    if unknown:
        raise TypeError(f"unknown size(s) {unknown}; the sizes are {list(NB_SIZES)}")
    return {**NB_SIZES, **sizes}


def nb_cube(n_datasets: int, *, own_designs: bool = False, **sizes: int) -> xr.DataArray:
    """A validated cube ``(dataset, split, example, model)`` of random losses.

    Its design is ``nadeau_bengio`` of :func:`nb_sizes` (every block: main,
    conservative-Z halves, bootstrap replicates, 5x2); model ``k`` has uniform
    losses in ``[0.05 k, 0.6 + 0.05 k]``. Every dataset shares the design's splits,
    or, with ``own_designs``, draws its own (own NaN pattern, ``in_train`` over
    ``(dataset, split, example)``; ~20 ms per dataset to build).
    """
    s = nb_sizes(**sizes)
    n, n_models, seed = s["n"], s["n_models"], s["seed"]
    nb = {k: s[k] for k in ("n_test", "J", "M", "R")}
    design = designs.nadeau_bengio(n, **nb, seed=seed)
    rng = np.random.default_rng(seed)
    # model k has mean loss 0.3 + 0.05 k, so contrasts are not all null
    shift = 0.05 * np.arange(n_models)
    losses = rng.random((n_datasets, design.sizes["split"], n, n_models)) * 0.6 + shift
    models = [f"model{k}" for k in range(n_models)]
    if not own_designs:
        return cvstats.from_arrays(
            losses, design=design, extra_dims=["dataset"], models=models, name="loss"
        )
    own = [designs.nadeau_bengio(n, **nb, seed=seed + 1 + k) for k in range(n_datasets)]
    test = np.stack([d["test"].values for d in own])
    train = np.stack([d["train"].values for d in own])
    # the split coordinates are the same in every draw; the masks differ
    cube = cvstats.from_arrays(
        losses, test, design=design, extra_dims=["dataset"], models=models, name="loss"
    )
    cube = cube.assign_coords(in_train=(("dataset", "split", "example"), train))
    cvstats.validate(cube)
    return cube


def best_of(func: Callable[[], Any], repeats: int = 1) -> tuple[float, Any]:
    """The best wall time of ``repeats`` calls of ``func``, and the last call's value."""
    best, value = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = func()
        best = min(best, time.perf_counter() - t0)
    return best, value


def summary_row(
    name: str, baseline: str, candidate: str, baseline_s: float, candidate_s: float, **fields: Any
) -> dict[str, Any]:
    """A row of the summary table of ``python -m benchmarks``: ``ratio`` = candidate / baseline."""
    out = {"name": name, "baseline": baseline, "candidate": candidate, "baseline_s": baseline_s}
    return out | {"candidate_s": candidate_s, "ratio": candidate_s / baseline_s, **fields}


def print_rows_main(doc: str, run: Callable[..., list[dict[str, Any]]]) -> None:
    """Command line of a benchmark: an int option per parameter of ``run``; print each row."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    for p in inspect.signature(run).parameters.values():
        parser.add_argument(f"--{p.name.replace('_', '-')}", type=int, default=p.default)
    for out in run(**vars(parser.parse_args())):
        print(out)
