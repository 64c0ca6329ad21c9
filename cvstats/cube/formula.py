"""Formulas → linear contrasts over the ``model`` dim (docs/theory.md §1).

Comparisons are contrasts: any linear combination ``Σ_m c_m L_m(j, i)`` of the
models' per-example losses has the covariance structure of a single model's
loss, so every inference method applies to it unchanged. This module turns a
formula such as ``"loss ~ model"`` into such contrasts and applies them to a
cube, before any method runs.

How a formula defines contrasts
-------------------------------
The right-hand side is parsed by formulaic (never by hand) and materialized on
a one-row-per-model table whose single column ``model`` is a categorical with
the cube's models as levels, in cube order (so the first model is the
treatment reference). This gives the model matrix ``C`` (models ×
coefficients) of a cell-means regression ``μ = C β``; the coefficients are
``β = W μ`` with ``W = C⁻¹`` (or the least-squares ``pinv(C)`` when there are
fewer coefficients than models), and each row of ``W`` is a weight vector over
the models. For three models ``a, b, c``:

=============================  =======================  ==========================
formula                        coefficient              weights on (a, b, c)
=============================  =======================  ==========================
``loss ~ model``               ``Intercept``            (1, 0, 0)
                               ``model[T.b]``           (-1, 1, 0)
                               ``model[T.c]``           (-1, 0, 1)
``loss ~ 0 + model``           ``model[a]`` ...         identity
``C(model, contr.sum)``        ``Intercept``            (1/3, 1/3, 1/3)
                               ``...[S.a]``             (2/3, -1/3, -1/3)
                               ``...[S.b]``             (-1/3, 2/3, -1/3)
``C(model, contr.helmert)``    ``Intercept``            (1/3, 1/3, 1/3)
                               ``...[H.b]``             (-1/2, 1/2, 0)
                               ``...[H.c]``             (-1/6, -1/6, 1/3)
=============================  =======================  ==========================

formulaic's sum coding drops the *last* level; its Helmert coding is R's
unscaled one (columns ``(-1, 1, 0)`` and ``(-1, -1, 2)``), so the Helmert
coefficient of the ``k``-th level (``k = 2, 3, ...``) is
``(μ_k − mean of the first k − 1 levels) / k``: ``(μ_b − μ_a) / 2``
and ``(μ_c − (μ_a + μ_b) / 2) / 3`` above. A reference level is picked with
``C(model, contr.treatment("b"))``; levels can be reordered with
``C(model, levels=[...])``.

The pairwise differences are not a coding (``K`` models have ``K(K−1)/2``
differences but only ``K − 1`` independent ones): use :func:`pairwise`.

Formulas are data, not code
---------------------------
formulaic evaluates the Python inside a formula (``C(...)`` and its
arguments are Python expressions), and even its parser evaluates the function
part of calls on the left-hand side. A formula may come from a file or a
command line (``cvstats table cube.nc --formula ...``), so cvstats checks it
*before* formulaic parses or evaluates anything: formulaic's tokenizer (string
processing only) splits the formula, and every name and Python expression is
checked against a whitelist with the :mod:`ast` module:

* the left-hand side is a single name (an identifier, or any name between
  backticks, such as ``my loss``), never an expression;
* on the right-hand side, the only name is ``model`` and the only Python
  expressions are ``model``, ``C(model)``, ``C(model, <coding>)`` and
  ``C(model, <coding>, levels=[...], spans_intercept=...)``, where
  ``<coding>`` is ``contr.treatment``, ``contr.sum``, ``contr.helmert``,
  ``contr.poly``, ``contr.diff``, ``contr.SAS`` or ``contr.custom``, bare or
  called (``contr.treatment("b")``, ``contr.helmert(scale=True)``), or a
  literal coding matrix; every argument is a literal (a str, a number, ``True``,
  ``False``, ``None``, or a list or tuple of literals) and every keyword is one
  the callee accepts;
* terms are joined by ``+`` and ``-``, with ``0`` or ``1`` for the intercept
  (formulaic's own grammar); an interaction term such as ``model:C(model)``
  defines no contrast of a single variable and is refused.

Attribute access (other than ``contr.<coding>``), subscripts, calls to
anything but ``C`` and ``contr.<coding>``, lambdas, comprehensions, assignment
expressions, f-strings, unpacking and dunder names are refused with a
:class:`~cvstats.FormulaError` naming the offending part, and nothing is
evaluated. A literal coding matrix (``C(model, [[1, 0], [0, 1], [0, 0]])``,
``contr.custom(...)``) and ``contr.poly``'s scores hold numbers only. Only then
is the right-hand side materialized, in a context that holds nothing but ``C``
and ``contr`` (plus the one-column data frame of models).

The work a formula may ask for is bounded too, and a formula beyond a bound is
refused in well under a second, before formulaic tokenizes, expands or
evaluates it (its tokenizer takes time quadratic in the length, and
``(model + C(model, contr.sum)) ** N`` expands to ``2 ** N`` products):

======================  ======  ============================================
bound                   value   room it leaves
======================  ======  ============================================
``MAX_FORMULA_LENGTH``  20000   a coding matrix of about 45 models with
                                6-digit weights (read in under a second)
``MAX_LITERAL_VALUES``  2500    a coding matrix of 50 models
``MAX_EXPONENT``        10      ``**`` and ``^``: a power above 1 of a sum
                                of terms only makes interactions of
                                ``model`` with itself, refused anyway
``MAX_TERMS``           1000    the terms any operator (``+``, ``:``, ``*``,
                                ``**``) expands to, before de-duplication
======================  ======  ============================================

Any other failure inside formulaic becomes a :class:`~cvstats.FormulaError`
that keeps formulaic's reason (its type when it has no message); a
``KeyboardInterrupt`` or ``SystemExit`` raised meanwhile goes through.
"""

from __future__ import annotations

import ast
import inspect
import keyword
import re
import warnings
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

import bottleneck as bn
import numpy as np
import pandas as pd
import xarray as xr
from formulaic import Formula
from formulaic.errors import DataMismatchWarning
from formulaic.formula import SimpleFormula
from formulaic.parser import DefaultFormulaParser
from formulaic.parser.algos.tokenize import tokenize
from formulaic.parser.types import Token
from formulaic.transforms.contrasts import C as _formulaic_C
from formulaic.transforms.contrasts import ContrastsRegistry
from formulaic.utils.code import sanitize_variable_names

from cvstats.cube.apply import labelled
from cvstats.cube.known import Checked, Facts, remember
from cvstats.cube.schema import CONTRAST, EXAMPLE, MODEL
from cvstats.cube.threads import leading_blocks, leading_parts, map_parts
from cvstats.cube.validation import validated
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError, FormulaError

__all__ = ["parse_formula", "contrast_matrix", "contrasts", "pairwise"]

#: Two-sided formulas only: no multi-part (``|``) or multi-stage (``[...]``) formulas.
_PARSER = DefaultFormulaParser(feature_flags={"twosided"})
#: formulaic highlights the faulty token between ⧛ ⧚ *and* in ANSI red; keep the markers.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Weights this small relative to the largest one are rounding residue of the inversion.
_ZERO = 1e-12
_EXAMPLE_FORMULA = "write e.g. 'loss ~ model' or 'loss ~ C(model, contr.sum)'"

