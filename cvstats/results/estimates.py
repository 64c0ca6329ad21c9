"""Estimates with standard errors and intervals: the fits across datasets.

:func:`~cvstats.across.lemma1.fit_lemma1`, :func:`~cvstats.across.rho.fit_rho`,
:func:`~cvstats.across.rho.fit_r`, :func:`~cvstats.across.kfold_variance.kfold_statistics`,
:func:`~cvstats.across.kfold_variance.kfold_moments`,
:func:`~cvstats.across.kfold_variance.quadratic_estimator_bias`,
:func:`~cvstats.across.conditional.cv_bias` and
:func:`~cvstats.across.conditional.variance_decomposition` return an
:class:`EstimatesResult`: an :class:`xarray.Dataset` (so ``fit["rho"]``,
``fit.rho_ci.sel(ci_bound="lower")``, ``fit.sel(model="a")``, ``xr.concat`` of
fits... work as before) with the result protocol of :mod:`cvstats.results.base`.

Its variables follow one naming rule: a quantity ``q``, its standard error
``q_se`` and its interval ``q_ci`` on a trailing ``ci_bound`` dim with
coordinates ``["lower", "upper"]``; the level is ``attrs["alpha"]``.

In a notebook it shows the table of estimates first (``repr``, ``_repr_html_``
of :class:`~cvstats.results.base.Display`), xarray's view of the Dataset below
it; ``fit.plot()`` draws a quantity with its intervals
(:func:`~cvstats.results.plots.estimates_plot`: ``ρ̂`` against ``ρ0`` for
``fit_rho``) and ``fit.plot.<method>(...)`` are xarray's Dataset plots.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.errors import ArgumentError
from cvstats.results.base import CI_BOUND, Result, tidy_frame
from cvstats.results.plots import estimates_plot
from cvstats.results.verdict import Verdict, estimates_verdict

__all__ = ["ESTIMATES_FRAME_COLUMNS", "QUANTITY", "EstimatesPlot", "EstimatesResult"]

#: Stable columns of :meth:`EstimatesResult.to_frame` (after the dims' columns).
ESTIMATES_FRAME_COLUMNS = ("quantity", "estimate", "stderr", "ci_lower", "ci_upper")
#: Dim of the quantities in :meth:`EstimatesResult.interval`.
QUANTITY = "quantity"

_SUFFIXES = ("_se", "_ci")


class EstimatesResult(xr.Dataset, Result):
    """A Dataset of estimates ``q``, standard errors ``q_se`` and intervals ``q_ci``.

    An :class:`xarray.Dataset` in every respect (indexing, attribute access,
    ``sel``, arithmetic, ``xr.concat``, ``to_netcdf``, ``plot``; operations keep
    the class), plus the reporting protocol of every cvstats result:
    :meth:`to_frame` (tidy: one row per quantity and element of the dims),
    ``to_markdown``, ``to_latex``, ``to_html``, ``summary`` and ``str()``,
    :meth:`interval` (every ``q_ci`` on one ``quantity`` dim), a short ``repr``
    and ``_repr_html_`` that lead with the estimates, and :attr:`plot`
    (``fit.plot()`` draws a quantity and its intervals; ``fit.plot.scatter(...)``
    and the other xarray Dataset plots work as before). ``dataset`` is the
    plain Dataset. Unlike the dataclass results it is mutable, as every Dataset.

    Build one with :meth:`from_dataset`.
    """

    __slots__ = ()

    frame_columns: ClassVar[tuple[str, ...]] = ESTIMATES_FRAME_COLUMNS

    @classmethod
    def from_dataset(cls, ds: xr.Dataset) -> EstimatesResult:
        """Wrap a Dataset (no copy of its data; lazy stays lazy).

        Parameters
        ----------
        ds : xarray.Dataset
            Variables ``q``, ``q_se``, ``q_ci`` (the last two optional) and attrs.

        Returns
        -------
        EstimatesResult
        """
        if isinstance(ds, cls):
            return ds
        return cls(ds.data_vars, coords=ds.coords, attrs=ds.attrs)

    @property
    def dataset(self) -> xr.Dataset:
        """The estimates as a plain :class:`xarray.Dataset` (shallow copy)."""
        return xr.Dataset(self.data_vars, coords=self.coords, attrs=self.attrs)

    @property
    def quantities(self) -> list[str]:
        """Names of the estimated quantities (variables not ending in ``_se``/``_ci``)."""
        names = [str(n) for n in self.data_vars]
        return [
            n for n in names if not any(n.endswith(s) and n[: -len(s)] in names for s in _SUFFIXES)
        ]

    def interval(self, alpha: float | None = None) -> xr.DataArray:
        """Return the intervals of every quantity that has one, on a ``quantity`` dim.

        Parameters
        ----------
        alpha : float, optional
            Must be the level the estimates were computed at (``attrs["alpha"]``;
            the intervals are not all normal, so another level needs a new fit).

        Returns
        -------
        xarray.DataArray
            Dims ``("quantity", *dims, "ci_bound")``, ``ci_bound`` with
            coordinates ``["lower", "upper"]``.

        Raises
        ------
        ArgumentError
            For another ``alpha``, or when no quantity has an interval.
        """
        level = self.attrs.get("alpha")
        if alpha is not None and (level is None or not np.isclose(alpha, level)):
            raise ArgumentError(
                f"the intervals were computed at alpha = {level}; rerun the fit with "
                f"alpha={alpha} for another level."
            )
        names = [q for q in self.quantities if f"{q}_ci" in self.data_vars]
        if not names:
            raise ArgumentError(f"{type(self).__name__} has no interval (no `*_ci` variable).")
        cis = [self[f"{q}_ci"] for q in names]
        cis = [ci.drop_vars([c for c in ci.coords if c not in ci.dims]) for ci in cis]
        out = xr.concat(xr.broadcast(*cis), dim=QUANTITY, coords="minimal", compat="override")
        out = out.assign_coords({QUANTITY: names}).transpose(QUANTITY, ..., CI_BOUND)
        out.attrs = {}
        return out.rename("interval")

    def to_frame(self) -> pd.DataFrame:
        """Return a tidy DataFrame: one row per quantity and element of the dims.

        Returns
        -------
        pandas.DataFrame
            Columns: the dims (every quantity broadcast against the others),
            then :data:`ESTIMATES_FRAME_COLUMNS` — ``quantity``, ``estimate``,
            ``stderr`` (NaN without ``q_se``), ``ci_lower``, ``ci_upper`` (NaN
            without ``q_ci``).
        """
        names = self.quantities
        full = xr.broadcast(*(self[q] for q in names))[0]
        frames = []
        for q in names:
            est = self[q].astype(float)
            nan = xr.full_like(est, np.nan)
            se = self[f"{q}_se"] if f"{q}_se" in self.data_vars else nan
            low = high = nan
            if f"{q}_ci" in self.data_vars:
                ci = self[f"{q}_ci"]
                low, high = (ci.sel({CI_BOUND: b}, drop=True) for b in ("lower", "upper"))
            cols = dict(zip(ESTIMATES_FRAME_COLUMNS[1:], (est, se, low, high), strict=True))
            cols = dict(zip(cols, xr.broadcast(*cols.values(), full)[:4], strict=True))
            frame, _ = tidy_frame(cols)
            frame.insert(0, QUANTITY, q)
            frames.append(frame)
        out = pd.concat(frames, ignore_index=True)
        dims = [str(d) for d in self.dims if d != CI_BOUND and str(d) in out.columns]
        return out[[*dims, *ESTIMATES_FRAME_COLUMNS]]

    def verdict(self) -> Verdict:
        """Return the fit in words (:func:`~cvstats.results.verdict.estimates_verdict`)."""
        return estimates_verdict(self)

    def _caption(self) -> str:
        method = str(self.attrs.get("method", type(self).__name__))
        loss = self.attrs.get("loss")
        return f"{method}: {loss}" if loss else method

    def _summary_info(self) -> list[tuple[str, str]]:
        info = [("Method:", str(self.attrs.get("method", type(self).__name__)))]
        if "loss" in self.attrs:
            info.append(("Loss:", str(self.attrs["loss"])))
        for key, value in self.attrs.items():
            if key not in ("method", "loss"):
                info.append((f"{key}:", str(value)))
        return info

    def __str__(self) -> str:
        return Result.__str__(self)

    # ------------------------------------------------------------------
    # notebook display and picture (the Dataset's own come second)
    # ------------------------------------------------------------------

    def _display_details(self) -> list[str]:
        skip = ("method", "loss", "alpha")
        shown = [
            f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
            for k, v in self.attrs.items()
            if k not in skip and isinstance(v, int | float | str) and len(str(v)) <= 20
        ]
        level = self.attrs.get("alpha")
        if isinstance(level, float):
            shown.append(f"{100 * (1 - level):g}% intervals")
        return [", ".join(shown)] if shown else []

    def _display_frame(self) -> pd.DataFrame:
        """Return the estimates by quantity, each over its own dims (blank: not its dim)."""
        frames = []
        for q in self.quantities:
            est = self[q].astype(float)
            cols = {"estimate": est, "stderr": xr.full_like(est, np.nan)}
            if f"{q}_se" in self.data_vars:
                cols["stderr"] = self[f"{q}_se"]
            cols["ci_lower"] = cols["ci_upper"] = cols["stderr"] * np.nan
            if f"{q}_ci" in self.data_vars:
                ci = self[f"{q}_ci"]
                cols["ci_lower"], cols["ci_upper"] = (
                    ci.sel({CI_BOUND: b}, drop=True) for b in ("lower", "upper")
                )
            frame, _ = tidy_frame(cols)
            frame.insert(0, QUANTITY, q)
            frames.append(frame)
        if not frames:
            return pd.DataFrame(columns=[QUANTITY, *ESTIMATES_FRAME_COLUMNS[1:]])
        out = pd.concat(frames, ignore_index=True)
        dims = [str(d) for d in self.dims if d != CI_BOUND and str(d) in out.columns]
        out[dims] = out[dims].astype(object).where(out[dims].notna(), "")
        return out[[QUANTITY, *dims, *ESTIMATES_FRAME_COLUMNS[1:]]]

    def __repr__(self) -> str:
        return Result.__repr__(self)

    def _repr_html_(self) -> str:
        dataset = xr.Dataset._repr_html_(self)
        return (
            f"{Result._repr_html_(self)}\n<details><summary>xarray.Dataset</summary>\n"
            f"{dataset}\n</details>"
        )

    @property
    def plot(self) -> EstimatesPlot:  # type: ignore[override]
        """``fit.plot()``: a quantity with its intervals; ``fit.plot.<method>``: xarray's plots.

        Calling it draws :func:`~cvstats.results.plots.estimates_plot`
        (``fit.plot(quantity=None, ax=None)``: ``ρ̂`` against ``ρ0`` for a
        :func:`~cvstats.fit_rho` result); its attributes are those of xarray's
        Dataset plot accessor (``fit.plot.scatter(x=..., y=...)``).
        """
        return EstimatesPlot(self)


class EstimatesPlot:
    """The ``plot`` of an :class:`EstimatesResult`: callable, and xarray's Dataset plots.

    ``fit.plot(quantity=None, *, ax=None)`` draws one quantity with its
    intervals (:func:`~cvstats.results.plots.estimates_plot`);
    ``fit.plot.scatter(...)`` and every other attribute are xarray's
    (``xarray.Dataset.plot``).
    """

    __slots__ = ("_result",)

    def __init__(self, result: EstimatesResult) -> None:
        self._result = result

    def __call__(self, quantity: str | None = None, *, ax: Any = None) -> Any:
        """Draw ``quantity`` (default ``rho`` of ``fit_rho``) with its intervals; Axes."""
        return estimates_plot(self._result, quantity, ax=ax)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._result.dataset.plot, name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *dir(self._result.dataset.plot)})
