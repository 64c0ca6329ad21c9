"""Contract: every kernel on a (3, 4, ...) batch equals a loop over the slices.

Also checks the layering rule of style.md: the kernels import no xarray.
"""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import cvstats.kernels as K

RNG = np.random.default_rng(99)
B = (3, 4)
N1 = np.array([[80.0], [60.0], [150.0]])  # broadcast to the batch
N2 = np.array([20.0, 10.0, 5.0, 30.0])
MU0 = RNG.normal(size=B)


def _losses():
    x = RNG.normal(size=B + (25,))
    x[RNG.random(x.shape) < 0.4] = np.nan
    x[..., :2] = 0.3
    return x


CASES = {
    "resampled_t": (K.resampled_t, (RNG.normal(size=B + (7,)),), {"mu0": MU0}),
    "corrected_resampled_t": (
        K.corrected_resampled_t,
        (RNG.normal(size=B + (7,)), N1, N2),
        {"mu0": MU0},
    ),
    "bootstrap_t": (
        K.bootstrap_t,
        (RNG.normal(size=B + (5,)), RNG.normal(size=B + (6, 5))),
        {"mu0": MU0},
    ),
    "corrected_bootstrap_t": (
        K.corrected_bootstrap_t,
        (RNG.normal(size=B + (5,)), RNG.normal(size=B + (6, 5)), N1, N2),
        {"mu0": MU0},
    ),
    "conservative_z": (
        K.conservative_z,
        (RNG.normal(size=B + (5,)), RNG.normal(size=B + (3, 2, 5))),
        {"mu0": MU0},
    ),
    "kfold_t": (K.kfold_t, (RNG.normal(size=B + (10,)),), {"mu0": MU0}),
    "corrected_repeated_kfold_t": (
        K.corrected_repeated_kfold_t,
        (RNG.normal(size=B + (12,)), 4),
        {"mu0": MU0},
    ),
    "holdout_t": (K.holdout_t, (_losses(),), {"mu0": MU0, "reference": "t"}),
    "dietterich": (K.dietterich_5x2_t, (RNG.normal(size=B + (5, 2)),), {"mu0": MU0}),
    "dietterich_t4": (
        K.dietterich_5x2_t,
        (RNG.normal(size=B + (5, 2)),),
        {"mu0": MU0, "variant": "t4"},
    ),
    "dietterich_t5": (
        K.dietterich_5x2_t,
        (RNG.normal(size=B + (5, 2)),),
        {"mu0": MU0, "variant": "t5"},
    ),
    "alpaydin_f": (K.alpaydin_f, (RNG.normal(size=B + (5, 2)),), {"mu0": MU0}),
    "split_means": (K.split_means, (_losses(),), {}),
    "sample_variance": (K.sample_variance, (RNG.normal(size=B + (6,)),), {}),
    "mcnemar_exact": (
        K.mcnemar_exact,
        (RNG.integers(0, 20, size=B), RNG.integers(1, 20, size=B)),
        {"alternative": "greater"},
    ),
    "mcnemar_chi2": (
        K.mcnemar_chi2,
        (RNG.integers(0, 20, size=B), RNG.integers(1, 20, size=B)),
        {},
    ),
    "mcnemar_z": (
        K.mcnemar_z,
        (RNG.integers(0, 20, size=B), RNG.integers(1, 20, size=B)),
        {"alternative": "less"},
    ),
}


def _slice(a, idx):
    """Slice of a batch argument; per-batch parameters (n1, n2) are broadcast first."""
    if not isinstance(a, np.ndarray) or a.ndim == 0:
        return a
    if a.shape[: len(B)] == B:
        return a[idx]
    return np.broadcast_to(a, B)[idx]


@pytest.mark.parametrize("name", list(CASES))
def test_batch_equals_loop(name):
    func, args, kwargs = CASES[name]
    batch = func(*args, **kwargs)
    batch = batch if isinstance(batch, tuple) else (batch,)
    for idx in np.ndindex(B):
        one = func(
            *(_slice(a, idx) for a in args), **{k: _slice(v, idx) for k, v in kwargs.items()}
        )
        one = one if isinstance(one, tuple) else (one,)
        assert len(one) == len(batch)
        for got, want in zip(batch, one, strict=True):
            assert np.shape(got) == B
            np.testing.assert_allclose(got[idx], want, rtol=1e-12, equal_nan=True)


def test_kernels_do_not_import_xarray():
    root = pathlib.Path(K.__file__).parent
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(n.split(".")[0] in {"xarray", "pandas", "dask"} for n in names), path
