"""The contract every cvstats result follows, implemented once.

:class:`Result` is the mixin every result derives from (the frozen dataclasses of
the inference methods and of the comparisons across datasets, and the Dataset of
estimates of the fits). It fixes:

* **values are DataArrays**: every number a method computes is an
  :class:`xarray.DataArray`, 0-d for a scalar result (:func:`as_dataarray`);
  options (``alpha``, ``mu0``, ``rope``...), sizes, counts and labels stay Python
  scalars;
* **intervals have one shape**: a ``ci_bound`` dim with coordinates
  ``["lower", "upper"]`` (:data:`CI_BOUND`, :func:`bounds`), as ArviZ does;
* **one reporting protocol**: :meth:`Result.to_frame` (a tidy
  :class:`pandas.DataFrame` whose last columns are the class's
  ``frame_columns``), :meth:`~Result.to_markdown`, :meth:`~Result.to_latex`,
  :meth:`~Result.to_html` (from the frame), :meth:`~Result.summary` (a statsmodels
  ``Summary``), ``str()`` (the summary's text), :meth:`~Result.interval` and
  :meth:`~Result.plot` (a clear :class:`~cvstats.errors.ArgumentError` where a
  result has none);
* **one notebook display** (:class:`Display`, which :class:`Result` derives from):
  a short ``repr`` (at most :data:`REPR_LINES` lines: the class, what the result
  is, and its main numbers, truncated with ``…`` and the count of the rows left
  out) and ``_repr_html_`` (the same as a small HTML table, every string
  escaped), both from :func:`text_display` and :func:`html_display`, which any
  other displayed object (a comparison table, a publication table) can call.
"""

from __future__ import annotations

import dataclasses
import numbers
import re
from collections.abc import Mapping, Sequence
from html import escape as html_escape
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.errors import ArgumentError, CvstatsTypeError
from cvstats.results.ranges import CLIP_COLUMN

__all__ = [
    "ordered_columns",
    "CI_BOUND",
    "BOUNDS",
    "HTML_ROWS",
    "REPR_LINES",
    "ConfidenceInterval",
    "Display",
    "Result",
    "as_dataarray",
    "bounds",
    "format_floats",
    "format_value",
    "html_display",
    "latex_escape",
    "split_interval",
    "text_display",
    "tidy_frame",
    "truncate_frame",
]

#: Name of the dim holding interval bounds (coordinates :data:`BOUNDS`).
CI_BOUND = "ci_bound"
#: Coordinates of the :data:`CI_BOUND` dim.
BOUNDS = ("lower", "upper")

# header values longer than this go below the tables, as notes
_LONG = 80
#: LaTeX command of each Greek letter (lowercase, and the uppercase ones that differ from Latin
#: letters)
GREEK_COMMANDS = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "ε": "varepsilon",
    "ϵ": "epsilon",
    "ζ": "zeta",
    "η": "eta",
    "θ": "theta",
    "ϑ": "vartheta",
    "ι": "iota",
    "κ": "kappa",
    "λ": "lambda",
    "μ": "mu",
    "µ": "mu",  # micro sign
    "ν": "nu",
    "ξ": "xi",
    "π": "pi",
    "ρ": "rho",
    "σ": "sigma",
    "ς": "varsigma",
    "τ": "tau",
    "υ": "upsilon",
    "φ": "varphi",
    "ϕ": "phi",
    "χ": "chi",
    "ψ": "psi",
    "ω": "omega",
    "Γ": "Gamma",
    "Δ": "Delta",
    "Θ": "Theta",
    "Λ": "Lambda",
    "Ξ": "Xi",
    "Π": "Pi",
    "Σ": "Sigma",
    "Υ": "Upsilon",
    "Φ": "Phi",
    "Ψ": "Psi",
    "Ω": "Omega",
}
#: Other symbols of the labels, as pdflatex-safe LaTeX (math, or a text command)
LATEX_SYMBOLS = {
    "±": r"$\pm$",
    "×": r"$\times$",
    "·": r"$\cdot$",
    "−": "$-$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "≠": r"$\neq$",
    "≈": r"$\approx$",
    "∞": r"$\infty$",
    "→": r"$\to$",
    "√": r"$\surd$",
    "²": "$^{2}$",
    "³": "$^{3}$",
    "—": "---",
    "–": "--",
    "…": r"\ldots{}",
    "†": r"\dag{}",
    "§": r"\S{}",
    "ı": r"\i{}",
}
#: LaTeX accent command of each combining accent (``\u0302`` hat ...)
LATEX_ACCENTS = {"\u0302": "hat", "\u0303": "tilde", "\u0304": "bar", "\u0305": "bar"}
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "%": r"\%",
    "_": r"\_",
    "&": r"\&",
    "#": r"\#",
    "$": r"\$",
    "{": r"\{",
    "}": r"\}",
}


