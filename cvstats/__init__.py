"""cvstats: honest inference about generalization error from cross-validation."""

from __future__ import annotations

from cvstats import designs
from cvstats.collect import collect
from cvstats.cube import from_arrays, from_frame, validate
from cvstats.errors import (
    ArgumentError,
    CubeError,
    CvstatsError,
    CvstatsTypeError,
    CvstatsWarning,
    DesignError,
    FormulaError,
    StorageError,
    ZeroVarianceWarning,
)
from cvstats.io import open_cube, save

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "collect",
    "designs",
    "from_arrays",
    "from_frame",
    "open_cube",
    "save",
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
