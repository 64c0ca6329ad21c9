"""Result of :func:`cvstats.across.conditional.winner_table` (re-exported there).

:class:`WinnerTable` follows the result contract of :mod:`cvstats.results.base`
(tidy :meth:`~WinnerTable.to_frame`, Markdown/LaTeX/HTML, ``summary()``); its
2×2 table and conditional probabilities stay the labelled pandas objects they
have always been.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pandas as pd

from cvstats.results.base import Result
from cvstats.results.verdict import Verdict, winner_verdict

__all__ = ["WINNER_FRAME_COLUMNS", "WinnerTable"]

#: Columns of :meth:`WinnerTable.to_frame`.
WINNER_FRAME_COLUMNS = ("cv", "conditional", "count", "share")


@dataclass(frozen=True, repr=False)
class WinnerTable(Result):
    """Does cross-validation pick the truly better model? (survey seed, §5.2).

    Attributes
    ----------
    table : pandas.DataFrame
        2×2 counts of datasets. Rows (index named ``"cv"``): ``"a > b"``
        (CV says ``a`` is worse, ``ε̂_a > ε̂_b``) and ``"a <= b"``; columns
        (named ``"conditional"``): ``"a > b"`` (truly worse, ``εc_a > εc_b``)
        and ``"a <= b"``; ``a`` and ``b`` are the model names. This is the
        survey's table ``M``. For scores where larger is better
        (``greater_is_better``) "worse" is the smaller value and the labels
        are ``"a < b"`` and ``"a >= b"``.
    p_true_given_cv : pandas.Series
        ``P(true verdict = CV verdict | CV verdict)``, indexed by the CV
        verdict: at ``"a > b"``, ``P(εc_a > εc_b | ε̂_a > ε̂_b)`` = cell
        ``[a > b, a > b]`` over its row total; at ``"a <= b"``,
        ``P(εc_a <= εc_b | ε̂_a <= ε̂_b)`` = cell ``[a <= b, a <= b]`` over its
        row total. "P(true winner | CV winner)"; NaN for an empty row.
    p_cv_given_true : pandas.Series
        ``P(CV verdict = true verdict | true verdict)``, indexed by the true
        verdict: the diagonal cells over their column totals.
        "P(CV winner | true winner)"; NaN for an empty column.
    agreement : float
        Share of datasets on the diagonal (CV and truth agree).
    n_datasets : int
        Datasets counted in the table.
    ties_cv, ties_true : int
        Datasets where ``ε̂_a == ε̂_b``, resp. ``εc_a == εc_b`` (before exclusion).
    ties : str
        ``"not_worse"``: a tie counts as ``"a <= b"`` (the survey's convention);
        ``"exclude"``: datasets with a tie in CV or in truth are left out.
    models : tuple of str
        ``(a, b)``.
    greater_is_better : bool, default False
        Whether the values were scores where larger is better (accuracies)
        rather than errors.
    """

    table: pd.DataFrame
    p_true_given_cv: pd.Series
    p_cv_given_true: pd.Series
    agreement: float
    n_datasets: int
    ties_cv: int
    ties_true: int
    ties: str
    models: tuple[str, str]
    greater_is_better: bool = False

    frame_columns: ClassVar[tuple[str, ...]] = WINNER_FRAME_COLUMNS

    def to_frame(self) -> pd.DataFrame:
        """Return the four cells, one row each: ``cv, conditional, count, share``.

        ``cv`` and ``conditional`` are the verdicts (``"a > b"``: ``a`` has the
        larger error; for scores ``"a < b"``: ``a`` has the smaller score),
        ``share`` the cell's count over ``n_datasets`` (NaN when no dataset is
        counted).
        """
        frame = self.table.rename_axis(index="cv", columns="conditional")
        frame = frame.stack().rename("count").reset_index()
        frame["count"] = frame["count"].astype("int64")
        n = self.n_datasets
        frame["share"] = frame["count"] / n if n > 0 else float("nan")
        return frame[list(WINNER_FRAME_COLUMNS)]

    def verdict(self) -> Verdict:
        """Return the table in words (:func:`~cvstats.results.verdict.winner_verdict`)."""
        return winner_verdict(self)

    def _caption(self) -> str:
        a, b = self.models
        return f"CV verdict against the truth: {a} vs {b}, {self.n_datasets} datasets"

    def _summary_info(self) -> list[tuple[str, str]]:
        return [
            ("Table:", self._caption()),
            ("Agreement:", f"{self.agreement:.4g}"),
            ("P(true | CV):", _probs(self.p_true_given_cv)),
            ("P(CV | true):", _probs(self.p_cv_given_true)),
            ("Ties (CV / true):", f"{self.ties_cv} / {self.ties_true} ({self.ties})"),
        ]

    def _display_details(self) -> list[str]:
        a, b = self.models
        worse = "smaller score" if self.greater_is_better else "larger error"
        return [
            f"rows: CV verdict (ε̂_{a} vs ε̂_{b}); columns: true conditional verdict; "
            f"worse: the {worse}"
        ]

    def _display_notes(self) -> list[str]:
        return [
            f"agreement {self.agreement:.4g}; ties (CV / true) {self.ties_cv} / "
            f"{self.ties_true} ({self.ties})",
            f"P(true | CV): {_probs(self.p_true_given_cv)}",
            f"P(CV | true): {_probs(self.p_cv_given_true)}",
        ]


def _probs(series: pd.Series) -> str:
    return ", ".join(f"{k}: {v:.4g}" for k, v in series.items())
