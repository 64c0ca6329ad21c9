"""Exceptions and warnings raised by cvstats.

Every error cvstats raises on bad input is a subclass of :class:`CvstatsError`
and of the matching built-in (`ValueError` or `TypeError`), so callers can catch
either. Messages name the argument, what was wrong and how to fix it.
"""

from __future__ import annotations

__all__ = [
    "CvstatsError",
    "CubeError",
    "DesignError",
    "FormulaError",
    "StorageError",
    "ArgumentError",
    "CvstatsTypeError",
    "CvstatsWarning",
    "ZeroVarianceWarning",
]


class CvstatsError(Exception):
    """Base class of every exception cvstats raises on bad input."""


class CubeError(CvstatsError, ValueError):
    """A loss cube does not follow the schema of ``docs/cube-schema.md``."""


class DesignError(CvstatsError, ValueError):
    """A split design cannot be built, or does not provide what a method needs."""


class FormulaError(CvstatsError, ValueError):
    """A formula cannot be parsed or names something the data do not hold."""


class StorageError(CvstatsError, ValueError):
    """A file cannot be written, or is not a cube written by cvstats."""


class ArgumentError(CvstatsError, ValueError):
    """An argument value is outside its valid range (``alpha``, ``alternative``, ...)."""


class CvstatsTypeError(CvstatsError, TypeError):
    """An argument has the wrong type."""


class CvstatsWarning(UserWarning):
    """Base class of the warnings cvstats emits."""


class ZeroVarianceWarning(CvstatsWarning):
    """A variance estimate is zero, so a statistic is infinite or undefined."""