#: The names a formula's Python may use besides ``model``: formulaic's coding transform
#: and its registry of codings (``formulaic.transforms.contrasts.ContrastsRegistry``).
_CODING = "C"
_REGISTRY = "contr"
#: The codings a formula may name, as ``contr.<coding>``; listed here rather than read
#: from formulaic so that a new attribute of the registry does not widen the whitelist.
_CODINGS = ("treatment", "sum", "helmert", "poly", "diff", "SAS", "custom")
#: ``C(data, contrasts=None, *, levels=None, spans_intercept=True)``: arguments are checked
#: by binding the AST nodes to the signature, which never calls anything.
_C_SIGNATURE = inspect.signature(_formulaic_C)
#: The types of the literals formulas may hold (bool is an int).
_LITERAL_TYPES = (str, int, float, type(None))
#: Longest piece of a formula quoted in an error message.
_QUOTE_MAX = 60
#: Bounds on the work a formula may ask for, checked before formulaic tokenizes, expands
#: or evaluates it (its tokenizer takes time quadratic in the formula's length, the
#: expansion of ``(a + b) ** N`` makes ``2 ** N`` products): formulas in the one variable
#: ``model`` need far less. The longest formula, in characters (a coding matrix of ~45
#: models with 6-digit weights):
MAX_FORMULA_LENGTH = 20_000
#: The most values the literals of one formula hold together (a 50-model coding matrix).
MAX_LITERAL_VALUES = 2_500
#: The largest exponent of ``**`` or ``^`` (a power above 1 of a sum of terms only makes
#: interactions of ``model`` with itself, which are refused anyway).
MAX_EXPONENT = 10
#: The most terms any operator of the formula may expand to, counted before formulaic's
#: de-duplication (``+`` adds the terms of its sides, ``:`` multiplies them, ``*`` does
#: both, ``**``/``^`` raise them to the exponent).
MAX_TERMS = 1_000
#: The evaluation context: nothing but formulaic's coding transform and registry.
_CONTEXT = {_CODING: _formulaic_C, _REGISTRY: ContrastsRegistry}
_GRAMMAR = (
    "Formulas are data, not code: the right-hand side joins `model`, `C(model)` and "
    f"`C(model, contr.<coding>)` (<coding> one of {', '.join(_CODINGS)}) with `+` and `-`, "
    "`0` or `1` for the intercept, and every argument is a literal."
)


def _coding_signature(name: str) -> inspect.Signature:
    """Return the signature of formulaic's ``contr.<name>`` (a Contrasts class)."""
    return inspect.signature(getattr(ContrastsRegistry, name))


# --------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------


class _Refusal(Exception):
    """Internal: a part of a formula that the whitelist does not allow."""

    def __init__(self, what: str, hint: str = "", *, clause: str = "") -> None:
        super().__init__(what)
        self.what = what
        self.hint = hint
        #: a whole clause replacing "it uses <what>, which formulas do not allow"
        self.clause = clause


def _quote(node: ast.AST) -> str:
    """Return the source of ``node``, shortened to fit in a message."""
    text = ast.unparse(node)
    return text if len(text) <= _QUOTE_MAX else text[: _QUOTE_MAX - 1] + "…"


def _is_dunder(name: str) -> bool:
    """Tell whether an identifier is a dunder (or name-mangled private) name."""
    return name.startswith("__")


def _describe(node: ast.AST) -> str:
    """Name the kind of Python expression ``node`` is, with its source."""
    if isinstance(node, ast.Call):
        return f"a call to `{_quote(node.func)}`"
    if isinstance(node, ast.Attribute):
        return f"attribute access `{_quote(node)}`"
    if isinstance(node, ast.Subscript):
        return f"a subscript `{_quote(node)}`"
    if isinstance(node, ast.Lambda):
        return f"a lambda `{_quote(node)}`"
    if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        return f"a comprehension `{_quote(node)}`"
    if isinstance(node, ast.NamedExpr):
        return f"an assignment expression `{_quote(node)}`"
    if isinstance(node, ast.JoinedStr | ast.FormattedValue):
        return f"an f-string `{_quote(node)}`"
    if isinstance(node, ast.Starred):
        return f"unpacking `{_quote(node)}`"
    if isinstance(node, ast.Name):
        return f"the name `{node.id}`"
    if isinstance(node, ast.Constant):
        return f"the literal `{_quote(node)}`"
    return f"the Python expression `{_quote(node)}`"


def _dunder_part(tree: ast.AST) -> str | None:
    """Describe the shortest dunder attribute, name or keyword in ``tree`` (None if none)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_dunder(node.attr):
            text = _quote(node)
            found.append((len(text), f"attribute access `{text}`"))
        elif isinstance(node, ast.Name) and _is_dunder(node.id):
            found.append((len(node.id), f"the dunder name `{node.id}`"))
        elif isinstance(node, ast.keyword) and node.arg is not None and _is_dunder(node.arg):
            found.append((len(node.arg), f"the dunder keyword `{node.arg}`"))
    return min(found)[1] if found else None


def _is_number(node: ast.AST) -> bool:
    """Tell whether ``node`` is a literal int or float (a bool is not), maybe signed."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    )


def _is_literal(node: ast.AST) -> bool:
    """Tell whether ``node`` is a literal: str, number, bool, None, or a list/tuple of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, _LITERAL_TYPES)
    if isinstance(node, ast.UnaryOp):
        return _is_number(node)
    if isinstance(node, ast.List | ast.Tuple):
        return all(_is_literal(e) for e in node.elts)
    return False


def _check_literal(node: ast.AST, where: str) -> None:
    """Refuse ``node`` unless it is a literal (``where`` names the argument)."""
    if _is_literal(node):
        return
    if isinstance(node, ast.List | ast.Tuple):
        for e in node.elts:
            _check_literal(e, where)
    if isinstance(node, ast.Name):
        raise _Refusal(
            f"the name `{node.id}` as {where}",
            "arguments are literals: quote level names, e.g. contr.treatment('b') or "
            "levels=['b', 'a']",
        )
    raise _Refusal(
        f"{_describe(node)} as {where}",
        "arguments are literals: a str, a number, True, False, None, or a list or tuple of them",
    )


def _check_call_shape(call: ast.Call, callee: str, signature: inspect.Signature) -> None:
    """Refuse unpacking, and arguments or keywords ``callee``'s signature does not accept."""
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            raise _Refusal(f"unpacking `{_quote(arg)}` in `{callee}(...)`")
    for kw in call.keywords:
        if kw.arg is None:
            raise _Refusal(f"unpacking `**{_quote(kw.value)}` in `{callee}(...)`")
    try:
        signature.bind(*call.args, **{kw.arg: kw.value for kw in call.keywords if kw.arg})
    except TypeError as e:
        params = ", ".join(signature.parameters)
        raise _Refusal(
            callee,
            clause=f"`{_quote(call)}` passes arguments that `{callee}` does not accept ({e}); "
            f"`{callee}` takes {params}",
        ) from None


