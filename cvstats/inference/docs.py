"""Shared pieces of the inference methods' numpydoc docstrings.

Every test of :mod:`cvstats.inference` takes ``mu0``, ``alpha`` and
``alternative`` and returns an :class:`~cvstats.results.InferenceResult`, so
their docstrings say the same few things. Those pieces are written once, in
:data:`DOC_FRAGMENTS`, and a docstring names them on a line of their own,
e.g. ``%(test_options)s`` among its parameters for the entries of ``mu0``,
``alpha`` and ``alternative``, or ``%(returns_inference_result)s`` for its
whole Returns section::

    @fill_doc
    def some_test(cube, *, mu0=0.0, alpha=0.05, alternative="two-sided"):
        '''One line.

        ...
        %(cube_main)s
        %(test_options)s

        %(returns_inference_result)s
        '''

:func:`fill_doc` replaces each such line with the fragment, indented as the
placeholder was, when the module is imported: ``help()``, Sphinx and numpydoc
read the filled docstring. Only whole-line placeholders are replaced (no
``%``-formatting of the whole text), so a docstring may hold ``%``, ``{`` and
``}`` freely; a placeholder that names no fragment, or one that is not alone
on its line, raises :class:`KeyError` or :class:`ValueError` at import time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

__all__ = ["DOC_FRAGMENTS", "fill_doc", "fill_docstring"]

_F = TypeVar("_F", bound=Callable[..., object])

_MU0 = """\
mu0 : float, default 0
    Null value."""

_ALPHA = """\
alpha : float, default 0.05
    Level of the interval."""

_ALTERNATIVE = """\
alternative : {"two-sided", "less", "greater"}
    Alternative hypothesis."""

#: Named numpydoc fragments, unindented (a description indented by four spaces).
DOC_FRAGMENTS: dict[str, str] = {
    "mu0": _MU0,
    "alpha": _ALPHA,
    "alternative": _ALTERNATIVE,
    # the three options every test takes, with their usual meaning
    "test_options": "\n".join([_MU0, _ALPHA, _ALTERNATIVE]),
    "cube_main": """\
cube : xarray.DataArray
    Loss cube (or contrast cube) with a main block of ``J >= 2`` splits.""",
    "cube_kfold": """\
cube : xarray.DataArray
    Loss cube (or contrast cube) whose main block is one K-fold run
    (:func:`cvstats.designs.kfold` with ``repeats=1``).""",
    "cube_nested": """\
cube : xarray.DataArray
    Loss cube (or contrast cube) of a :func:`cvstats.designs.nested_cv` design.""",
    "returns_inference_result": """\
Returns
-------
InferenceResult
    Over the cube's extra dims and ``model``/``contrast``.""",
}

# a line that is only a placeholder, and any placeholder at all
_LINE = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$", re.MULTILINE)
_ANY = re.compile(r"%\(\w+\)s")


def fill_docstring(doc: str, fragments: dict[str, str] | None = None) -> str:
    r"""Return ``doc`` with every whole-line ``%(name)s`` replaced by its fragment.

    Parameters
    ----------
    doc : str
        A docstring, as written (its body indented).
    fragments : dict of str to str, optional
        Fragments by name; default :data:`DOC_FRAGMENTS`.

    Returns
    -------
    str
        The docstring with each fragment's lines indented as the placeholder was
        (blank lines left blank).

    Raises
    ------
    KeyError
        If a placeholder names no fragment.
    ValueError
        If a placeholder is not alone on its line.

    Examples
    --------
    >>> print(fill_docstring("Doc.\n\n    %(mu0)s\n"))
    Doc.
    <BLANKLINE>
        mu0 : float, default 0
            Null value.
    <BLANKLINE>
    """
    table = DOC_FRAGMENTS if fragments is None else fragments

    def indented(match: re.Match[str]) -> str:
        name, indent = match["name"], match["indent"]
        if name not in table:
            raise KeyError(f"no docstring fragment named {name!r}; known: {sorted(table)}")
        return "\n".join(indent + line if line.strip() else "" for line in table[name].split("\n"))

    filled = _LINE.sub(indented, doc)
    left = _ANY.search(filled)
    if left is not None:
        raise ValueError(f"docstring placeholder {left.group()} must stand alone on its line")
    return filled


def fill_doc(obj: _F) -> _F:
    """Fill the ``%(name)s`` lines of ``obj``'s docstring from :data:`DOC_FRAGMENTS`.

    A decorator: returns ``obj`` itself, its ``__doc__`` filled by
    :func:`fill_docstring` (left alone when docstrings are stripped, ``python -OO``).
    """
    if obj.__doc__:
        obj.__doc__ = fill_docstring(obj.__doc__)
    return obj
