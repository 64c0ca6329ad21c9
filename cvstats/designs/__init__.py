"""Designs and collection: which examples each split trains and tests on, and the fits.

Layer 2 of cvstats (see ``docs/architecture.md``). What lives here:

* :mod:`~cvstats.designs.splits` — the split designs of the papers (hold-out,
  resampling, k-fold, 5x2, conservative-Z half-splits, bootstrap, nested CV),
  re-exported here so that ``cvstats.designs.resampled(...)`` reads naturally;
* :mod:`~cvstats.designs.losses` — per-example loss functions;
* :mod:`~cvstats.designs.collect` — fitting scikit-learn learners on a design into a
  loss cube (joblib or dask);
* :mod:`~cvstats.designs.grid` — a scikit-learn parameter grid as the ``learners`` of
  :func:`cvstats.collect` (:func:`~cvstats.designs.grid.grid_models`).

May import the data model (:mod:`cvstats.cube`) and :mod:`cvstats.errors`; nothing above.
"""

from __future__ import annotations

from cvstats.designs import cv_results, grid, splits, splitters
from cvstats.designs.cv_results import *  # noqa: F403 (from_cv_results)
from cvstats.designs.grid import *  # noqa: F403 (grid_models)
from cvstats.designs.splits import *  # noqa: F403 (the designs, listed in splits.__all__)
from cvstats.designs.splitters import *  # noqa: F403 (from_splitter)

__all__ = [*splits.__all__, *splitters.__all__, *cv_results.__all__, *grid.__all__]