def _check_matrix(node: ast.AST, where: str, hint: str = "") -> None:
    """Refuse a literal coding matrix (or scores) holding anything but numbers (rows of them)."""
    _check_literal(node, where)
    if not isinstance(node, ast.List | ast.Tuple):
        return  # a str or number: formulaic says what it expects
    for row in node.elts:
        cells = row.elts if isinstance(row, ast.List | ast.Tuple) else [row]
        for cell in cells:
            if not _is_number(cell):
                raise _Refusal(
                    f"`{_quote(cell)}` in {where}",
                    hint
                    or "a coding matrix holds numbers, one row of weights per model (level) "
                    f"in cube order, e.g. {_CODING}({MODEL}, [[1, 0], [0, 1], [0, 0]]) for "
                    f"three models; name levels with {_REGISTRY}.treatment('b') or "
                    "levels=[...]",
                )


def _check_coding(node: ast.AST) -> None:
    """Allow ``contr.<coding>``, ``contr.<coding>(<literals>)`` or a literal coding matrix."""
    func = node.func if isinstance(node, ast.Call) else node
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == _REGISTRY
    ):
        if func.attr not in _CODINGS:
            raise _Refusal(
                f"the unknown coding `{_quote(func)}`",
                f"the codings are {', '.join(f'{_REGISTRY}.{c}' for c in _CODINGS)}",
            )
        if isinstance(node, ast.Call):
            coding = f"{_REGISTRY}.{func.attr}"
            signature = _coding_signature(func.attr)
            _check_call_shape(node, coding, signature)
            bound = signature.bind(
                *node.args, **{kw.arg: kw.value for kw in node.keywords if kw.arg}
            ).arguments
            keywords = {kw.arg for kw in node.keywords}
            for param, arg in bound.items():
                where = (
                    f"the argument `{param}` of `{coding}`"
                    if param in keywords
                    else f"an argument of `{coding}`"
                )
                if param == "contrasts":  # contr.custom's matrix
                    _check_matrix(arg, where)
                elif param == "scores":  # contr.poly's
                    _check_matrix(arg, where, "the scores are numbers, one per model")
                else:
                    _check_literal(arg, where)
        return
    if isinstance(node, ast.List | ast.Tuple):
        _check_matrix(node, "a coding matrix")
        return
    raise _Refusal(
        f"{_describe(node)} as the coding of `{_CODING}(...)`",
        f"name a coding such as {_REGISTRY}.sum or {_REGISTRY}.treatment('b')",
    )


def _check_c(call: ast.Call, unknown: list[str]) -> None:
    """Allow ``C(model[, <coding>][, levels=<literal>][, spans_intercept=<literal>])``."""
    _check_call_shape(call, _CODING, _C_SIGNATURE)
    first = call.args[0] if call.args else None
    if first is None:
        raise _Refusal(
            _CODING,
            clause=f"`{_quote(call)}` does not pass `{MODEL}` as the first argument of "
            f"`{_CODING}`; write `{_CODING}({MODEL}, ...)`",
        )
    if isinstance(first, ast.Name) and not _is_dunder(first.id):
        if first.id != MODEL:
            unknown.append(first.id)
    elif isinstance(first, ast.Call) and isinstance(first.func, ast.Name):
        what = "a nested" if first.func.id == _CODING else "a call to"
        raise _Refusal(f"{what} `{first.func.id}(...)` inside `{_CODING}(...)`")
    else:
        raise _Refusal(f"{_describe(first)} as the variable of `{_CODING}(...)`")
    for arg in call.args[1:]:
        _check_coding(arg)
    for kw in call.keywords:
        if kw.arg == "contrasts":
            _check_coding(kw.value)
        else:
            _check_literal(kw.value, f"the argument `{kw.arg}` of `{_CODING}`")


def _check_python(expr: str, unknown: list[str]) -> int:
    """Check one Python expression of the right-hand side against the whitelist.

    Names that are not ``model`` (where a variable is expected) are appended to
    ``unknown``; anything else not allowed raises :class:`_Refusal`. Nothing is
    evaluated: the expression is only parsed with :func:`ast.parse`. Returns the
    number of literal values (constants) the expression holds.
    """
    aliases: dict[str, str] = {}
    try:
        # backticked names (`my model`) become identifiers; pure string processing
        code = sanitize_variable_names(expr, {}, aliases)
        tree = ast.parse(code, mode="eval")
    except Exception:  # SyntaxError, or the parser's limits (nesting, null bytes...)
        raise _Refusal(
            "", clause=f"`{expr[:_QUOTE_MAX]}` is not a Python expression cvstats can read"
        ) from None
    dunder = _dunder_part(tree)
    if dunder is not None:
        raise _Refusal(dunder)
    node = tree.body
    names: list[str] = []
    if isinstance(node, ast.Name):
        if node.id != MODEL:
            names.append(node.id)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "pairwise":
            raise _Refusal("pairwise")
        if node.func.id != _CODING:
            raise _Refusal(_describe(node))
        _check_c(node, names)
    else:
        raise _Refusal(_describe(node))
    unknown.extend(aliases.get(name, name) for name in names)
    return sum(isinstance(n, ast.Constant) for n in ast.walk(tree))


def _shown(formula: str) -> str:
    """Quote a formula in a message: whole if short, else its start and its length."""
    if len(formula) <= 4 * _QUOTE_MAX:
        return repr(formula)
    return f"{formula[: 2 * _QUOTE_MAX]!r}… ({len(formula)} characters)"


def _reason(e: BaseException) -> str:
    """Return the reason of an exception raised in formulaic: its message, else its type."""
    text = _ANSI.sub("", str(e)).strip()
    return text if text else f"{type(e).__name__} {e!r} (with no message)"


def _check_length(formula: str) -> None:
    """Refuse a formula longer than ``MAX_FORMULA_LENGTH``, before anything reads it."""
    if len(formula) > MAX_FORMULA_LENGTH:
        raise FormulaError(
            f"the formula {_shown(formula)} is longer than {MAX_FORMULA_LENGTH} characters "
            "(cvstats.cube.formula.MAX_FORMULA_LENGTH), more than a formula over the models "
            "of one cube needs, and formulaic's work grows faster than its length; "
            f"{_EXAMPLE_FORMULA}."
        )


def _exponent(token: object) -> int | None:
    """Return the exponent a ``**``/``^`` token gives (None: not a plain int, formulaic says)."""
    text = str(token).strip()
    if not text.isdigit():
        return None
    return int(text) if len(text) <= 6 else MAX_EXPONENT + 1  # no huge int parsed


