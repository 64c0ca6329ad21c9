"""Result objects of the inference methods.

One frozen dataclass, :class:`InferenceResult`, with the same fields
whatever method or branch produced it (docs/theory.md §4, last paragraph):
estimate, standard error, statistic, reference distribution and degrees of
freedom, p-value, the interval as a method, the number of splits and fits,
the estimand and the political-ratio direction the method is known for.
The values are DataArrays over the dims the method did not reduce (extra dims
and ``model``/``contrast``), 0-d when there are none; the interval has a
``ci_bound`` dim (:mod:`cvstats.results.base`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd
import xarray as xr

from cvstats import kernels
from cvstats.cube.apply import apply_kernel
from cvstats.results.base import (
    ConfidenceInterval,
    Result,
    bounds,
    measured_row,
    split_interval,
    tidy_frame,
)
from cvstats.results.plots import forest_plot
from cvstats.results.ranges import CLIP_COLUMN, clip_interval, clip_note, mark_clipped
from cvstats.results.verdict import Verdict, result_verdict

__all__ = ["ConfidenceInterval", "InferenceResult", "FRAME_COLUMNS"]

#: Stable columns of :meth:`InferenceResult.to_frame` (after the dims' columns).
FRAME_COLUMNS = (
    "method",
    "estimand",
    "estimate",
    "stderr",
    "statistic",
    "df",
    "pvalue",
    "ci_lower",
    "ci_upper",
    "ci_clipped",
    "n1",
    "n2",
    "n_splits",
    "n_fits",
    "reference",
    "direction",
)


@dataclass(frozen=True, repr=False)
class InferenceResult(Result):
    """Result of one inference method on a cube (docs/theory.md §4).

    Attributes
    ----------
    method : str
        Name of the function that produced it (e.g. ``"corrected_resampled_t"``).
    title : str
        Readable name of the method.
    loss : str
        Name of the cube (its loss).
    estimate, stderr, statistic, df, pvalue : xarray.DataArray
        ``μ̂``, ``sqrt(σ̂²)``, ``(μ̂ - μ0)/sqrt(σ̂²)`` (or the method's own statistic,
        e.g. Alpaydın's F), degrees of freedom of the reference (``inf`` for a
        normal reference), and the p-value. Over the dims that were not reduced;
        0-d when there are none (``float(res.pvalue)`` gives the number). Numbers
        given at construction become 0-d DataArrays.
    mu0 : float
        Null value of the test.
    alpha : float
        Default level of :meth:`interval` and :meth:`conf_int`.
    alternative : str
        ``"two-sided"``, ``"less"`` or ``"greater"``.
    reference : str
        Reference distribution: ``"normal"``, ``"t"``, ``"F(10, 5)"``, ``"chi2(1)"``
        or ``"binomial"``.
    estimand : str
        ``"n1μ"`` (unconditional error at training size ``n1``), ``"n/2 μ"`` (5x2cv)
        or ``"conditional"`` (error of the models trained on the data at hand).
    target : str
        ``"learner"`` (unconditional) or ``"model"`` (conditional).
    n1, n2 : int
        Training and test sizes of the splits the estimate uses.
    n_splits : int
        Splits used by the method.
    n_fits : int
        Model fits per learner the method needs.
    direction : str
        Known political-ratio direction (docs/theory.md §4 table): ``"liberal"``,
        ``"conservative"``, or the condition it depends on.
    """

    method: str
    title: str
    loss: str
    estimate: xr.DataArray
    stderr: xr.DataArray
    statistic: xr.DataArray
    df: xr.DataArray
    pvalue: xr.DataArray
    mu0: float
    alpha: float
    alternative: str
    reference: str
    estimand: str
    target: str
    n1: int
    n2: int
    n_splits: int
    n_fits: int
    direction: str

    frame_columns: ClassVar[tuple[str, ...]] = FRAME_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = ("estimate", "stderr", "statistic", "df", "pvalue")

    def __post_init__(self) -> None:
        self._coerce_values()

    @property
    def estimand_label(self) -> str:
        """The estimand with its training size, e.g. ``"n1μ (n1 = 512)"``."""
        if self.estimand == "n1μ":
            return f"n1μ (n1 = {self.n1})"
        if self.estimand == "n/2 μ":
            return f"n/2 μ (n/2 = {self.n1})"
        return "conditional"

    def interval(self, alpha: float | None = None, *, clip: bool = True) -> xr.DataArray:
        """Return the ``1 - alpha`` interval ``μ̂ ± c sqrt(σ̂²)`` (docs/theory.md §4).

        Parameters
        ----------
        alpha : float, optional
            Level; default the result's ``alpha``.
        clip : bool, default True
            Clip the interval at the range of a bounded metric (an error rate,
            an AUC, their differences: :mod:`cvstats.results.ranges`); False
            gives the Wald interval as computed, which can cross the range
            (docs/theory.md §4, "Intervals at the edge of a bounded metric").

        Returns
        -------
        xarray.DataArray
            Over the result's dims and a trailing ``ci_bound`` dim with
            coordinates ``["lower", "upper"]``; one-sided alternatives give an
            infinite bound; NaN for methods without an interval (Alpaydın's F).
        """
        low, high, _ = self._bounds(alpha, clip)
        return bounds(low, high, alpha=self.alpha if alpha is None else alpha)

    def _bounds(
        self, alpha: float | None, clip: bool = True
    ) -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
        """Return the interval's two bounds at level ``alpha`` and whether each was clipped."""
        alpha = self.alpha if alpha is None else alpha
        low, high = apply_kernel(
            kernels.conf_int,
            [self.estimate, self.stderr, self.df],
            [[], [], []],
            2,
            alpha=alpha,
            alternative=self.alternative,
        )
        if not clip:
            return low, high, xr.zeros_like(low, dtype=bool)
        return clip_interval(low, high, self.estimate, self.loss)

    def conf_int(self, alpha: float | None = None, *, clip: bool = True) -> ConfidenceInterval:
        """Return the tuple view ``(low, high)`` of :meth:`interval`.

        For ``low, high = res.conf_int()``.

        Parameters
        ----------
        alpha : float, optional
            Level; default the result's ``alpha``.
        clip : bool, default True
            Clip at the range of a bounded metric; False: the raw Wald interval
            (:meth:`interval`).

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``, DataArrays over the result's dims (0-d for a scalar
            result); one-sided alternatives give an infinite bound; NaN for
            methods without an interval (Alpaydın's F).
        """
        return split_interval(self.interval(alpha, clip=clip))

    def to_frame(self, alpha: float | None = None, *, clip: bool = True) -> pd.DataFrame:
        """Return a tidy DataFrame: one row per element of the result's dims.

        Parameters
        ----------
        alpha : float, optional
            Level of ``ci_lower``/``ci_upper``; default the result's ``alpha``.
        clip : bool, default True
            Clip the intervals at the range of a bounded metric (:meth:`interval`).

        Returns
        -------
        pandas.DataFrame
            Columns: the result's dims, then :data:`FRAME_COLUMNS`;
            ``ci_clipped`` says whether the row's interval was clipped.
        """
        low, high, clipped = self._bounds(alpha, clip)
        constants = {"method": self.method, "estimand": self.estimand_label}
        for name in ("n1", "n2", "n_splits", "n_fits", "reference", "direction"):
            constants[name] = getattr(self, name)
        frame, _ = tidy_frame(
            {**self._value_arrays(), "ci_lower": low, "ci_upper": high, CLIP_COLUMN: clipped},
            constants,
            list(FRAME_COLUMNS),
        )
        return frame

    def _clip_note(self) -> str:
        return clip_note(self.estimate.attrs, self.loss)

    def _mark_clipped(
        self, shown: pd.DataFrame, frame: pd.DataFrame, **options: Any
    ) -> pd.DataFrame:
        return mark_clipped(shown, frame, self.to_frame(options.get("alpha"), clip=False))

    def summary(self, alpha: float | None = None, *, precision: int = 4) -> Any:
        """Return a statsmodels ``Summary`` (``as_text()``, ``as_latex()``, ``as_html()``).

        Parameters
        ----------
        alpha : float, optional
            Level of the interval columns; default the result's ``alpha``.
        precision : int, default 4
            Significant digits.

        Returns
        -------
        statsmodels.iolib.summary.Summary
        """
        return super().summary(precision, alpha=alpha)

    def _summary_info(self, alpha: float | None = None) -> list[tuple[str, str]]:
        return [
            ("Method:", self.title),
            measured_row(self.loss, self.estimate.attrs),
            ("Estimand:", self.estimand_label),
            ("Target:", self.target),
            ("n1, n2:", f"{self.n1}, {self.n2}"),
            ("Splits / fits:", f"{self.n_splits} / {self.n_fits}"),
            ("Reference:", self.reference),
            ("H0:", f"μ = {self.mu0:g} ({self.alternative})"),
            ("Known direction:", self.direction),
        ]

    def _summary_table(
        self, frame: pd.DataFrame, alpha: float | None = None
    ) -> tuple[list[str], list[str]]:
        alpha = self.alpha if alpha is None else alpha
        cols = ["estimate", "stderr", "statistic", "df", "pvalue", "ci_lower", "ci_upper"]
        lo, hi = f"{100 * (1 - alpha):g}% CI low", f"{100 * (1 - alpha):g}% CI high"
        return cols, ["estimate", "std err", "statistic", "df", "p-value", lo, hi]

    # ------------------------------------------------------------------
    # notebook display and picture
    # ------------------------------------------------------------------

    def _display_details(self) -> list[str]:
        level = f"{100 * (1 - self.alpha):g}%"
        return [
            f"{self.method}: estimand {self.estimand_label}, target {self.target}; "
            f"H0: μ = {self.mu0:g} ({self.alternative}), {self.reference} reference, "
            f"{level} interval",
            f"n1 = {self.n1}, n2 = {self.n2}, {self.n_splits} splits / {self.n_fits} fits; "
            f"known direction: {self.direction}",
        ]

    def _display_frame(self) -> pd.DataFrame:
        frame = self.to_frame()
        cols = ["estimate", "stderr", "statistic", "df", "pvalue", "ci_lower", "ci_upper"]
        cols += [CLIP_COLUMN] if self._clip_notes(frame) else []
        return frame[[*self._frame_dims(frame), *cols]]

    def _display_notes(self) -> list[str]:
        return self._clip_notes(self.to_frame())

    def verdict(self) -> Verdict:
        """Return the result in words (:func:`~cvstats.results.verdict.result_verdict`)."""
        return result_verdict(self)

    def plot(self, ax: Any = None, *, alpha: float | None = None) -> Any:
        """Draw a forest plot: the estimate and interval of every element (matplotlib).

        One row per element of the result's dims (contrast, model, dataset...),
        with ``mu0`` as a vertical line (:func:`cvstats.reporting.plots.forest_plot`).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; default a new figure sized to the rows.
        alpha : float, optional
            Level of the intervals; default the result's ``alpha``.

        Returns
        -------
        matplotlib.axes.Axes
        """
        alpha = self.alpha if alpha is None else alpha
        frame = self.to_frame(alpha)
        labels = tuple(self._frame_dims(frame)) or ("method",)  # the method is the title
        ax = forest_plot(frame, mu0=self.mu0, alpha=alpha, ax=ax, label_columns=labels)
        ax.set_title(self._caption(), fontsize=9)
        ax.figure.tight_layout()
        return ax