def as_dataarray(value: Any, *, keep_attrs: bool = True) -> xr.DataArray:
    """Return ``value`` as a DataArray: a real number becomes a 0-d DataArray.

    The one conversion every result uses for its values.

    Parameters
    ----------
    value : xarray.DataArray or real number (Python or numpy scalar, 0-d array)
        The value.
    keep_attrs : bool, default True
        ``False``: a shallow copy of a DataArray without its attrs (the attrs of a
        method's input are not those of its output).

    Returns
    -------
    xarray.DataArray
        ``value`` itself (or its attr-less shallow copy), or a new 0-d DataArray
        holding it (no copy of the number, so results keep their values exactly).

    Raises
    ------
    CvstatsTypeError
        For anything else (strings, sequences, arrays with dims).

    Examples
    --------
    >>> from cvstats.results import as_dataarray
    >>> as_dataarray(0.25).item(), as_dataarray(0.25).dims
    (0.25, ())
    """
    if isinstance(value, xr.DataArray):
        if keep_attrs:
            return value
        out = value.copy(deep=False)
        out.attrs = {}
        return out
    if isinstance(value, numbers.Number | np.bool_) and not isinstance(value, str):
        return xr.DataArray(value)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return xr.DataArray(value)
    raise CvstatsTypeError(
        f"a result value must be an xarray.DataArray or a number, got {type(value).__name__}."
    )


def bounds(
    lower: xr.DataArray, upper: xr.DataArray, *, alpha: float | None = None
) -> xr.DataArray:
    """Stack two bound arrays on a trailing ``ci_bound`` dim (``["lower", "upper"]``).

    The one stored form of an interval in cvstats: its level goes in its attrs
    (``alpha``, and ``level = 1 - alpha``, as ArviZ records ``hdi_prob``) when
    given; :class:`ConfidenceInterval` and the frames' ``ci_lower``/``ci_upper``
    columns are views of it. Lazy on dask-backed arrays.

    Examples
    --------
    >>> import xarray as xr
    >>> from cvstats.results import bounds
    >>> ci = bounds(xr.DataArray(0.1), xr.DataArray(0.3), alpha=0.05)
    >>> ci.dims, ci.ci_bound.values.tolist(), ci.attrs["level"]
    (('ci_bound',), ['lower', 'upper'], 0.95)
    """
    out = _stacked(lower, upper)
    if alpha is not None:
        out.attrs = {**out.attrs, "alpha": float(alpha), "level": round(1.0 - float(alpha), 12)}
    return out


def _stacked(lower: xr.DataArray, upper: xr.DataArray) -> xr.DataArray:
    pair = [as_dataarray(lower), as_dataarray(upper)]
    low, high = pair
    if (
        isinstance(low.data, np.ndarray)
        and isinstance(high.data, np.ndarray)
        and low.dims == high.dims
        and low.shape == high.shape
        and all(low.indexes[d].equals(high.indexes[d]) for d in low.indexes)
    ):  # in memory and aligned: stack without xarray's alignment machinery
        return xr.DataArray(
            np.stack([low.data, high.data], axis=-1),
            dims=(*low.dims, CI_BOUND),
            coords={**low.coords.variables, CI_BOUND: np.array(BOUNDS)},
            name=low.name,
            attrs=dict(low.attrs),
        )
    out = xr.concat(pair, dim=CI_BOUND, coords="minimal", compat="override")
    return out.assign_coords({CI_BOUND: np.array(BOUNDS)}).transpose(..., CI_BOUND)


class ConfidenceInterval(NamedTuple):
    """Tuple view of an interval: ``low, high = res.conf_int()``.

    Both bounds are DataArrays over the result's dims (0-d for a scalar result);
    ``-inf``/``inf`` for one-sided intervals. ``interval()`` gives the same
    numbers as one DataArray with a ``ci_bound`` dim.
    """

    low: xr.DataArray
    high: xr.DataArray


def split_interval(interval: xr.DataArray) -> ConfidenceInterval:
    """Return the :class:`ConfidenceInterval` (tuple view) of an interval on ``ci_bound``."""
    low, high = (interval.sel({CI_BOUND: b}, drop=True) for b in BOUNDS)
    return ConfidenceInterval(low, high)


