"""Pictures of results that several result classes share: forest plots (matplotlib).

:func:`forest_plot` draws one interval per row of a results frame (an
:class:`~cvstats.results.inference.InferenceResult`'s, a comparison table's);
:func:`estimates_plot` draws one quantity of an
:class:`~cvstats.results.estimates.EstimatesResult` with its intervals, ``ρ̂``
against ``ρ0 = n2/(n1 + n2)`` for :func:`~cvstats.across.rho.fit_rho`;
:func:`pairwise_heatmap` draws the learner × learner matrix of a
:class:`~cvstats.results.ranks.PairwiseMatrix`.
:func:`simplex_plot` draws posterior draws of ``(θ_left, θ_rope, θ_right)`` in
the triangle of Benavoli et al. (2017) and :func:`difference_plot` the
posterior density of a difference with its rope (the Bayesian comparisons
across datasets).
:mod:`cvstats.reporting.plots` re-exports them. matplotlib is imported when a
picture is drawn, never at import.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from cvstats.errors import ArgumentError

__all__ = ["difference_plot", "estimates_plot", "forest_plot", "pairwise_heatmap", "simplex_plot"]

# a quantity of an estimates result, its reference value and what it means
_REFERENCES = {
    "rho": ("rho0", "ρ0 = n2/(n1 + n2)"),
    "political_ratio": (1.0, "ratio 1 (exact)"),
}


def _intervals(ax: Any, frame: pd.DataFrame, labels: list[str]) -> np.ndarray:
    """Draw the rows' intervals and estimates on ``ax``, top to bottom; return their y."""
    y = np.arange(len(frame))[::-1]
    lo = frame["ci_lower"].to_numpy(dtype=float)
    hi = frame["ci_upper"].to_numpy(dtype=float)
    est = frame["estimate"].to_numpy(dtype=float)
    finite = np.isfinite(lo) & np.isfinite(hi)
    ax.hlines(y[finite], lo[finite], hi[finite], color="C0", lw=2)
    ax.plot(est, y, "o", color="C1", ms=4)
    ax.set_yticks(y, labels)
    return y


