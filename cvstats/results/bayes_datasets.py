"""Result of the Bayesian sign and signed-rank tests across datasets.

:class:`BayesianDatasetsResult` follows the result contract of
:mod:`cvstats.results.base` (values are 0-d DataArrays; ``to_frame``,
``summary``, ``verdict``, ``to_markdown``/``to_latex``/``to_html``). Built by
:func:`cvstats.across.bayes_datasets.bayesian_signed_rank_test` and
:func:`cvstats.across.bayes_datasets.bayesian_sign_test` (Benavoli, Corani,
Demšar & Zaffalon 2017, JMLR 18(77), §4–5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pandas as pd
import xarray as xr

from cvstats.results.base import Result

__all__ = ["BAYES_DATASETS_FRAME_COLUMNS", "BayesianDatasetsResult"]

#: Stable columns of :meth:`BayesianDatasetsResult.to_frame`.
BAYES_DATASETS_FRAME_COLUMNS = (
    "method",
    "model_a",
    "model_b",
    "p_left",
    "p_rope",
    "p_right",
    "rope",
    "prior",
    "wins",
    "ties",
    "losses",
    "n_datasets",
    "n_samples",
)


@dataclass(frozen=True, repr=False)
class BayesianDatasetsResult(Result):
    """Posterior of the comparison of two learners over datasets (sign or signed-rank test).

    Attributes
    ----------
    method, title : str
        ``"bayesian_signed_rank_test"`` or ``"bayesian_sign_test"``, and a readable name.
    model_a, model_b : str
        The learners. *left* is the region where ``a`` is better by more than
        the rope, *right* where ``b`` is, in the table's direction.
    p_left, p_rope, p_right : xarray.DataArray
        Posterior probabilities (0-d) that ``a`` is practically better, that
        the two are practically equivalent, that ``b`` is practically better:
        the share of posterior draws in which the region is the most probable
        one for a new dataset (Benavoli et al. 2017, §4–5; baycomp's
        ``probs``). Without a rope (``rope = 0``) ``p_rope`` is ``0`` and the
        other two sum to one.
    posterior : xarray.DataArray
        The draws of ``(θ_left, θ_rope, θ_right)``, the probabilities of the
        three regions on a new dataset, over ``(chain, draw, region)`` (one
        chain; ``region`` coordinates ``["left", "rope", "right"]``), the
        layout ArviZ reads.
    rope : float
        Half-width of the region of practical equivalence, in the table's units.
    prior : float
        Prior strength (sign test: pseudo-count on ``prior_region``;
        signed-rank: weight of the pseudo-observation at a zero difference).
    prior_region : str
        Region of the sign test's prior (``"rope"``); ``"zero"`` for the signed-rank test.
    wins, ties, losses : int
        Datasets where ``a`` is better by more than the rope, within it, worse.
    n_datasets, n_samples : int
        Number of datasets and of posterior draws.
    greater_is_better : bool
        The table's direction.
    seed : int or None
        The seed given (``None``: fresh entropy, or a Generator given).
    """

    method: str
    title: str
    model_a: str
    model_b: str
    p_left: xr.DataArray
    p_rope: xr.DataArray
    p_right: xr.DataArray
    posterior: xr.DataArray
    rope: float
    prior: float
    prior_region: str
    wins: int
    ties: int
    losses: int
    n_datasets: int
    n_samples: int
    greater_is_better: bool
    seed: int | None = None

    frame_columns: ClassVar[tuple[str, ...]] = BAYES_DATASETS_FRAME_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = ("p_left", "p_rope", "p_right")

    def __post_init__(self) -> None:
        self._coerce_values()

    def probabilities(self) -> dict[str, float]:
        """Return ``{"left": P(left), "rope": P(rope), "right": P(right)}`` as floats.

        Returns
        -------
        dict of str to float
        """
        return {
            "left": float(self.p_left),
            "rope": float(self.p_rope),
            "right": float(self.p_right),
        }

    def to_frame(self) -> pd.DataFrame:
        """Return one row: the learners, the three probabilities, the options and the counts.

        Returns
        -------
        pandas.DataFrame
            Columns :data:`BAYES_DATASETS_FRAME_COLUMNS`.
        """
        row = {
            c: float(v) if c in self.value_fields else v
            for c in BAYES_DATASETS_FRAME_COLUMNS
            for v in [getattr(self, c)]
        }
        return pd.DataFrame([row], columns=list(BAYES_DATASETS_FRAME_COLUMNS))

    def _caption(self) -> str:
        return f"{self.title}, {self.model_a} vs {self.model_b}"

    def _summary_info(self) -> list[tuple[str, str]]:
        better = "greater" if self.greater_is_better else "smaller"
        return [
            ("Test:", self._caption()),
            ("Datasets:", str(self.n_datasets)),
            ("Rope:", f"±{self.rope:g} ({better} is better)"),
            ("Prior:", f"{self.prior:g} ({self.prior_region})"),
            ("Draws:", str(self.n_samples)),
        ]

    def _display_details(self) -> list[str]:
        return [
            f"left: {self.model_a} practically better, right: {self.model_b} practically "
            f"better, rope ±{self.rope:g}; {self.n_datasets} datasets, {self.n_samples} draws"
        ]