def tidy_frame(
    values: dict[str, xr.DataArray],
    constants: dict[str, Any] | None = None,
    columns: list[str] | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Tidy frame of DataArrays sharing dims: one row per element, the dims first.

    Returns the frame (columns: the dims, then ``values``' names, then
    ``constants``' names, each constant repeated on every row; or the dims then
    ``columns`` when given) and the dims. Non-dim coordinates are dropped; the
    arrays are broadcast against each other and computed.
    """
    constants = constants or {}
    arrays = list(values.values())
    same = all(a.dims == arrays[0].dims and a.shape == arrays[0].shape for a in arrays)
    fast = _product_frame(values, constants, columns) if same else None
    if fast is not None:
        frame, dims = fast, [str(d) for d in arrays[0].dims]
    else:
        frame, dims = _dataset_frame(values, same)
        for name, value in constants.items():
            frame[name] = value
    return (frame if columns is None else ordered_columns(frame, [*dims, *columns])), dims


def _dataset_frame(values: dict[str, xr.DataArray], same: bool) -> tuple[pd.DataFrame, list[str]]:
    """Build the frame of :func:`tidy_frame` the general way, through an ``xarray.Dataset``."""
    arrays = list(values.values())
    aligned = arrays if same else xr.broadcast(*arrays)  # one shape already: no broadcast
    ds = xr.Dataset(dict(zip(values, aligned, strict=True))).compute()
    dims = [str(d) for d in ds.dims]
    ds = ds.drop_vars([c for c in ds.coords if c not in ds.dims])
    if dims:
        first = next(iter(values.values())).dims
        order = [*first, *[d for d in ds.dims if d not in first]]
        dims = [str(d) for d in order]
        frame = ds.to_dataframe(dim_order=order).reset_index()
    else:
        frame = pd.DataFrame({k: [v.item()] for k, v in ds.data_vars.items()})
    return frame, dims


def ordered_columns(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame[columns]``, without a copy when the columns are in that order already."""
    return frame if list(frame.columns) == columns else frame[columns]


def _product_frame(
    values: dict[str, xr.DataArray], constants: dict[str, Any], columns: list[str] | None = None
) -> pd.DataFrame | None:
    """Build the frame of :func:`tidy_frame` from numpy directly (None where that does not apply).

    For arrays in memory with the same dims, shape and dim indexes (every
    result's fields): the dim columns are the product of the indexes (C order,
    as ``Dataset.to_dataframe`` lays them out, each index's dtype kept) and each
    value column the flattened array, in one DataFrame construction (with
    ``columns``: the dims then those columns, in that order). Equal to the
    general path (tested).
    """
    arrays = list(values.values())
    first = arrays[0]
    if not first.dims or not all(isinstance(a.data, np.ndarray) for a in arrays):
        return None
    indexes = [first.get_index(d) for d in first.dims]
    for a in arrays[1:]:
        if not all(a.get_index(d).equals(i) for d, i in zip(first.dims, indexes, strict=True)):
            return None
    shape = first.shape
    data: dict[str, Any] = {}
    for i, index in enumerate(indexes):
        inner, outer = int(np.prod(shape[i + 1 :])), int(np.prod(shape[:i]))
        positions = np.tile(np.repeat(np.arange(len(index)), inner), outer)
        data[str(first.dims[i])] = index.take(positions).array
    dims = list(data)
    for name, a in values.items():
        data[name] = a.data.reshape(-1)
    data.update(constants)
    if columns is not None:
        data = {name: data[name] for name in [*dims, *columns]}
    return pd.DataFrame(data)


def format_value(value: Any, precision: int, nan: str = "nan") -> str:
    """Return one cell of a table as text: a real number to ``precision`` significant digits.

    The one number format of the tables of results and of comparison tables.

    Parameters
    ----------
    value : Any
        A bool, an integer, a real number (NaN shown as ``nan``, ±inf as
        ``inf``/``-inf``) or anything else (``str(value)``).
    precision : int
        Significant digits of a real number.
    nan : str, default "nan"
        The text of a NaN (a comparison table leaves the cell empty).

    Returns
    -------
    str

    Examples
    --------
    >>> format_value(0.123456, 3), format_value(float("nan"), 3, nan=""), format_value(7, 3)
    ('0.123', '', '7')
    """
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        if np.isnan(value):
            return nan
        if np.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.{precision}g}"
    return str(value)