def _check_work(formula: str) -> None:
    """Refuse a formula whose expansion into terms would exceed ``MAX_TERMS``.

    formulaic's abstract syntax tree (string processing only, the whitelist ran) is
    walked bottom-up with an upper bound on the number of terms each operator
    makes before de-duplication: 1 for a term, ``a + b`` for ``+``, ``-``, ``/``,
    ``a b`` for ``:``, ``a + b + a b`` for ``*``, ``a ** N`` for ``**`` and ``^``
    (whose exponent is at most ``MAX_EXPONENT``). A formula formulaic cannot
    parse is left to the parse, which says why.
    """
    try:
        root = _PARSER.get_ast(formula)
    except Exception:  # a syntax error: the parse that follows reports it
        return
    bound: dict[int, int] = {}
    stack: list[tuple[object, bool]] = [(root, False)]
    while stack:  # post-order without recursion: a long sum is a deep tree
        node, done = stack.pop()
        args = list(getattr(node, "args", ()))
        operator = getattr(node, "operator", None)
        if operator is None:
            bound[id(node)] = 1
            continue
        if not done:
            stack.append((node, True))
            stack.extend((a, False) for a in args)
            continue
        symbol = getattr(operator, "symbol", "")
        counts = [bound[id(a)] for a in args]
        if symbol in ("**", "^") and len(args) == 2:
            power = _exponent(args[1])
            if power is not None and power > MAX_EXPONENT:
                raise FormulaError(
                    f"the formula {_shown(formula)} raises terms to the power "
                    f"{str(args[1]).strip()[:12]}, above {MAX_EXPONENT} "
                    "(cvstats.cube.formula.MAX_EXPONENT): a power above 1 of a sum of terms "
                    f"only makes interactions of `{MODEL}` with itself, which define no "
                    f"contrast; {_EXAMPLE_FORMULA}."
                )
            total = counts[0] ** (power or 1)
        elif symbol == ":":
            total = int(np.prod(counts, dtype=object))
        elif symbol == "*":
            total = sum(counts) + int(np.prod(counts, dtype=object))
        else:
            total = sum(counts)
        if total > MAX_TERMS:
            why = (
                f"products of terms (`:`, `*`, `**`) only make interactions of `{MODEL}` with "
                "itself, which define no contrast"
                if symbol in (":", "*", "**", "^")
                else "a formula over the models of one cube needs a few terms, one per coding"
            )
            raise FormulaError(
                f"the formula {_shown(formula)} expands to up to {total} terms at its operator "
                f"`{symbol}`, more than {MAX_TERMS} (cvstats.cube.formula.MAX_TERMS): {why}; "
                f"{_EXAMPLE_FORMULA}."
            )
        bound[id(node)] = total


def _refused(formula: str, refusal: _Refusal) -> FormulaError:
    """Turn a refusal into the :class:`FormulaError` that quotes the formula."""
    if refusal.what == "pairwise":
        lhs = formula.split("~", 1)[0].strip() or "loss"
        return FormulaError(
            f"{formula!r}: pairwise differences are not a coding of `model` (K models have "
            "K(K-1)/2 differences but only K-1 independent contrasts); build them with "
            f"cvstats.pairwise: cvstats.compare(cvstats.pairwise(data, loss={lhs!r})), or "
            "cvstats.compare(cvstats.pairwise(cube)) for a cube."
        )
    hint = f"; {refusal.hint}" if refusal.hint else ""
    clause = refusal.clause or f"it uses {refusal.what}, which formulas do not allow{hint}"
    return FormulaError(
        f"cannot build contrasts from {_shown(formula)}: {clause}. {_GRAMMAR} "
        f"{_EXAMPLE_FORMULA[0].upper()}{_EXAMPLE_FORMULA[1:]}."
    )


def _unknown_variables(formula: str, unknown: list[str]) -> FormulaError:
    """Build the error for names other than ``model`` on the right-hand side."""
    return FormulaError(
        f"the right-hand side of {formula!r} uses {sorted(set(unknown))}; the only variable "
        f"is `{MODEL}` (the cube's models), {_EXAMPLE_FORMULA}."
    )


def _no_lhs(formula: str) -> FormulaError:
    """Build the error for a formula without a left-hand side."""
    return FormulaError(
        f"the formula {formula!r} has no left-hand side naming the loss; write "
        "'loss ~ model' (the cube's name on the left, the models on the right)."
    )


def _lhs_not_a_name(formula: str, lhs: str) -> FormulaError:
    """Build the error for a left-hand side that is not the name of one loss."""
    return FormulaError(
        f"the left-hand side of {formula!r} must be the name of one loss (the cube's "
        f"name), got {lhs!r}; write e.g. 'loss ~ model'."
    )


def _check_tokens(formula: str) -> str:
    """Check a formula's tokens against the whitelist before formulaic parses it.

    formulaic's tokenizer only processes the string; its parser, however,
    evaluates the function part of every call on the left-hand side, and its
    materializer evaluates the right-hand side. So this runs first, and only
    :func:`ast.parse` looks at the Python inside the formula.

    Returns
    -------
    str
        The loss named on the left-hand side.
    """
    try:
        tokens = list(tokenize(formula))
    except Exception as e:  # the tokenizer only processes the string
        raise FormulaError(f"cannot parse the formula {_shown(formula)}: {_reason(e)}") from e
    split = next(
        (k for k, t in enumerate(tokens) if t.kind is Token.Kind.OPERATOR and "~" in t.token),
        None,
    )
    if split is None or split == 0:
        raise _no_lhs(formula)
    lhs, tilde, rhs = tokens[:split], tokens[split], tokens[split + 1 :]
    lhs_text = formula[: tilde.source_start].strip() if tilde.source_start else str(lhs)
    if len(lhs) != 1 or lhs[0].kind is not Token.Kind.NAME:
        raise _lhs_not_a_name(formula, lhs_text)
    loss = lhs[0].token
    backticked = lhs[0].source_start is not None and formula[lhs[0].source_start] == "`"
    if not (backticked or loss.isidentifier()) or _is_dunder(loss) or not loss.strip():
        raise _lhs_not_a_name(formula, lhs_text)
    if not rhs and tilde.token.endswith("~"):
        raise FormulaError(
            f"the right-hand side of {formula!r} is empty; name the contrasts after `~`, "
            f"{_EXAMPLE_FORMULA}."
        )
    unknown: list[str] = []
    values = 0  # literal values, all Python tokens together
    try:
        for token in rhs:
            if token.kind is Token.Kind.PYTHON:
                values += _check_python(token.token, unknown)
                if values > MAX_LITERAL_VALUES:
                    raise _Refusal(
                        "",
                        clause=f"its literals hold more than {MAX_LITERAL_VALUES} values "
                        f"(cvstats.cube.formula.MAX_LITERAL_VALUES, a coding matrix of 50 "
                        "models), more than a formula over the models of one cube needs",
                    )
            elif token.kind is Token.Kind.NAME and token.token not in (MODEL, "."):
                backticked = token.source_start is not None and formula[token.source_start] == "`"
                if keyword.iskeyword(token.token):
                    raise _Refusal(f"the Python keyword `{token.token}`")
                if backticked or token.token.isidentifier():
                    if _is_dunder(token.token):
                        raise _Refusal(f"the dunder name `{token.token}`")
                    unknown.append(token.token)
                else:  # e.g. model.__class__, which formulaic would look up as a name
                    _check_python(token.token, unknown)
    except _Refusal as refusal:
        raise _refused(formula, refusal) from None
    if unknown:
        raise _unknown_variables(formula, unknown)
    return loss


