"""Bayesian correlated t test (Benavoli, Corani, Demšar & Zaffalon 2017) on a cube.

See docs/beyond.md. The ``J`` main-block split means of a model or contrast
give a Student-t posterior of its mean (:mod:`cvstats.kernels.bayes`), with
the correlation ``ρ`` between splits taken from the design: ``1/K`` for a
(repeated) k-fold main block, ``n2/(n1 + n2)`` for random splits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.cube.apply import apply_kernel
from cvstats.cube.checks import validate_alpha
from cvstats.errors import DesignError
from cvstats.inference.blocks import J_DIM, block_sizes, kfold_layout, main_means, split_means
from cvstats.inference.common import check_options
from cvstats.kernels import bayes as kb
from cvstats.results import ConfidenceInterval

__all__ = ["BayesianResult", "BAYES_FRAME_COLUMNS", "bayesian_correlated_t", "design_rho"]

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
    "rho",
    "n_splits",
)

Value = xr.DataArray | float


def _da(value: Value) -> xr.DataArray:
    return value if isinstance(value, xr.DataArray) else xr.DataArray(value)


def _plain(value: xr.DataArray) -> Value:
    return float(value) if value.ndim == 0 else value


@dataclass(frozen=True)
class BayesianResult:
    """Posterior of the mean of a model's loss or of a contrast (Student t).

    Attributes
    ----------
    method, title, loss : str
        ``"bayesian_correlated_t"``, a readable name, the cube's name.
    mean, scale, df : xarray.DataArray or float
        Location ``x̄``, scale ``sqrt((1/J + ρ/(1-ρ)) S²)`` and degrees of freedom
        ``J - 1`` of the posterior Student t, over the dims not reduced.
    p_left, p_rope, p_right : xarray.DataArray or float
        Posterior probabilities of ``μ < rope[0]``, ``μ`` inside the rope, and
        ``μ > rope[1]``. For a contrast ``A - B`` of losses, ``p_left`` is the
        probability that A's loss is lower by more than the rope.
    rope : tuple of float
        Region of practical equivalence ``(low, high)``.
    rho : float
        Correlation between splits used.
    alpha : float
        Default level of :meth:`credible_interval`.
    n1, n2, n_splits : int
        Training and test sizes of the main block and its number of splits ``J``.
    """

    method: str
    title: str
    loss: str
    mean: Value
    scale: Value
    df: Value
    p_left: Value
    p_rope: Value
    p_right: Value
    rope: tuple[float, float]
    rho: float
    alpha: float
    n1: int
    n2: int
    n_splits: int

    def credible_interval(self, alpha: float | None = None) -> ConfidenceInterval:
        """Equal-tailed ``1 - alpha`` posterior interval of the mean."""
        alpha = validate_alpha(self.alpha if alpha is None else alpha)
        low, high = apply_kernel(
            lambda m, s, d: kb.credible_interval(kb.Posterior(m, s, d), alpha),
            [_da(self.mean), _da(self.scale), _da(self.df)],
            [[], [], []],
            2,
        )
        return ConfidenceInterval(_plain(low), _plain(high))

    def to_frame(self, alpha: float | None = None) -> pd.DataFrame:
        """Tidy DataFrame, one row per element: the dims, then :data:`BAYES_FRAME_COLUMNS`."""
        low, high = self.credible_interval(alpha)
        names = ("mean", "scale", "df", "p_left", "p_rope", "p_right")
        data = {k: _da(getattr(self, k)) for k in names}
        ds = xr.Dataset({**data, "ci_lower": _da(low), "ci_upper": _da(high)}).compute()
        dims = list(_da(self.mean).dims)
        ds = ds.drop_vars([c for c in ds.coords if c not in dims])
        if dims:
            frame = ds.to_dataframe(dim_order=dims).reset_index()
        else:
            frame = pd.DataFrame({k: [float(v)] for k, v in ds.data_vars.items()})
        frame["method"] = self.method
        frame["rope_lower"], frame["rope_upper"] = self.rope
        frame["rho"] = self.rho
        frame["n_splits"] = self.n_splits
        return frame[[*map(str, dims), *BAYES_FRAME_COLUMNS]]

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

        frame = self.to_frame(alpha=0.002)
        dims = [c for c in frame.columns if c not in BAYES_FRAME_COLUMNS]
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

    def __str__(self) -> str:
        return f"{self.title}\n{self.to_frame().to_string(index=False)}"


def design_rho(cube: xr.DataArray, method: str = "the Bayesian correlated t") -> float:
    """``ρ`` of the main block: ``1/K`` for k-fold, ``n2/(n1 + n2)`` for random splits."""
    fold = np.asarray(cube["fold"].values)[np.asarray(cube["block"].values) == "main"]
    if fold.size and (fold >= 0).all():
        K, _ = kfold_layout(cube, method)
        return 1.0 / K
    sizes = block_sizes(cube, "main", method)
    return sizes.n2 / (sizes.n1 + sizes.n2)


def _kernel(x: np.ndarray, *, rho: float, rope: tuple[float, float]) -> tuple[np.ndarray, ...]:
    post = kb.correlated_t_posterior(x, rho=rho)
    return (*post, *kb.posterior_probabilities(post, rope))


def bayesian_correlated_t(
    cube: xr.DataArray,
    *,
    rope: float | tuple[float, float] = 0.0,
    rho: float | None = None,
    alpha: float = 0.05,
) -> BayesianResult:
    """Bayesian correlated t test of Benavoli et al. (2017) on the main block's splits.

    With ``x_j`` the ``J`` test means of the main block (of a model's loss or of a
    contrast, e.g. ``cvstats.pairwise(cube)``), the posterior of their expected
    value is Student ``t`` with ``df = J - 1``, location ``x̄`` and
    ``scale² = (1/J + ρ/(1 - ρ)) S²`` (``S²`` the sample variance of the ``x_j``);
    the probabilities of ``μ`` below, inside and above the rope follow. It is
    the corrected resampled t (theory.md §4, method 6) read as a posterior, and
    shares its assumption that ``ρ`` is right: ``ρ = 1/K`` for a (repeated)
    k-fold main block, ``ρ0 = n2/(n1 + n2)`` for random splits (theory.md §3).

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube or contrast cube with a main block of ``J >= 2`` splits.
    rope : float or (float, float), default 0
        Region of practical equivalence: a half-width ``r`` (``(-r, r)``) or bounds.
    rho : float, optional
        Correlation between splits, in ``[0, 1)``; default from the design.
    alpha : float, default 0.05
        Level of the credible interval.

    Returns
    -------
    BayesianResult
        Over the cube's extra dims and ``model``/``contrast``.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.inference.bayes import bayesian_correlated_t
    >>> d = cvstats.designs.kfold(50, 10, seed=0)
    >>> losses = np.random.default_rng(0).random((10, 50, 2))
    >>> cube = cvstats.from_arrays(losses, design=d, models=["a", "b"])
    >>> res = bayesian_correlated_t(cvstats.pairwise(cube), rope=0.01)
    >>> res.rho, res.df.item(), res.to_frame().shape
    (0.1, 9.0, (1, 14))
    """
    method = "the Bayesian correlated t"
    check_options(cube, 0.0, alpha, "two-sided")
    low_high = kb.validate_rope(rope)
    if rho is None:
        rho_value = design_rho(cube, method)
    else:
        rho_value = kb.validate_rho(rho)
    mu = main_means(split_means(cube, ["main"], method), method, min_splits=2)
    sizes = block_sizes(cube, "main", method)
    if sizes.n_splits < 2:  # pragma: no cover - main_means already checks
        raise DesignError(f"{method} needs at least 2 main splits.")
    out = apply_kernel(_kernel, [mu], [[J_DIM]], 6, rho=rho_value, rope=low_high)
    mean, scale, df, p_left, p_rope, p_right = (_plain(v) for v in out)
    return BayesianResult(
        method="bayesian_correlated_t",
        title=f"Bayesian correlated t (Benavoli et al. 2017), ρ = {rho_value:.4g}",
        loss=str(cube.name),
        mean=mean,
        scale=scale,
        df=df,
        p_left=p_left,
        p_rope=p_rope,
        p_right=p_right,
        rope=low_high,
        rho=rho_value,
        alpha=float(alpha),
        n1=sizes.n1,
        n2=sizes.n2,
        n_splits=sizes.n_splits,
    )
