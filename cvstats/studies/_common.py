"""What the study modules share: array aliases and pieces of their docstrings.

The simulated problems, their runners and the learners of
:mod:`cvstats.studies` are written against the same array aliases
(:data:`FloatArray`, :data:`IntArray`) and document the same options in the
same words. Those words are written once, in :data:`STUDY_DOCS`, and a
docstring names a piece on a line of its own (``%(name)s``); the decorator
:func:`study_doc` fills it in at import (see
the library's own ``fill_doc``, which a client cannot import).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

__all__ = ["FloatArray", "IntArray", "STUDY_DOCS", "study_doc"]

_F = TypeVar("_F", bound=Callable[..., object])

#: Float arrays of the studies (data, statistics, losses).
FloatArray = NDArray[np.float64]
#: Integer arrays of the studies (labels, folds, indices).
IntArray = NDArray[np.integer]

#: Named numpydoc fragments of the study modules, unindented.
STUDY_DOCS: dict[str, str] = {
    # problem 1 (regression): a learner fitted from the sums of a training set
    "coefficients_from_training_sums": """\
Parameters
----------
sums : ndarray, shape (..., 6)
    Sums of ``(1, x, y, x², xy, y²)`` over each training set.

Returns
-------
ndarray, shape (..., 2)""",
    # the runs of the simulations of Nadeau & Bengio's problems
    # choosing a simulation of problem 1 or 2
    "parameters_simulation": """\
Parameters
----------
simulation : int
    1, 2, 3 or 4.""",
    "raises_simulation": """\
Raises
------
ArgumentError
    For an unknown simulation or parameter, or a value out of range.""",
    "run_simulation": """\
Parameters
----------
simulation : int
    1..4.
n_datasets : int
    Independent datasets.
out_dir : path
    Directory of the batch files.
seed, J, M, R, J_rep, batch_size, n_jobs, progress, client, compute
    See :func:`cvstats.studies.run_study` (``compute=False``: read a finished
    run without computing).""",
    "run_truth_sets": """\
truth_sets : int, default 0
    With a value ``>= 2``, add ``truth (config, quantity)``, ``truth_half``
    and their standard errors ``_se`` (:func:`add_monte_carlo_truth`) from
    that many training sets per training size; with 0, targets are the
    Monte Carlo means of ``μ̂_J`` over datasets (:func:`cvstats.studies.mc_truth`).""",
    # the Monte Carlo truths of problems 2 and 3
    "truth_training_sets": """\
n1 : int
    Training size.
train_sets : int, default 200
    Independent training sets of size ``n1``.""",
    "truth_seed_returns": """\
seed : int, default 0
    Seed.

Returns
-------
dict
    ``{quantity: (estimate, standard error over training sets)}``.""",
    # the analysis of a run
    "parameters_run_output": """\
Parameters
----------
ds : xarray.Dataset
    Output of :func:`cvstats.studies.run_study`.""",
    "raises_sizes_of_run": """\
Raises
------
ArgumentError
    If ``alpha`` is not in ``(0, 1)`` or no value of the sizes asked for is
    within the run.""",
}


def study_doc(obj: _F) -> _F:
    """Fill the ``%(name)s`` lines of ``obj``'s docstring from :data:`STUDY_DOCS`.

    A decorator: returns ``obj`` itself (its docstring left alone when
    docstrings are stripped, ``python -OO``).
    """
    if obj.__doc__:
        obj.__doc__ = _PLACEHOLDER.sub(_fragment, obj.__doc__)
    return obj


#: A docstring line that is only ``%(name)s``, with its indent.
_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$", re.MULTILINE)


def _fragment(match: re.Match[str]) -> str:
    """Return the fragment a placeholder line names, indented as the line (KeyError if none)."""
    indent = match["indent"]
    lines = STUDY_DOCS[match["name"]].split("\n")
    return "\n".join(indent + line if line.strip() else "" for line in lines)