def format_floats(frame: pd.DataFrame, precision: int, nan: str = "nan") -> pd.DataFrame:
    """Return a copy of ``frame`` with its float columns as text (:func:`format_value`)."""
    shown = frame.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            shown[col] = [format_value(v, precision, nan) for v in shown[col]]
    return shown


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters in plain text (captions, labels).

    pandas escapes table cells itself (``Styler.format(escape="latex")``) but
    offers no public function for one string, so this small table is kept.

    Examples
    --------
    >>> latex_escape("50% of a_b")
    '50\\% of a\\_b'
    """
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


# a symbol as math (``$\rho$``) or a Latin letter, then combining accents
_ACCENTED = re.compile(rf"(\$[^$]*\$|[A-Za-z])([{''.join(LATEX_ACCENTS)}]+)")
# two math groups that touch (``$\rho$$\mu$``), not an escaped ``\$``
_TOUCHING = re.compile(r"(?<!\\)\$\$")


def latex_unicode(latex: str) -> str:
    r"""Return escaped LaTeX with its Unicode symbols made pdflatex-safe.

    Greek letters and the symbols of :data:`LATEX_SYMBOLS` become math
    (``ρ`` → ``$\rho$``, ``−`` → ``$-$``), a combining accent the command on
    what it accents (``ρ̂`` → ``$\hat{\rho}$``), and math groups that touch
    merge. For the tables of results, whose cells pandas has already escaped;
    a label with scripts (``μ_A``) is set by
    :func:`cvstats.reporting.tables.latex_label`.

    Examples
    --------
    >>> print(latex_unicode("a − b, ρ̂ ≤ 1/K, n1μ"))
    a $-$ b, $\hat{\rho}$ $\leq$ 1/K, n1$\mu$
    """
    out = "".join(
        f"$\\{GREEK_COMMANDS[ch]}$" if ch in GREEK_COMMANDS else LATEX_SYMBOLS.get(ch, ch)
        for ch in latex
    )

    def accent(match: re.Match[str]) -> str:
        body = match.group(1).strip("$")
        for mark in match.group(2):
            body = f"\\{LATEX_ACCENTS[mark]}{{{body}}}"
        return f"${body}$"

    return _TOUCHING.sub("", _ACCENTED.sub(accent, out))


# ----------------------------------------------------------------------
# notebook display: a short repr and a small HTML table, shared by every result
# ----------------------------------------------------------------------

#: Most lines of a result's ``repr`` (heading, table and notes).
REPR_LINES = 20
#: Most body rows of the table of a result's ``_repr_html_``.
HTML_ROWS = 20
# mark of what a display leaves out, and the widest cell and line it shows
_ELLIPSIS = "…"
_CELL = 40
_LINE = 160


def measured_row(name: str, attrs: Mapping[str, Any]) -> tuple[str, str]:
    """Return the summary row naming what a result measures: a loss, or a score and its way.

    A score cube's attrs (kept on a result's values) carry ``greater_is_better``.

    Examples
    --------
    >>> measured_row("roc_auc", {"greater_is_better": 1})
    ('Score:', 'roc_auc (larger is better)')
    >>> measured_row("zero_one", {})
    ('Loss:', 'zero_one')
    """
    if "greater_is_better" in attrs:
        way = "larger" if int(attrs["greater_is_better"]) else "smaller"
        return "Score:", f"{name} ({way} is better)"
    return "Loss:", name


def _wrapped(text: str, width: int = 100) -> list[str]:
    """Wrap a verdict's lines for a summary (details, indented, stay indented)."""
    import textwrap

    out: list[str] = []
    for line in text.splitlines():
        indent = "    " if line.startswith("  ") else "  "
        first = indent if line.startswith("  ") else "- "
        out += textwrap.wrap(line.strip(), width, initial_indent=first, subsequent_indent=indent)
    return out


def _one_line(value: Any, width: int) -> str:
    """``value`` as text on one line, cut to ``width`` characters (ending in ``…``)."""
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + _ELLIPSIS


def _cells(frame: pd.DataFrame, precision: int, width: int) -> pd.DataFrame:
    """Every cell of ``frame`` as text: numbers to ``precision`` digits, one line each."""
    out = pd.DataFrame(index=range(len(frame)))
    for i in range(frame.shape[1]):
        values = frame.iloc[:, i].tolist()
        out[i] = [_one_line(format_value(v, precision), width) for v in values]
    out.columns = pd.Index([_one_line(c, width) for c in frame.columns], dtype=object)
    return out