def _check_terms(formula: str, lhs: SimpleFormula, rhs: SimpleFormula) -> None:
    """Check the terms formulaic parsed (a second line of defence after the tokens)."""
    terms = list(lhs)
    factors = list(terms[0].factors) if len(terms) == 1 else []
    if len(factors) != 1 or factors[0].eval_method.value != "lookup":
        raise _lhs_not_a_name(formula, str(lhs))
    unknown: list[str] = []
    try:
        for term in rhs:
            if len(term.factors) > 1:
                raise _Refusal(
                    f"the interaction `{term}`",
                    f"an interaction of `{MODEL}` with itself defines no further contrast",
                )
            for factor in term.factors:
                method = factor.eval_method.value
                if method == "lookup" and factor.expr != MODEL:
                    unknown.append(factor.expr)
                elif method == "python":
                    _check_python(factor.expr, unknown)
                elif method not in ("lookup", "literal"):
                    raise _Refusal(f"the factor `{factor.expr}` ({method})")
    except _Refusal as refusal:
        raise _refused(formula, refusal) from None
    if unknown:
        raise _unknown_variables(formula, unknown)


def _parse(formula: str) -> tuple[str, SimpleFormula]:
    """Check ``formula`` against the whitelist, then parse it with formulaic.

    Returns the loss name and the right-hand side. See the module docstring
    (*Formulas are data, not code*) for what a formula may contain.
    """
    if not isinstance(formula, str):
        raise CvstatsTypeError(
            f"`formula` must be a str such as 'loss ~ model', got {type(formula).__name__}."
        )
    _check_length(formula)
    loss = _check_tokens(formula)
    _check_work(formula)
    try:
        parsed = Formula(formula, _parser=_PARSER)
    except Exception as e:  # safe now: the whitelist ran; any failure is the formula's
        # (Exception only: KeyboardInterrupt and SystemExit go through)
        raise FormulaError(f"cannot parse the formula {_shown(formula)}: {_reason(e)}") from e
    lhs = getattr(parsed, "lhs", None)
    rhs = getattr(parsed, "rhs", None)
    if lhs is None or rhs is None:
        raise _no_lhs(formula)
    _check_terms(formula, lhs, rhs)
    return loss, rhs


def parse_formula(formula: str) -> tuple[str, str]:
    """Split a contrast formula into the loss it names and its right-hand side.

    The formula is parsed by formulaic (two-sided formulas only). The left-hand
    side must be the name of one loss; the right-hand side may only use the
    variable ``model``.

    Parameters
    ----------
    formula : str
        A formula such as ``"loss ~ model"`` or ``"zero_one ~ C(model, contr.sum)"``.

    Returns
    -------
    lhs : str
        The name of the loss (the cube's name, or a variable of a Dataset).
    rhs : str
        formulaic's normalized right-hand side (e.g. ``"1 + model"``).

    Raises
    ------
    FormulaError
        If formulaic cannot parse the formula (its message, with the faulty
        token between ``⧛ ⧚``, is kept), if there is no left-hand side or it is
        not a single name, if the right-hand side is empty or uses a variable
        other than ``model``, or if the formula holds anything outside the
        whitelist of the module docstring (attribute access, subscripts, calls
        other than ``C`` and ``contr.<coding>``, non-literal arguments, dunder
        names...): the message quotes the formula and names the offending part,
        and nothing in the formula is evaluated; if the formula is longer than
        ``MAX_FORMULA_LENGTH`` characters, its literals hold more than
        ``MAX_LITERAL_VALUES`` values, an exponent is above
        ``MAX_EXPONENT`` or an operator expands to more than
        ``MAX_TERMS`` terms (refused before formulaic does the work).

    Examples
    --------
    >>> from cvstats.cube.formula import parse_formula
    >>> parse_formula("loss ~ model")
    ('loss', '1 + model')
    >>> parse_formula("zero_one ~ 0 + model")
    ('zero_one', 'model')
    >>> parse_formula("loss ~ model +")
    Traceback (most recent call last):
    ...
    cvstats.errors.FormulaError: cannot parse the formula 'loss ~ model +': Operator `+` ...
    >>> parse_formula("loss ~ model.__class__")
    Traceback (most recent call last):
    ...
    cvstats.errors.FormulaError: cannot build contrasts from 'loss ~ model.__class__': it uses attribute access `model.__class__`, which formulas do not allow. ...
    """  # noqa: E501
    lhs, rhs = _parse(formula)
    return lhs, str(rhs)


# --------------------------------------------------------------------------
# weights
# --------------------------------------------------------------------------


def select_loss(data: xr.DataArray | xr.Dataset, loss: str, what: str) -> xr.DataArray:
    """Return the cube named ``loss`` from ``data`` (a cube or a Dataset of cubes)."""
    if isinstance(data, xr.Dataset):
        if loss not in data.data_vars:
            raise FormulaError(
                f"{what} names the loss {loss!r} but the Dataset holds the variables "
                f"{[str(v) for v in data.data_vars]}."
            )
        cube = data[loss]
    elif isinstance(data, xr.DataArray):
        if data.name != loss:
            hint = f"; write e.g. '{data.name} ~ model'" if what.startswith("the formula") else ""
            raise FormulaError(
                f"{what} names the loss {loss!r} but the cube is named {data.name!r}{hint}."
            )
        cube = data
    else:
        raise CvstatsTypeError(
            "`data` must be a cube (xarray.DataArray) or an xarray.Dataset of cubes, got "
            f"{type(data).__name__}."
        )
    if MODEL not in cube.dims or MODEL not in cube.coords:
        raise CubeError(
            f"the cube {loss!r} has no `{MODEL}` dim with model names (dims {list(cube.dims)})."
        )
    return cube


def _model_names(cube: xr.DataArray) -> list[str]:
    """Return the cube's model names, checked to be unique strings."""
    models = cube[MODEL].values.tolist()
    if not all(isinstance(m, str) for m in models) or len(set(models)) != len(models):
        raise CubeError(f"the `{MODEL}` coordinate must hold unique names (str), got {models}.")
    return models


def _format_weights(row: np.ndarray, models: Sequence[str]) -> str:
    """Write a weight vector readably: ``"-1*a + 1*b"``, zero weights omitted."""
    parts = []
    for w, m in zip(row.tolist(), models, strict=True):
        if w == 0:
            continue
        term = f"{abs(w):.4g}*{m}"
        if parts:
            parts.append(f"{'-' if w < 0 else '+'} {term}")
        else:
            parts.append(f"-{term}" if w < 0 else term)
    return " ".join(parts) if parts else "0"


def _weights_array(
    weights: np.ndarray, names: Sequence[str], models: Sequence[str]
) -> xr.DataArray:
    """Wrap a (contrast, model) weight matrix with its coordinates."""
    readable = [_format_weights(row, models) for row in weights]
    return xr.DataArray(
        weights,
        dims=(CONTRAST, MODEL),
        coords={
            CONTRAST: np.asarray(names, dtype=str),
            MODEL: np.asarray(models, dtype=object),
            "weights": (CONTRAST, np.asarray(readable, dtype=str)),
        },
        name="weights",
    )


