"""Result objects of the inference methods.

One frozen dataclass, :class:`InferenceResult`, with the same fields
whatever method or branch produced it (theory.md §4, last paragraph):
estimate, standard error, statistic, reference distribution and degrees of
freedom, p-value, the interval as a method, the number of splits and fits,
the estimand and the political-ratio direction the method is known for.
Array-valued fields are DataArrays over the dims the method did not reduce
(extra dims and ``model``/``contrast``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from cvstats import kernels
from cvstats.cube.apply import apply_kernel

__all__ = ["ConfidenceInterval", "InferenceResult", "FRAME_COLUMNS"]

#: Stable columns of :meth:`InferenceResult.to_frame` (after the dims' columns).
FRAME_COLUMNS = (
    "method",
    "estimand",
    "estimate",
    "stderr",
    "statistic",
    "df",
    "pvalue",
    "ci_lower",
    "ci_upper",
    "n1",
    "n2",
    "n_splits",
    "n_fits",
    "reference",
    "direction",
)

Value = xr.DataArray | float


class ConfidenceInterval(NamedTuple):
    """Bounds of a confidence interval (``-inf``/``inf`` for one-sided ones)."""

    low: Value
    high: Value


def _float_if_scalar(value: xr.DataArray) -> Value:
    return float(value) if value.ndim == 0 else value


@dataclass(frozen=True)
class InferenceResult:
    """Result of one inference method on a cube (theory.md §4).

    Attributes
    ----------
    method : str
        Name of the function that produced it (e.g. ``"corrected_resampled_t"``).
    title : str
        Readable name of the method.
    loss : str
        Name of the cube (its loss).
    estimate, stderr, statistic, df, pvalue : xarray.DataArray or float
        ``μ̂``, ``sqrt(σ̂²)``, ``(μ̂ - μ0)/sqrt(σ̂²)`` (or the method's own statistic,
        e.g. Alpaydın's F), degrees of freedom of the reference (``inf`` for a
        normal reference), and the p-value. DataArrays over the dims that were
        not reduced; floats when there are none.
    mu0 : float
        Null value of the test.
    alpha : float
        Default level of :meth:`conf_int`.
    alternative : str
        ``"two-sided"``, ``"less"`` or ``"greater"``.
    reference : str
        Reference distribution: ``"normal"``, ``"t"``, ``"F(10, 5)"``, ``"chi2(1)"``
        or ``"binomial"``.
    estimand : str
        ``"n1μ"`` (unconditional error at training size ``n1``), ``"n/2 μ"`` (5x2cv)
        or ``"conditional"`` (error of the models trained on the data at hand).
    target : str
        ``"learner"`` (unconditional) or ``"model"`` (conditional).
    n1, n2 : int
        Training and test sizes of the splits the estimate uses.
    n_splits : int
        Splits used by the method.
    n_fits : int
        Model fits per learner the method needs.
    direction : str
        Known political-ratio direction (theory.md §4 table): ``"liberal"``,
        ``"conservative"``, or the condition it depends on.
    """

    method: str
    title: str
    loss: str
    estimate: Value
    stderr: Value
    statistic: Value
    df: Value
    pvalue: Value
    mu0: float
    alpha: float
    alternative: str
    reference: str
    estimand: str
    target: str
    n1: int
    n2: int
    n_splits: int
    n_fits: int
    direction: str

    @property
    def estimand_label(self) -> str:
        """The estimand with its training size, e.g. ``"n1μ (n1 = 512)"``."""
        if self.estimand == "n1μ":
            return f"n1μ (n1 = {self.n1})"
        if self.estimand == "n/2 μ":
            return f"n/2 μ (n/2 = {self.n1})"
        return "conditional"

    def conf_int(self, alpha: float | None = None) -> ConfidenceInterval:
        """Return the ``1 - alpha`` interval ``μ̂ ± c sqrt(σ̂²)`` (theory.md §4).

        Parameters
        ----------
        alpha : float, optional
            Level; default the result's ``alpha``.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``; one-sided alternatives give an infinite bound; NaN
            for methods without an interval (Alpaydın's F).
        """
        alpha = self.alpha if alpha is None else alpha
        low, high = apply_kernel(
            kernels.conf_int,
            [_as_da(self.estimate), _as_da(self.stderr), _as_da(self.df)],
            [[], [], []],
            2,
            alpha=alpha,
            alternative=self.alternative,
        )
        return ConfidenceInterval(_float_if_scalar(low), _float_if_scalar(high))

    def to_frame(self, alpha: float | None = None) -> pd.DataFrame:
        """Return a tidy DataFrame: one row per element of the result's dims.

        Columns: the result's dims, then :data:`FRAME_COLUMNS`.
        """
        low, high = self.conf_int(alpha)
        ds = xr.Dataset(
            {
                "estimate": _as_da(self.estimate),
                "stderr": _as_da(self.stderr),
                "statistic": _as_da(self.statistic),
                "df": _as_da(self.df),
                "pvalue": _as_da(self.pvalue),
                "ci_lower": _as_da(low),
                "ci_upper": _as_da(high),
            }
        ).compute()
        dims = list(_as_da(self.estimate).dims)
        ds = ds.drop_vars([c for c in ds.coords if c not in dims])
        if dims:
            frame = ds.to_dataframe(dim_order=dims).reset_index()
        else:
            frame = pd.DataFrame({k: [float(v)] for k, v in ds.data_vars.items()})
        frame["method"] = self.method
        frame["estimand"] = self.estimand_label
        for name in ("n1", "n2", "n_splits", "n_fits", "reference", "direction"):
            frame[name] = getattr(self, name)
        return frame[[*map(str, dims), *FRAME_COLUMNS]]

    def summary(self, alpha: float | None = None) -> Any:
        """Return a statsmodels ``Summary`` (``as_text()``, ``as_latex()``, ``as_html()``).

        Parameters
        ----------
        alpha : float, optional
            Level of the interval columns; default the result's ``alpha``.
        """
        from statsmodels.iolib.summary import Summary
        from statsmodels.iolib.table import SimpleTable

        alpha = self.alpha if alpha is None else alpha
        frame = self.to_frame(alpha)
        info = [
            ("Method:", self.title),
            ("Loss:", self.loss),
            ("Estimand:", self.estimand_label),
            ("Target:", self.target),
            ("n1, n2:", f"{self.n1}, {self.n2}"),
            ("Splits / fits:", f"{self.n_splits} / {self.n_fits}"),
            ("Reference:", self.reference),
            ("H0:", f"μ = {self.mu0:g} ({self.alternative})"),
            ("Known direction:", self.direction),
        ]
        smry = Summary()
        smry.tables.append(SimpleTable([[v] for _, v in info], stubs=[k for k, _ in info]))
        dims = [c for c in frame.columns if c not in FRAME_COLUMNS]
        stubs = [" ".join(str(v) for v in row) for row in frame[dims].itertuples(index=False)]
        lo, hi = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
        header = ["estimate", "std err", "statistic", "df", "p-value", lo, hi]
        cols = ["estimate", "stderr", "statistic", "df", "pvalue", "ci_lower", "ci_upper"]
        data = [[_fmt(v) for v in row] for row in frame[cols].itertuples(index=False)]
        smry.tables.append(SimpleTable(data, headers=header, stubs=stubs or [""]))
        return smry

    def __str__(self) -> str:
        return str(self.summary().as_text())


def _as_da(value: Value) -> xr.DataArray:
    return value if isinstance(value, xr.DataArray) else xr.DataArray(value)


def _fmt(value: float) -> str:
    if np.isnan(value):
        return "nan"
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.4g}"