def truncate_frame(frame: pd.DataFrame, max_rows: int) -> tuple[pd.DataFrame, int]:
    """Return the first and last rows of a frame around a row of ``…``, and the rows left out.

    The one truncation of every display (:func:`text_display`,
    :func:`html_display`, the publication tables): a frame of at most
    ``max_rows`` rows comes back as it is; a longer one as its first and last
    rows with a row of ``"…"`` between them, ``max_rows`` rows in all.

    Parameters
    ----------
    frame : pandas.DataFrame
        Any frame (its index is dropped when it is cut).
    max_rows : int
        Most rows of the result, the ``…`` row included (at least 2).

    Returns
    -------
    (pandas.DataFrame, int)
        The frame shown (object columns when cut) and how many rows it leaves out.

    Examples
    --------
    >>> import pandas as pd
    >>> shown, hidden = truncate_frame(pd.DataFrame({"x": range(10)}), 5)
    >>> shown["x"].tolist(), hidden
    ([0, 1, '…', 8, 9], 6)
    """
    n = len(frame)
    if n <= max_rows:
        return frame, 0
    keep = max(max_rows - 1, 1)
    head, tail = (keep + 1) // 2, keep // 2
    filler = pd.DataFrame([[_ELLIPSIS] * frame.shape[1]], columns=frame.columns, dtype=object)
    parts = [frame.iloc[:head].astype(object), filler, frame.iloc[n - tail :].astype(object)]
    return pd.concat(parts, ignore_index=True), n - head - tail


def _hidden_note(hidden: int, total: int) -> str:
    return f"{_ELLIPSIS} {hidden} more rows ({total} in all)"


def _right_aligned(frame: pd.DataFrame) -> list[bool]:
    """Which columns hold numbers (shown right-aligned); booleans and text are not."""
    return [
        pd.api.types.is_numeric_dtype(frame.iloc[:, i])
        and not pd.api.types.is_bool_dtype(frame.iloc[:, i])
        for i in range(frame.shape[1])
    ]


def text_display(
    frame: pd.DataFrame,
    heading: Sequence[str] = (),
    notes: Sequence[str] = (),
    *,
    max_lines: int = REPR_LINES,
    precision: int = 4,
) -> str:
    """Return the short text display (``repr``) of a result: heading, table, notes.

    The one text display of cvstats: ``heading`` (each line cut to one line),
    a blank line, ``frame`` as a plain table (numbers to ``precision``
    significant digits and right-aligned, text left-aligned, cells cut to 40
    characters), then ``notes``. The whole fits in ``max_lines`` lines: the
    notes give way first, then the table keeps its first and last rows around a
    ``…`` row (:func:`truncate_frame`) and says how many rows it leaves out.

    Parameters
    ----------
    frame : pandas.DataFrame
        The main numbers, one row per element (its index is not shown).
    heading : sequence of str
        Lines above the table; by convention the first names the class and what
        the result is (``"InferenceResult: Corrected resampled t: loss"``).
    notes : sequence of str
        Lines below the table.
    max_lines : int, default :data:`REPR_LINES`
        Most lines of the text.
    precision : int, default 4
        Significant digits of the floats.

    Returns
    -------
    str
        No trailing blanks on any line.

    Examples
    --------
    >>> import pandas as pd
    >>> print(text_display(pd.DataFrame({"model": ["a", "b"], "estimate": [0.1234567, 2.0]}),
    ...                    ["Example: two models"]))
    Example: two models
    <BLANKLINE>
    model      estimate
    -------  ----------
    a            0.1235
    b                 2
    """
    heading = [_one_line(h, _LINE) for h in heading]
    notes = [_one_line(n, _LINE) for n in notes]
    fixed = len(heading) + bool(heading) + 2  # the heading, a blank line, the table's header
    rows = max_lines - fixed - len(notes)
    while notes and rows < min(len(frame), 3):
        notes.pop()
        rows += 1
    total = len(frame)
    hidden = 0
    if total > rows:
        rows -= 1  # the line saying what is left out
        shown, hidden = truncate_frame(frame, max(rows, 2))
        notes = [_hidden_note(hidden, total), *notes]
    else:
        shown = frame
    right = _right_aligned(frame)
    cells = _cells(shown, precision, _CELL)
    body = cells.to_markdown(
        index=False,
        tablefmt="simple",
        disable_numparse=True,
        colalign=["right" if r else "left" for r in right] or None,
    )
    lines = [*heading, *([""] if heading else []), *body.splitlines(), *notes]
    return "\n".join(line.rstrip() for line in lines)


