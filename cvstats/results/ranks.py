"""Results of the rank comparisons across datasets (Demšar 2006; García & Herrera 2008).

Built by :mod:`cvstats.across.ranks` (re-exported there) and following the
result contract of :mod:`cvstats.results.base`: the statistics are DataArrays
(0-d for a single test, over ``contrast`` for the pairs), options, counts and
labels are Python scalars, and the per-dataset ranks stay the pandas tables
the rank tests read. :func:`cd_diagram` draws a :class:`FriedmanResult`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.cube.schema import CONTRAST
from cvstats.errors import CvstatsTypeError
from cvstats.results.base import Result
from cvstats.results.verdict import (
    Verdict,
    adjustment_name,
    control_verdict,
    effect_size_verdict,
    friedman_verdict,
    matrix_verdict,
    pairwise_verdict,
    rank_report_verdict,
    wilcoxon_verdict,
)

__all__ = [
    "FRIEDMAN_FRAME_COLUMNS",
    "WILCOXON_FRAME_COLUMNS",
    "PAIRWISE_FRAME_COLUMNS",
    "CONTROL_FRAME_COLUMNS",
    "ControlResult",
    "EFFECT_SIZE_FRAME_COLUMNS",
    "EffectSizeResult",
    "FriedmanResult",
    "MATRIX_FRAME_COLUMNS",
    "PairwiseMatrix",
    "WilcoxonResult",
    "PairwiseResult",
    "RankReport",
    "cd_diagram",
]

#: Columns of :meth:`FriedmanResult.to_frame`.
FRIEDMAN_FRAME_COLUMNS = ("test", "statistic", "df1", "df2", "pvalue")
#: Columns of :meth:`WilcoxonResult.to_frame`.
WILCOXON_FRAME_COLUMNS = (
    "model_a",
    "model_b",
    "wins",
    "ties",
    "losses",
    "median_difference",
    "statistic",
    "pvalue",
)
#: Columns of :meth:`PairwiseResult.to_frame`.
PAIRWISE_FRAME_COLUMNS = (*WILCOXON_FRAME_COLUMNS, "pvalue_adjusted", "reject")
#: Columns of :meth:`ControlResult.to_frame`, after ``model``.
CONTROL_FRAME_COLUMNS = ("rank_difference", "statistic", "pvalue", "pvalue_adjusted", "reject")
#: Columns of :meth:`PairwiseMatrix.to_frame`: one row per pair of learners.
MATRIX_FRAME_COLUMNS = (
    "model_a",
    "model_b",
    "wins",
    "ties",
    "losses",
    "mean_difference",
    "statistic",
    "pvalue",
    "pvalue_adjusted",
    "reject",
)
#: Columns of :meth:`EffectSizeResult.to_frame`.
EFFECT_SIZE_FRAME_COLUMNS = ("measure", "value", "magnitude")


@dataclass(frozen=True, repr=False)
class FriedmanResult(Result):
    """Friedman and Iman–Davenport tests and the Nemenyi critical difference.

    Attributes
    ----------
    ranks : pandas.DataFrame
        Per-dataset ranks, datasets × learners.
    average_ranks : pandas.Series
        ``R_j``, by learner, in table order.
    statistic, df, pvalue : xarray.DataArray
        Friedman's ``χ²_F``, its ``k - 1`` degrees of freedom and p-value (0-d).
    iman_davenport, iman_davenport_df1, iman_davenport_df2, iman_davenport_pvalue : DataArray
        ``F_F = (N - 1) χ²_F / (N (k - 1) - χ²_F)`` with ``(k - 1, (k-1)(N-1))`` df (0-d).
    critical_difference, q_alpha : xarray.DataArray
        Nemenyi ``CD = q_α sqrt(k(k+1)/(6N))`` and ``q_α`` (0-d).
    n_datasets, n_models : int
        ``N`` and ``k``.
    alpha : float
        Level of the critical difference.
    greater_is_better : bool
        Whether rank 1 went to the largest value (a score) or the smallest (a
        loss): read from the table or given (``higher_is_better`` is an alias).
    tie_correction : bool
        The option used.
    """

    ranks: pd.DataFrame
    average_ranks: pd.Series
    statistic: xr.DataArray
    df: xr.DataArray
    pvalue: xr.DataArray
    iman_davenport: xr.DataArray
    iman_davenport_df1: xr.DataArray
    iman_davenport_df2: xr.DataArray
    iman_davenport_pvalue: xr.DataArray
    critical_difference: xr.DataArray
    q_alpha: xr.DataArray
    n_datasets: int
    n_models: int
    alpha: float
    greater_is_better: bool
    tie_correction: bool

    frame_columns: ClassVar[tuple[str, ...]] = FRIEDMAN_FRAME_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = (
        "statistic",
        "df",
        "pvalue",
        "iman_davenport",
        "iman_davenport_df1",
        "iman_davenport_df2",
        "iman_davenport_pvalue",
        "critical_difference",
        "q_alpha",
    )

    def __post_init__(self) -> None:
        self._coerce_values()

    @property
    def higher_is_better(self) -> bool:
        """Alias of :attr:`greater_is_better` (its old name)."""
        return self.greater_is_better

    def to_frame(self) -> pd.DataFrame:
        """Return the two tests: columns ``test, statistic, df1, df2, pvalue``."""
        return pd.DataFrame(
            {
                "test": ["friedman_chi2", "iman_davenport_f"],
                "statistic": [float(self.statistic), float(self.iman_davenport)],
                "df1": [float(self.df), float(self.iman_davenport_df1)],
                "df2": [np.inf, float(self.iman_davenport_df2)],
                "pvalue": [float(self.pvalue), float(self.iman_davenport_pvalue)],
            }
        )

    def nemenyi(self) -> pd.DataFrame:
        """All pairs: average ranks, their difference and whether it reaches the CD.

        Columns ``model_a, model_b, rank_a, rank_b, rank_difference, significant``
        (``|R_a - R_b| >= CD``).
        """
        cd = float(self.critical_difference)
        rows = []
        for a, b in combinations(self.average_ranks.index, 2):
            ra, rb = float(self.average_ranks[a]), float(self.average_ranks[b])
            rows.append((a, b, ra, rb, ra - rb, abs(ra - rb) >= cd))
        cols = ["model_a", "model_b", "rank_a", "rank_b", "rank_difference", "significant"]
        return pd.DataFrame(rows, columns=cols)

    def plot(self, ax: Any = None) -> Any:
        """Critical-difference diagram (:func:`cd_diagram`)."""
        return cd_diagram(self, ax=ax)

    def verdict(self) -> Verdict:
        """Return the test in words (:func:`~cvstats.results.verdict.friedman_verdict`)."""
        return friedman_verdict(self)

    def _caption(self) -> str:
        return f"Friedman test, N = {self.n_datasets} datasets, k = {self.n_models} learners"

    def _summary_info(self) -> list[tuple[str, str]]:
        ranks = ", ".join(f"{k}: {v:.3f}" for k, v in self.average_ranks.items())
        return [
            ("Test:", self._caption()),
            ("Rank 1:", self._rank_one()),
            ("Average ranks:", ranks),
            (f"Nemenyi CD (alpha = {self.alpha:g}):", f"{float(self.critical_difference):.4g}"),
            ("q_alpha:", f"{float(self.q_alpha):.4g}"),
            ("Tie correction:", str(self.tie_correction)),
        ]

    def _rank_one(self) -> str:
        return (
            "the largest value (greater is better)"
            if self.greater_is_better
            else "the smallest value (a loss: smaller is better)"
        )

    def _display_details(self) -> list[str]:
        return [f"rank 1: {self._rank_one()}; tie correction {self.tie_correction}"]

    def _display_notes(self) -> list[str]:
        ranks = ", ".join(f"{k} {v:.3f}" for k, v in self.average_ranks.items())
        cd, q = float(self.critical_difference), float(self.q_alpha)
        return [
            f"average ranks: {ranks}",
            f"Nemenyi critical difference (α = {self.alpha:g}): {cd:.4g} (q_α = {q:.4g})",
        ]


@dataclass(frozen=True, repr=False)
class WilcoxonResult(Result):
    """Wilcoxon signed-rank test of two learners over datasets.

    Attributes
    ----------
    model_a, model_b : str
        The learners; differences are ``a - b``.
    statistic, pvalue : xarray.DataArray
        scipy's statistic (the smaller signed-rank sum) and p-value (NaN and 1
        when every difference is zero); 0-d.
    median_difference : xarray.DataArray
        Median over datasets of ``score_a - score_b`` (0-d).
    wins, ties, losses : int
        Datasets where ``a`` is better, equal, worse.
    n_datasets : int
        ``N``.
    alternative : str
        As in :func:`scipy.stats.wilcoxon`.
    rank_sums : (float, float)
        Demšar's (2006, §3.1.3) ``R+`` and ``R-``: the ranks of the absolute
        differences (zero differences dropped) summed over the datasets where
        ``a`` is better and where it is worse. The larger names the learner the
        test finds ahead (not the count of wins: a few large wins outweigh many
        small losses).
    """

    model_a: str
    model_b: str
    statistic: xr.DataArray
    pvalue: xr.DataArray
    median_difference: xr.DataArray
    wins: int
    ties: int
    losses: int
    n_datasets: int
    alternative: str
    rank_sums: tuple[float, float] = (math.nan, math.nan)

    frame_columns: ClassVar[tuple[str, ...]] = WILCOXON_FRAME_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = ("statistic", "pvalue", "median_difference")

    def __post_init__(self) -> None:
        self._coerce_values()

    def to_frame(self) -> pd.DataFrame:
        """Return one row: ``model_a, model_b, wins, ties, losses, median_difference, ...``."""
        row = {
            c: float(v) if c in self.value_fields else v
            for c in WILCOXON_FRAME_COLUMNS
            for v in [getattr(self, c)]
        }
        return pd.DataFrame([row], columns=list(WILCOXON_FRAME_COLUMNS))

    def verdict(self) -> Verdict:
        """Return the test in words (:func:`~cvstats.results.verdict.wilcoxon_verdict`)."""
        return wilcoxon_verdict(self)

    def _caption(self) -> str:
        return f"Wilcoxon signed-rank test, {self.model_a} vs {self.model_b}"

    def _summary_info(self) -> list[tuple[str, str]]:
        return [
            ("Test:", self._caption()),
            ("Datasets:", str(self.n_datasets)),
            ("Alternative:", self.alternative),
        ]

    def _display_details(self) -> list[str]:
        return [
            f"differences {self.model_a} - {self.model_b} over {self.n_datasets} datasets, "
            f"alternative {self.alternative}; wins: {self.model_a} better"
        ]


@dataclass(frozen=True, repr=False)
class PairwiseResult(Result):
    """Wilcoxon signed-rank tests of every pair of learners with adjusted p-values.

    Attributes
    ----------
    tests : tuple of WilcoxonResult
        One per pair ``(a, b)``, ``a`` before ``b`` in table order.
    pvalue_adjusted : xarray.DataArray
        Adjusted p-values (``correction``), over ``contrast`` (labels
        ``"a - b"``, in the order of ``tests``; coordinates ``model_a`` and
        ``model_b``).
    reject : xarray.DataArray
        ``pvalue_adjusted <= alpha`` (bool), over ``contrast``.
    correction : str
        Method of :func:`statsmodels.stats.multitest.multipletests` (``"holm"``).
    alpha : float
        Family-wise level.
    """

    tests: tuple[WilcoxonResult, ...]
    pvalue_adjusted: xr.DataArray
    reject: xr.DataArray
    correction: str
    alpha: float

    frame_columns: ClassVar[tuple[str, ...]] = PAIRWISE_FRAME_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = ("pvalue_adjusted", "reject")

    def __post_init__(self) -> None:
        for name in self.value_fields:
            value = getattr(self, name)
            if not isinstance(value, xr.DataArray):
                object.__setattr__(self, name, _pair_array(self.tests, value, name))

    def to_frame(self) -> pd.DataFrame:
        """One row per pair: the Wilcoxon columns, ``pvalue_adjusted`` and ``reject``."""
        frame = pd.concat([t.to_frame() for t in self.tests], ignore_index=True)
        frame["pvalue_adjusted"] = self.pvalue_adjusted.values.astype(float)
        frame["reject"] = self.reject.values.astype(bool)
        return frame[list(PAIRWISE_FRAME_COLUMNS)]

    def verdict(self) -> Verdict:
        """Return the tests in words (:func:`~cvstats.results.verdict.pairwise_verdict`)."""
        return pairwise_verdict(self)

    def _caption(self) -> str:
        return f"Pairwise Wilcoxon signed-rank tests, {self.correction}-adjusted"

    def _summary_info(self) -> list[tuple[str, str]]:
        return [
            ("Tests:", self._caption()),
            ("Pairs:", str(len(self.tests))),
            ("Family-wise alpha:", f"{self.alpha:g}"),
        ]

    def _display_details(self) -> list[str]:
        n = self.tests[0].n_datasets if self.tests else 0
        return [f"{len(self.tests)} pairs over {n} datasets, family-wise α = {self.alpha:g}"]


def _pair_array(tests: tuple[WilcoxonResult, ...], values: Any, name: str) -> xr.DataArray:
    """Values of the pairs ``tests`` as a DataArray over ``contrast`` (``"a - b"`` labels)."""
    labels = [f"{t.model_a} - {t.model_b}" for t in tests]
    return xr.DataArray(
        np.asarray(values),
        dims=(CONTRAST,),
        coords={
            CONTRAST: labels,
            "model_a": (CONTRAST, [t.model_a for t in tests]),
            "model_b": (CONTRAST, [t.model_b for t in tests]),
        },
        name=name,
    )


@dataclass(frozen=True, repr=False)
class ControlResult(Result):
    """Every learner against a control by average ranks (Demšar 2006, §3.2.2).

    Attributes
    ----------
    control : str
        The control learner.
    average_ranks : pandas.Series
        ``R_j`` of every learner, control included, in table order (1 = best).
    rank_difference : xarray.DataArray
        ``R_i - R_control`` over ``model`` (the other learners, in table order):
        positive when the control ranks better.
    statistic : xarray.DataArray
        ``z = (R_i - R_control) / sqrt(k(k+1)/(6N))`` over ``model``.
    pvalue : xarray.DataArray
        Two-sided normal p-value of ``z``, unadjusted.
    pvalue_adjusted : xarray.DataArray
        ``pvalue`` adjusted for the ``k - 1`` comparisons (``adjust``).
    reject : xarray.DataArray
        Whether the step-wise procedure rejects at family-wise level ``alpha`` (bool).
    adjust : str
        ``"holm"``, ``"hochberg"`` or ``"bonferroni"`` (Bonferroni–Dunn).
    alpha : float
        Family-wise level.
    n_datasets, n_models : int
        ``N`` and ``k`` (control included).
    greater_is_better : bool
        Whether rank 1 went to the largest value.
    """

    control: str
    average_ranks: pd.Series
    rank_difference: xr.DataArray
    statistic: xr.DataArray
    pvalue: xr.DataArray
    pvalue_adjusted: xr.DataArray
    reject: xr.DataArray
    adjust: str
    alpha: float
    n_datasets: int
    n_models: int
    greater_is_better: bool

    frame_columns: ClassVar[tuple[str, ...]] = CONTROL_FRAME_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = CONTROL_FRAME_COLUMNS

    def __post_init__(self) -> None:
        self._coerce_values()

    def verdict(self) -> Verdict:
        """Return the tests in words (:func:`~cvstats.results.verdict.control_verdict`)."""
        return control_verdict(self)

    def _caption(self) -> str:
        return f"Comparisons against the control {self.control}, {self.adjust}-adjusted"

    def _summary_info(self) -> list[tuple[str, str]]:
        ranks = ", ".join(f"{k}: {v:.3f}" for k, v in self.average_ranks.items())
        return [
            ("Tests:", self._caption()),
            ("Average ranks:", ranks),
            ("Family-wise alpha:", f"{self.alpha:g}"),
        ]

    def _display_details(self) -> list[str]:
        rank_one = "the largest value" if self.greater_is_better else "the smallest value"
        return [
            f"{self.n_models - 1} comparisons over {self.n_datasets} datasets, family-wise "
            f"α = {self.alpha:g}; rank 1: {rank_one}"
        ]


@dataclass(frozen=True, repr=False)
class EffectSizeResult(Result):
    """Effect sizes of two learners over datasets, with their magnitudes (as autorank).

    Attributes
    ----------
    model_a, model_b : str
        The learners; the effects are signed as ``score_a - score_b``.
    cohens_d : xarray.DataArray
        Cohen's d with the pooled standard deviation (0-d).
    cliffs_delta : xarray.DataArray
        Cliff's δ = P(a > b) - P(a < b) over all pairs of datasets (0-d).
    akinshin_gamma : xarray.DataArray
        Akinshin's (2020) γ: the difference of the medians over the pooled
        normal-scaled median absolute deviation (0-d; NaN when that is 0).
    d_magnitude, delta_magnitude, gamma_magnitude : str
        ``"negligible"``, ``"small"``, ``"medium"`` or ``"large"`` (Cohen 1988;
        Romano et al. 2006; γ on Cohen's bounds), ``"undefined"`` for a NaN γ.
    n_datasets : int
        ``N``.
    greater_is_better : bool
        Whether a larger value is better (which sign favours ``model_a``).
    """

    model_a: str
    model_b: str
    cohens_d: xr.DataArray
    cliffs_delta: xr.DataArray
    akinshin_gamma: xr.DataArray
    d_magnitude: str
    delta_magnitude: str
    gamma_magnitude: str
    n_datasets: int
    greater_is_better: bool

    frame_columns: ClassVar[tuple[str, ...]] = EFFECT_SIZE_FRAME_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = ("cohens_d", "cliffs_delta", "akinshin_gamma")

    def __post_init__(self) -> None:
        self._coerce_values()

    def to_frame(self) -> pd.DataFrame:
        """Return the three effect sizes: columns ``measure, value, magnitude``."""
        return pd.DataFrame(
            {
                "measure": ["cohens_d", "akinshin_gamma", "cliffs_delta"],
                "value": [
                    float(self.cohens_d),
                    float(self.akinshin_gamma),
                    float(self.cliffs_delta),
                ],
                "magnitude": [self.d_magnitude, self.gamma_magnitude, self.delta_magnitude],
            }
        )

    def verdict(self) -> Verdict:
        """Return the effects in words (:func:`~cvstats.results.verdict.effect_size_verdict`)."""
        return effect_size_verdict(self)

    def _caption(self) -> str:
        return f"Effect sizes of {self.model_a} - {self.model_b} over {self.n_datasets} datasets"

    def _display_details(self) -> list[str]:
        return [f"{self.model_a} - {self.model_b}; greater is better: {self.greater_is_better}"]


#: The row and column dims of the matrices of :class:`PairwiseMatrix`.
MATRIX_DIMS = ("model_a", "model_b")


@dataclass(frozen=True, repr=False)
class PairwiseMatrix(Result):
    """Every pair of learners over datasets: wins, ties, losses, differences and adjusted p.

    Every value is a learner × learner DataArray over ``(model_a, model_b)``
    (the row learner against the column learner, table order); the diagonal
    holds no comparison (``N`` ties, a zero difference, NaN p-values).

    Attributes
    ----------
    wins, ties, losses : xarray.DataArray
        Datasets where the row learner is better than the column learner by
        more than ``rope``, within ``rope`` of it, worse by more than ``rope``
        (int; ``wins`` is the transpose of ``losses``).
    mean_difference : xarray.DataArray
        Mean over datasets of ``row - column``, in the table's units
        (antisymmetric).
    statistic : xarray.DataArray
        ``test="wilcoxon"``: the sum of the signed ranks of the datasets where
        the row learner is better (Demšar's 2006 ``R+``, zero differences
        dropped; scipy's two-sided statistic is the smaller of the ``[a, b]``
        and ``[b, a]`` cells). ``test="nemenyi"``: ``z = (R_col - R_row) /
        sqrt(k(k+1)/(6N))`` of the average ranks, positive when the row ranks
        better. Either way the larger of a cell and its transpose names the
        learner ahead.
    pvalue : xarray.DataArray
        Two-sided p-value of the pair (symmetric): Wilcoxon's signed-rank test
        (:func:`scipy.stats.wilcoxon`) or Nemenyi's (studentized range, already
        adjusted for the family).
    pvalue_adjusted : xarray.DataArray
        The p-values adjusted over the ``k(k-1)/2`` pairs (``adjust``); the
        Nemenyi p-values as they are.
    reject : xarray.DataArray
        Whether the pair differs at family-wise level ``alpha`` (bool).
    test : str
        ``"wilcoxon"`` or ``"nemenyi"``.
    adjust : str
        Method of :func:`statsmodels.stats.multitest.multipletests` (``"holm"``),
        or ``"nemenyi"`` for the Nemenyi test's own single-step adjustment.
    alpha : float
        Family-wise level.
    rope : float
        Half-width of the ties of ``wins``/``ties``/``losses`` (table units).
    n_datasets, n_models : int
        ``N`` and ``k``.
    greater_is_better : bool
        Whether a larger value is better (who wins).
    """

    wins: xr.DataArray
    ties: xr.DataArray
    losses: xr.DataArray
    mean_difference: xr.DataArray
    statistic: xr.DataArray
    pvalue: xr.DataArray
    pvalue_adjusted: xr.DataArray
    reject: xr.DataArray
    test: str
    adjust: str
    alpha: float
    rope: float
    n_datasets: int
    n_models: int
    greater_is_better: bool

    frame_columns: ClassVar[tuple[str, ...]] = MATRIX_FRAME_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = MATRIX_FRAME_COLUMNS[2:]

    def __post_init__(self) -> None:
        self._coerce_values()

    @property
    def models(self) -> list[str]:
        """The learners, in table order."""
        return [str(m) for m in self.wins[MATRIX_DIMS[0]].values]

    def to_frame(self) -> pd.DataFrame:
        """One row per pair ``(a, b)``, ``a`` before ``b`` in table order.

        Columns ``model_a, model_b, wins, ties, losses, mean_difference,
        statistic, pvalue, pvalue_adjusted, reject`` (the ``[a, b]`` cells).
        """
        models = self.models
        rows = []
        for i, j in combinations(range(len(models)), 2):
            cells = [getattr(self, f).values[i, j] for f in self.value_fields]
            rows.append((models[i], models[j], *(c.item() for c in cells)))
        return pd.DataFrame(rows, columns=list(MATRIX_FRAME_COLUMNS))

    def _frame_dims(self, frame: pd.DataFrame) -> list[str]:
        return []

    def plot(self, ax: Any = None) -> Any:
        """Heatmap of the pairs (:func:`~cvstats.results.plots.pairwise_heatmap`)."""
        from cvstats.results.plots import pairwise_heatmap

        return pairwise_heatmap(self, ax=ax)

    def verdict(self) -> Verdict:
        """Return the pairs in words (:func:`~cvstats.results.verdict.matrix_verdict`)."""
        return matrix_verdict(self)

    def _how(self) -> str:
        """Return the test and its adjustment in words."""
        if self.adjust == "nemenyi":
            return "Nemenyi tests"
        return f"Wilcoxon signed-rank tests, {adjustment_name(self.adjust)}-adjusted"

    def _caption(self) -> str:
        return (
            f"All pairs of {self.n_models} learners over {self.n_datasets} datasets: {self._how()}"
        )

    def _summary_info(self) -> list[tuple[str, str]]:
        return [
            ("Tests:", self._how()),
            ("Datasets:", str(self.n_datasets)),
            ("Family-wise alpha:", f"{self.alpha:g}"),
            ("Ties within:", f"{self.rope:g}"),
        ]

    def _display_details(self) -> list[str]:
        better = "larger" if self.greater_is_better else "smaller"
        return [
            f"{self.n_models * (self.n_models - 1) // 2} pairs, family-wise α = {self.alpha:g}; "
            f"wins: {better} value, ties within {self.rope:g}"
        ]


@dataclass(frozen=True, repr=False)
class RankReport(Result):
    """Rank-based comparison across datasets beside the per-dataset corrected tests.

    Attributes
    ----------
    friedman : FriedmanResult
    pairwise : PairwiseResult
        Holm-adjusted Wilcoxon tests of every pair.
    per_dataset : pandas.DataFrame or None
        Per pair ``(model_a, model_b)``: ``significant_wins`` (datasets where the
        per-dataset test rejects and ``a`` is better: a lower loss or a higher
        score, as the table's direction says), ``not_significant``,
        ``significant_losses``, and ``per_dataset_method``; None when no
        per-dataset results were given.
    """

    friedman: FriedmanResult
    pairwise: PairwiseResult
    per_dataset: pd.DataFrame | None

    frame_columns: ClassVar[tuple[str, ...]] = (
        "model_a",
        "model_b",
        "rank_a",
        "rank_b",
        "rank_difference",
        "nemenyi_significant",
        "wins",
        "ties",
        "losses",
        "wilcoxon_pvalue",
    )

    def to_frame(self) -> pd.DataFrame:
        """One row per pair: Nemenyi ranks, adjusted Wilcoxon, per-dataset counts.

        Columns: ``model_a, model_b, rank_a, rank_b, rank_difference,
        nemenyi_significant, wins, ties, losses, wilcoxon_pvalue``, then
        ``wilcoxon_pvalue_<correction>`` and, with per-dataset results, their
        counts ``significant_wins, not_significant, significant_losses,
        per_dataset_method``.
        """
        frame = self.friedman.nemenyi().rename(columns={"significant": "nemenyi_significant"})
        wil = self.pairwise.to_frame()[
            ["model_a", "model_b", "wins", "ties", "losses", "pvalue", "pvalue_adjusted"]
        ].rename(
            columns={
                "pvalue": "wilcoxon_pvalue",
                "pvalue_adjusted": f"wilcoxon_pvalue_{self.pairwise.correction}",
            }
        )
        frame = frame.merge(wil, on=["model_a", "model_b"], how="left")
        if self.per_dataset is not None:
            frame = frame.merge(self.per_dataset, on=["model_a", "model_b"], how="left")
        return frame

    def _frame_dims(self, frame: pd.DataFrame) -> list[str]:
        return []

    def plot(self, ax: Any = None) -> Any:
        """Critical-difference diagram of the Friedman result."""
        return cd_diagram(self.friedman, ax=ax)

    def verdict(self) -> Verdict:
        """Return the report in words (:func:`~cvstats.results.verdict.rank_report_verdict`)."""
        return rank_report_verdict(self)

    def _caption(self) -> str:
        return f"Rank report: {self.friedman._caption()}"

    def _summary_info(self) -> list[tuple[str, str]]:
        f = self.friedman
        chi2 = f"{float(f.statistic):.4g} (df {float(f.df):g}), p = {float(f.pvalue):.4g}"
        df1, df2 = float(f.iman_davenport_df1), float(f.iman_davenport_df2)
        ff = f"{float(f.iman_davenport):.4g} (df {df1:g}, {df2:g})"
        return [
            *f._summary_info(),
            ("Friedman chi2_F:", chi2),
            ("Iman-Davenport F_F:", f"{ff}, p = {float(f.iman_davenport_pvalue):.4g}"),
            ("Pairwise:", self.pairwise._caption()),
        ]

    def _display_details(self) -> list[str]:
        f = self.friedman
        return [
            f"Friedman χ²_F = {float(f.statistic):.4g}, p = {float(f.pvalue):.4g}; "
            f"Iman-Davenport p = {float(f.iman_davenport_pvalue):.4g}; Nemenyi CD "
            f"(α = {f.alpha:g}) = {float(f.critical_difference):.4g}"
        ]

    def _display_frame(self) -> pd.DataFrame:
        frame = self.to_frame()
        adjusted = f"wilcoxon_pvalue_{self.pairwise.correction}"
        cols = ["model_a", "model_b", "rank_difference", "nemenyi_significant"]
        cols += ["wins", "ties", "losses", adjusted]
        cols += [c for c in ("significant_wins", "significant_losses") if c in frame.columns]
        return frame[cols]

    def _display_notes(self) -> list[str]:
        return self.friedman._display_notes()[:1]


# --------------------------------------------------------------------------
# critical-difference diagram
# --------------------------------------------------------------------------


def _cliques(ranks: np.ndarray, cd: float) -> list[tuple[int, int]]:
    """Maximal runs ``[i, j]`` of sorted average ranks spanning less than ``cd``."""
    out: list[tuple[int, int]] = []
    for i in range(ranks.size):
        j = i
        while j + 1 < ranks.size and ranks[j + 1] - ranks[i] < cd:
            j += 1
        if j > i and not any(lo <= i and j <= hi for lo, hi in out):
            out.append((i, j))
    return out


def cd_diagram(result: FriedmanResult, ax: Any = None) -> Any:
    """Draw Demšar's critical-difference diagram of a :class:`FriedmanResult`.

    Learners sit at their average rank on an axis from 1 (best, left: the
    highest score or the lowest loss, as ``result.greater_is_better`` says) to
    ``k``; thick bars join groups whose ranks differ by less than the Nemenyi
    CD, drawn to scale above the axis.

    Parameters
    ----------
    result : FriedmanResult
        From :func:`~cvstats.across.ranks.friedman_test`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    if not isinstance(result, FriedmanResult):
        raise CvstatsTypeError(
            f"`result` must be a FriedmanResult (friedman_test), got {type(result).__name__}."
        )
    avg = result.average_ranks.sort_values(kind="stable")
    names, ranks = list(avg.index), avg.to_numpy()
    k, cd = result.n_models, float(result.critical_difference)
    half = (k + 1) // 2
    height = 1.2 + 0.3 * half
    if ax is None:
        _, ax = plt.subplots(figsize=(7, height + 0.6))
    ax.set_xlim(0.5 - 0.9, k + 0.5 + 0.9)
    ax.set_ylim(-0.75 - 0.3 * (half - 1), 1.0)
    ax.axis("off")
    ax.hlines(0, 1, k, color="black", lw=1)
    for r in range(1, k + 1):
        ax.vlines(r, 0, 0.08, color="black", lw=1)
        ax.text(r, 0.13, str(r), ha="center", va="bottom", fontsize=9)
    ax.hlines(0.7, 1, 1 + cd, color="black", lw=1.5)
    ax.vlines([1, 1 + cd], 0.65, 0.75, color="black", lw=1)
    ax.text(1 + cd / 2, 0.78, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    for i, (name, r) in enumerate(zip(names, ranks, strict=True)):
        left = i < half
        row = i if left else k - 1 - i
        y = -0.45 - 0.3 * row
        x_end = 0.5 - 0.1 if left else k + 0.5 + 0.1
        ax.plot([r, r, x_end], [0, y, y], color="black", lw=0.8)
        ax.text(
            x_end + (-0.05 if left else 0.05),
            y,
            f"{name} ({r:.2f})",
            ha="right" if left else "left",
            va="center",
            fontsize=9,
        )
    for n, (i, j) in enumerate(_cliques(ranks, cd)):
        y = -0.12 - 0.1 * n
        ax.hlines(y, ranks[i] - 0.03, ranks[j] + 0.03, color="tab:red", lw=3)
    ax.set_title(
        f"Nemenyi critical difference, α = {result.alpha:g}: N = {result.n_datasets}, k = {k}",
        fontsize=10,
    )
    return ax