def _model_matrix(rhs: SimpleFormula, formula: str, models: Sequence[str]) -> pd.DataFrame:
    """Materialize the right-hand side on one row per model (levels in cube order)."""
    frame = pd.DataFrame({MODEL: pd.Categorical(models, categories=models)})
    try:
        with warnings.catch_warnings():
            # A level list that leaves out a model makes formulaic warn and code it as
            # missing: that is an error here, not a warning.
            warnings.simplefilter("error", DataMismatchWarning)
            matrix = rhs.get_model_matrix(frame, context=_CONTEXT, na_action="raise")
    except Exception as e:  # the whitelist ran; any failure is the formula's
        raise FormulaError(
            f"cannot build contrasts from {_shown(formula)}: {type(e).__name__}: "
            f"{_reason(e)} The models (the levels of `{MODEL}`) are {list(models)}."
        ) from e
    return matrix


def contrast_matrix(formula: str, data: xr.DataArray | xr.Dataset) -> xr.DataArray:
    """Return the contrast weights a formula defines over the models of a cube.

    The right-hand side is materialized by formulaic on one row per model (a
    categorical ``model`` with the cube's models as levels, in cube order), giving
    the model matrix ``C`` of the cell-means regression ``μ = C β``. The weights
    are ``W = C⁻¹`` (``pinv(C)``, the least-squares coefficients, when there are
    fewer coefficients than models): coefficient ``c`` is ``Σ_m W[c, m] μ_m``.

    Parameters
    ----------
    formula : str
        ``"<loss> ~ <terms in model>"``, e.g. ``"loss ~ model"`` (treatment
        contrasts against the first model), ``"loss ~ 0 + model"`` (each model's
        own loss), ``"loss ~ C(model, contr.treatment('b'))"``,
        ``"loss ~ C(model, contr.sum)"``, ``"loss ~ C(model, contr.helmert)"``.
    data : xarray.DataArray or xarray.Dataset
        A cube, whose name must be the formula's left-hand side, or a Dataset of
        cubes, of which the left-hand side picks one.

    Returns
    -------
    xarray.DataArray
        Weights with dims ``("contrast", "model")``; the ``contrast`` coordinate
        holds formulaic's column names (``"Intercept"``, ``"model[T.b]"``, ...)
        and the string coordinate ``weights`` on ``contrast`` spells each row out
        (``"-1*a + 1*b"``, zero weights omitted, 4 significant digits).

    Raises
    ------
    FormulaError
        For every problem of :func:`parse_formula`; a left-hand side that is not
        the cube's name or not a variable of the Dataset; a level that is not a
        model (``contr.treatment("xgb")``) or any other failure to evaluate the
        right-hand side; a coefficient that is not estimable (the model matrix is
        rank deficient); a formula with no coefficient (``loss ~ 0``).

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.cube.formula import contrast_matrix
    >>> design = cvstats.designs.resampled(6, n_test=2, J=3, seed=0)
    >>> cube = cvstats.from_arrays(np.ones((3, 6, 3)), design=design,
    ...                            models=["a", "b", "c"], name="loss")
    >>> W = contrast_matrix("loss ~ model", cube)
    >>> W.values
    array([[ 1.,  0.,  0.],
           [-1.,  1.,  0.],
           [-1.,  0.,  1.]])
    >>> W.contrast.values.tolist()
    ['Intercept', 'model[T.b]', 'model[T.c]']
    >>> contrast_matrix("loss ~ C(model, contr.sum)", cube).weights.values.tolist()
    ['0.3333*a + 0.3333*b + 0.3333*c', '0.6667*a - 0.3333*b - 0.3333*c', '-0.3333*a + 0.6667*b - 0.3333*c']
    """  # noqa: E501
    return _weights(formula, data)[1]


def _weights(
    formula: str, data: xr.DataArray | xr.Dataset
) -> tuple[xr.DataArray, xr.DataArray, Facts]:
    """Return the cube a formula names, its weights (see :func:`contrast_matrix`) and facts."""
    loss, rhs = _parse(formula)
    cube = select_loss(data, loss, f"the formula {formula!r}")
    facts = validated(cube)
    models = _model_names(cube)
    matrix = _model_matrix(rhs, formula, models)
    names = [str(c) for c in matrix.columns]
    try:
        C = np.asarray(matrix, dtype=float)
    except (TypeError, ValueError) as e:  # a coding of non-numbers that formulaic let through
        raise FormulaError(
            f"cannot build contrasts from {_shown(formula)}: its model matrix on the models "
            f"{models} is not numeric ({_reason(e)}); a coding gives numeric weights, "
            f"{_EXAMPLE_FORMULA}."
        ) from e
    if C.shape != (len(models), len(names)) or not np.isfinite(C).all():
        raise FormulaError(
            f"{formula!r} does not give one finite row per model on the models {models}."
        )
    if not names:
        raise FormulaError(f"{formula!r} defines no contrast; {_EXAMPLE_FORMULA}.")
    rank = np.linalg.matrix_rank(C)
    if rank < len(names):
        # name the first column that adds nothing to the ones before it
        k = next(k for k in range(1, len(names) + 1) if np.linalg.matrix_rank(C[:, :k]) < k)
        raise FormulaError(
            f"the coefficient {names[k - 1]!r} of {formula!r} is not estimable: the formula "
            f"has {len(names)} coefficients but the {len(models)} models {models} only "
            f"determine {rank} of them (rank-deficient coding, e.g. an intercept plus a "
            "full set of model indicators)."
        )
    W = np.linalg.inv(C) if C.shape[0] == C.shape[1] else np.linalg.pinv(C)
    W[np.abs(W) < _ZERO * np.abs(W).max()] = 0.0
    return cube, _weights_array(W, names, models), facts


# --------------------------------------------------------------------------
# contrast cubes
# --------------------------------------------------------------------------


