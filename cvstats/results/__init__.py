"""Results: the frozen dataclasses every estimator returns.

Layer 4 of cvstats (see ``docs/architecture.md``), between the kernels and the
estimators: the estimators build results, reporting reads them, so results may
import the data model and the kernels but never an estimator or reporting.
"""

from __future__ import annotations

from cvstats.results.inference import FRAME_COLUMNS, ConfidenceInterval, InferenceResult

__all__ = ["FRAME_COLUMNS", "ConfidenceInterval", "InferenceResult"]
