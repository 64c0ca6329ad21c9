"""Publication tables: estimates with intervals laid out as rows × columns.

:func:`publication_table` takes tidy numbers (one row per cell: the row and
column labels, an estimate and optionally the bounds of its interval) and
returns a :class:`PublicationTable`, which keeps the numbers and formats them
only when displayed, as ``"estimate [lower, upper]"`` cells in LaTeX
(booktabs), Markdown, HTML or plain text. :func:`nadeau_bengio_table` lays
out the tables of Nadeau & Bengio (Table 2 of the journal version): one row
per quantity (``n/2 μ_A``, ``ρ_A(n/2, n/10)``, ``r_A-B`` ...), one column per
simulation.

Labels are written in plain Unicode (``"ρ_A-B(n/2, n/10)"``); the LaTeX and
HTML outputs turn the symbols into math by the rule of :func:`latex_label`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from html import escape as html_escape
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.errors import ArgumentError, CvstatsTypeError
from cvstats.reporting.formatting import latex_escape
from cvstats.results import EstimatesResult, InferenceResult
from cvstats.results.base import (
    GREEK_COMMANDS,
    HTML_ROWS,
    LATEX_ACCENTS,
    LATEX_SYMBOLS,
    REPR_LINES,
    Result,
    text_display,
    truncate_frame,
)

__all__ = [
    "PublicationTable",
    "publication_table",
    "nadeau_bengio_table",
    "latex_label",
    "html_label",
    "TABLE_COLUMNS",
]

#: Value columns of :meth:`PublicationTable.to_frame` (after the label columns).
TABLE_COLUMNS = ("estimate", "ci_lower", "ci_upper")

FORMATS = ("g", "f")

_DEFAULT_LOWER, _DEFAULT_UPPER = "ci_lower", "ci_upper"

_SUPERSCRIPTS = {"²": "2", "³": "3"}

_GREEK_CLASS = "".join(GREEK_COMMANDS)
_ACCENT_CLASS = "".join(LATEX_ACCENTS)
_SCRIPT = r"(?:[_^](?:\{[^{}$\\]*\}|[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)|[²³])"
_SYMBOL = re.compile(
    rf"(?P<base>[{_GREEK_CLASS}]|(?<![A-Za-z0-9])[A-Za-z](?=[{_ACCENT_CLASS}]*[_^²³]"
    rf"|[{_ACCENT_CLASS}]))(?P<accents>[{_ACCENT_CLASS}]*)(?P<scripts>{_SCRIPT}*)"
)
_ONE_SCRIPT = re.compile(r"(?P<kind>[_^])(?:\{(?P<braced>[^{}$\\]*)\}|(?P<bare>[^_^²³]+))|[²³]")


@dataclass(frozen=True, eq=False, repr=False)
class PublicationTable(Result):
    r"""Estimates with intervals laid out for publication.

    Build it with :func:`publication_table`. The table holds numbers; the
    cells ``"estimate [lower, upper]"`` are formatted only by the display
    methods (:meth:`to_latex`, :meth:`to_markdown`, :meth:`to_html`,
    ``str``), so the same table can be shown at another precision with
    ``dataclasses.replace(table, precision=2)``.

    A :class:`~cvstats.results.base.Result` (its tidy :meth:`to_frame`, a
    ``summary``, no verdict, interval or plot), whose ``to_latex``,
    ``to_markdown`` and ``to_html`` are its own: they lay the numbers out in
    two dimensions (rows by columns, one cell per pair) with the table's
    ``precision`` and ``fmt``, where the base writes the tidy frame.

    Attributes
    ----------
    data : pandas.DataFrame
        Tidy numbers, one row per cell in table order: the ``rows`` and
        ``columns`` label columns, then :data:`TABLE_COLUMNS`
        (``estimate``, ``ci_lower``, ``ci_upper``; NaN bounds when there is
        no interval).
    rows, columns : tuple of str
        Names of the label columns indexing the table's rows and columns.
    row_keys, column_keys : tuple of tuple
        The table's rows and columns, in display order (one label per name).
    precision : int
        Significant digits of each cell's scale (``fmt="g"``) or decimals
        (``fmt="f"``); see :func:`publication_table`.
    fmt : {"g", "f"}
        Meaning of ``precision``; see :func:`publication_table`.
    caption, label : str or None
        Caption, and a cross-reference label (LaTeX ``\label``, HTML ``id``).
    """

    data: pd.DataFrame
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    row_keys: tuple[tuple[Any, ...], ...]
    column_keys: tuple[tuple[Any, ...], ...]
    precision: int = 4
    fmt: str = "g"
    caption: str | None = None
    label: str | None = None

    frame_columns: ClassVar[tuple[str, ...]] = TABLE_COLUMNS

    def _caption(self) -> str:
        return self.caption or type(self).__name__

    def to_frame(self) -> pd.DataFrame:
        """Return the tidy numbers (a copy of :attr:`data`).

        Returns
        -------
        pandas.DataFrame
            Columns: the ``rows`` and ``columns`` names, then ``estimate``,
            ``ci_lower``, ``ci_upper`` (floats, never formatted strings).
        """
        return self.data.copy()

    # -- display ---------------------------------------------------------------

    def _cells(self) -> dict[tuple[tuple[Any, ...], tuple[Any, ...]], tuple[str, ...]]:
        """Return the formatted numbers of each (row key, column key)."""
        nr = len(self.rows)
        out = {}
        for rec in self.data.itertuples(index=False, name=None):
            keys, (est, lo, hi) = rec[: -len(TABLE_COLUMNS)], rec[-len(TABLE_COLUMNS) :]
            out[tuple(keys[:nr]), tuple(keys[nr:])] = _cell_numbers(
                est, lo, hi, self.precision, self.fmt
            )
        return out

    def _layout(
        self,
        cell: Callable[[tuple[str, ...]], str],
        label: Callable[[Any], str],
        sparse: bool,
        joiner: str | None,
    ) -> pd.DataFrame:
        """Return the displayed table: row labels as leading columns, then one column per key.

        ``cell`` renders a cell's numbers, ``label`` a label; ``sparse`` blanks
        repeated row labels; ``joiner`` flattens several column levels into one
        header (None: a MultiIndex header with the row names on its last level).
        """
        cells = self._cells()
        body: list[list[str]] = []
        previous: tuple[Any, ...] | None = None
        for rkey in self.row_keys:
            shown = [label(v) for v in rkey]
            if sparse and previous is not None:
                for i in range(len(rkey)):
                    if rkey[: i + 1] != previous[: i + 1]:
                        break
                    shown[i] = ""
            previous = rkey
            body.append(shown + [cell(cells.get((rkey, ckey), ())) for ckey in self.column_keys])
        heads: list[Any]
        if joiner is not None or len(self.columns) == 1:
            sep = joiner or " "
            heads = [label(n) for n in self.rows]
            heads += [sep.join(label(v) for v in ckey) for ckey in self.column_keys]
            return pd.DataFrame(body, columns=pd.Index(heads, dtype=object), dtype=object)
        depth = len(self.columns)
        heads = [("",) * (depth - 1) + (label(n),) for n in self.rows]
        heads += [tuple(label(v) for v in ckey) for ckey in self.column_keys]
        return pd.DataFrame(body, columns=pd.MultiIndex.from_tuples(heads), dtype=object)

    def to_latex(self) -> str:  # type: ignore[override]
        r"""Return a booktabs LaTeX table that compiles with pdflatex.

        Needs ``\usepackage{booktabs}`` in the preamble. ``\toprule``,
        ``\midrule`` and ``\bottomrule`` frame the header; the caption and the
        label, when set, go into a ``table`` float. Labels follow
        :func:`latex_label` (``μ_A`` → ``$\mu_{A}$``, other text escaped);
        numbers get a math minus (``$-$0.12``) and ``$\infty$``.

        Returns
        -------
        str
            The LaTeX source, identical for identical tables.
        """
        shown = self._layout(_latex_cell, _latex_text, sparse=True, joiner=None)
        styler = shown.style.hide(axis="index")
        column_format = "l" * len(self.rows) + "c" * len(self.column_keys)
        latex = styler.to_latex(
            column_format=column_format,
            hrules=True,
            caption=None if self.caption is None else latex_label(self.caption),
            label=self.label,
            position_float="centering" if self.caption or self.label else None,
            multicol_align="c",
        )
        return str(latex)

    def to_markdown(self) -> str:  # type: ignore[override]
        """Return a Markdown (pipe) table, preceded by its caption when set.

        Labels are shown as written (Unicode) and repeated on every row; ``|``
        is escaped.
        """
        shown = self._layout(_plain_cell, _markdown_text, sparse=False, joiner=" / ")
        body = shown.to_markdown(index=False, disable_numparse=True, stralign="left")
        return body if self.caption is None else f"{_markdown_text(self.caption)}\n\n{body}"

    def to_html(self) -> str:  # type: ignore[override]
        """Return an HTML ``<table>`` with a ``<caption>`` (and ``id`` = label, when set).

        Labels follow :func:`html_label` (``μ_A`` → ``μ<sub>A</sub>``).
        """
        return self._html()

    def _html(self, max_rows: int | None = None) -> str:
        """Return the HTML table, its body cut to ``max_rows`` rows (``truncate_frame``)."""
        cut = max_rows is not None and len(self.row_keys) > max_rows
        # a cut table repeats its row labels: the rows after the "…" need theirs
        shown = self._layout(_html_cell, html_label, sparse=not cut, joiner=None)
        hidden = 0
        if max_rows is not None:
            shown, hidden = truncate_frame(shown, max_rows)
        table_id = None if self.label is None else html_escape(self.label)
        html = shown.to_html(index=False, border=0, escape=False, table_id=table_id)
        if self.caption is not None:
            first, rest = html.split("\n", 1)
            html = f"{first}\n  <caption>{html_label(self.caption)}</caption>\n{rest}"
        if hidden:
            total = len(self.row_keys)
            html += f"\n<p>… {hidden} more rows ({total} in all)</p>"
        return str(html)

    def _repr_html_(self) -> str:
        """Return the table for a notebook: :meth:`to_html`, cut to ``HTML_ROWS`` rows."""
        return self._html(HTML_ROWS)

    def __str__(self) -> str:
        shown = self._layout(_plain_cell, str, sparse=True, joiner=" / ")
        body = shown.to_markdown(
            index=False, tablefmt="simple", disable_numparse=True, stralign="left"
        )
        body = "\n".join(line.rstrip() for line in body.splitlines())
        return body if self.caption is None else f"{self.caption}\n\n{body}"

    def __repr__(self) -> str:
        """Return the plain table below its caption (``str``), cut to ``REPR_LINES`` lines.

        ``text_display``, the one short display of cvstats: a table that fits
        shows as ``str``; a longer one keeps its first and last rows (with their
        labels) around a ``…`` row and says how many it leaves out.
        """
        heading = [] if self.caption is None else [self.caption]
        fits = len(heading) * 2 + 2 + len(self.row_keys) <= REPR_LINES
        shown = self._layout(_plain_cell, str, sparse=fits, joiner=" / ")
        return text_display(shown, heading, max_lines=REPR_LINES)


# -- number formatting -----------------------------------------------------------


def _decimals(est: float, lo: float, hi: float, precision: int) -> int:
    """Decimals giving ``precision`` significant digits to the cell's scale.

    The scale is the larger of ``|est|`` and the interval's half-width (when
    finite), so that an estimate near zero with a wide interval is not shown
    with a dozen decimals.
    """
    half = abs(hi - lo) / 2 if math.isfinite(lo) and math.isfinite(hi) else 0.0
    ref = max(abs(est) if math.isfinite(est) else 0.0, half)
    if ref == 0:
        return max(precision - 1, 0)
    magnitude = math.floor(math.log10(ref))
    decimals = max(precision - 1 - magnitude, 0)
    if decimals > 0 and round(ref, decimals) >= 10.0 ** (magnitude + 1):
        decimals -= 1  # 99.96 -> "100", not "100.0"
    return decimals


def _number(value: float, decimals: int) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.{decimals}f}"
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]  # no "-0.00"
    return text


def _cell_numbers(est: float, lo: float, hi: float, precision: int, fmt: str) -> tuple[str, ...]:
    """Format one cell: () if missing, (est,) without bounds, else (est, lo, hi)."""
    if math.isnan(est):
        return ()
    decimals = precision if fmt == "f" else _decimals(est, lo, hi, precision)
    if math.isnan(lo) and math.isnan(hi):
        return (_number(est, decimals),)
    return tuple(_number(v, decimals) for v in (est, lo, hi))


def _join(parts: tuple[str, ...]) -> str:
    if len(parts) == 3:
        return f"{parts[0]} [{parts[1]}, {parts[2]}]"
    return parts[0] if parts else ""


def _plain_cell(parts: tuple[str, ...]) -> str:
    return _join(parts)


def _html_cell(parts: tuple[str, ...]) -> str:
    return html_escape(_join(parts))


def _latex_number(text: str) -> str:
    if text in ("inf", "-inf"):
        return r"$\infty$" if text == "inf" else r"$-\infty$"
    return "$-$" + text[1:] if text.startswith("-") else text


def _latex_cell(parts: tuple[str, ...]) -> str:
    return _join(tuple(_latex_number(p) for p in parts))


# -- labels ------------------------------------------------------------------------


def _scripts(scripts: str, render: Callable[[str], str]) -> list[tuple[str, str]]:
    """Split ``"_A-B^2"`` into ``[("_", "A-B"), ("^", "2")]`` (``render`` maps the content)."""
    out = []
    for match in _ONE_SCRIPT.finditer(scripts):
        if match.group("kind") is None:
            out.append(("^", render(_SUPERSCRIPTS[match.group(0)])))
        else:
            content = match.group("braced")
            content = match.group("bare") if content is None else content
            out.append((match.group("kind"), render(content)))
    return out


def _latex_math_text(text: str) -> str:
    """Render script content inside math: Greek letters as commands, specials escaped."""
    out = []
    for ch in text:
        if ch in GREEK_COMMANDS:
            out.append(f"\\{GREEK_COMMANDS[ch]} ")
        elif ch in "%&#_":
            out.append("\\" + ch)
        elif ch in "~^":
            out.append(" ")
        elif ch == " ":
            out.append(r"\ ")
        else:
            out.append(ch)
    return "".join(out).rstrip()


def latex_label(text: Any) -> str:
    r"""Return a label as pdflatex-safe LaTeX, its symbols as math.

    The rule: a *symbol* is a Greek letter, or a single Latin letter standing
    alone (not preceded by a letter or digit) that carries a subscript, a
    superscript or a combining accent. A symbol with its combining accents
    (``\u0302`` hat, ``\u0303`` tilde, ``\u0304`` bar) and its scripts
    (``_A``, ``_A-B``, ``_{n/2}``, ``^2``, ``²``) becomes one math group:
    ``μ_A`` → ``$\mu_{A}$``, ``ρ_A-B(n/2, n/10)`` → ``$\rho_{A-B}$(n/2, n/10)``,
    ``r_A`` → ``$r_{A}$``, ``μ̂`` → ``$\hat{\mu}$``, ``σ²`` → ``$\sigma^{2}$``.
    A bare script runs over letters, digits and inner hyphens; braces hold
    anything else. A few other symbols become math (``±``, ``×``, ``≤``, ``∞``,
    ``−`` ...); the remaining text is escaped (``_``, ``%``, ``&``, ``$`` ...), so
    ``ci_lower`` stays ``ci\_lower``.

    Parameters
    ----------
    text : object
        The label (converted with ``str``).

    Returns
    -------
    str
        LaTeX source.

    Examples
    --------
    >>> from cvstats.reporting.tables import latex_label
    >>> print(latex_label("n/2 μ_A-B"))
    n/2 $\mu_{A-B}$
    >>> print(latex_label("ρ_A(n/2, n/10)"))
    $\rho_{A}$(n/2, n/10)
    >>> print(latex_label("r_A & 50%"))
    $r_{A}$ \& 50\%
    """
    text = str(text)
    out: list[str] = []
    pos = 0
    for match in _SYMBOL.finditer(text):
        out.append(_latex_plain(text[pos : match.start()]))
        base = match.group("base")
        body = f"\\{GREEK_COMMANDS[base]}" if base in GREEK_COMMANDS else base
        for accent in match.group("accents"):
            body = f"\\{LATEX_ACCENTS[accent]}{{{body}}}"
        for kind, content in _scripts(match.group("scripts"), _latex_math_text):
            body += f"{kind}{{{content}}}"
        out.append(f"${body}$")
        pos = match.end()
    out.append(_latex_plain(text[pos:]))
    return "".join(out)


def _latex_plain(text: str) -> str:
    return "".join(LATEX_SYMBOLS.get(ch, ch) for ch in latex_escape(text))


def _latex_text(value: Any) -> str:
    text = latex_label(value)
    # a cell starting with "[" or "*" would be read as an argument of the previous "\\"
    return "{}" + text if text.startswith(("[", "*")) else text


def html_label(text: Any) -> str:
    """Return a label as HTML: the symbols of :func:`latex_label` with ``<sub>``/``<sup>``.

    ``μ_A`` → ``μ<sub>A</sub>``, ``r_A-B`` → ``<i>r</i><sub>A-B</sub>`` (Latin
    symbols in italics); the rest is HTML-escaped.

    Parameters
    ----------
    text : object
        The label (converted with ``str``).

    Returns
    -------
    str
        HTML source.

    Examples
    --------
    >>> from cvstats.reporting.tables import html_label
    >>> html_label("ρ_A-B(n/2, n/10)")
    'ρ<sub>A-B</sub>(n/2, n/10)'
    """
    text = str(text)
    out: list[str] = []
    pos = 0
    for match in _SYMBOL.finditer(text):
        out.append(html_escape(text[pos : match.start()]))
        base = match.group("base")
        body = html_escape(base + match.group("accents"))
        if base not in GREEK_COMMANDS:
            body = f"<i>{body}</i>"
        for kind, content in _scripts(match.group("scripts"), html_escape):
            tag = "sub" if kind == "_" else "sup"
            body += f"<{tag}>{content}</{tag}>"
        out.append(body)
        pos = match.end()
    out.append(html_escape(text[pos:]))
    return "".join(out)


def _markdown_text(value: Any) -> str:
    return str(value).replace("|", "\\|")


# -- input -------------------------------------------------------------------------


def _names(value: str | Sequence[str], arg: str) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names or not all(isinstance(n, str) for n in names):
        raise ArgumentError(
            f"`{arg}` must be a name or a non-empty sequence of names, got {value!r}."
        )
    if len(set(names)) != len(names):
        raise ArgumentError(f"`{arg}` names a column twice: {list(names)}.")
    return names


def _publication_iv(
    rows: tuple[str, ...], columns: tuple[str, ...], precision: int, fmt: str
) -> None:
    both = sorted(set(rows) & set(columns))
    if both:
        raise ArgumentError(f"{both} appear in both `rows` and `columns`; use each name once.")
    reserved = sorted(set(TABLE_COLUMNS) & set(rows + columns))
    if reserved:
        raise ArgumentError(
            f"`rows`/`columns` cannot use the value column names {reserved} "
            f"(reserved: {list(TABLE_COLUMNS)}); rename them first."
        )
    if fmt not in FORMATS:
        raise ArgumentError(f"`fmt` must be one of {list(FORMATS)}, got {fmt!r}.")
    minimum = 1 if fmt == "g" else 0
    if isinstance(precision, bool) or not isinstance(precision, int | np.integer):
        raise CvstatsTypeError(f"`precision` must be an int, got {type(precision).__name__}.")
    if precision < minimum:
        raise ArgumentError(f"`precision` must be >= {minimum} with fmt={fmt!r}, got {precision}.")


def _from_xarray(
    data: xr.Dataset | xr.DataArray, estimate: str, lower: str | None, upper: str | None
) -> tuple[pd.DataFrame, str, str | None, str | None]:
    """Convert a Dataset/DataArray to a tidy frame with estimate/ci_lower/ci_upper."""
    if isinstance(data, xr.DataArray):
        data = data.rename(None).to_dataset(name="estimate")
        estimate = "estimate"
    names = [str(v) for v in data.data_vars]
    if estimate not in data.data_vars and estimate == "estimate":
        pairs = [v for v in names if f"{v}_ci" in data.data_vars]
        if len(pairs) != 1:
            raise ArgumentError(
                f"`estimate` {estimate!r} is not a variable of the Dataset (variables: {names}); "
                "pass the name of the estimate variable."
            )
        estimate = pairs[0]
    if estimate not in data.data_vars:
        raise ArgumentError(
            f"`estimate` {estimate!r} is not a variable of the Dataset (variables: {names})."
        )
    est = data[estimate]
    values = {"estimate": est}
    ci_name = f"{estimate}_ci"
    if ci_name in data.data_vars:
        ci = data[ci_name]
        if "ci_bound" not in ci.dims:
            raise ArgumentError(
                f"variable {ci_name!r} needs a `ci_bound` dim with coords ['lower', 'upper'], "
                f"has dims {list(map(str, ci.dims))}."
            )
        bounds = [str(b) for b in np.asarray(ci["ci_bound"].values).tolist()]
        if not {"lower", "upper"} <= set(bounds):
            raise ArgumentError(
                f"variable {ci_name!r}: `ci_bound` coords must include 'lower' and 'upper', "
                f"got {bounds}."
            )
        values["ci_lower"] = ci.sel(ci_bound="lower", drop=True)
        values["ci_upper"] = ci.sel(ci_bound="upper", drop=True)
    else:
        for key, name, default in (
            ("ci_lower", lower, _DEFAULT_LOWER),
            ("ci_upper", upper, _DEFAULT_UPPER),
        ):
            if name is not None and name in data.data_vars:
                values[key] = data[name]
            elif name is not None and name != default:
                raise ArgumentError(
                    f"bound variable {name!r} is not in the Dataset (variables: {names})."
                )
    ds = xr.Dataset(values)
    if not ds["estimate"].dims:
        frame = pd.DataFrame({k: [float(v)] for k, v in ds.data_vars.items()})
        for name, coord in ds.coords.items():
            frame[str(name)] = coord.values.item()
    else:
        ds = ds.transpose(*est.dims)
        frame = ds.to_dataframe(dim_order=list(est.dims)).reset_index()
    lo = "ci_lower" if "ci_lower" in frame else None
    hi = "ci_upper" if "ci_upper" in frame else None
    return frame, "estimate", lo, hi


def _tidy(
    data: Any,
    rows: tuple[str, ...],
    columns: tuple[str, ...],
    estimate: str,
    lower: str | None,
    upper: str | None,
) -> pd.DataFrame:
    """Return ``[*rows, *columns, *TABLE_COLUMNS]`` from any accepted input, checked."""
    if isinstance(data, EstimatesResult):  # a fit: its Dataset (``q`` and ``q_ci``)
        data = data.dataset
    if isinstance(data, xr.Dataset | xr.DataArray):
        data, estimate, lower, upper = _from_xarray(data, estimate, lower, upper)
    elif isinstance(data, InferenceResult):
        data = data.to_frame()
    elif isinstance(data, PublicationTable):
        data = data.to_frame()
    if not isinstance(data, pd.DataFrame):
        raise CvstatsTypeError(
            "`data` must be a pandas DataFrame, an xarray Dataset or DataArray, an "
            f"EstimatesResult or an InferenceResult, got {type(data).__name__}."
        )
    levels = [n for n in data.index.names if n is not None and n in rows + columns]
    if levels:
        data = data.reset_index(level=levels)
    available = [str(c) for c in data.columns]
    missing = [n for n in rows + columns if n not in data.columns]
    if missing:
        raise ArgumentError(
            f"`rows`/`columns` name(s) {missing} not in `data`; columns: {available}."
        )
    if estimate not in data.columns:
        raise ArgumentError(f"`estimate` column {estimate!r} not in `data`; columns: {available}.")
    bounds = {}
    for key, name, default, arg in (
        ("ci_lower", lower, _DEFAULT_LOWER, "lower"),
        ("ci_upper", upper, _DEFAULT_UPPER, "upper"),
    ):
        if name is not None and name in data.columns:
            bounds[key] = name
        elif name is not None and name != default:
            raise ArgumentError(f"`{arg}` column {name!r} not in `data`; columns: {available}.")
    if len(bounds) == 1:
        raise ArgumentError(
            f"`data` has the bound {next(iter(bounds.values()))!r} but not the other one; "
            "give both `lower` and `upper` columns, or neither (`lower=None, upper=None`)."
        )
    out = pd.DataFrame({n: data[n].to_numpy(dtype=object) for n in rows + columns})
    for key, name in (("estimate", estimate), *bounds.items()):
        try:
            out[key] = pd.to_numeric(data[name]).to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError) as e:
            raise ArgumentError(f"column {name!r} must hold numbers: {e}") from e
    for key in TABLE_COLUMNS:
        if key not in out:
            out[key] = np.nan
    labels = out[list(rows + columns)]
    if labels.isna().to_numpy().any():
        bad = [n for n in rows + columns if labels[n].isna().any()]
        raise ArgumentError(f"label column(s) {bad} hold missing values; fill or drop them.")
    _check_unique(out, data, rows, columns)
    return out


def _check_unique(
    out: pd.DataFrame, data: pd.DataFrame, rows: tuple[str, ...], columns: tuple[str, ...]
) -> None:
    keys = list(rows + columns)
    dup = out.duplicated(subset=keys, keep=False).to_numpy()
    if not dup.any():
        return
    first = out.loc[dup, keys].iloc[0]
    same = (out[keys] == first).all(axis=1).to_numpy()
    group = data.iloc[np.flatnonzero(same)]
    differ = [
        str(c)
        for c in data.columns
        if c not in keys
        and not pd.api.types.is_float_dtype(group[c])
        and group[c].astype(str).nunique(dropna=False) > 1
    ]
    hint = f"; they differ in {differ}" if differ else ""
    raise ArgumentError(
        f"`data` has {int(same.sum())} entries for row {tuple(first[list(rows)])} and column "
        f"{tuple(first[list(columns)])}{hint}: every (rows, columns) pair must be unique. "
        "Filter `data`, or add the distinguishing column to `rows` or `columns`."
    )


def _ordered_keys(
    frame: pd.DataFrame, names: tuple[str, ...], order: Any, arg: str
) -> list[tuple[Any, ...]]:
    """Return the distinct keys of ``frame[names]`` in display order.

    Default: grouped level by level, each level in order of first appearance.
    ``order``: values (one name) or key tuples (several names) listed first, or a
    mapping from a name to its values' order; unlisted ones follow.
    """
    keys = list(dict.fromkeys(zip(*(frame[n].tolist() for n in names), strict=True)))
    ranks = [
        {v: i for i, v in enumerate(dict.fromkeys(k[level] for k in keys))}
        for level in range(len(names))
    ]
    listed: list[tuple[Any, ...]] = []
    if order is None:
        pass
    elif isinstance(order, Mapping):
        unknown = [k for k in order if k not in names]
        if unknown:
            raise ArgumentError(f"`{arg}` names {unknown}, not in {list(names)}.")
        for name, values in order.items():
            level = names.index(name)
            values = list(values)
            absent = [v for v in values if v not in ranks[level]]
            if absent:
                raise ArgumentError(
                    f"`{arg}`[{name!r}] lists {absent}, not in the data; "
                    f"values: {list(ranks[level])}."
                )
            rest = [v for v in ranks[level] if v not in values]
            ranks[level] = {v: i for i, v in enumerate([*values, *rest])}
    else:
        if isinstance(order, str):
            raise ArgumentError(f"`{arg}` must be a sequence or a mapping, got {order!r}.")
        for item in order:
            key = tuple(item) if len(names) > 1 else (item,)
            if len(key) != len(names):
                raise ArgumentError(
                    f"`{arg}` entries must be tuples of {len(names)} labels {list(names)}, "
                    f"got {item!r}."
                )
            listed.append(key)
        present = set(keys)
        absent = [k if len(names) > 1 else k[0] for k in listed if k not in present]
        if absent:
            raise ArgumentError(f"`{arg}` lists {absent}, not in the data.")
    seen = set(listed)
    rest = sorted(
        (k for k in keys if k not in seen),
        key=lambda k: tuple(r[v] for r, v in zip(ranks, k, strict=True)),
    )
    return [*dict.fromkeys(listed), *rest]


def publication_table(
    data: pd.DataFrame | xr.Dataset | xr.DataArray | InferenceResult,
    *,
    rows: str | Sequence[str],
    columns: str | Sequence[str],
    estimate: str = "estimate",
    lower: str | None = "ci_lower",
    upper: str | None = "ci_upper",
    precision: int = 4,
    fmt: str = "g",
    caption: str | None = None,
    label: str | None = None,
    row_order: Sequence[Hashable] | Mapping[str, Sequence[Hashable]] | None = None,
    column_order: Sequence[Hashable] | Mapping[str, Sequence[Hashable]] | None = None,
) -> PublicationTable:
    r"""Lay out estimates with intervals as a publication table.

    Each cell shows ``"estimate [lower, upper]"``, only the estimate when the
    entry has no bounds (both NaN, or no bound columns), and nothing when
    the (row, column) pair is absent or its estimate is NaN. Numbers are
    formatted at display time only; :meth:`PublicationTable.to_frame` returns
    them as floats.

    Parameters
    ----------
    data : pandas.DataFrame, xarray.Dataset, xarray.DataArray, EstimatesResult or InferenceResult
        Tidy numbers, one entry per cell:

        * a DataFrame with the ``rows`` and ``columns`` label columns (or index
          levels) and the ``estimate``, ``lower``, ``upper`` value columns —
          e.g. :meth:`cvstats.InferenceResult.to_frame` or a concatenation of
          such frames;
        * a Dataset over dims (or with coords) named by ``rows`` and ``columns``,
          holding either the variables ``estimate``, ``lower``, ``upper``, or
          the convention of cvstats' fit functions: a variable ``<name>`` and a
          variable ``<name>_ci`` with a ``ci_bound`` dim of coords
          ``["lower", "upper"]`` (e.g. ``rho`` and ``rho_ci``; pass
          ``estimate="rho"``, or nothing when the Dataset holds one such
          pair);
        * a fit (:class:`~cvstats.results.EstimatesResult`: its ``dataset``, as above);
        * a DataArray of estimates (no bounds);
        * an InferenceResult (its ``to_frame()``).
    rows, columns : str or sequence of str
        Names of the label columns/dims indexing the table's rows and
        columns; several names give hierarchical rows (e.g.
        ``("quantity", "method")``) or column headers.
    estimate, lower, upper : str
        Names of the value columns. When the default bound names are absent
        the cells show estimates only; ``lower=None, upper=None`` ignores
        bounds.
    precision : int, default 4
        The default of every display of cvstats (``summary``, ``to_latex`` ...
        of the results and of :class:`~cvstats.ComparisonTable`).
        With ``fmt="g"``: significant digits of the cell's scale, the larger
        of ``|estimate|`` and the interval's half-width, every number of the
        cell being printed with the same decimals and never in exponent
        notation (with ``precision=3``: ``96.86 [93.53, 100.17]`` → ``"96.9 [93.5, 100.2]"``,
        ``0.0312 [0.0201, 0.0415]`` → ``"0.0312 [0.0201, 0.0415]"``,
        ``-0.0004 [-0.1, 0.2]`` → ``"0.000 [-0.100, 0.200]"``). With
        ``fmt="f"``: decimals of every number.
    fmt : {"g", "f"}, default "g"
        Meaning of ``precision``.
    caption : str, optional
        Caption (labels' rule of :func:`latex_label` applies in LaTeX).
    label : str, optional
        Cross-reference label: LaTeX ``\label{...}``, HTML ``id``.
    row_order, column_order : sequence or mapping, optional
        Display order. Default: level by level, each label in order of first
        appearance in ``data``. A sequence lists labels (one name) or label
        tuples (several names) to show first; a mapping ``{name: labels}``
        orders the labels of some levels. Unlisted labels follow in the
        default order; listing a label absent from ``data`` is an error.

    Returns
    -------
    PublicationTable
        The laid-out table.

    Raises
    ------
    ArgumentError
        For names not in ``data``, a (row, column) pair given twice, missing
        labels, or an invalid ``precision``/``fmt``/order.
    CvstatsTypeError
        For an unsupported ``data`` type.

    Examples
    --------
    >>> import pandas as pd
    >>> from cvstats.reporting.tables import publication_table
    >>> df = pd.DataFrame({
    ...     "quantity": ["n/2 μ_A", "n/2 μ_A", "ρ_A(n/2, n/10)"],
    ...     "simulation": ["Simulation 1", "Simulation 2", "Simulation 1"],
    ...     "estimate": [96.853, 70.21, 0.0312],
    ...     "ci_lower": [93.531, 68.0, 0.0201],
    ...     "ci_upper": [100.172, 72.4, 0.0415],
    ... })
    >>> table = publication_table(df, rows="quantity", columns="simulation")
    >>> print(table.to_markdown())
    | quantity       | Simulation 1               | Simulation 2         |
    |:---------------|:---------------------------|:---------------------|
    | n/2 μ_A        | 96.85 [93.53, 100.17]      | 70.21 [68.00, 72.40] |
    | ρ_A(n/2, n/10) | 0.03120 [0.02010, 0.04150] |                      |
    """
    row_names = _names(rows, "rows")
    column_names = _names(columns, "columns")
    _publication_iv(row_names, column_names, precision, fmt)
    frame = _tidy(data, row_names, column_names, estimate, lower, upper)
    row_keys = _ordered_keys(frame, row_names, row_order, "row_order")
    column_keys = _ordered_keys(frame, column_names, column_order, "column_order")
    rpos = {k: i for i, k in enumerate(row_keys)}
    cpos = {k: i for i, k in enumerate(column_keys)}
    nr = len(row_names)
    position = [
        (rpos[k[:nr]], cpos[k[nr:]])
        for k in zip(*(frame[n].tolist() for n in row_names + column_names), strict=True)
    ]
    rank = sorted(range(len(frame)), key=position.__getitem__)
    frame = frame.iloc[rank].reset_index(drop=True)
    return PublicationTable(
        data=frame,
        rows=row_names,
        columns=column_names,
        row_keys=tuple(row_keys),
        column_keys=tuple(column_keys),
        precision=int(precision),
        fmt=fmt,
        caption=caption,
        label=label,
    )


def _scalar(value: Any) -> float:
    return float(np.asarray(value).item())


def _entry_values(value: Any, where: str) -> tuple[float, float, float]:
    if value is None:
        return (math.nan, math.nan, math.nan)
    if isinstance(value, InferenceResult):
        if value.estimate.size != 1:
            raise ArgumentError(
                f"entry {where} is an InferenceResult over dims "
                f"{dict(value.estimate.sizes)}; give a result with one element (e.g. from a "
                "one-model cube), or pass its to_frame() to publication_table."
            )
        low, high = value.conf_int()
        return (_scalar(value.estimate), _scalar(low), _scalar(high))
    if isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) == 3:
            return (float(value[0]), float(value[1]), float(value[2]))
        raise ArgumentError(
            f"entry {where} must be an estimate, (estimate, lower, upper) or an "
            f"InferenceResult, got a sequence of length {len(value)}."
        )
    try:
        return (float(value), math.nan, math.nan)
    except (TypeError, ValueError) as e:
        raise ArgumentError(
            f"entry {where} must be an estimate, (estimate, lower, upper) or an "
            f"InferenceResult, got {value!r}."
        ) from e


def nadeau_bengio_table(
    entries: Mapping[Hashable, Mapping[Hashable, Any]] | pd.DataFrame,
    *,
    caption: str | None = None,
    label: str | None = None,
    precision: int = 4,
    fmt: str = "g",
    quantities: Sequence[Hashable] | None = None,
    simulations: Sequence[Hashable] | None = None,
) -> PublicationTable:
    """Lay out quantities per simulation like Table 2 of Nadeau & Bengio.

    One row per quantity (``"n/2 μ_A"``, ``"n/2 μ_A-B"``, ``"ρ_A(n/2, n/2)"``,
    ``"r_A-B"`` ...), one column per simulation, cells
    ``"estimate [lower, upper]"``. A thin layer over :func:`publication_table`
    with ``rows="quantity"`` and ``columns="simulation"``.

    Parameters
    ----------
    entries : mapping or pandas.DataFrame
        ``{simulation: {quantity: value}}`` where a value is an estimate, an
        ``(estimate, lower, upper)`` triple, an
        :class:`~cvstats.InferenceResult` with one element, e.g. of a one-model
        cube (its estimate and ``conf_int()``), or None (empty cell); or a
        DataFrame with columns ``quantity``, ``simulation``, ``estimate`` and
        optionally ``ci_lower``, ``ci_upper``.
    caption, label : str, optional
        Caption and cross-reference label.
    precision : int, default 4
        See :func:`publication_table`.
    fmt : {"g", "f"}, default "g"
        See :func:`publication_table`.
    quantities, simulations : sequence, optional
        Row and column order; default the order of first appearance.

    Returns
    -------
    PublicationTable
        Rows ``quantity``, columns ``simulation``.

    Examples
    --------
    >>> from cvstats.reporting.tables import nadeau_bengio_table
    >>> table = nadeau_bengio_table(
    ...     {
    ...         "Simulation 1": {"n/2 μ_A": (96.86, 93.53, 100.17), "r_A": 0.03},
    ...         "Simulation 2": {"n/2 μ_A": (70.2, 68.0, 72.4)},
    ...     },
    ...     caption="Estimates with 95% intervals.",
    ... )
    >>> print(table)
    Estimates with 95% intervals.
    <BLANKLINE>
    quantity    Simulation 1           Simulation 2
    ----------  ---------------------  --------------------
    n/2 μ_A     96.86 [93.53, 100.17]  70.20 [68.00, 72.40]
    r_A         0.03000
    """
    if isinstance(entries, pd.DataFrame):
        frame = entries
    elif isinstance(entries, Mapping):
        records = []
        for simulation, column in entries.items():
            if not isinstance(column, Mapping):
                raise CvstatsTypeError(
                    f"`entries`[{simulation!r}] must be a mapping {{quantity: value}}, "
                    f"got {type(column).__name__}."
                )
            for quantity, value in column.items():
                est, lo, hi = _entry_values(value, f"[{simulation!r}][{quantity!r}]")
                records.append((quantity, simulation, est, lo, hi))
        frame = pd.DataFrame.from_records(
            records, columns=["quantity", "simulation", *TABLE_COLUMNS]
        )
    else:
        raise CvstatsTypeError(
            "`entries` must be a mapping {simulation: {quantity: value}} or a DataFrame, "
            f"got {type(entries).__name__}."
        )
    return publication_table(
        frame,
        rows="quantity",
        columns="simulation",
        precision=precision,
        fmt=fmt,
        caption=caption,
        label=label,
        row_order=quantities,
        column_order=simulations,
    )
