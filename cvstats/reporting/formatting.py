"""Formatting helpers of the reporting modules (text only, no statistics).

LaTeX escaping lives with the result contract (:mod:`cvstats.results.base`), the
lowest layer that formats text; reporting uses the same function.
"""

from __future__ import annotations

from cvstats.results.base import latex_escape

__all__ = ["latex_escape"]