def _apply(
    cube: xr.DataArray,
    weights: xr.DataArray,
    formula: str,
    facts: Facts,
    *,
    means_used: bool = False,
) -> tuple[xr.DataArray, Facts | None]:
    """Return ``weights @ cube`` along ``model`` (the contrast cube, lazy on dask) and its facts.

    ``cube`` was validated (``facts``). In memory, a contrast whose weights are a
    difference of two models (or one model alone) is computed by subtraction,
    which equals the weighted sum to the last bit; the contrast cube is then
    made read-only and checked finite (a difference can overflow). It has the
    cube's NaN pattern, test sizes and coordinates, so what its validation
    would establish is returned (None when a difference overflowed: the caller
    validates it, which names the infinity), for the caller to hand down
    (:class:`cvstats.cube.known.Checked`); a lazy one is also remembered
    (:func:`cvstats.cube.known.remember`). With ``means_used`` (a caller that
    will run methods on it), the split means of a dense in-memory contrast are
    computed with the differences, block by block while in cache.
    """
    dims: list[Hashable] = [d for d in cube.dims if d != MODEL]
    W = weights.transpose(CONTRAST, MODEL).values
    signed = [(np.flatnonzero(row == 1), np.flatnonzero(row == -1)) for row in W]
    simple = all(
        p.size == 1 and m.size <= 1 and p.size + m.size == np.count_nonzero(row)
        for (p, m), row in zip(signed, W, strict=True)
    )
    overflow = None  # unknown: the contrast is searched for infinities below
    means = None  # the contrasts' split means ``(*extra, split, contrast)``, if computed
    if isinstance(cube.data, np.ndarray) and simple and cube.dims[-1] == MODEL:
        values = cube.data
        diff = np.empty((*values.shape[:-1], len(W)), dtype=values.dtype)
        # a dense cube's split means over `example` (the axis before `model`), block by block
        dense = cube.ndim >= 3 and cube.dims[-2] == EXAMPLE
        means_used = dense and means_used
        split = np.empty((*values.shape[:-2], len(W)), dtype=values.dtype) if means_used else None
        # the losses are finite: a difference is infinite only on overflow, which sets the
        # processor's overflow flag (an overflow: not remembered, validation names it)
        parts = leading_parts(values)  # in threads for a large cube (cvstats.cube.threads)
        overflow = any(
            map_parts(
                lambda p: _subtract(
                    values[p], diff[p], signed, None if split is None else split[p]
                ),
                parts,
            )
        )
        template = cube.isel({MODEL: 0}, drop=True)
        labels = weights.coords.variables
        coords = {
            **template.coords.variables,
            **_own_coords(template),
            CONTRAST: labels[CONTRAST],
            "weights": _own(labels["weights"]),
        }
        indexes = {**template.xindexes, CONTRAST: weights.xindexes[CONTRAST]}
        diff.setflags(write=False)
        out = labelled(diff, (*dims, CONTRAST), coords, indexes, cube.name, cube.attrs)
        means = split
    else:
        # einsum propagates NaN (0 * NaN is NaN), and the NaN pattern is the same for every
        # model, so the contrast is NaN exactly off the test sets.
        out = xr.dot(cube, weights.astype(cube.dtype), dim=MODEL)
        out = out.transpose(*dims, CONTRAST)
    out.name = cube.name
    out.attrs = {**cube.attrs, "formula": formula}
    proved: Facts | None = None
    if isinstance(out.data, np.ndarray):
        if out.data.flags.writeable:  # made by xr.dot
            out = _read_only(out)
        if overflow is False and means is not None:
            # the split means as the reduction of the contrast cube over `example` returns
            # them, read-only: every later call is handed this one array
            means.setflags(write=False)
            known = out.reduce(lambda _, axis: means, dim=EXAMPLE)
            proved = replace(facts, finite=True, means=known, largest=None)
        elif overflow is False or (overflow is None and not np.isinf(out.data).any()):
            proved = replace(facts, finite=True, means=None, largest=None)
        return out, proved
    elif facts.means is not None and facts.largest is not None:
        # lazy, the models' split means known: the contrasts' means are the weighted sums
        # of them (a split mean is linear), and no difference can overflow when the
        # largest loss times the largest sum of absolute weights is finite
        means = xr.dot(facts.means, weights.astype(facts.means.dtype), dim=MODEL)
        means = means.transpose(*[d for d in facts.means.dims if d != MODEL], CONTRAST)
        means.name, means.attrs = out.name, dict(out.attrs)
        bound = facts.largest * float(np.abs(W).sum(axis=1).max())
        finite = bool(bound < np.finfo(out.dtype).max)
        proved = replace(facts, finite=finite, means=means, largest=bound)
    else:  # lazy: finiteness is proved on the first read (cvstats.cube.validation.validated)
        proved = replace(facts, finite=False, means=None, largest=None)
    remember(out, proved)
    return out, proved


def _subtract(
    values: np.ndarray,
    out: np.ndarray,
    signed: list[tuple[Any, Any]],
    means: np.ndarray | None = None,
) -> bool:
    """Write each contrast ``values[..., p] - values[..., m]`` to ``out``; True on overflow.

    Block by block (:func:`cvstats.cube.threads.leading_blocks`): with ``means``
    (the split means ``(*extra, split, contrast)`` of these values), also each
    block's ``bottleneck.nanmean`` over ``example``, read while the block is in
    the processor's cache; bottleneck reduces row by row, so the means are those
    of the whole array.
    """
    overflow = False
    keep = 2 if means is not None else 1  # whole splits (and examples) for the means
    for at in leading_blocks(values.shape, keep=keep):
        block, into = values[at], out[at]
        for c, (p, m) in enumerate(signed):
            if not m.size:
                into[..., c] = block[..., p[0]]
                continue
            try:
                with np.errstate(over="raise"):  # per thread: numpy's error state is not shared
                    np.subtract(block[..., p[0]], block[..., m[0]], out=into[..., c])
            except FloatingPointError:
                overflow = True
                with np.errstate(over="ignore"):
                    np.subtract(block[..., p[0]], block[..., m[0]], out=into[..., c])
        if means is not None:  # bottleneck warns of nothing (no warnings filter in a thread)
            means[at] = bn.nanmean(into, axis=-2)
    return overflow


def _own(var: xr.Variable) -> xr.Variable:
    """Return a read-only copy of a coordinate (shared with the user's cube: not ours)."""
    values = np.array(var.values, copy=True)
    values.setflags(write=False)
    return xr.Variable(var.dims, values, var.attrs)


def _own_coords(cube: xr.DataArray) -> dict[Hashable, xr.Variable]:
    """Return read-only copies of the coordinates of ``cube`` that have no index."""
    return {
        name: _own(var)
        for name, var in cube.coords.variables.items()
        if not isinstance(var, xr.IndexVariable)
    }


def _read_only(cube: xr.DataArray) -> xr.DataArray:
    """Make the values and the coordinates of a cube we built read-only.

    The coordinates are copied first: they are shared with the user's cube,
    which is not ours to change.
    """
    cube.data.setflags(write=False)
    return cube.assign_coords(_own_coords(cube))


def contrasts(formula: str, data: xr.DataArray | xr.Dataset) -> xr.DataArray:
    """Apply the contrasts a formula defines to the per-example losses of a cube.

    Every contrast ``c`` gets the losses ``L_c(j, i) = Σ_m W[c, m] L_m(j, i)``
    with the weights ``W`` of :func:`contrast_matrix`. By docs/theory.md §1 a contrast
    has the covariance structure of a single model's loss, so every inference
    method applies to the contrast cube as to a cube of models.

    Parameters
    ----------
    formula : str
        ``"<loss> ~ <terms in model>"``; see :func:`contrast_matrix`.
    data : xarray.DataArray or xarray.Dataset
        A cube named after the formula's left-hand side, or a Dataset of cubes.
        numpy or dask backed: a dask-backed cube gives a lazy result. A score
        cube (:mod:`cvstats.cube.score`, one value per split and model) too: the
        left-hand side then names its metric (``"roc_auc ~ model"``).

    Returns
    -------
    xarray.DataArray
        The contrast cube: dims ``(*extra, "split", "example", "contrast")``
        (``model`` replaced by ``contrast``), NaN exactly where the cube is NaN
        (off the test sets), named after the loss, with every coordinate of the
        cube not on ``model`` (split coordinates, ``in_train``, ...), the
        ``contrast`` and ``weights`` coordinates of :func:`contrast_matrix`, and
        the cube's attrs plus ``formula``. For a score cube, dims
        ``(*extra, "split", "contrast")``, keeping ``n_test`` and the attrs
        ``greater_is_better`` and ``metric`` (a positive difference ``b - a`` of
        scores means ``b`` is better when ``greater_is_better`` is 1).

    Raises
    ------
    FormulaError
        See :func:`contrast_matrix`.

    See Also
    --------
    contrast_matrix : the weights as a ``(contrast, model)`` matrix.
    pairwise : all pairwise differences of models.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.cube.formula import contrasts
    >>> design = cvstats.designs.resampled(6, n_test=2, J=3, seed=0)
    >>> losses = np.broadcast_to([0.5, 0.25, 1.0], (3, 6, 3))
    >>> cube = cvstats.from_arrays(losses, design=design, models=["a", "b", "c"], name="loss")
    >>> diff = contrasts("loss ~ model", cube)
    >>> diff.dims
    ('split', 'example', 'contrast')
    >>> diff.weights.values.tolist()
    ['1*a', '-1*a + 1*b', '-1*a + 1*c']
    >>> diff.mean(["split", "example"]).values
    array([ 0.5 , -0.25,  0.5 ])
    >>> int(diff.isnull().sum()) == int(cube.isnull().sum())  # NaN off the test sets
    True
    """
    cube, weights, facts = _weights(formula, data)
    return _apply(cube, weights, formula, facts)[0]


