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
  result has none).
"""

from __future__ import annotations

import dataclasses
import numbers
from html import escape as html_escape
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.errors import ArgumentError, CvstatsTypeError

__all__ = [
    "CI_BOUND",
    "BOUNDS",
    "ConfidenceInterval",
    "Result",
    "as_dataarray",
    "bounds",
    "latex_escape",
    "split_interval",
    "tidy_frame",
]

#: Name of the dim holding interval bounds (coordinates :data:`BOUNDS`).
CI_BOUND = "ci_bound"
#: Coordinates of the :data:`CI_BOUND` dim.
BOUNDS = ("lower", "upper")

# header values longer than this go below the tables, as notes
_LONG = 80
# pdflatex-safe Greek letters of the labels (estimand "n1μ", "ρ = ...")
_GREEK = {"μ": r"$\mu$", "ρ": r"$\rho$", "σ": r"$\sigma$", "π": r"$\pi$", "δ": r"$\delta$"}
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


def bounds(lower: xr.DataArray, upper: xr.DataArray) -> xr.DataArray:
    """Stack two bound arrays on a trailing ``ci_bound`` dim (``["lower", "upper"]``).

    Lazy on dask-backed arrays.

    Examples
    --------
    >>> import xarray as xr
    >>> from cvstats.results import bounds
    >>> ci = bounds(xr.DataArray(0.1), xr.DataArray(0.3))
    >>> ci.dims, ci.ci_bound.values.tolist()
    (('ci_bound',), ['lower', 'upper'])
    """
    pair = [as_dataarray(lower), as_dataarray(upper)]
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


def tidy_frame(values: dict[str, xr.DataArray]) -> tuple[pd.DataFrame, list[str]]:
    """Tidy frame of DataArrays sharing dims: one row per element, the dims first.

    Returns the frame (columns: the dims, then ``values``' names) and the dims.
    Non-dim coordinates are dropped; the arrays are broadcast against each
    other and computed.
    """
    ds = xr.Dataset(dict(zip(values, xr.broadcast(*values.values()), strict=True))).compute()
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


def _fmt(value: Any, precision: int) -> str:
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        if np.isnan(value):
            return "nan"
        if np.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.{precision}g}"
    return str(value)


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


class Result:
    """Mixin of every cvstats result: the reporting protocol, implemented once.

    A subclass is a frozen dataclass (or, for estimates, an :class:`xarray.Dataset`)
    and sets ``frame_columns``, the stable columns :meth:`to_frame` ends with
    (after one column per dim of the result), and ``value_fields``, the names of
    its fields that hold computed values (DataArrays). It may refine
    :meth:`to_frame` and the summary's header (``_summary_info``); everything else
    comes from here.
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
        """Return the frame with its numbers formatted to ``precision`` significant digits."""
        frame = self.to_frame(**options).copy()
        for col in frame.columns:
            if pd.api.types.is_float_dtype(frame[col]):
                frame[col] = [_fmt(v, precision) for v in frame[col]]
        return frame

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
        body = self._display(precision, **options).to_markdown(index=False)
        return f"{self._caption()}\n\n{body}"

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
        styler = self._display(precision, **options).style.hide(axis="index")
        styler = styler.format(escape="latex").format_index(escape="latex", axis=1)
        text = caption if caption is not None else latex_escape(self._caption())
        latex = str(styler.to_latex(hrules=True, caption=text))
        for char, math in _GREEK.items():
            latex = latex.replace(char, math)
        return latex

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
        html = self._display(precision, **options).to_html(index=False, border=0)
        return f"<p>{html_escape(self._caption())}</p>\n{html}"

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
        data = [[_fmt(v, precision) for v in row] for row in frame[cols].itertuples(index=False)]
        smry.tables.append(SimpleTable(data, headers=headers, stubs=stubs or [""] * len(data)))
        notes = [f"{k} {v}" for k, v in info if len(v) > _LONG]
        if notes:
            smry.add_extra_txt(notes)
        return smry

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
