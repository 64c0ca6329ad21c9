"""Results of the automatic choice of test and of the one report across datasets.

Built by :mod:`cvstats.across.auto` (``choose_test``, ``compare_datasets``) and
following the result contract of :mod:`cvstats.results.base`.
:class:`ChosenTest` records each check the choice ran (Shapiro–Wilk per
learner, Bartlett or Levene) with its statistic, p-value and decision, the
test it chose (paired t, Wilcoxon signed-rank, repeated-measures ANOVA with
Tukey's HSD, or Friedman with Nemenyi) and that test's numbers, as autorank
(Herbold 2020) decides; :class:`DatasetsComparison` adds the ranking, the
effect sizes and the Bayesian signed-rank probabilities against one learner,
and draws the critical-difference diagram.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.results.base import Result
from cvstats.results.bayes_datasets import BayesianDatasetsResult
from cvstats.results.ranks import EffectSizeResult, FriedmanResult, WilcoxonResult, cd_diagram
from cvstats.results.verdict import Verdict

__all__ = [
    "CHOSEN_TEST_FRAME_COLUMNS",
    "COMPARISON_FRAME_COLUMNS",
    "TEST_NAMES",
    "ChosenTest",
    "DatasetsComparison",
]

#: Columns of :meth:`ChosenTest.to_frame`: one row per check and one for the test.
CHOSEN_TEST_FRAME_COLUMNS = (
    "step",
    "test",
    "subject",
    "statistic",
    "pvalue",
    "threshold",
    "decision",
)
#: Columns of :meth:`DatasetsComparison.to_frame`: one row per learner, best first.
COMPARISON_FRAME_COLUMNS = (
    "model",
    "rank",
    "average_rank",
    "mean",
    "median",
    "cohens_d",
    "d_magnitude",
    "akinshin_gamma",
    "gamma_magnitude",
    "cliffs_delta",
    "delta_magnitude",
    "significant",
    "p_reference_better",
    "p_rope",
    "p_model_better",
)
#: Readable names of the tests :class:`ChosenTest` may hold, and of their post-hoc tests.
TEST_NAMES = {
    "paired_t": "paired t test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "rm_anova": "repeated-measures ANOVA",
    "friedman": "Friedman test",
    "tukey_hsd": "Tukey's HSD",
    "nemenyi": "Nemenyi test",
}


@dataclass(frozen=True, repr=False)
class ChosenTest(Result):
    """The test chosen for a datasets × learners table, the checks behind it, and its outcome.

    Attributes
    ----------
    test : str
        ``"paired_t"``, ``"wilcoxon"`` (two learners), ``"rm_anova"`` or
        ``"friedman"`` (more).
    posthoc : str or None
        ``"tukey_hsd"`` after the ANOVA, ``"nemenyi"`` after Friedman, None for two learners.
    normality_statistic, normality_pvalue : xarray.DataArray
        Shapiro–Wilk's ``W`` and p-value of each learner's scores over the
        datasets, over ``model`` (NaN for a learner constant over the datasets).
    normal : xarray.DataArray
        Whether each learner passed (``p >= alpha / k``), over ``model``.
    all_normal : bool
        Every learner passed.
    homogeneity_test : str
        ``"bartlett"`` when all are normal, else ``"levene"`` (scipy's default,
        centred on the median: Brown–Forsythe).
    homogeneity_statistic, homogeneity_pvalue : xarray.DataArray
        Its statistic and p-value (0-d).
    homoscedastic : bool
        ``homogeneity_pvalue >= alpha``.
    statistic, df1, df2, pvalue : xarray.DataArray
        The chosen test's statistic (``t``, Wilcoxon's ``T``, ``F`` or ``χ²_F``),
        its degrees of freedom (NaN where none) and two-sided p-value (0-d).
    reference, other : str
        For two learners, the pair tested as ``reference - other`` (the better
        ranked first); for more, the best-ranked learner and ``""``.
    posthoc_table : pandas.DataFrame or None
        One row per pair ``model_a, model_b`` (table order) with its
        ``significant`` column: Tukey's HSD on the ANOVA's error term (also
        ``mean_difference`` = mean a - mean b, ``statistic`` q, ``pvalue``,
        ``lower``, ``upper``: the simultaneous interval) or the Nemenyi pairs
        (:meth:`FriedmanResult.nemenyi`); None for two learners.
    friedman : FriedmanResult or None
        The Friedman result when chosen.
    wilcoxon : WilcoxonResult or None
        The Wilcoxon result when chosen.
    reasons : tuple of str
        Each decision in words, in the order taken.
    alpha : float
        Level of every test; the normality checks run at ``alpha / k`` (Bonferroni).
    n_datasets, n_models : int
        ``N`` and ``k``.
    greater_is_better : bool
        The table's direction.
    tie_correction : bool
        Whether the Friedman statistic is divided by the ties factor (scipy's, autorank's).
    """

    test: str
    posthoc: str | None
    normality_statistic: xr.DataArray
    normality_pvalue: xr.DataArray
    normal: xr.DataArray
    all_normal: bool
    homogeneity_test: str
    homogeneity_statistic: xr.DataArray
    homogeneity_pvalue: xr.DataArray
    homoscedastic: bool
    statistic: xr.DataArray
    df1: xr.DataArray
    df2: xr.DataArray
    pvalue: xr.DataArray
    reference: str
    other: str
    posthoc_table: pd.DataFrame | None
    friedman: FriedmanResult | None
    wilcoxon: WilcoxonResult | None
    reasons: tuple[str, ...]
    alpha: float
    n_datasets: int
    n_models: int
    greater_is_better: bool
    tie_correction: bool

    frame_columns: ClassVar[tuple[str, ...]] = CHOSEN_TEST_FRAME_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = (
        "normality_statistic",
        "normality_pvalue",
        "normal",
        "homogeneity_statistic",
        "homogeneity_pvalue",
        "statistic",
        "df1",
        "df2",
        "pvalue",
    )

    def __post_init__(self) -> None:
        self._coerce_values()

    @property
    def alpha_normality(self) -> float:
        """The level of each Shapiro–Wilk check: ``alpha / k`` (Bonferroni, as autorank)."""
        return self.alpha / self.n_models

    @property
    def significant(self) -> bool:
        """Whether the chosen test rejects at ``alpha``."""
        return bool(float(self.pvalue) < self.alpha)

    def to_frame(self) -> pd.DataFrame:
        """One row per check and one for the chosen test.

        Columns :data:`CHOSEN_TEST_FRAME_COLUMNS`: ``step`` (``"normality"``,
        ``"homogeneity"``, ``"test"``), ``test``, ``subject`` (the learner, or
        ``"all"``), ``statistic``, ``pvalue``, ``threshold`` (the level it is
        compared with) and ``decision`` in words.
        """
        rows = []
        for model in self.normality_pvalue["model"].values.tolist():
            w = float(self.normality_statistic.sel(model=model))
            p = float(self.normality_pvalue.sel(model=model))
            ok = bool(self.normal.sel(model=model))
            said = "normal" if ok else ("constant" if np.isnan(p) else "not normal")
            rows.append(("normality", "shapiro_wilk", model, w, p, self.alpha_normality, said))
        equal = "equal variances" if self.homoscedastic else "unequal variances"
        rows.append(
            (
                "homogeneity",
                self.homogeneity_test,
                "all",
                float(self.homogeneity_statistic),
                float(self.homogeneity_pvalue),
                self.alpha,
                equal,
            )
        )
        subject = f"{self.reference} - {self.other}" if self.n_models == 2 else "all"
        outcome = "differ" if self.significant else "no evidence of a difference"
        rows.append(
            (
                "test",
                self.test,
                subject,
                float(self.statistic),
                float(self.pvalue),
                self.alpha,
                outcome,
            )
        )
        return pd.DataFrame(rows, columns=list(CHOSEN_TEST_FRAME_COLUMNS))

    def verdict(self) -> Verdict:
        """Return the choice and its outcome in words: one line per decision."""
        return Verdict("\n".join(self.reasons))

    @property
    def label(self) -> str:
        """The chosen test and its post-hoc test in words, e.g. ``"Friedman test + Nemenyi test"``.

        Returns
        -------
        str
        """
        post = f" + {TEST_NAMES[self.posthoc]}" if self.posthoc else ""
        return f"{TEST_NAMES[self.test]}{post}"

    def _caption(self) -> str:
        label = self.label
        return (
            f"{label[0].upper()}{label[1:]}, chosen for N = {self.n_datasets} datasets, "
            f"k = {self.n_models} learners"
        )

    def _summary_info(self, **options: Any) -> list[tuple[str, str]]:
        return [
            ("Test:", self._caption()),
            ("Normality level:", f"alpha / k = {self.alpha_normality:.4g}"),
            ("All normal:", str(self.all_normal)),
            ("Equal variances:", f"{self.homoscedastic} ({self.homogeneity_test})"),
        ]

    def _display_details(self) -> list[str]:
        return [self.reasons[-1]] if self.reasons else []


@dataclass(frozen=True, repr=False)
class DatasetsComparison(Result):
    """Learners compared over many datasets: the chosen test, ranking, effect sizes, posteriors.

    Attributes
    ----------
    choice : ChosenTest
        The automatic choice of test, its checks and outcome.
    friedman : FriedmanResult
        Average ranks and the Nemenyi critical difference (the CD diagram),
        whatever test was chosen.
    reference : str
        The learner the others are measured against: the best-ranked unless given.
    average_rank, mean, median : xarray.DataArray
        Per learner, over ``model`` in ranking order (best first).
    effect_sizes : tuple of EffectSizeResult
        ``reference`` against each other learner, in ranking order.
    bayesian : tuple of BayesianDatasetsResult
        The Bayesian signed-rank test of ``reference`` (*left*) against each
        other learner (*right*), in ranking order.
    rope : float
        Half-width of the region of practical equivalence, in the table's units.
    alpha : float
        Level of the frequentist tests.
    n_datasets, n_models : int
        ``N`` and ``k``.
    greater_is_better : bool
        The table's direction (rank 1 is the largest value when True).
    seed : int or None
        The seed of the posterior draws.
    """

    choice: ChosenTest
    friedman: FriedmanResult
    reference: str
    average_rank: xr.DataArray
    mean: xr.DataArray
    median: xr.DataArray
    effect_sizes: tuple[EffectSizeResult, ...]
    bayesian: tuple[BayesianDatasetsResult, ...]
    rope: float
    alpha: float
    n_datasets: int
    n_models: int
    greater_is_better: bool
    seed: int | None = None

    frame_columns: ClassVar[tuple[str, ...]] = COMPARISON_FRAME_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = ("average_rank", "mean", "median")

    def __post_init__(self) -> None:
        self._coerce_values()

    @property
    def headline_effect(self) -> str:
        """``"cohens_d"`` when every learner passed the normality check, else ``"akinshin_gamma"``.

        As autorank (Herbold 2020) chooses: Cohen's d for normal data, Akinshin's γ
        (its robust analogue, on medians and median absolute deviations) otherwise;
        Cliff's δ is reported beside them in :meth:`to_frame`.

        Returns
        -------
        str
        """
        return "cohens_d" if self.choice.all_normal else "akinshin_gamma"

    def _significant(self, model: str) -> bool:
        """Whether the chosen test (or its post-hoc) separates ``model`` from the reference."""
        c = self.choice
        if c.posthoc is None:
            return c.significant
        table = c.posthoc_table
        assert table is not None
        pair = table[
            ((table.model_a == model) & (table.model_b == self.reference))
            | ((table.model_a == self.reference) & (table.model_b == model))
        ]
        return bool(c.significant and pair["significant"].iloc[0])

    def to_frame(self) -> pd.DataFrame:
        """One row per learner, best-ranked first.

        Columns :data:`COMPARISON_FRAME_COLUMNS`: ``rank`` (1 = best average
        rank), ``average_rank``, ``mean``, ``median``, the effect sizes of
        ``reference - model`` with their magnitudes, ``significant`` (the
        chosen test, and its post-hoc test for more than two learners, separate
        the learner from the reference), and the Bayesian signed-rank
        probabilities that the reference is practically better, that the two are
        practically equivalent, that the learner is practically better (NaN on
        the reference's own row).
        """
        models = self.average_rank["model"].values.tolist()
        effects = {e.model_b: e for e in self.effect_sizes}
        posts = {b.model_b: b for b in self.bayesian}
        rows = []
        for i, m in enumerate(models, start=1):
            e, b = effects.get(m), posts.get(m)
            rows.append(
                (
                    m,
                    i,
                    float(self.average_rank.sel(model=m)),
                    float(self.mean.sel(model=m)),
                    float(self.median.sel(model=m)),
                    np.nan if e is None else float(e.cohens_d),
                    "" if e is None else e.d_magnitude,
                    np.nan if e is None else float(e.akinshin_gamma),
                    "" if e is None else e.gamma_magnitude,
                    np.nan if e is None else float(e.cliffs_delta),
                    "" if e is None else e.delta_magnitude,
                    False if m == self.reference else self._significant(m),
                    np.nan if b is None else float(b.p_left),
                    np.nan if b is None else float(b.p_rope),
                    np.nan if b is None else float(b.p_right),
                )
            )
        return pd.DataFrame(rows, columns=list(COMPARISON_FRAME_COLUMNS))

    def plot(self, ax: Any = None) -> Any:
        """Critical-difference diagram of the average ranks (:func:`cd_diagram`)."""
        return cd_diagram(self.friedman, ax=ax)

    def _direction(self) -> str:
        return (
            "rank 1 is the largest value (greater is better)"
            if self.greater_is_better
            else "rank 1 is the smallest value (a loss: smaller is better)"
        )

    def _bayes_choice(self) -> str:
        rope = f"rope ±{self.rope:g}" if self.rope > 0 else "no rope"
        against = "the best-ranked learner" if self.n_models > 2 else "the other learner"
        return (
            f"Bayesian signed-rank test (Benavoli et al. 2017) of {self.reference} against "
            f"{against if self.n_models == 2 else 'each other learner'}, {rope}"
        )

    def verdict(self) -> Verdict:
        """Return the report in words: the choice and its reasons, ranking, effects, posteriors."""
        ranking = ", ".join(
            f"{m} ({float(r):.2f})"
            for m, r in zip(
                self.average_rank["model"].values.tolist(),
                self.average_rank.values,
                strict=True,
            )
        )
        normal = self.headline_effect == "cohens_d"
        name = "Cohen's d" if normal else "Akinshin's γ"
        effects = "; ".join(
            f"{e.model_b}: {name} = "
            f"{float(e.cohens_d if normal else e.akinshin_gamma):.2f} "
            f"({e.d_magnitude if normal else e.gamma_magnitude})"
            for e in self.effect_sizes
        )
        lines = [
            self.choice.verdict(),
            f"Ranking over {self.n_datasets} datasets, {self._direction()}; average ranks: "
            f"{ranking}.",
            f"Effect sizes of {self.reference} minus each learner ({name}, as the normality "
            f"check chose): {effects}.",
            *(str(b.verdict()) for b in self.bayesian),
        ]
        return Verdict("\n".join(lines))

    def _caption(self) -> str:
        return (
            f"Comparison over {self.n_datasets} datasets of {self.n_models} learners: "
            f"{self.choice.label}"
        )

    def _summary_info(self, **options: Any) -> list[tuple[str, str]]:
        return [
            ("Test:", self.choice._caption()),
            ("Ranking:", self._direction()),
            ("Reference:", self.reference),
            ("Bayesian:", self._bayes_choice()),
            (
                "Nemenyi CD:",
                f"{float(self.friedman.critical_difference):.4g} (alpha = {self.alpha:g})",
            ),
        ]

    def _display_details(self) -> list[str]:
        return [f"{self._direction()}; reference {self.reference}"]

    def _display_notes(self) -> list[str]:
        return [self._bayes_choice()]
