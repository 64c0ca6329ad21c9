"""Inference methods on loss cubes (theory.md §4): one function per test."""

from __future__ import annotations

from cvstats.methods.fivebytwo import combined_5x2cv_f, dietterich_5x2cv
from cvstats.methods.holdout import holdout_t, mcnemar
from cvstats.methods.resampling import (
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