def forest_plot(
    frame: pd.DataFrame,
    *,
    mu0: float = 0.0,
    alpha: float = 0.05,
    ax: Any = None,
    label_columns: tuple[str, ...] | None = None,
) -> Any:
    """Draw one horizontal interval per row of a results frame.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows with ``estimate``, ``ci_lower``, ``ci_upper`` and ``method`` (e.g.
        ``ComparisonTable.to_frame()`` or ``InferenceResult.to_frame()``); rows
        whose interval is NaN (Alpaydın's F) show the estimate only.
    mu0 : float, default 0
        Null value, drawn as a vertical line.
    alpha : float, default 0.05
        Level, for the axis label.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure sized to the rows.
    label_columns : tuple of str, optional
        Columns that label a row; default every column before ``method`` and
        ``method`` itself.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    import matplotlib.pyplot as plt

    if label_columns is None:
        cols = list(frame.columns)
        label_columns = tuple(cols[: cols.index("method") + 1])
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.35 * len(frame) + 1.2))
    labels = [
        "  ".join(str(v) for v in row)
        for row in frame[list(label_columns)].itertuples(index=False)
    ]
    _intervals(ax, frame, labels)
    ax.axvline(mu0, color="grey", ls="--", lw=1)
    ax.set_xlabel(f"estimate and {100 * (1 - alpha):g}% interval")
    ax.figure.tight_layout()
    return ax


def estimates_plot(result: Any, quantity: str | None = None, *, ax: Any = None) -> Any:
    """Draw one quantity of an estimates result with its intervals (matplotlib).

    One row per element of the result's dims (model, contrast...). ``ρ̂`` (the
    default of a :func:`~cvstats.across.rho.fit_rho` result) is drawn against
    ``ρ0 = n2/(n1 + n2)``, the correlation the corrected resampled t assumes
    (docs/theory.md §3: above it the test is liberal, below it conservative); the
    political ratio against 1.

    Parameters
    ----------
    result : EstimatesResult
        From :func:`~cvstats.fit_rho`, :func:`~cvstats.fit_r`,
        :func:`~cvstats.fit_lemma1`, :func:`~cvstats.cv_bias`...
    quantity : str, optional
        One of ``result.quantities``; default ``"rho"`` when the result has
        ``rho`` and ``rho0``, else the first quantity with an interval (else the
        first quantity).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure sized to the rows.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ArgumentError
        For a quantity the result does not have.
    """
    import matplotlib.pyplot as plt

    quantities = list(result.quantities)
    if quantity is None:
        with_ci = [q for q in quantities if f"{q}_ci" in result.data_vars]
        if "rho" in quantities and "rho0" in result.data_vars:
            quantity = "rho"
        else:
            quantity = (with_ci or quantities)[0]
    if quantity not in quantities:
        raise ArgumentError(f"`quantity` must be one of {quantities}, got {quantity!r}.")
    frame = result.to_frame()
    dims = [str(c) for c in frame.columns[: list(frame.columns).index("quantity")]]
    rows = frame[frame["quantity"] == quantity].reset_index(drop=True)
    labels = [" ".join(str(v) for v in row) for row in rows[dims].itertuples(index=False)]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.35 * len(rows) + 1.4))
    y = _intervals(ax, rows, labels or [quantity])
    reference, meaning = _REFERENCES.get(quantity, (None, ""))
    if isinstance(reference, str) and reference in quantities:
        ref_rows = frame[frame["quantity"] == reference][[*dims, "estimate"]]
        ref_rows = rows[dims].merge(ref_rows, on=dims, how="left") if dims else ref_rows
        ref = ref_rows["estimate"].to_numpy(dtype=float)
        if np.allclose(ref, ref[0], equal_nan=True):
            ax.axvline(ref[0], color="grey", ls="--", lw=1, label=f"{meaning} = {ref[0]:.3g}")
        else:
            ax.plot(ref, y, "|", color="grey", ms=12, mew=2, label=meaning)
        ax.legend(fontsize="small")
    elif isinstance(reference, float):
        ax.axvline(reference, color="grey", ls="--", lw=1, label=meaning)
        ax.legend(fontsize="small")
    alpha = result.attrs.get("alpha")
    level = f" and {100 * (1 - alpha):g}% interval" if alpha is not None else ""
    name = "ρ̂" if quantity == "rho" else quantity
    ax.set_xlabel(f"{name}{level}")
    method = str(result.attrs.get("method", type(result).__name__)).split(":")[0]
    loss = result.attrs.get("loss")
    ax.set_title(f"{method}: {loss}" if loss else method, fontsize=9)
    ax.figure.tight_layout()
    return ax


def plan_plot(result: Any, kind: str = "width", *, ax: Any = None) -> Any:
    """Draw a plan's half-width (or power) against the fits per learner (matplotlib).

    One curve per contrast (and coordinate of any extra dim) of a
    :class:`~cvstats.results.plan.PlanResult` (:func:`cvstats.plan`), with the
    pilot's uncertainty as a band (the plan at the ends of the pilot's interval
    for ``E[S²]``), the target as a dashed line and a dot at the smallest design
    meeting it; where a target is out of reach, an open diamond at the knee
    (:attr:`~cvstats.results.plan.PlanResult.J_knee`: the design recommended unless a
    ``J`` was asked).

    Parameters
    ----------
    result : PlanResult
        The plan.
    kind : {"width", "power"}, default "width"
        ``"width"``: the expected half-width; ``"power"``: the power to detect the
        plan's ``effect`` (a plan without ``effect`` has none).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ArgumentError
        For an unknown ``kind``, or ``"power"`` for a plan without ``effect``.
    """
    import matplotlib.pyplot as plt

    if kind not in ("width", "power"):
        raise ArgumentError(f"`kind` must be 'width' or 'power', got {kind!r}.")
    if kind == "power" and result.effect is None:
        raise ArgumentError("this plan has no power: pass `effect=` to cvstats.plan.")
    frame = result.to_frame()
    units = [d for d in result.unit_dims if d in frame.columns]
    column = "half_width" if kind == "width" else "power"
    target = result.target_width if kind == "width" else result.target_power
    first = "J_width" if kind == "width" else "J_power"
    firsts = result.to_frame("plan")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    groups = frame.groupby(units, sort=False) if units else [((), frame)]
    knee_shown = False
    keys = [str(v) for v in result.J_chosen[units[0]].values] if units else []
    names = dict(zip(keys, result.labels() if units else [], strict=True))
    for i, (key, rows) in enumerate(groups):
        key = tuple(np.atleast_1d(key))
        label = "  ".join([names.get(str(key[0]), str(key[0])), *map(str, key[1:])]) if key else ""
        x = rows["n_fits"].to_numpy(dtype=float)
        color = f"C{i % 10}"
        ax.plot(x, rows[column].to_numpy(dtype=float), color=color, label=label or None)
        low = rows[f"{column}_low"].to_numpy(dtype=float)
        high = rows[f"{column}_high"].to_numpy(dtype=float)
        ax.fill_between(x, low, high, color=color, alpha=0.15, lw=0)
        match = firsts
        for d, v in zip(units, key, strict=True):
            match = match[match[d].astype(str) == str(v)]
        J = float(match[first].iloc[0]) if len(match) else np.nan
        if np.isfinite(J):
            at = rows[rows["J"] == J]
            ax.plot(at["n_fits"], at[column], "o", color=color, ms=5)
        knee = float(match["J_knee"].iloc[0]) if len(match) else np.nan
        if np.isfinite(knee):  # a target out of reach: the knee recommended
            at = rows[rows["J"] == knee]
            label = None if knee_shown else f"knee ({100 * result.knee_tolerance:g}% of the best)"
            ax.plot(at["n_fits"], at[column], "D", color=color, mfc="none", ms=7, label=label)
            knee_shown = True
    if target is not None and (kind == "width" or result.effect is not None):
        ax.axhline(target, color="grey", ls="--", lw=1, label=f"target {target:g}")
    if result.budget_fits is not None:
        ax.axvline(result.budget_fits, color="grey", ls=":", lw=1, label="budget")
    level = f"{100 * (1 - result.alpha):g}%"
    if kind == "width":
        ax.set_ylabel(f"expected {level} half-width")
        ax.set_yscale("log")  # t_1 makes J = 2 an order of magnitude wider than J = 10
    else:
        ax.set_ylabel(f"power to detect {result.effect:g} (level {result.alpha:g})")
        ax.set_ylim(0, 1.02)
    ax.set_xlabel("fits per learner")
    ax.set_title(f"{result.title}: {result.loss}", fontsize=9)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    ax.figure.tight_layout()
    return ax


def simplex_plot(
    theta: np.ndarray,
    labels: tuple[str, str, str],
    title: str,
    *,
    ax: Any = None,
    points: int = 5000,
) -> Any:
    """Draw posterior draws of ``(θ_left, θ_rope, θ_right)`` in the simplex (a triangle).

    Each draw is a point of the triangle whose corners are *left* (bottom
    left), *rope* (top) and *right* (bottom right) (Benavoli, Corani, Demšar &
    Zaffalon 2017, JMLR 18(77), §4–5); the lines from the centre split it
    into the regions where each ``θ`` is the largest, so the share of points in
    a region is the probability that it is the most probable one.

    Parameters
    ----------
    theta : numpy.ndarray
        ``(draws, 3)``; each row sums to one.
    labels : (str, str, str)
        Text at the left, rope and right corners.
    title : str
        Title of the axes.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure.
    points : int, default 5000
        At most this many draws are shown (evenly spaced over the draws).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    corners = np.array([[0.0, 0.0], [0.5, np.sqrt(3) / 2], [1.0, 0.0]])  # left, rope, right
    theta = np.asarray(theta, dtype=float)
    if theta.shape[0] > points:
        theta = theta[np.linspace(0, theta.shape[0] - 1, points).astype(int)]
    xy = theta @ corners
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4.5))
    ax.plot(*np.vstack([corners, corners[:1]]).T, color="black", lw=1)
    centre = corners.mean(axis=0)
    for i in range(3):  # boundaries between the regions: centre to each edge's middle
        middle = (corners[i] + corners[(i + 1) % 3]) / 2
        ax.plot([centre[0], middle[0]], [centre[1], middle[1]], color="grey", lw=0.8)
    ax.scatter(xy[:, 0], xy[:, 1], s=2, alpha=0.2, color="tab:blue", rasterized=True)
    for (x, y), label, ha, va in zip(
        corners, labels, ["right", "center", "left"], ["top", "bottom", "top"], strict=True
    ):
        ax.text(x, y, label, ha=ha, va=va, fontsize="small")
    ax.set_title(title, fontsize="medium", pad=28)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax


