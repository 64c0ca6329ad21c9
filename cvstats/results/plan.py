"""Result of :func:`cvstats.plan`: how many splits an experiment needs (docs/theory.md §10).

:class:`PlanResult` follows the result contract of :mod:`cvstats.results.base`:
its numbers are DataArrays over ``J`` (the number of splits of the planned
design), ``contrast`` (or ``model``) and the pilot's other extra dims; it has the
reporting protocol (:meth:`~PlanResult.to_frame` — the grid, or one row per
contrast with ``table="plan"`` —, Markdown/LaTeX/HTML, ``summary()``, a short
``repr``), a :meth:`~PlanResult.plot` (half-width or power against the fits
per learner, one curve per contrast) and a :meth:`~PlanResult.verdict` in words.

The results layer (see ``docs/architecture.md``): imports the data model, the
kernels and the rest of the results layer only.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.cube.schema import CONTRAST, MODEL
from cvstats.errors import ArgumentError
from cvstats.results.base import Result, split_interval, tidy_frame
from cvstats.results.plots import plan_plot
from cvstats.results.verdict import Verdict, quantity_of, readable_label, weights_of

__all__ = ["PLAN_GRID_COLUMNS", "PLAN_TABLE_COLUMNS", "PlanResult"]

#: Columns of ``PlanResult.to_frame()`` (the grid), after ``J`` and the unit dims.
PLAN_GRID_COLUMNS = (
    "n_fits",
    "half_width",
    "half_width_low",
    "half_width_high",
    "mean_half_width",
    "power",
    "power_low",
    "power_high",
    "size",
    "size_low",
    "size_high",
    "political_ratio",
    "variance",
    "expected_variance",
    "meets_target",
    "power_model",
)
# the plan table's columns read at the chosen J, and those read from the per-unit fields
_AT_J = ("n_fits", "half_width", "power", "size")
_PER_UNIT = (
    "J_width",
    "J_power",
    "J_plan",
    "J_knee",
    "half_width_limit",
    "power_limit",
    "rho",
    "rho_low",
    "rho_high",
    "s2",
    "sigma1",
    "pilot_estimate",
)
#: Columns of ``PlanResult.to_frame(table="plan")`` (one row per contrast), after its dims.
PLAN_TABLE_COLUMNS = ("J", *_AT_J, *_PER_UNIT, "power_model")
_TABLES = ("grid", "plan")


@dataclass(frozen=True, repr=False)
class PlanResult(Result):
    """The plan of an experiment from a pilot: width and power against the number of splits.

    Built by :func:`cvstats.plan`; the formulas are those of docs/theory.md §10.

    Attributes
    ----------
    method : str
        The test planned for: ``"corrected_resampled_t"``,
        ``"corrected_repeated_kfold_t"``, ``"conservative_z"``,
        ``"corrected_bootstrap_t"`` or ``"bootstrap_t"``.
    title : str
        Readable name of the plan.
    loss : str
        Name of the pilot cube (its loss or score).
    alpha : float
        The intervals have level ``1 - alpha``; the tests are two-sided at level ``alpha``.
    target_width : float or None
        The half-width asked for (``None``: no width target).
    effect : float or None
        The true difference (or level) to detect (``None``: no power computed).
    target_power : float
        The power asked for (used only with ``effect``).
    budget_fits : int or None
        Most fits per learner allowed (``None``: no budget).
    n, n1, n2 : int
        Examples of the data set, and the training and test sizes of the planned splits.
    K : int
        Folds of the planned repeated k-fold (0 for random splits).
    design_dim : str
        The method's second design parameter, a dim of the plan: ``"M"`` (half-splits
        of the conservative Z, ``J (1 + 2M)`` fits), ``"R"`` (replicates of the
        bootstraps, ``(R + 1) J`` fits) or ``""`` (``J`` fits).
    half_n1 : int
        Training size ``⌊n/2⌋ - n2`` inside the conservative Z's halves (0 otherwise).
    pilot_splits : int
        Splits ``J_p`` of the pilot's main block.
    pilot_n2 : int
        Test size of the pilot's splits.
    pilot_df : int
        Degrees of freedom of the pilot's ``S²``: ``J_p - 1``, times the number of
        datasets when they are pooled.
    pilot_halves : int
        Half-splits of the pilot's ``"half"`` block used (conservative Z; else 0).
    search_end : int
        The largest ``J`` searched for the targets: the budget's, or ``search_limit``.
    search_limit : int
        The largest ``J`` searched without a budget (10 000 splits, or folds × K).
    knee_tolerance : float
        Relative tolerance of the knee (:attr:`J_knee`), 0.1 by default.
    rho_source : str
        Where ``ρ`` comes from: ``"rho0"`` (the test's own ``ρ0``), ``"fit_rho"``
        (estimated across the pilot's datasets) or ``"given"`` (``rho=``).
    assumption : str
        The same in words, e.g. ``"ρ = ρ0 = n2/(n1 + n2) = 0.1"``.
    note : str
        What else the plan assumed (the pairwise contrasts it built, a score's ρ0, the
        power model...).
    power_model : str
        The model of :attr:`power`, :attr:`power_ci`, :attr:`size` and
        :attr:`power_limit`: ``"gaussian"`` (Lemma 2 of Nadeau & Bengio, 2003: Gaussian
        split means with one conditional spread, a noncentral t) or ``"pilot"`` (a
        mixture over the pilot's datasets, docs/theory.md §10, "The pilot power
        model"). Also a column of both frames.
    n_fits : xarray.DataArray
        Fits per learner of each design, over ``J`` (and ``M`` or ``R``).
    half_width : xarray.DataArray
        ``c sqrt(E[σ̂²])``: the half-width of the interval at the expected variance
        estimate, which is also the root mean square of the half-width
        (docs/theory.md §10); e.g. ``t_{J-1} sqrt((1/J + n2/n1) E[S²])`` for the
        corrected resampled t. Over ``(J, unit, extra..., [M | R])``.
    half_width_ci : xarray.DataArray
        The same at the ends of the pilot's ``1 - alpha`` chi-square interval for
        ``E[S²]``; for the conservative Z, at the least and greatest ``E[σ̂²_cz]``
        over the box of the ``1 - alpha`` intervals of the pilot's ``V'_{J_h}`` and
        ``τ'²`` (docs/theory.md §10, "The bands"). On a trailing ``ci_bound`` dim. The
        width does not depend on ``ρ``.
    mean_half_width : xarray.DataArray
        ``c4`` times ``half_width`` (``c4`` of the ``ν`` degrees of freedom of
        ``σ̂²``): the expected half-width only under the Gaussian assumptions of
        Lemma 2 (Nadeau & Bengio, 2003; ``ν σ̂²/E[σ̂²] ~ χ²_ν``, for the conservative
        Z with ``r = 0`` and Gaussian half differences), an approximation otherwise;
        ``half_width``, the root mean square, needs Lemma 1 only.
    power : xarray.DataArray
        Power of the two-sided test at level ``alpha`` to detect ``effect``
        (docs/theory.md §10): a noncentral t (``power_model="gaussian"``) or the mean
        over the pilot's datasets of their rejection rates (``"pilot"``); NaN
        without ``effect``.
    power_ci : xarray.DataArray
        Gaussian model: its least and greatest values over the pilot's intervals for
        ``E[S²]`` (and ``E[σ̂²_cz]``) and, when ``ρ`` comes from ``fit_rho``, over
        ``ρ̂`` and seven points of :attr:`rho_ci` evenly spaced in ``ρ/(1 - ρ)``; with
        more than one interval their box covers with probability at least
        ``1 - 2 alpha`` (Bonferroni), not ``1 - alpha``. Pilot model: the power plus
        or minus ``z_{1-alpha/2}`` standard errors over the pilot's datasets, clipped
        to ``[0, 1]`` (docs/theory.md §10). On a trailing ``ci_bound`` dim.
    size : xarray.DataArray
        The test's actual rejection rate when the difference is 0 (``alpha``
        when ``ρ`` is the corrected tests' ``ρ0`` under the Gaussian model).
    size_ci : xarray.DataArray
        Its band, as :attr:`power_ci`'s: over the same intervals (Gaussian model; the
        size does not depend on ``E[S²]``, only on ``ρ`` and, for the conservative Z,
        ``E[σ̂²_cz]``), or plus or minus ``z_{1-alpha/2}`` standard errors (pilot model).
    political_ratio : xarray.DataArray
        ``Var[μ̂_J] / E[σ̂²]``, e.g. ``(1/J + ρ/(1-ρ)) / (1/J + n2/n1)``.
    variance : xarray.DataArray
        ``Var[μ̂_J] = E[S²] (1/J + ρ/(1-ρ))`` (Lemma 1).
    expected_variance : xarray.DataArray
        ``E[σ̂²]``, the expected variance estimate of the test.
    meets_target : xarray.DataArray
        Whether the design meets every target given (width, power) within the budget.
    pilot_estimate : xarray.DataArray
        The pilot's mean of its split means (for reference; not used by the plan).
    s2 : xarray.DataArray
        ``E[S²] = σ1 (1 - ρ)`` estimated from the pilot, at the planned ``n2``.
    rho : xarray.DataArray
        The ``ρ`` the plan assumes, over the units (and extra dims).
    rho_ci : xarray.DataArray
        The interval of ``ρ`` the power band spans: ``fit_rho``'s ``1 - alpha``
        interval clipped to ``[0, 0.999]``, or ``[ρ, ρ]`` when ``ρ`` is given or ``ρ0``.
    sigma1 : xarray.DataArray
        ``σ1 = E[S²] / (1 - ρ)``, the variance of one split mean.
    half_width_limit, power_limit : xarray.DataArray
        Their limits as ``J → ∞``: more splits never do better.
    J_width, J_power, J_plan : xarray.DataArray
        The smallest ``J`` meeting the width target, the power target, both (NaN
        where none within the budget, or the search, does).
    J_knee : xarray.DataArray
        Where no design meets every target (``J_plan`` NaN): the knee, the smallest
        ``J`` whose half-width is at most ``1 + knee_tolerance`` times the least
        half-width within the budget (for a width target out of reach), whose power is
        at least ``1 - knee_tolerance`` times the greatest power within the budget (for
        a power target out of reach), the larger of the two with both targets (a target
        that can be met counting from ``J_width`` or ``J_power``); NaN elsewhere
        (docs/planning.md, "When a target is out of reach"). The grid holds it, the
        ``J`` before it and the ``J`` where the best is reached.
    J_chosen : xarray.DataArray
        The design the plan reports on (:meth:`verdict`, ``table="plan"``): the ``J``
        asked for, else ``J_plan``, else (a target out of reach) ``J_knee``, else (no
        target) 15 within the budget.
    """

    method: str
    title: str
    loss: str
    alpha: float
    target_width: float | None
    effect: float | None
    target_power: float
    budget_fits: int | None
    n: int
    n1: int
    n2: int
    K: int
    design_dim: str
    half_n1: int
    pilot_splits: int
    pilot_n2: int
    pilot_df: int
    pilot_halves: int
    search_end: int
    search_limit: int
    knee_tolerance: float
    rho_source: str
    assumption: str
    note: str
    power_model: str
    n_fits: xr.DataArray
    half_width: xr.DataArray
    half_width_ci: xr.DataArray
    mean_half_width: xr.DataArray
    power: xr.DataArray
    power_ci: xr.DataArray
    size: xr.DataArray
    size_ci: xr.DataArray
    political_ratio: xr.DataArray
    variance: xr.DataArray
    expected_variance: xr.DataArray
    meets_target: xr.DataArray
    pilot_estimate: xr.DataArray
    s2: xr.DataArray
    rho: xr.DataArray
    rho_ci: xr.DataArray
    sigma1: xr.DataArray
    half_width_limit: xr.DataArray
    power_limit: xr.DataArray
    J_width: xr.DataArray
    J_power: xr.DataArray
    J_plan: xr.DataArray
    J_knee: xr.DataArray
    J_chosen: xr.DataArray

    frame_columns: ClassVar[tuple[str, ...]] = PLAN_GRID_COLUMNS
    value_fields: ClassVar[tuple[str, ...]] = (
        "n_fits",
        "half_width",
        "half_width_ci",
        "mean_half_width",
        "power",
        "power_ci",
        "size",
        "size_ci",
        "political_ratio",
        "variance",
        "expected_variance",
        "meets_target",
        "pilot_estimate",
        "s2",
        "rho",
        "rho_ci",
        "sigma1",
        "half_width_limit",
        "power_limit",
        "J_width",
        "J_power",
        "J_plan",
        "J_knee",
        "J_chosen",
    )

    def __post_init__(self) -> None:
        self._coerce_values()

    # ------------------------------------------------------------------
    # frames
    # ------------------------------------------------------------------

    @property
    def unit_dims(self) -> list[str]:
        """The dims of one plan: ``contrast`` (or ``model``) and the pilot's other extra dims."""
        return [str(d) for d in self.J_chosen.dims]

    def to_frame(self, table: str = "grid") -> pd.DataFrame:
        """Return the plan as a tidy DataFrame.

        Parameters
        ----------
        table : {"grid", "plan"}, default "grid"
            ``"grid"``: one row per ``(J, contrast, extra...)``, columns ``J``, the
            unit dims, then :data:`PLAN_GRID_COLUMNS`. ``"plan"``: one row per
            contrast (and extra coordinate), the design :attr:`J_chosen` with its
            numbers, the smallest designs meeting the targets and what the plan
            assumed: the unit dims, then :data:`PLAN_TABLE_COLUMNS`.

        Returns
        -------
        pandas.DataFrame
        """
        if table not in _TABLES:
            raise ArgumentError(f"`table` must be one of {list(_TABLES)}, got {table!r}.")
        if table == "plan":
            # the numbers of the grid at each unit's J_chosen (pointwise selection)
            at = {name: getattr(self, name).sel(J=self.J_chosen) for name in _AT_J}
            values = {"J": self.J_chosen, **at}
            rho_low, rho_high = split_interval(self.rho_ci)
            fields = {"rho_low": rho_low, "rho_high": rho_high}
            values.update(
                {
                    name: fields[name] if name in fields else getattr(self, name)
                    for name in _PER_UNIT
                }
            )
            values = {k: v.drop_vars("J", errors="ignore") for k, v in values.items()}
            frame, dims = tidy_frame(values)
            frame["power_model"] = self.power_model
            return frame[[*dims, *PLAN_TABLE_COLUMNS]]
        low, high = split_interval(self.half_width_ci)
        plow, phigh = split_interval(self.power_ci)
        slow, shigh = split_interval(self.size_ci)
        values = {
            "n_fits": self.n_fits,
            "half_width": self.half_width,
            "half_width_low": low,
            "half_width_high": high,
            "mean_half_width": self.mean_half_width,
            "power": self.power,
            "power_low": plow,
            "power_high": phigh,
            "size": self.size,
            "size_low": slow,
            "size_high": shigh,
            "political_ratio": self.political_ratio,
            "variance": self.variance,
            "expected_variance": self.expected_variance,
            "meets_target": self.meets_target,
        }
        # the first array sets the order of the dims: J, the unit, the extra dims
        frame, dims = tidy_frame({"half_width": self.half_width, **values})
        frame["power_model"] = self.power_model
        return frame[[*dims, *PLAN_GRID_COLUMNS]]

    def _frame_dims(self, frame: pd.DataFrame) -> list[str]:
        dims = self.unit_dims
        if len(frame.columns) and frame.columns[0] == "J":  # the grid
            dims = ["J", *dims]
        return [d for d in dims if d in frame.columns]

    # ------------------------------------------------------------------
    # summary and notebook display
    # ------------------------------------------------------------------

    def summary(self, table: str = "plan", *, precision: int = 4) -> Any:
        """Return a statsmodels ``Summary``: what was planned, the table, the verdict.

        Parameters
        ----------
        table : {"plan", "grid"}, default "plan"
            One row per contrast (default) or the whole grid (:meth:`to_frame`).
        precision : int, default 4
            Significant digits.

        Returns
        -------
        statsmodels.iolib.summary.Summary
            When a target is out of reach, it says so first, and after the table shows
            the curve the knee is read from (:meth:`curve`).
        """
        from statsmodels.iolib.table import SimpleTable

        smry = super().summary(precision, table=table)
        lead = self._out_of_reach_summary()
        if not lead:
            return smry
        lines = [[line] for line in textwrap.wrap(lead, 100)]
        smry.tables.insert(0, SimpleTable(lines, txt_fmt={"data_aligns": "l"}))
        curve = self.curve()
        dims = self._frame_dims(curve)
        cols = [c for c in curve.columns if c not in dims]
        stubs = [" ".join(str(v) for v in row) for row in curve[dims].itertuples(index=False)]
        data = [
            [
                str(v) if isinstance(v, bool | np.bool_ | np.integer) else f"{v:.{precision}g}"
                for v in row
            ]
            for row in curve[cols].itertuples(index=False)
        ]
        kinds = " and ".join(self._missed_curves())
        title = f"The curve: {kinds} against J (knee: {self._knee_rule(self._missed_curves())})"
        smry.tables.append(SimpleTable(data, headers=cols, stubs=stubs, title=title))
        return smry

    def _missed_curves(self) -> list[str]:
        """Return the curves whose target is out of reach for some unit ("half-width", "power")."""
        out = []
        if self.target_width is not None and bool(self.J_width.isnull().any()):
            out.append("half-width")
        if self.effect is not None and bool(self.J_power.isnull().any()):
            out.append("power")
        return out

    def _out_of_reach_summary(self) -> str:
        """Return the summary's first words when a target is out of reach ("" otherwise)."""
        missed = self._missed_curves()
        if not missed:
            return ""
        out = self.J_plan.isnull()
        where = "within the budget" if self.budget_fits is not None else "at any J searched"
        what = f"Not reachable: the targets ({self._targets()}) cannot all be met {where}"
        if out.size > 1:
            what += f" for {int(out.sum())} of the {out.size} plans"
        rule = self._knee_rule(missed)
        knees = np.unique(self.J_knee.values[np.isfinite(self.J_knee.values)])
        if knees.size == 1:
            knee = f"J = {int(knees[0])}, the knee ({rule})"
        else:
            knee = f"the knee of each plan, J_knee ({rule})"
        asked = bool(((self.J_chosen != self.J_knee) & out).any())
        if asked:  # a J was asked for: the knee is said, the J asked reported
            return f"{what}. The knee: {knee}; the table is at the J asked; the curve below."
        return f"{what}. Recommended: {knee}; the curve below."

    def curve(self) -> pd.DataFrame:
        """Return the grid at a few ``J`` for the plans with a knee: the curve it is read from.

        For each plan (contrast, extra coordinate) whose targets are out of reach
        (:attr:`J_knee` not NaN; no row otherwise), the rows of :meth:`to_frame`
        (the grid) at the smallest ``J``, at 5, 10, 20 and 50, at every ``J`` of the
        grid beyond 50 (the ``J`` asked, the designs found, the budget's) and at each
        knee and the ``J`` before it, within the search; columns ``J``, the unit dims,
        ``n_fits``, ``half_width``, ``power`` (with an ``effect``), ``meets_target``
        and ``knee`` (whether the row is the unit's :attr:`J_knee`).

        Returns
        -------
        pandas.DataFrame
        """
        grid = self.to_frame()
        dims = self._frame_dims(grid)
        J = grid["J"].to_numpy()
        knees = self.J_knee.values[np.isfinite(self.J_knee.values)]
        step = max(self.K, 1)
        points = [J.min(), 5, 10, 20, 50, *knees, *(knees - step)]
        keep = (np.isin(J, points) | (J > 50)) & (J <= self.search_end)
        frame = grid[keep]
        knee = tidy_frame({"J_knee": self.J_knee})[0]
        units = [d for d in dims if d != "J"]
        merged = (
            frame.merge(knee, on=units, how="left")
            if units
            else frame.assign(J_knee=float(self.J_knee))
        )
        merged = merged[np.isfinite(merged["J_knee"].to_numpy(dtype=float))]
        if units:  # one curve after the other, in the order of the units
            order = merged.groupby(units, sort=False).ngroup().to_numpy()
            merged = merged.iloc[np.lexsort((merged["J"].to_numpy(), order))]
        cols = ["n_fits", "half_width", *(["power"] if self.effect is not None else [])]
        out = merged[[*dims, *cols, "meets_target"]].copy()
        out["knee"] = merged["J"].to_numpy() == merged["J_knee"].to_numpy()
        return out.reset_index(drop=True)

    def _targets(self) -> str:
        parts = []
        if self.target_width is not None:
            parts.append(f"half-width {self.target_width:g}")
        if self.effect is not None:
            parts.append(f"power {self.target_power:g} at effect {self.effect:g}")
        if self.budget_fits is not None:
            parts.append(f"budget {self.budget_fits} fits per learner")
        return ", ".join(parts) if parts else "none"

    def _design(self) -> str:
        if self.K:
            return f"repeated {self.K}-fold, n = {self.n} (n1 = {self.n1}, n2 = {self.n2})"
        text = f"random splits, n = {self.n} (n1 = {self.n1}, n2 = {self.n2})"
        if self.design_dim == "M":
            text += f"; M half-splits of n/2, J inner splits each (n1' = {self.half_n1})"
        elif self.design_dim == "R":
            text += "; R replicates of J splits"
        return text

    def fits(self, J: int, value: int = 0) -> int:
        """Return the fits per learner of ``J`` splits (``value``: the design's ``M`` or ``R``).

        ``J`` for the t tests, ``J (1 + 2M)`` for the conservative Z, ``(R + 1) J``
        for the bootstraps (docs/theory.md §4).

        Parameters
        ----------
        J : int
            Splits of the main block (and per half, per replicate).
        value : int, default 0
            ``M`` or ``R`` (ignored by the t tests).

        Returns
        -------
        int
        """
        if self.design_dim == "M":
            return J * (1 + 2 * value)
        if self.design_dim == "R":
            return J * (value + 1)
        return J

    def _summary_info(self, table: str = "plan") -> list[tuple[str, str]]:
        return [
            ("Plan:", self.title),
            ("Loss:", self.loss),
            ("Design:", self._design()),
            ("Level:", f"{100 * (1 - self.alpha):g}% intervals, two-sided tests"),
            ("Targets:", self._targets()),
            ("Pilot:", self._pilot()),
            ("ρ:", self.assumption),
            ("Power model:", self._power_text()),
            *([("Note:", self.note)] if self.note else []),
        ]

    def _power_text(self) -> str:
        if self.power_model == "pilot":
            return "pilot (mixture over the pilot's datasets)"
        return "gaussian (Lemma 2, noncentral t)"

    def _pilot(self) -> str:
        text = f"{self.pilot_splits} splits, n2 = {self.pilot_n2}, S² df {self.pilot_df}"
        if self.pilot_halves:
            text += f", {self.pilot_halves} half-splits"
        return text

    def _display_details(self) -> list[str]:
        lead = self._out_of_reach_summary()
        return [
            *([lead] if lead else []),
            f"{self._design()}; {100 * (1 - self.alpha):g}% intervals; targets: {self._targets()}",
            f"pilot: {self._pilot()}; {self.assumption}; power model: {self.power_model}",
        ]

    def _display_frame(self) -> pd.DataFrame:
        frame = self.to_frame("plan")
        cols = ["J", "n_fits", "half_width", "power", "J_plan", "rho"]
        return frame[[*self._frame_dims(frame), *cols]]

    def _display_notes(self) -> list[str]:
        return [
            "half_width = critical value × sqrt(E[σ̂²]) (root mean square); "
            "to_frame() has the grid over J (docs/theory.md §10)"
        ]

    # ------------------------------------------------------------------
    # picture and words
    # ------------------------------------------------------------------

    def plot(self, kind: str = "width", *, ax: Any = None) -> Any:
        """Draw the half-width (or the power) against the fits per learner, one curve per contrast.

        The band is the pilot's uncertainty (:attr:`half_width_ci`, :attr:`power_ci`);
        the dashed line the target; a dot the smallest design meeting it.

        Parameters
        ----------
        kind : {"width", "power"}, default "width"
            What to draw; ``"power"`` needs a plan with an ``effect``.
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; default a new figure.

        Returns
        -------
        matplotlib.axes.Axes
        """
        return plan_plot(self, kind, ax=ax)

    def labels(self) -> list[str]:
        """Readable labels of the units (``"tree − logreg"``), in the order of the unit dim."""
        unit = next((d for d in self.J_chosen.dims if d in (CONTRAST, MODEL)), None)
        if unit is None:
            return [self.loss]
        weights = weights_of(self.J_chosen)
        names = [str(v) for v in self.J_chosen[unit].values]
        if unit == CONTRAST:
            return [readable_label(v, weights.get(v)) for v in names]
        return names

    def verdict(self) -> Verdict:
        """Return the plan in words: one sentence per contrast (and extra coordinate).

        E.g. "tree − logreg: J = 23 splits (23 fits per learner) give a 95%
        half-width of 0.012 and power 0.81 to detect a difference of 0.02, assuming
        ρ = ρ0 = n2/(n1 + n2) = 0.1; the target half-width 0.015 is met from
        J = 15, the power 0.8 from J = 23."

        Returns
        -------
        cvstats.results.verdict.Verdict
        """
        q = quantity_of(self.pilot_estimate.attrs, self.loss)
        frame = self.to_frame("plan")
        dims = self._frame_dims(frame)
        unit = next((d for d in dims if d in (CONTRAST, MODEL)), None)
        others = [d for d in dims if d not in (unit, self.design_dim)]
        keys = [str(v) for v in self.J_chosen[unit].values] if unit else []
        labels = dict(zip(keys, self.labels() if unit else [], strict=True))
        level = f"{100 * (1 - self.alpha):g}%"
        lines = []
        for _, row in frame.iterrows():
            prefix = ", ".join(f"{d} = {row[d]}" for d in others)
            label = labels.get(str(row[unit]), str(row[unit])) if unit else self.loss
            lines.append((f"{prefix}: " if prefix else "") + self._sentence(row, label, q, level))
        return Verdict("\n".join(lines))

    def _amount(self, q: Any, value: float) -> str:
        if not np.isfinite(value):
            return "∞" if value > 0 else "n/a"
        if q.points:
            return f"{100 * value:.2g} points"
        return f"{value:.2g}"

    def _sentence(self, row: pd.Series, label: str, q: Any, level: str) -> str:
        J = int(row["J"])
        fits = int(row["n_fits"])
        unit = "splits" if not self.K else f"folds ({J // self.K} × {self.K}-fold)"
        value = int(row[self.design_dim]) if self.design_dim else 0
        if self.design_dim == "M":
            unit += f" and M = {value} half-splits"
        elif self.design_dim == "R":
            unit += f" and R = {value} replicates"
        what = f"a {level} half-width of {self._amount(q, float(row['half_width']))}"
        if self.effect is not None:
            what += (
                f" and power {float(row['power']):.2g} to detect a difference of "
                f"{self._amount(q, abs(self.effect))}"
            )
        size = float(row["size"])
        level_off = abs(size - self.alpha) > 0.005
        if self.rho_source == "rho0":
            assumed = self.assumption
        else:
            why = [self.assumption]
            if level_off:
                why.append(f"the test's actual level is then {size:.2g}, not {self.alpha:g}")
            assumed = f"ρ = {float(row['rho']):.2g} ({'; '.join(why)})"
        text = f"J = {J} {unit} ({fits} fits per learner) give {what} for {label}"
        if self.power_model == "pilot":
            datasets = self.pilot_df // max(self.pilot_splits - 1, 1)
            if self.rho_source == "rho0":
                text += f", assuming {self.assumption}"
            else:
                text += f", assuming ρ = {float(row['rho']):.2g} ({self.assumption})"
            text += f", with power and level from the pilot's {datasets} datasets"
            if level_off:
                text += f" (the test's actual level is then {size:.2g}, not {self.alpha:g})"
        else:
            text += f", assuming {assumed}"
        if self.budget_fits is not None and fits > self.budget_fits:
            text += f"; this exceeds the budget of {self.budget_fits} fits"
        targets, missed = [], []
        if self.target_width is not None:
            met_from = float(row["J_width"])
            (targets if np.isfinite(met_from) else missed).append(
                self._target_text(
                    f"the target half-width {self._amount(q, self.target_width)}",
                    met_from,
                    value,
                    self.target_width <= float(row["half_width_limit"]),
                    f"the half-width never falls below "
                    f"{self._amount(q, float(row['half_width_limit']))} (its limit as J → ∞)",
                )
            )
        if self.effect is not None:
            met_from = float(row["J_power"])
            (targets if np.isfinite(met_from) else missed).append(
                self._target_text(
                    f"the power {self.target_power:g}",
                    met_from,
                    value,
                    self.target_power >= float(row["power_limit"]),
                    f"the power never exceeds {float(row['power_limit']):.2g} (its limit "
                    "as J → ∞)",
                )
            )
        if targets:
            text += "; " + ", ".join(targets)
            both = float(row["J_plan"])
            firsts = (float(row["J_width"]), float(row["J_power"]))
            if len(targets) == 2 and np.isfinite(both) and both > max(firsts):
                text += f" (both from J = {int(both)})"
        text += "."
        if not missed:
            return text
        return f"{self._out_of_reach(row, label, q, missed)} {text}"

    def _out_of_reach(self, row: pd.Series, label: str, q: Any, missed: list[str]) -> str:
        """Return the lead of a verdict whose targets are not all met: why, the best, the knee."""
        at = {d: row[d] for d in self.unit_dims}
        bests, curves, met = [], [], []
        for kind, curve, target, first in self._targets_asked(q):
            if np.isfinite(float(row[first])):
                met.append(target)
                continue
            best, J = (a.sel(at) for a in self._reachable(kind))
            value = self._amount(q, float(best)) if kind == "width" else f"{float(best):.2g}"
            bests.append(
                f"{'a half-width of' if kind == 'width' else 'power'} {value}, at J = {int(J)}"
            )
            curves.append(curve)
        where = "within the budget" if self.budget_fits is not None else "searched"
        lead = f"Not reachable for {label}: {'; '.join(missed)}. The best {where}: "
        lead += f"{'; '.join(bests)}."
        knee = float(row["J_knee"])
        if np.isfinite(knee):
            rule = self._knee_rule(curves)
            if met:
                rule += " and that meets " + " and ".join(met)
            if int(knee) == int(row["J"]):
                lead += f" Recommended: J = {int(knee)}, the knee ({rule})."
            else:
                lead += f" The knee is J = {int(knee)} ({rule})."
        return lead

    def _targets_asked(self, q: Any) -> list[tuple[str, str, str, str]]:
        """Return ``(kind, curve, target in words, field of its smallest J)`` per target asked."""
        out = []
        if self.target_width is not None:
            target = f"the target half-width {self._amount(q, self.target_width)}"
            out.append(("width", "half-width", target, "J_width"))
        if self.effect is not None:
            out.append(("power", "power", f"the power {self.target_power:g}", "J_power"))
        return out

    def _knee_rule(self, curves: list[str]) -> str:
        """Return the knee's rule in words for the curves out of reach."""
        which = " and ".join(curves) + (" are" if len(curves) == 2 else " is")
        return (
            f"the smallest J whose {which} within {100 * self.knee_tolerance:g}% of the best "
            "reachable"
        )

    def _reachable(self, kind: str) -> tuple[xr.DataArray, xr.DataArray]:
        """Return the best half-width (least) or power (greatest) within the budget, and its J.

        Over the designs of the grid within the budget and the search (the grid holds
        the ``J`` where the search found the best), per unit.
        """
        curve = self.half_width if kind == "width" else self.power
        J = curve["J"]
        ok = J <= self.search_end
        if self.budget_fits is not None:
            ok = ok & (self.n_fits <= self.budget_fits)
        reach = curve.where(ok)
        best = reach.min("J") if kind == "width" else reach.max("J")
        return best, J.astype(float).where(reach == best).min("J")

    def _target_text(self, target: str, met_from: float, value: int, never: bool, why: str) -> str:
        if np.isfinite(met_from):
            return f"{target} is met from J = {int(met_from)}"
        if never:
            return f"{target} cannot be met with n = {self.n} examples: {why}"
        step = max(self.K, 1)
        if self.budget_fits is not None:
            budget_J = self.budget_fits // self.fits(1, value) // step * step
            if budget_J <= self.search_limit:
                return f"{target} cannot be met within the budget of {self.budget_fits} fits"
        return f"{target} is not met by J = {self.search_limit}, the end of the search"
