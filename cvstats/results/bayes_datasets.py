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
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.results.base import Result
from cvstats.results.verdict import Verdict, bayes_datasets_verdict

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

    def verdict(self) -> Verdict:
        """Return the test in words (:func:`~cvstats.results.verdict.bayes_datasets_verdict`)."""
        return bayes_datasets_verdict(self)

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

    def plot(self, ax: Any = None, *, points: int = 5000) -> Any:
        """Draw the posterior draws in the simplex (Benavoli et al. 2017's triangle).

        Each draw ``(θ_left, θ_rope, θ_right)`` is a point of the triangle whose
        corners are "``a`` practically better" (bottom left), "``b`` practically
        better" (bottom right) and "practically equivalent" (top); the lines
        from the centre split it into the regions where each ``θ`` is the
        largest, so the share of points in a region is its probability
        (``p_left``, ``p_rope``, ``p_right``). Without a rope the points lie on
        the bottom edge.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; default a new figure.
        points : int, default 5000
            At most this many draws are shown (the first ones; the draws are
            independent).

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        corners = np.array([[0.0, 0.0], [0.5, np.sqrt(3) / 2], [1.0, 0.0]])  # left, rope, right
        theta = self.posterior.isel(chain=0).transpose("draw", "region").values[:points]
        xy = theta @ corners
        if ax is None:
            _, ax = plt.subplots(figsize=(5, 4.5))
        ax.plot(*np.vstack([corners, corners[:1]]).T, color="black", lw=1)
        centre = corners.mean(axis=0)
        for i in range(3):  # boundaries between the regions: centre to each edge's middle
            middle = (corners[i] + corners[(i + 1) % 3]) / 2
            ax.plot([centre[0], middle[0]], [centre[1], middle[1]], color="grey", lw=0.8)
        ax.scatter(xy[:, 0], xy[:, 1], s=2, alpha=0.2, color="tab:blue", rasterized=True)
        probs = self.probabilities()
        labels = [
            f"{self.model_a} better\n{probs['left']:.3f}",
            f"rope ±{self.rope:g}\n{probs['rope']:.3f}",
            f"{self.model_b} better\n{probs['right']:.3f}",
        ]
        for (x, y), label, ha, va in zip(
            corners, labels, ["right", "center", "left"], ["top", "bottom", "top"], strict=True
        ):
            ax.text(x, y, label, ha=ha, va=va, fontsize="small")
        ax.set_title(f"{self.title}: {self.model_a} vs {self.model_b}", fontsize="medium", pad=28)
        ax.set_aspect("equal")
        ax.axis("off")
        return ax

    def _display_details(self) -> list[str]:
        return [
            f"left: {self.model_a} practically better, right: {self.model_b} practically "
            f"better, rope ±{self.rope:g}; {self.n_datasets} datasets, {self.n_samples} draws"
        ]
