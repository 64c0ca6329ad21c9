"""Inference on one cube: the tests of the papers and the newer intervals.

Layer 5 of cvstats (see ``docs/architecture.md``). What lives here:

* :mod:`~cvstats.inference.registry` — one description per method (:data:`METHODS`),
  read by the methods, by :func:`cvstats.compare` and by the docs;
* :mod:`~cvstats.inference.common` — option checks and result assembly (named dims
  reach the kernels' axes through :func:`~cvstats.cube.apply.apply_kernel`);
* :mod:`~cvstats.inference.blocks` — split means and the blocks of a design;
* :mod:`~cvstats.inference.docs` — the numpydoc pieces the methods' docstrings share
  (:func:`~cvstats.inference.docs.fill_doc`);
* :mod:`~cvstats.inference.resampling`, :mod:`~cvstats.inference.fivebytwo`,
  :mod:`~cvstats.inference.holdout` — the frequentist tests of Nadeau & Bengio
  (2003), Dietterich (1998), Alpaydın (1999) and the k-fold t tests;
* :mod:`~cvstats.inference.bayes`, :mod:`~cvstats.inference.bayle`,
  :mod:`~cvstats.inference.nested` — Benavoli et al. (2017), Bayle et al. (2020),
  Bates et al. (2024).

May import the data model, the designs, the kernels and the results; never
reporting, the studies or the CLI.
"""

from __future__ import annotations

from cvstats.inference.fivebytwo import combined_5x2cv_f, dietterich_5x2cv
from cvstats.inference.holdout import holdout_t, mcnemar
from cvstats.inference.resampling import (
    bootstrap_t,
    conservative_z,
    corrected_bootstrap_t,
    corrected_repeated_kfold_t,
    corrected_resampled_t,
    kfold_t,
    resampled_t,
)

__all__ = [
    "bootstrap_t",
    "combined_5x2cv_f",
    "conservative_z",
    "corrected_bootstrap_t",
    "corrected_repeated_kfold_t",
    "corrected_resampled_t",
    "dietterich_5x2cv",
    "holdout_t",
    "kfold_t",
    "mcnemar",
    "resampled_t",
]
