"""Argument and float-range checks, re-exported from :mod:`cvstats.checks`.

The checks live in the foundation layer (:mod:`cvstats.checks`, numpy only) so
that the kernels use them without loading the data model; this module keeps
their data-model path, ``cvstats.cube.checks``, working with the same names.
"""

from __future__ import annotations

import cvstats.checks
from cvstats.checks import *  # noqa: F403 (every name of cvstats.checks.__all__)

__all__ = list(cvstats.checks.__all__)
