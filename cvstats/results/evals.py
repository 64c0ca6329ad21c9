"""Results of the evaluations of fixed models (Miller, 2024, arXiv:2411.00640).

:class:`EvalResult` holds the mean score of each model, or the paired
difference of each pair of models, on a benchmark of questions
(:func:`cvstats.eval_mean`, :func:`cvstats.eval_difference`): the estimate,
its standard error (clustered when the questions are), the variance of the
repeated generations within a question separated from the variance between
questions, and an interval. :class:`EvalPlan` holds how many questions a
benchmark needs (:func:`cvstats.plan_eval`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd
import xarray as xr

from cvstats.checks import validate_alpha
from cvstats.errors import ArgumentError
from cvstats.kernels.reference import critical_value
from cvstats.results.base import (
    ConfidenceInterval,
    Result,
    bounds,
    split_interval,
    tidy_frame,
)
from cvstats.results.verdict import Verdict

__all__ = ["EvalPlan", "EvalResult"]


@dataclass(frozen=True, repr=False)
class EvalResult(Result):
    """Scores of fixed models on a benchmark, or their paired differences.

    Attributes
    ----------
    kind : str
        ``"mean"`` (one row per model) or ``"difference"`` (one per pair, ``"a - b"``).
    title : str
        What was computed.
    loss : str
        The score (the column the cube was read from).
    greater_is_better : bool
        The score's direction.
    estimate : xarray.DataArray
        Mean over questions of each question's mean over its generations (a
        model's score, or the difference of two models' scores).
    stderr, stderr_iid : xarray.DataArray
        The standard error used (clustered when the questions are), and the
        one for independent questions.
    df : xarray.DataArray
        Degrees of freedom of the t reference: clusters - 1, or questions - 1.
    statistic, pvalue, pvalue_adjusted : xarray.DataArray
        ``(estimate - mu0) / stderr``, its p-value, and the p-value adjusted
        over the rows (``adjust``); NaN without a null value.
    ci : xarray.DataArray
        The ``1 - alpha`` interval (``interval``), on a ``ci_bound`` dim.
    var_within, var_between : xarray.DataArray
        The variance of one generation within a question, and between the
        questions' means (NaN within for one generation).
    interval_method : str
        How the interval was computed (``"t"``, ``"clopper-pearson"``,
        ``"wilson"``, ``"bootstrap"``).
    alpha, mu0 : float
        Level and null value (NaN: no test).
    adjust : str
        The ``multipletests`` method of ``pvalue_adjusted`` (``"none"``: none).
    n_questions, n_generations, n_clusters : int
        Sizes; ``n_clusters`` is 0 when the questions are taken as independent.
    """

    kind: str
    title: str
    loss: str
    greater_is_better: bool
    estimate: xr.DataArray
    stderr: xr.DataArray
    stderr_iid: xr.DataArray
    df: xr.DataArray
    statistic: xr.DataArray
    pvalue: xr.DataArray
    pvalue_adjusted: xr.DataArray
    ci: xr.DataArray
    var_within: xr.DataArray
    var_between: xr.DataArray
    interval_method: str
    alpha: float
    mu0: float
    adjust: str
    n_questions: int
    n_generations: int
    n_clusters: int

    value_fields: ClassVar[tuple[str, ...]] = (
        "estimate",
        "stderr",
        "stderr_iid",
        "df",
        "statistic",
        "pvalue",
        "pvalue_adjusted",
        "ci",
        "var_within",
        "var_between",
    )
    frame_columns: ClassVar[tuple[str, ...]] = (
        *value_fields[:7],
        "ci_lower",
        "ci_upper",
        *value_fields[8:],
        "interval",
        "n_questions",
        "n_generations",
        "n_clusters",
    )

    def __post_init__(self) -> None:
        self._coerce_values()

    def to_frame(self) -> pd.DataFrame:
        """Return one row per model (or pair): the dim, then :attr:`frame_columns`."""
        low, high = split_interval(self.ci)
        values = {k: v for k, v in self._value_arrays().items() if k != "ci"}
        frame, dims = tidy_frame({**values, "ci_lower": low, "ci_upper": high})
        frame["interval"] = self.interval_method
        frame["n_questions"] = self.n_questions
        frame["n_generations"] = self.n_generations
        frame["n_clusters"] = self.n_clusters
        return frame[[*dims, *self.frame_columns]]

    def interval(self, alpha: float | None = None) -> xr.DataArray:
        """Return the interval on a ``ci_bound`` dim (``["lower", "upper"]``).

        Parameters
        ----------
        alpha : float, optional
            Level; default the result's. Another level is computed for the
            t interval (``estimate ± t(df, 1 - alpha/2) · stderr``); the binomial
            and bootstrap intervals are computed from the data: call the
            function again with that ``alpha``.

        Raises
        ------
        ArgumentError
            Another ``alpha`` for a binomial or bootstrap interval.
        """
        if alpha is None or alpha == self.alpha:
            return self.ci
        alpha = validate_alpha(alpha)
        if self.interval_method != "t":
            raise ArgumentError(
                f"`alpha` = {alpha!r} differs from the result's {self.alpha}: the "
                f"{self.interval_method} interval is computed from the data; call the function "
                "again with that `alpha`."
            )
        half = self.stderr * critical_value(self.df.values, alpha)
        return bounds(self.estimate - half, self.estimate + half, alpha=alpha)

    def conf_int(self, alpha: float | None = None) -> ConfidenceInterval:
        """Return the tuple view ``(low, high)`` of :meth:`interval`."""
        return split_interval(self.interval(alpha))

    def _display_details(self) -> list[str]:
        clusters = (
            f"{self.n_clusters} clusters (clustered standard errors)"
            if self.n_clusters
            else "questions taken as independent"
        )
        return [
            f"{self.n_questions} questions × {self.n_generations} generation(s), {clusters}; "
            f"{self.interval_method} interval at level {1 - self.alpha:g}"
        ]

    def verdict(self) -> Verdict:
        """Return one line per model (mean) or per pair (difference), in plain words."""
        level = f"{100 * (1 - self.alpha):g}%"
        lines = []
        for row in self.to_frame().itertuples(index=False):
            unit, est = row[0], row.estimate
            span = f"{level} interval [{row.ci_lower:.4g}, {row.ci_upper:.4g}]"
            if self.kind == "mean":
                lines.append(f"{unit}: mean {self.loss} {est:.4g} ({span}).")
                continue
            a, b = str(unit).split(" - ", 1)
            p = row.pvalue_adjusted if self.adjust != "none" else row.pvalue
            if not math.isfinite(p) or p >= self.alpha:
                lines.append(
                    f"{unit}: no detectable difference in {self.loss} on this benchmark "
                    f"(difference {est:.4g}, {span}, p = {p:.3g})."
                )
                continue
            better = a if (est > 0) == self.greater_is_better else b
            lines.append(
                f"{unit}: {better} scores better on {self.loss} (difference {est:.4g}, {span}, "
                f"p = {p:.3g}); about these fixed models and this population of questions."
            )
        return Verdict("\n".join(lines))


@dataclass(frozen=True, repr=False)
class EvalPlan(Result):
    """How many questions a benchmark needs, per number of generations.

    Attributes
    ----------
    questions : xarray.DataArray
        Smallest number of questions reaching the target, over the dims
        ``generations`` (and the pilot's ``model``/``contrast``).
    stderr : xarray.DataArray
        The standard error at that number of questions.
    var_between, var_within : xarray.DataArray
        The variance components the plan uses (pilot's, ``var_between``
        clipped at 0).
    design_effect : xarray.DataArray
        Ratio of the clustered to the independent-questions variance of the
        pilot (1 without clusters): the questions needed are multiplied by it.
    target : str
        What is reached: ``"half-width 0.05"`` or ``"power 0.8 at 0.03"``.
    alpha : float
        Level of the intervals and tests.
    """

    questions: xr.DataArray
    stderr: xr.DataArray
    var_between: xr.DataArray
    var_within: xr.DataArray
    design_effect: xr.DataArray
    target: str
    alpha: float

    value_fields: ClassVar[tuple[str, ...]] = (
        "questions",
        "stderr",
        "var_between",
        "var_within",
        "design_effect",
    )
    frame_columns: ClassVar[tuple[str, ...]] = (*value_fields, "target", "alpha")

    def __post_init__(self) -> None:
        self._coerce_values()

    def _caption(self) -> str:
        return f"Questions needed for {self.target}"

    def verdict(self) -> Verdict:
        """Return one line per row: the questions needed for the target."""
        frame = self.to_frame()
        dims = self._frame_dims(frame)
        lines = []
        for _, row in frame.iterrows():
            where = ", ".join(f"{d} {row[d]}" for d in dims)
            lines.append(f"{where}: {int(row['questions'])} questions for {self.target}.")
        return Verdict("\n".join(lines))

    def _summary_info(self, **options: Any) -> list[tuple[str, str]]:
        return [("Result:", self._caption()), ("Level:", f"{1 - self.alpha:g}")]
