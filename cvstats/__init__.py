"""cvstats: honest inference about generalization error from cross-validation."""

from __future__ import annotations

from cvstats import designs
from cvstats.cube import from_arrays, from_frame, validate
from cvstats.errors import (
    CubeError,
    CvstatsError,
    CvstatsTypeError,
    CvstatsWarning,
    DesignError,
    FormulaError,
    StorageError,
    ZeroVarianceWarning,
)

__version__ = "0.1.0"

__all__ = [
    "designs",
    "from_arrays",
    "from_frame",
    "validate",
    "CubeError",
    "CvstatsError",
    "CvstatsTypeError",
    "CvstatsWarning",
    "DesignError",
    "FormulaError",
    "StorageError",
    "ZeroVarianceWarning",
    "__version__",
]
