"""Inference on one cube: the tests of the papers and the newer intervals.

Layer 5 of cvstats (see ``docs/architecture.md``). What lives here:

* :mod:`~cvstats.inference.registry` — one declaration per method (:data:`METHODS`),
  read by :func:`cvstats.compare`, :func:`~cvstats.inference.recommend.recommend`
  and the docs;
* :mod:`~cvstats.inference.engine` — :func:`~cvstats.inference.engine.method`, which
  declares a method next to its function and runs what every method shares;
* :mod:`~cvstats.inference.common` — option checks and result assembly (named dims
  reach the kernels' axes through :func:`~cvstats.cube.apply.apply_kernel`);
* :mod:`~cvstats.inference.blocks` — split means and the blocks of a design;
* :mod:`~cvstats.inference.clustered` — cluster-robust tests over grouped examples and
  the warning when a group straddles a split (docs/grouped-data.md);
* :mod:`~cvstats.inference.docs` — the numpydoc pieces the methods' docstrings share
  (:func:`~cvstats.inference.docs.fill_doc`);
* the methods: :mod:`~cvstats.inference.resampling`, :mod:`~cvstats.inference.fivebytwo`,
  :mod:`~cvstats.inference.holdout` — the frequentist tests of Nadeau & Bengio
  (2003), Dietterich (1998), Alpaydın (1999) and the k-fold t tests;
  :mod:`~cvstats.inference.bayes`, :mod:`~cvstats.inference.bayle`,
  :mod:`~cvstats.inference.nested` — Benavoli et al. (2017), Bayle et al. (2020),
  Bates et al. (2024); and any module added here.

Importing the package imports every module in it, so that every method's
declaration is registered before the registry is read: a method in a new
module needs no import list edited. The public function of every registered
method is an attribute of this package (and of :mod:`cvstats`).

May import the data model, the designs, the kernels and the results; never
reporting, the studies or the CLI.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")

from cvstats.inference.registry import METHODS  # noqa: E402

#: The public function of every registered method, by name.
FUNCTIONS: dict[str, Any] = {}
for _spec in METHODS.values():
    assert _spec.func is not None
    FUNCTIONS.setdefault(_spec.func.__name__, _spec.func)
globals().update(FUNCTIONS)

__all__ = sorted(FUNCTIONS)
