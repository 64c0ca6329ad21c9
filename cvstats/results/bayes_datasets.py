"""Result of the Bayesian sign and signed-rank tests across datasets.

:class:`BayesianDatasetsResult` follows the result contract of
:mod:`cvstats.results.base` (values are 0-d DataArrays; ``to_frame``,
``summary``, ``verdict``, ``to_markdown``/``to_latex``/``to_html``). Built by
:func:`cvstats.across.bayes_datasets.bayesian_signed_rank_test` and
:func:`cvstats.across.bayes_datasets.bayesian_sign_test` (Benavoli, Corani,
Demšar & Zaffalon 2017, JMLR 18(77), §4–5); :class:`HierarchicalResult` by
:func:`cvstats.across.hierarchical.bayesian_hierarchical_test` (Corani, Benavoli,
Demšar, Mangili & Zaffalon 2017, Machine Learning 106).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd
import xarray as xr

from cvstats.errors import ArgumentError
from cvstats.results.base import Result
from cvstats.results.plots import difference_plot, simplex_plot
from cvstats.results.verdict import Verdict, bayes_datasets_verdict, hierarchical_verdict

__all__ = [
    "BAYES_DATASETS_FRAME_COLUMNS",
    "HIERARCHICAL_FRAME_COLUMNS",
    "BayesianDatasetsResult",
    "HierarchicalResult",
]

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
        probs = self.probabilities()
        labels = (
            f"{self.model_a} better\n{probs['left']:.3f}",
            f"rope ±{self.rope:g}\n{probs['rope']:.3f}",
            f"{self.model_b} better\n{probs['right']:.3f}",
        )
        theta = self.posterior.isel(chain=0).transpose("draw", "region").values[:points]
        title = f"{self.title}: {self.model_a} vs {self.model_b}"
        return simplex_plot(theta, labels, title, ax=ax, points=points)

    def _display_details(self) -> list[str]:
        return [
            f"left: {self.model_a} practically better, right: {self.model_b} practically "
            f"better, rope ±{self.rope:g}; {self.n_datasets} datasets, {self.n_samples} draws"
        ]


#: Stable columns of :meth:`HierarchicalResult.to_frame`.
HIERARCHICAL_FRAME_COLUMNS = (
    "method",
    "model_a",
    "model_b",
    "p_left",
    "p_rope",
    "p_right",
    "mean_left",
    "mean_rope",
    "mean_right",
    "rope",
    "rho",
    "n_datasets",
    "n_folds",
    "chains",
    "draws",
    "max_rhat",
    "min_ess",
)


@dataclass(frozen=True, repr=False)
class HierarchicalResult(Result):
    """Posterior of the hierarchical correlated t test of two learners over datasets.

    Corani, Benavoli, Demšar, Mangili & Zaffalon (2017), Machine Learning 106, §3;
    built by :func:`cvstats.across.hierarchical.bayesian_hierarchical_test`.

    Attributes
    ----------
    method, title : str
        ``"bayesian_hierarchical_test"`` and a readable name.
    model_a, model_b : str
        The learners: *left* is ``a`` better by more than the rope, *right* ``b``.
    p_left, p_rope, p_right : xarray.DataArray
        For a new dataset: the posterior probability that each region is the
        most probable one for its difference ``δ_new ~ t_ν(μ0, σ0)`` (the share
        of draws in which it has the largest ``θ``; Corani et al. 2017, §3,
        and baycomp's ``HierarchicalTest``).
    mean_left, mean_rope, mean_right : xarray.DataArray
        Posterior probabilities that the mean difference ``μ0`` lies below,
        inside or above the rope.
    posterior : xarray.Dataset
        The draws over ``(chain, draw)``, in the units of the scores (positive:
        ``b`` better): ``mu0``, ``sigma0``, ``nu``, ``delta`` and ``sigma``
        (over ``dataset``: the shrunk per-dataset differences and their fold
        standard deviations), ``delta_new`` (a draw of a new dataset's
        difference) and ``theta`` (over ``region``: its probabilities). The
        layout ArviZ reads (``arviz.convert_to_datatree(res.posterior)``).
    diagnostics : pandas.DataFrame
        Per parameter (``mu0``, ``sigma0``, ``nu``, ``delta[<dataset>]``):
        rank-normalized split ``rhat``, ``ess_bulk`` and ``ess_tail``
        (Vehtari et al. 2021).
    mcse : tuple of float
        Monte Carlo standard errors of ``p_left``, ``p_rope``, ``p_right``
        (``sqrt(p (1 - p) / ESS)`` of each region's indicator).
    rope, rho : float
        Half-width of the rope (units of the scores) and correlation of the folds.
    n_datasets, n_folds, chains, draws, warmup : int
        Datasets, fold scores per dataset, chains, kept draws per chain, warm-up
        iterations per chain.
    converged : bool
        Every ``rhat <= 1.01`` and every ESS ``>= 400`` (a warning was issued otherwise).
    greater_is_better : bool
        The scores' direction.
    seed : int or None
        The seed given (``None``: a Generator given).
    """

    method: str
    title: str
    model_a: str
    model_b: str
    p_left: xr.DataArray
    p_rope: xr.DataArray
    p_right: xr.DataArray
    mean_left: xr.DataArray
    mean_rope: xr.DataArray
    mean_right: xr.DataArray
    posterior: xr.Dataset
    diagnostics: pd.DataFrame
    mcse: tuple[float, float, float]
    rope: float
    rho: float
    n_datasets: int
    n_folds: int
    chains: int
    draws: int
    warmup: int
    converged: bool
    greater_is_better: bool
    seed: int | None = None

    frame_columns: ClassVar[tuple[str, ...]] = HIERARCHICAL_FRAME_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = (
        "p_left",
        "p_rope",
        "p_right",
        "mean_left",
        "mean_rope",
        "mean_right",
    )

    def __post_init__(self) -> None:
        self._coerce_values()

    def probabilities(self, of: str = "new") -> dict[str, float]:
        """Return ``{"left": ..., "rope": ..., "right": ...}`` as floats.

        Parameters
        ----------
        of : {"new", "mean"}, default "new"
            ``"new"``: a new dataset (``p_left``, ...); ``"mean"``: the mean
            difference ``μ0`` (``mean_left``, ...).

        Returns
        -------
        dict of str to float
        """
        if of not in ("new", "mean"):
            raise ArgumentError(f'`of` must be "new" or "mean", got {of!r}.')
        prefix = "p" if of == "new" else "mean"
        return {k: float(getattr(self, f"{prefix}_{k}")) for k in ("left", "rope", "right")}

    def shrunk_differences(self, level: float = 0.95) -> pd.DataFrame:
        """Return each dataset's observed mean difference and its shrunk posterior ``δ_i``.

        Parameters
        ----------
        level : float, default 0.95
            Level of the equal-tailed credible interval.

        Returns
        -------
        pandas.DataFrame
            Indexed by dataset: ``observed`` (the mean of its fold differences),
            ``mean``, ``lower``, ``upper`` of ``δ_i``'s posterior.
        """
        if not 0 < level < 1:
            raise ArgumentError(f"`level` must be in (0, 1), got {level!r}.")
        delta = self.posterior["delta"]
        tails = [(1 - level) / 2, (1 + level) / 2]
        bounds = delta.quantile(tails, dim=("chain", "draw"))
        frame = pd.DataFrame(
            {
                "observed": delta.attrs["observed"],
                "mean": delta.mean(("chain", "draw")).values,
                "lower": bounds.isel(quantile=0).values,
                "upper": bounds.isel(quantile=1).values,
            },
            index=pd.Index([str(d) for d in delta["dataset"].values], name="dataset"),
        )
        return frame

    def verdict(self) -> Verdict:
        """Return the test in words (:func:`~cvstats.results.verdict.hierarchical_verdict`)."""
        return hierarchical_verdict(self)

    def to_frame(self) -> pd.DataFrame:
        """Return one row: the learners, both sets of probabilities, the options, diagnostics.

        Returns
        -------
        pandas.DataFrame
            Columns :data:`HIERARCHICAL_FRAME_COLUMNS`.
        """
        row: dict[str, Any] = {
            "max_rhat": float(self.diagnostics["rhat"].max()),
            "min_ess": float(self.diagnostics[["ess_bulk", "ess_tail"]].min().min()),
        }
        for c in HIERARCHICAL_FRAME_COLUMNS:
            if c not in row:
                value = getattr(self, c)
                row[c] = float(value) if c in self.value_fields else value
        return pd.DataFrame([row], columns=list(HIERARCHICAL_FRAME_COLUMNS))

    def _caption(self) -> str:
        return f"{self.title}, {self.model_a} vs {self.model_b}"

    def _summary_info(self) -> list[tuple[str, str]]:
        better = "greater" if self.greater_is_better else "smaller"
        return [
            ("Test:", self._caption()),
            ("Datasets:", f"{self.n_datasets} × {self.n_folds} folds, ρ = {self.rho:g}"),
            ("Rope:", f"±{self.rope:g} ({better} is better)"),
            ("Draws:", f"{self.chains} chains × {self.draws} (+{self.warmup} warm-up)"),
            ("Converged:", "yes" if self.converged else "NO (see diagnostics)"),
        ]

    def plot(self, kind: str = "simplex", ax: Any = None, *, points: int = 5000) -> Any:
        """Draw the posterior: the simplex of a new dataset, or the density of a difference.

        Parameters
        ----------
        kind : {"simplex", "new", "mean"}, default "simplex"
            ``"simplex"``: each draw's ``(θ_left, θ_rope, θ_right)`` for a new
            dataset in the triangle of Corani et al. (2017, §3) (the share
            of points in a region is ``p_left``, ``p_rope``, ``p_right``);
            ``"new"``: the posterior density of a new dataset's difference
            ``δ_new`` with the rope shaded; ``"mean"``: that of ``μ0``.
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; default a new figure.
        points : int, default 5000
            Simplex only: at most this many draws are shown.

        Returns
        -------
        matplotlib.axes.Axes
        """
        title = f"{self.title}: {self.model_a} vs {self.model_b}"
        if kind == "simplex":
            probs = self.probabilities()
            labels = (
                f"{self.model_a} better\n{probs['left']:.3f}",
                f"rope ±{self.rope:g}\n{probs['rope']:.3f}",
                f"{self.model_b} better\n{probs['right']:.3f}",
            )
            theta = self.posterior["theta"].transpose("chain", "draw", "region").values
            return simplex_plot(theta.reshape(-1, 3), labels, title, ax=ax, points=points)
        if kind in ("new", "mean"):
            name = "delta_new" if kind == "new" else "mu0"
            what = (
                "a new dataset's difference δ_new" if kind == "new" else "the mean difference μ0"
            )
            return difference_plot(
                self.posterior[name].values,
                self.rope,
                (self.model_a, self.model_b),
                title,
                xlabel=f"{what} ({self.model_b} − {self.model_a})",
                ax=ax,
            )
        raise ArgumentError(f'`kind` must be "simplex", "new" or "mean", got {kind!r}.')

    def _display_details(self) -> list[str]:
        return [
            f"left: {self.model_a} practically better, right: {self.model_b} practically "
            f"better, rope ±{self.rope:g}; {self.n_datasets} datasets × {self.n_folds} folds, "
            f"ρ = {self.rho:g}; {self.chains} × {self.draws} draws"
        ]