def checked_contrasts(formula: str, data: xr.DataArray | xr.Dataset) -> Checked:
    """Return the contrast cube of :func:`contrasts` as a validated handle.

    For :func:`cvstats.compare`, which runs methods on it: what validating it
    would establish comes with it (:class:`cvstats.cube.known.Checked`; the
    contrast of a validated cube keeps its NaN pattern, sizes and coordinates,
    and its finiteness is checked while it is made), and the split means of a
    dense in-memory contrast are computed with its differences.
    """
    cube, weights, facts = _weights(formula, data)
    out, proved = _apply(cube, weights, formula, facts, means_used=True)
    return Checked(out, proved if proved is not None else validated(out))


def _pairwise_iv(models: object) -> None:
    """Check that ``models`` of :func:`pairwise` is a sequence of names, not one str."""
    if models is None:
        return
    if isinstance(models, str | bytes):
        example = list(models) if isinstance(models, str) else ["a", "b"]
        raise CvstatsTypeError(
            f"`models` must be a sequence of model names, got the {type(models).__name__} "
            f"{models!r}; write models={example}."
        )
    if not isinstance(models, Iterable):
        raise CvstatsTypeError(
            f"`models` must be a sequence of model names, got {type(models).__name__} "
            f"{models!r}; write e.g. models=['a', 'b']."
        )


def pairwise(
    data: xr.DataArray | xr.Dataset,
    *,
    loss: str | None = None,
    models: Sequence[str] | None = None,
) -> xr.DataArray:
    """Return the contrast cube of all pairwise differences of models.

    For every pair ``(a, b)`` with ``a`` before ``b`` (in cube order, or in the
    order of ``models``), the contrast ``"a - b"`` has the losses
    ``L_a(j, i) - L_b(j, i)`` (docs/theory.md §1). Pairwise differences are not a
    coding of ``model`` (``K`` models have ``K(K-1)/2`` of them but only ``K - 1``
    are independent), so they have no formula: this function builds them.

    Parameters
    ----------
    data : xarray.DataArray or xarray.Dataset
        A cube, or a Dataset of cubes (then ``loss`` picks one).
    loss : str, optional
        Name of the loss: must be the cube's name when given with a cube; needed
        with a Dataset of more than one variable.
    models : sequence of str, optional
        The models to compare, in the order that sets each difference's sign
        (default: every model, in cube order). At least two.

    Returns
    -------
    xarray.DataArray
        A contrast cube structured as the one of :func:`contrasts` (of a score
        cube too): dims ``(*extra, "split", "example", "contrast")`` with ``contrast`` labels
        ``"a - b"``, the ``weights`` coordinate (``"1*a - 1*b"``) and the attr
        ``formula`` set to ``"<loss> ~ pairwise(model)"`` (a description: the
        ``weights`` coordinate is the exact record).

    Raises
    ------
    FormulaError
        If ``loss`` is not the cube's name or not a variable of the Dataset.
    ArgumentError
        If ``models`` names an unknown model, repeats one or holds fewer than two.
    CvstatsTypeError
        If ``models`` is a single str (``"ab"`` is not the models ``a`` and ``b``)
        or not a sequence.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> design = cvstats.designs.resampled(6, n_test=2, J=3, seed=0)
    >>> losses = np.broadcast_to([0.5, 0.25, 1.0], (3, 6, 3))
    >>> cube = cvstats.from_arrays(losses, design=design, models=["a", "b", "c"], name="loss")
    >>> diff = cvstats.cube.formula.pairwise(cube)
    >>> diff.contrast.values.tolist()
    ['a - b', 'a - c', 'b - c']
    >>> diff.mean(["split", "example"]).values
    array([ 0.25, -0.5 , -0.75])
    """
    return _apply(*_pairwise_parts(data, loss, models))[0]


def _pairwise_parts(
    data: xr.DataArray | xr.Dataset, loss: str | None, models: Sequence[str] | None
) -> tuple[xr.DataArray, xr.DataArray, str, Facts]:
    """Return the validated cube, the weights, the formula and the facts of :func:`pairwise`."""
    if loss is None:
        if isinstance(data, xr.Dataset):
            if len(data.data_vars) != 1:
                names = [str(v) for v in data.data_vars]
                raise FormulaError(
                    f"`loss` is needed to pick a cube from a Dataset of {len(names)} variables "
                    f"{names} (e.g. several metrics of one search); compare one at a time: "
                    f"cvstats.pairwise(data, loss={names[0]!r}), or cvstats.pairwise(data"
                    f"[{names[0]!r}])."
                )
            loss = str(next(iter(data.data_vars)))
        elif isinstance(data, xr.DataArray):
            loss = str(data.name)
    _pairwise_iv(models)
    cube = select_loss(data, str(loss), "`loss`")
    facts = validated(cube)
    names = _model_names(cube)
    chosen = list(names) if models is None else [str(m) for m in models]
    unknown = [m for m in chosen if m not in names]
    if unknown:
        raise ArgumentError(f"`models` names unknown model(s) {unknown}; the models are {names}.")
    if len(set(chosen)) != len(chosen) or len(chosen) < 2:
        raise ArgumentError(
            f"`models` must name at least two distinct models, got {chosen}; the models are "
            f"{names}."
        )
    pairs = list(combinations(chosen, 2))
    W = np.zeros((len(pairs), len(names)))
    for row, (a, b) in enumerate(pairs):
        W[row, names.index(a)] = 1.0
        W[row, names.index(b)] = -1.0
    weights = _weights_array(W, [f"{a} - {b}" for a, b in pairs], names)
    return cube, weights, f"{loss} ~ pairwise({MODEL})", facts


def checked_pairwise(
    data: xr.DataArray | xr.Dataset, loss: str | None = None, models: Sequence[str] | None = None
) -> Checked:
    """Return the contrast cube of :func:`pairwise` as a validated handle.

    As :func:`checked_contrasts`: what validating it would establish comes with
    it, and the split means of a dense in-memory contrast are computed with it.
    """
    out, proved = _apply(*_pairwise_parts(data, loss, models), means_used=True)
    return Checked(out, proved if proved is not None else validated(out))
