"""Data model: the cube in its forms, its checks, its construction and its storage.

Layer 1 of cvstats (see ``docs/architecture.md``). What lives here:

* :mod:`~cvstats.cube.schema` — the names of dims, coordinates and attrs;
* :mod:`~cvstats.cube.groups` — the optional ``group`` coordinate on ``example``: its
  checks, its integer codes, the splits a group straddles;
* :mod:`~cvstats.cube.checks` — argument and float-range checks shared by every
  layer, re-exported from the foundation module :mod:`cvstats.checks` (numpy only,
  which the kernels import directly);
* :mod:`~cvstats.cube.known` — what validation proved about a cube, remembered while
  the cube provably stays the same (read-only contrast cubes) or trusted within a call;
* :mod:`~cvstats.cube.apply` — :func:`~cvstats.cube.apply.apply_kernel`, the one bridge
  from named dims to a numpy kernel's axes (around :func:`xarray.apply_ufunc`);
* :mod:`~cvstats.cube.dense` — the dense loss cube ``(*extra, split, example, model)``;
* :mod:`~cvstats.cube.compact` — the compact form (test-set slots instead of examples);
* :mod:`~cvstats.cube.score` — the score cube ``(*extra, split, model)``: one metric value
  per split and model (:func:`from_scores`, :func:`scores_from_losses`);
* :mod:`~cvstats.cube.validation` — :func:`validate`, the one entry that dispatches on
  the form;
* :mod:`~cvstats.cube.construct` — :func:`from_arrays`, :func:`from_frame`;
* :mod:`~cvstats.cube.formula` — formulas and contrasts (a contrast cube is a cube);
* :mod:`~cvstats.cube.files` and :mod:`~cvstats.cube.storage` — safe files, ``save``
  and ``open_cube``.

May import only the foundation (:mod:`cvstats.errors`, :mod:`cvstats._version`,
:mod:`cvstats.options`, :mod:`cvstats.checks`) from the rest of the package;
inside it, in the order listed (schema and checks first, storage last), never in a circle.
"""

from __future__ import annotations

from cvstats.cube import compact
from cvstats.cube.construct import from_arrays, from_frame
from cvstats.cube.dense import get_extra_dims, in_test, unit_dim
from cvstats.cube.score import (
    from_scores,
    is_greater_better,
    is_score,
    scores_from_losses,
    validate_score,
)
from cvstats.cube.storage import open_cube, save
from cvstats.cube.validation import validate

__all__ = [
    "compact",
    "from_arrays",
    "from_frame",
    "from_scores",
    "get_extra_dims",
    "in_test",
    "is_greater_better",
    "is_score",
    "open_cube",
    "save",
    "scores_from_losses",
    "unit_dim",
    "validate",
    "validate_score",
]