def html_display(
    frame: pd.DataFrame,
    heading: Sequence[str] = (),
    notes: Sequence[str] = (),
    *,
    max_rows: int = HTML_ROWS,
    precision: int = 4,
) -> str:
    """Return the notebook display (``_repr_html_``) of a result: a small captioned table.

    The one HTML display of cvstats: ``frame`` as an HTML table (numbers to
    ``precision`` significant digits, at most ``max_rows`` rows: the first and
    last around a ``…`` row, :func:`truncate_frame`), captioned by ``heading``,
    followed by ``notes`` and the count of the rows left out. Every string —
    cells, column names, heading and notes — is escaped (:func:`html.escape`),
    so a model named ``<script>…</script>`` is shown, never run.

    Parameters
    ----------
    frame : pandas.DataFrame
        The main numbers (its index is not shown).
    heading : sequence of str
        Lines of the caption (the first in bold).
    notes : sequence of str
        Paragraphs below the table.
    max_rows : int, default :data:`HTML_ROWS`
        Most body rows of the table, the ``…`` row included.
    precision : int, default 4
        Significant digits of the floats.

    Returns
    -------
    str
        A ``<div class="cvstats-display">`` holding the table and the notes.
    """
    shown, hidden = truncate_frame(frame, max_rows)
    cells = _cells(shown, precision, 10 * _CELL)
    table = str(cells.to_html(index=False, border=0, escape=True))
    lines = [html_escape(_one_line(h, 10 * _LINE)) for h in heading]
    if lines:
        caption = "<br>".join([f"<strong>{lines[0]}</strong>", *lines[1:]])
        first, rest = table.split("\n", 1)
        style = "text-align: left; caption-side: top"
        table = f'{first}\n  <caption style="{style}">{caption}</caption>\n{rest}'
    paragraphs = [*([_hidden_note(hidden, len(frame))] if hidden else []), *notes]
    body = "".join(f"\n<p>{html_escape(_one_line(p, 10 * _LINE))}</p>" for p in paragraphs)
    return f'<div class="cvstats-display">\n{table}{body}\n</div>'


class Display:
    """Mixin of the notebook display: a short ``repr`` and ``_repr_html_``, implemented once.

    Both come from three hooks a class may refine: :meth:`_display_frame` (the
    main numbers; default ``to_frame()``), :meth:`_display_heading` (default:
    the class name and ``_caption()``, then :meth:`_display_details`) and
    :meth:`_display_notes`. A frozen dataclass using it must say
    ``@dataclass(repr=False)``, or the dataclass writes its own ``repr``.
    """

    __slots__ = ()

    def _caption(self) -> str:
        """Return a one-line description of the object (default: its class name)."""
        return type(self).__name__

    def _display_details(self) -> list[str]:
        """Return the heading's lines after the first (what the numbers are; default none)."""
        return []

    def _display_heading(self) -> list[str]:
        """Return the heading: ``"<class>: <caption>"``, then :meth:`_display_details`."""
        name, caption = type(self).__name__, self._caption()
        first = name if caption == name else f"{name}: {caption}"
        return [first, *self._display_details()]

    def _display_frame(self) -> pd.DataFrame:
        """Return the main numbers shown (default: ``to_frame()``)."""
        frame: pd.DataFrame = self.to_frame()  # type: ignore[attr-defined]
        return frame

    def _display_notes(self) -> list[str]:
        """Return the lines below the table (default none)."""
        return []

    def __repr__(self) -> str:
        return text_display(self._display_frame(), self._display_heading(), self._display_notes())

    def _repr_html_(self) -> str:
        return html_display(self._display_frame(), self._display_heading(), self._display_notes())