def difference_plot(
    draws: np.ndarray,
    rope: float,
    labels: tuple[str, str],
    title: str,
    *,
    xlabel: str,
    ax: Any = None,
    bins: int = 80,
) -> Any:
    """Draw the posterior of a difference as a histogram (a density) with its rope shaded.

    Parameters
    ----------
    draws : numpy.ndarray
        Posterior draws of the difference (positive: the right learner better).
    rope : float
        Half-width of the rope (``0``: only the line at zero is drawn).
    labels : (str, str)
        Names of the left and right learners, written on their sides.
    title, xlabel : str
        Title and label of the horizontal axis.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure.
    bins : int, default 80
        Histogram bins, over the central 99% of the draws (widened to show the
        rope): a Student t's far tails would squeeze the picture.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    draws = np.asarray(draws, dtype=float).ravel()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    low, high = np.quantile(draws, [0.005, 0.995])
    span = (min(low, -1.5 * rope), max(high, 1.5 * rope))
    ax.hist(draws, bins=bins, range=span, density=True, color="tab:blue", alpha=0.6)
    if rope > 0:
        ax.axvspan(-rope, rope, color="grey", alpha=0.25, label=f"rope ±{rope:g}")
        ax.legend(fontsize="small", loc="center right")
    ax.axvline(0.0, color="black", lw=0.8)
    for x, text, ha in (
        (0.01, f"← {labels[0]} better", "left"),
        (0.99, f"{labels[1]} better →", "right"),
    ):
        ax.text(x, 0.97, text, transform=ax.transAxes, ha=ha, va="top", fontsize="small")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("posterior density")
    ax.set_title(title, fontsize="medium")
    return ax


def pairwise_heatmap(result: Any, *, ax: Any = None) -> Any:
    """Draw a :class:`~cvstats.results.ranks.PairwiseMatrix` as a learner × learner heatmap.

    Each cell compares its row learner with its column learner: the colour is
    the row's mean advantage over the datasets (the mean difference, negated
    for a loss, so that a positive, blue cell means the row is better), and the
    text gives the row's wins/ties/losses and the adjusted p-value, starred
    when the pair differs at the family-wise level.

    Parameters
    ----------
    result : PairwiseMatrix
        From :func:`~cvstats.across.ranks.pairwise_matrix`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default a new figure sized to the learners.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    models = result.models
    k = len(models)
    sign = 1.0 if result.greater_is_better else -1.0
    advantage = sign * np.asarray(result.mean_difference, dtype=float)
    np.fill_diagonal(advantage, np.nan)
    top = float(np.nanmax(np.abs(advantage))) if k > 1 else 0.0
    top = top if top > 0 else 1.0
    if ax is None:
        size = 1.0 + 1.1 * k
        _, ax = plt.subplots(figsize=(size + 1.5, size))
    image = ax.imshow(advantage, cmap="RdBu", vmin=-top, vmax=top)
    wins, ties, losses = (np.asarray(getattr(result, f)) for f in ("wins", "ties", "losses"))
    p, reject = np.asarray(result.pvalue_adjusted, dtype=float), np.asarray(result.reject)
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            star = "*" if reject[i, j] else ""
            text = f"{wins[i, j]}/{ties[i, j]}/{losses[i, j]}\np = {p[i, j]:.2g}{star}"
            dark = abs(advantage[i, j]) > 0.6 * top
            ax.text(j, i, text, ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")  # fmt: skip
    ax.set_xticks(range(k), models, rotation=45, ha="right")
    ax.set_yticks(range(k), models)
    ax.set_xlabel("column learner")
    ax.set_ylabel("row learner")
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    bar.set_label("mean advantage of the row (table units)")
    ax.set_title(
        f"row vs column: wins/ties/losses and p ({result._how()})\n"
        f"* the pair differs at family-wise α = {result.alpha:g}",
        fontsize=9,
    )
    ax.figure.tight_layout()
    return ax
