"""Result of the Bayesian correlated t test: the Student-t posterior of a mean.

:class:`BayesianResult` follows the result contract of
:mod:`cvstats.results.base`: its values are DataArrays (0-d for a scalar
result) and its credible interval has a ``ci_bound`` dim. Built by
:func:`cvstats.inference.bayes.bayesian_correlated_t` (re-exported there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.cube.apply import apply_kernel
from cvstats.cube.checks import validate_alpha
from cvstats.kernels import bayes as kb
from cvstats.results.base import (
    ConfidenceInterval,
    Result,
    bounds,
    measured_row,
    split_interval,
    tidy_frame,
)
from cvstats.results.ranges import CLIP_COLUMN, clip_interval, clip_note, mark_clipped
from cvstats.results.verdict import Verdict, result_verdict

__all__ = ["BayesianResult", "BAYES_FRAME_COLUMNS"]

#: Stable columns of :meth:`BayesianResult.to_frame` (after the dims' columns).
BAYES_FRAME_COLUMNS = (
    "method",
    "mean",
    "scale",
    "df",
    "p_left",
    "p_rope",
    "p_right",
    "rope_lower",
    "rope_upper",
    "ci_lower",
    "ci_upper",
    "ci_clipped",
    "rho",
    "n_splits",
)


@dataclass(frozen=True, repr=False)
class BayesianResult(Result):
    """Posterior of the mean of a model's loss or of a contrast (Student t).

    Attributes
    ----------
    method, title, loss : str
        ``"bayesian_correlated_t"``, a readable name, the cube's name.
    mean, scale, df : xarray.DataArray
        Location ``x̄``, scale ``sqrt((1/J + ρ/(1-ρ)) S²)`` and degrees of freedom
        ``J - 1`` of the posterior Student t, over the dims not reduced (0-d
        when there are none).
    p_left, p_rope, p_right : xarray.DataArray
        Posterior probabilities of ``μ < rope[0]``, ``μ`` inside the rope, and
        ``μ > rope[1]``. For a contrast ``A - B`` of losses, ``p_left`` is the
        probability that A's loss is lower by more than the rope.
    rope : tuple of float
        Region of practical equivalence ``(low, high)`` (an option).
    rho : float
        Correlation between splits used (an option, or the design's value).
    alpha : float
        Default level of :meth:`interval` and :meth:`credible_interval`.
    mu0, alternative : float, str
        The options every test takes, recorded as for
        :class:`~cvstats.InferenceResult` (a posterior takes ``0`` and
        ``"two-sided"`` only).
    reference, estimand, target, direction : str
        As for :class:`~cvstats.InferenceResult`, from the method registry
        (``cvstats.inference.registry``): the posterior's distribution, what the
        mean estimates, whether it is about the learner, and its bias (that of
        the corrected resampled t: right if ``ρ`` is).
    n1, n2, n_splits : int
        Training and test sizes of the main block and its number of splits ``J``.
    """

    method: str
    title: str
    loss: str
    mean: xr.DataArray
    scale: xr.DataArray
    df: xr.DataArray
    p_left: xr.DataArray
    p_rope: xr.DataArray
    p_right: xr.DataArray
    rope: tuple[float, float]
    rho: float
    alpha: float
    n1: int
    n2: int
    n_splits: int
    mu0: float = 0.0
    alternative: str = "two-sided"
    reference: str = "posterior t"
    estimand: str = "n1μ"
    target: str = "learner"
    direction: str = ""

    frame_columns: ClassVar[tuple[str, ...]] = BAYES_FRAME_COLUMNS
    comparison_columns: ClassVar[dict[str, str]] = {"estimate": "mean", "stderr": "scale"}
    value_fields: ClassVar[tuple[str, ...]] = (
        "mean",
        "scale",
        "df",
        "p_left",
        "p_rope",
        "p_right",
    )

    def __post_init__(self) -> None:
        self._coerce_values()

    def interval(self, alpha: float | None = None, *, clip: bool = True) -> xr.DataArray:
        """Return the equal-tailed ``1 - alpha`` posterior interval of the mean.

        Parameters
        ----------
        alpha : float, optional
            Level; default the result's ``alpha``.
        clip : bool, default True
            Clip the interval at the range of a bounded metric
            (:mod:`cvstats.results.ranges`; the Student-t posterior puts mass
            beyond it); False gives the interval as computed.

        Returns
        -------
        xarray.DataArray
            Over the result's dims and a trailing ``ci_bound`` dim with
            coordinates ``["lower", "upper"]``.
        """
        alpha = validate_alpha(self.alpha if alpha is None else alpha)
        low, high = apply_kernel(
            lambda m, s, d: kb.credible_interval(kb.Posterior(m, s, d), alpha),
            [self.mean, self.scale, self.df],
            [[], [], []],
            2,
        )
        if clip:
            low, high, _ = clip_interval(low, high, self.mean, self.loss)
        return bounds(low, high, alpha=alpha)

    def credible_interval(
        self, alpha: float | None = None, *, clip: bool = True
    ) -> ConfidenceInterval:
        """Return the tuple view ``(low, high)`` of :meth:`interval`.

        Parameters
        ----------
        alpha : float, optional
            Level; default the result's ``alpha``.
        clip : bool, default True
            Clip at the range of a bounded metric (:meth:`interval`).

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``, DataArrays over the result's dims (0-d for a scalar
            result).
        """
        return split_interval(self.interval(alpha, clip=clip))

    def to_frame(self, alpha: float | None = None, *, clip: bool = True) -> pd.DataFrame:
        """Return a tidy DataFrame, one row per element of the result's dims.

        Parameters
        ----------
        alpha : float, optional
            Level of ``ci_lower``/``ci_upper``; default the result's ``alpha``.
        clip : bool, default True
            Clip the intervals at the range of a bounded metric (:meth:`interval`).

        Returns
        -------
        pandas.DataFrame
            Columns: the dims, then :data:`BAYES_FRAME_COLUMNS`; ``ci_clipped``
            says whether the row's interval was clipped.
        """
        low, high = split_interval(self.interval(alpha, clip=False))
        clipped = xr.zeros_like(low, dtype=bool)
        if clip:
            low, high, clipped = clip_interval(low, high, self.mean, self.loss)
        rope_lower, rope_upper = self.rope
        constants = {
            "method": self.method,
            "rope_lower": rope_lower,
            "rope_upper": rope_upper,
            "rho": self.rho,
            "n_splits": self.n_splits,
        }
        values = {**self._value_arrays(), "ci_lower": low, "ci_upper": high, CLIP_COLUMN: clipped}
        frame, _ = tidy_frame(values, constants, list(BAYES_FRAME_COLUMNS))
        return frame

    def _clip_note(self) -> str:
        return clip_note(self.mean.attrs, self.loss, "credible_interval(clip=False)")

    def _mark_clipped(
        self, shown: pd.DataFrame, frame: pd.DataFrame, **options: Any
    ) -> pd.DataFrame:
        return mark_clipped(shown, frame, self.to_frame(options.get("alpha"), clip=False))

    def summary(self, alpha: float | None = None, *, precision: int = 4) -> Any:
        """Return a statsmodels ``Summary`` (``as_text()``, ``as_latex()``, ``as_html()``).

        Parameters
        ----------
        alpha : float, optional
            Level of the credible-interval columns; default the result's ``alpha``.
        precision : int, default 4
            Significant digits.

        Returns
        -------
        statsmodels.iolib.summary.Summary
        """
        return super().summary(precision, alpha=alpha)

    def _summary_info(self, alpha: float | None = None) -> list[tuple[str, str]]:
        low, high = self.rope
        return [
            ("Method:", self.title),
            measured_row(self.loss, self.mean.attrs),
            ("Rope:", f"({low:g}, {high:g})"),
            ("ρ:", f"{self.rho:.4g}"),
            ("n1, n2:", f"{self.n1}, {self.n2}"),
            ("Splits:", str(self.n_splits)),
        ]

    def _summary_table(
        self, frame: pd.DataFrame, alpha: float | None = None
    ) -> tuple[list[str], list[str]]:
        alpha = self.alpha if alpha is None else alpha
        cols = ["mean", "scale", "df", "p_left", "p_rope", "p_right", "ci_lower", "ci_upper"]
        lo, hi = f"{100 * (1 - alpha):g}% CI low", f"{100 * (1 - alpha):g}% CI high"
        return cols, ["mean", "scale", "df", "P(left)", "P(rope)", "P(right)", lo, hi]

    def _display_details(self) -> list[str]:
        low, high = self.rope
        return [
            f"{self.method}: {self.reference} of the mean ({self.estimand}, target "
            f"{self.target}); rope ({low:g}, {high:g}), ρ = {self.rho:.4g}, "
            f"{100 * (1 - self.alpha):g}% credible interval",
            f"n1 = {self.n1}, n2 = {self.n2}, {self.n_splits} splits; p_left: below the rope, "
            "p_right: above it",
        ]

    def _display_frame(self) -> pd.DataFrame:
        frame = self.to_frame()
        cols = ["mean", "scale", "p_left", "p_rope", "p_right", "ci_lower", "ci_upper"]
        cols += [CLIP_COLUMN] if self._clip_notes(frame) else []
        return frame[[*self._frame_dims(frame), *cols]]

    def _display_notes(self) -> list[str]:
        return self._clip_notes(self.to_frame())

    def verdict(self) -> Verdict:
        """Return the result in words (:func:`~cvstats.results.verdict.result_verdict`)."""
        return result_verdict(self)

    def plot(self, ax: Any = None, *, points: int = 400) -> Any:
        """Draw the posterior densities with the rope shaded (matplotlib).

        One curve per element of the result's dims.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; default a new figure.
        points : int, default 400
            Grid size of each curve.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt
        from scipy import stats

        frame = self.to_frame(alpha=0.002, clip=False)
        dims = self._frame_dims(frame)
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 3.5))
        low, high = self.rope
        lo = min(frame["ci_lower"].min(), low)
        hi = max(frame["ci_upper"].max(), high)
        pad = 0.05 * (hi - lo if hi > lo else 1.0)
        grid = np.linspace(lo - pad, hi + pad, points)
        for _, row in frame.iterrows():
            label = " ".join(str(row[d]) for d in dims) or self.loss
            if row["scale"] > 0:
                ax.plot(grid, stats.t.pdf(grid, row["df"], row["mean"], row["scale"]), label=label)
            else:
                ax.axvline(row["mean"], label=f"{label} (point mass)")
        if high > low:
            ax.axvspan(low, high, color="orange", alpha=0.25, label="rope")
        else:
            ax.axvline(low, color="orange", lw=1.5, label="rope")
        ax.set_xlabel(f"mean {self.loss} (posterior, ρ = {self.rho:.3g})")
        ax.set_ylabel("density")
        ax.legend(fontsize="small")
        ax.figure.tight_layout()
        return ax