class Result(Display):
    """Mixin of every cvstats result: the reporting protocol, implemented once.

    A subclass is a frozen dataclass (or, for estimates, an :class:`xarray.Dataset`)
    and sets ``frame_columns``, the stable columns :meth:`to_frame` ends with
    (after one column per dim of the result), and ``value_fields``, the names of
    its fields that hold computed values (DataArrays). It may refine
    :meth:`to_frame`, the summary's header (``_summary_info``) and the notebook
    display's hooks (:class:`Display`: ``_display_frame``, ``_display_details``,
    ``_display_notes``); everything else comes from here. A dataclass result says
    ``@dataclass(frozen=True, repr=False)`` so that its ``repr`` is the short one.
    """

    __slots__ = ()

    #: Stable columns of :meth:`to_frame`, after the dims' columns.
    frame_columns: ClassVar[tuple[str, ...]] = ()
    #: Fields holding computed values: always :class:`xarray.DataArray`.
    value_fields: ClassVar[tuple[str, ...]] = ()
    #: Columns of :data:`cvstats.results.FRAME_COLUMNS` that this result's own frame
    #: calls otherwise (e.g. a posterior's ``mean`` is the comparison table's
    #: ``estimate``); read by :class:`cvstats.ComparisonTable`.
    comparison_columns: ClassVar[dict[str, str]] = {}

    # ------------------------------------------------------------------
    # values
    # ------------------------------------------------------------------

    def _coerce_values(self) -> None:
        """Turn the ``value_fields`` of a frozen dataclass into DataArrays (``__post_init__``)."""
        for name in self.value_fields:
            object.__setattr__(self, name, as_dataarray(getattr(self, name)))

    def _value_arrays(self) -> dict[str, xr.DataArray]:
        """Return the computed values, ``{name: DataArray}``, in field order."""
        return {name: getattr(self, name) for name in self.value_fields}

    # ------------------------------------------------------------------
    # the tidy frame and what derives from it
    # ------------------------------------------------------------------

    def to_frame(self) -> pd.DataFrame:
        """Return a tidy DataFrame: one row per element of the result's dims.

        Columns: the dims, then the class's ``frame_columns``. By default the
        columns are the ``value_fields`` and the scalar (non-value) fields.
        """
        frame, dims = tidy_frame(self._value_arrays())
        if dataclasses.is_dataclass(self):
            for f in dataclasses.fields(self):
                value = getattr(self, f.name)
                if f.name not in self.value_fields and isinstance(value, str | numbers.Number):
                    frame[f.name] = value
        cols = list(self.frame_columns) or [c for c in frame.columns if c not in dims]
        return frame[[*dims, *cols]]

    def _frame_dims(self, frame: pd.DataFrame) -> list[str]:
        """Return the dim columns of a frame of this result (those before ``frame_columns``)."""
        return [str(c) for c in frame.columns if c not in self.frame_columns]

    def _caption(self) -> str:
        """Return a one-line description of the result (title of tables and summaries)."""
        title = getattr(self, "title", None)
        if isinstance(title, str) and title:
            loss = getattr(self, "loss", None)
            return f"{title}: {loss}" if isinstance(loss, str) and loss else title
        return type(self).__name__

    def _display(self, precision: int, **options: Any) -> pd.DataFrame:
        """Return the frame with its numbers formatted to ``precision`` significant digits.

        A bound clipped at its metric's range is marked (:meth:`_mark_clipped`).
        """
        frame = self.to_frame(**options)
        shown = format_floats(frame, precision)
        return self._mark_clipped(shown, frame, **options) if self._clip_notes(frame) else shown

    # ------------------------------------------------------------------
    # intervals clipped at a bounded metric's range (cvstats.results.ranges)
    # ------------------------------------------------------------------

    def _clip_note(self) -> str:
        """Return the note on intervals clipped at the metric's range (default none)."""
        return ""

    def _mark_clipped(
        self, shown: pd.DataFrame, frame: pd.DataFrame, **options: Any
    ) -> pd.DataFrame:
        """Return ``shown`` (``frame`` as text) with its clipped bounds marked (default as is)."""
        return shown

    def _clip_notes(self, frame: pd.DataFrame) -> list[str]:
        """Return ``[the clipping note]`` when a row of ``frame`` was clipped, else ``[]``."""
        flags = frame.get(CLIP_COLUMN)
        if flags is None or not flags.to_numpy(bool).any():
            return []
        return [note for note in (self._clip_note(),) if note]

    def to_markdown(self, precision: int = 4, **options: Any) -> str:
        """Return a Markdown (pipe) table of :meth:`to_frame`, preceded by the caption.

        Parameters
        ----------
        precision : int, default 4
            Significant digits.
        **options
            Passed to :meth:`to_frame` (e.g. ``alpha``).

        Returns
        -------
        str
        """
        shown = self._display(precision, **options)
        body = shown.to_markdown(index=False)
        notes = "".join(f"\n\n{note}" for note in self._clip_notes(shown))
        return f"{self._caption()}\n\n{body}{notes}"

    def to_latex(self, precision: int = 4, caption: str | None = None, **options: Any) -> str:
        """Return a booktabs LaTeX table of :meth:`to_frame` (pandas' ``Styler.to_latex``).

        Parameters
        ----------
        precision : int, default 4
            Significant digits.
        caption : str, optional
            LaTeX caption; default the result's caption, escaped.
        **options
            Passed to :meth:`to_frame` (e.g. ``alpha``).

        Returns
        -------
        str
        """
        shown = self._display(precision, **options)
        styler = shown.style.hide(axis="index")
        styler = styler.format(escape="latex").format_index(escape="latex", axis=1)
        text = caption if caption is not None else latex_escape(self._caption())
        latex = str(styler.to_latex(hrules=True, caption=text))
        notes = "".join(f"\n{latex_escape(note)}\n" for note in self._clip_notes(shown))
        return latex_unicode(latex + notes)

    def to_html(self, precision: int = 4, **options: Any) -> str:
        """Return an HTML table of :meth:`to_frame`, preceded by the caption.

        Parameters
        ----------
        precision : int, default 4
            Significant digits.
        **options
            Passed to :meth:`to_frame` (e.g. ``alpha``).

        Returns
        -------
        str
        """
        shown = self._display(precision, **options)
        html = shown.to_html(index=False, border=0)
        notes = "".join(f"\n<p>{html_escape(note)}</p>" for note in self._clip_notes(shown))
        return f"<p>{html_escape(self._caption())}</p>\n{html}{notes}"

    # ------------------------------------------------------------------
    # summary
    # ------------------------------------------------------------------

    def _summary_info(self, **options: Any) -> list[tuple[str, str]]:
        """Header rows ``(label, value)`` of :meth:`summary`."""
        return [("Result:", self._caption())]

    def _summary_table(self, frame: pd.DataFrame, **options: Any) -> tuple[list[str], list[str]]:
        """Columns of the frame shown in :meth:`summary` and their headers."""
        cols = [c for c in frame.columns if c not in self._frame_dims(frame)]
        return cols, cols

    def summary(self, precision: int = 4, **options: Any) -> Any:
        """Return a statsmodels ``Summary`` (``as_text()``, ``as_latex()``, ``as_html()``).

        Parameters
        ----------
        precision : int, default 4
            Significant digits of the values.
        **options
            Passed to :meth:`to_frame` (e.g. ``alpha``).

        Returns
        -------
        statsmodels.iolib.summary.Summary
            A header table (what the result is) and a table of its values, one
            row per element of its dims.
        """
        from statsmodels.iolib.summary import Summary
        from statsmodels.iolib.table import SimpleTable

        frame = self.to_frame(**options)
        info = self._summary_info(**options)
        short = [(k, v) for k, v in info if len(v) <= _LONG]
        smry = Summary()
        smry.tables.append(SimpleTable([[v] for _, v in short], stubs=[k for k, _ in short]))
        dims = self._frame_dims(frame)
        cols, headers = self._summary_table(frame, **options)
        stubs = [" ".join(str(v) for v in row) for row in frame[dims].itertuples(index=False)]
        shown = pd.DataFrame({c: [format_value(v, precision) for v in frame[c]] for c in cols})
        clipped = self._clip_notes(frame)
        if clipped:
            shown = self._mark_clipped(shown, frame, **options)
        data = shown[cols].to_numpy().tolist()
        smry.tables.append(SimpleTable(data, headers=headers, stubs=stubs or [""] * len(data)))
        notes = [f"{k} {v}" for k, v in info if len(v) > _LONG] + clipped
        verdict = str(self.verdict())
        if verdict:
            notes += ["Verdict:", *_wrapped(verdict)]
        if notes:
            smry.add_extra_txt(notes)
        return smry

    def verdict(self) -> Any:
        """Return the result's answer in plain words (one line per contrast or unit).

        The metric's direction decides which model is called better; the
        target says whether the sentence is about the learners (trained on
        ``n1`` examples) or the models trained on these data. See
        :mod:`cvstats.results.verdict`.

        Returns
        -------
        cvstats.results.verdict.Verdict
            A ``str`` that displays itself in a notebook.

        Notes
        -----
        Each result class overrides this method with its wording from
        :mod:`cvstats.results.verdict` (the contract tests check that every
        public one does); this default, for a class with nothing to say, is an
        empty verdict, which the summary leaves out.
        """
        from cvstats.results.verdict import Verdict

        return Verdict("")

    def __str__(self) -> str:
        return str(self.summary().as_text())

    # ------------------------------------------------------------------
    # what not every result has
    # ------------------------------------------------------------------

    def interval(self, alpha: float | None = None) -> xr.DataArray:
        """Return the result's interval on a ``ci_bound`` dim (``["lower", "upper"]``).

        Raises
        ------
        ArgumentError
            For a result without an interval.
        """
        raise ArgumentError(f"{type(self).__name__} has no interval.")

    def plot(self, *args: Any, **kwargs: Any) -> Any:
        """Draw the result (matplotlib).

        Raises
        ------
        ArgumentError
            For a result without a plot; use :meth:`to_frame` and plot the frame.
        """
        raise ArgumentError(f"{type(self).__name__} has no plot; plot its to_frame() instead.")
