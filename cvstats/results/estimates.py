"""Estimates with standard errors and intervals: the fits across datasets.

:func:`~cvstats.across.lemma1.fit_lemma1`, :func:`~cvstats.across.rho.fit_rho`,
:func:`~cvstats.across.rho.fit_r`, :func:`~cvstats.across.kfold_variance.kfold_statistics`,
:func:`~cvstats.across.kfold_variance.kfold_moments`,
:func:`~cvstats.across.kfold_variance.quadratic_estimator_bias`,
:func:`~cvstats.across.conditional.cv_bias` and
:func:`~cvstats.across.conditional.variance_decomposition` return an
:class:`EstimatesResult`: a result holding an :class:`xarray.Dataset`
(:attr:`EstimatesResult.dataset`) that reads like one — ``fit["rho"]``,
``fit.rho_ci.sel(ci_bound="lower")``, ``fit.attrs``, ``fit.sel(model="a")``,
``"rho" in fit`` — with the result protocol of :mod:`cvstats.results.base`.
It wraps the Dataset rather than subclassing it, as xarray advises (a
subclass of ``Dataset`` is not supported: its operations keep or drop the
class unpredictably).

Changed (issue 27): an :class:`EstimatesResult` is no longer an
``xarray.Dataset``. ``xr.concat`` of fits is
``EstimatesResult.concat(fits, dim)`` (or ``xr.concat([f.dataset for f in
fits], dim)`` for a plain Dataset); Dataset methods other than those listed on
the class (arithmetic, ``rename``, ``assign``, ``where``...) are those of
``fit.dataset``.

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

from collections.abc import Hashable, Iterable, Iterator, Mapping
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.errors import ArgumentError, CvstatsTypeError
from cvstats.results.base import CI_BOUND, Result, tidy_frame
from cvstats.results.plots import estimates_plot
from cvstats.results.verdict import Verdict, estimates_verdict

__all__ = ["ESTIMATES_FRAME_COLUMNS", "QUANTITY", "EstimatesPlot", "EstimatesResult"]

#: Stable columns of :meth:`EstimatesResult.to_frame` (after the dims' columns).
ESTIMATES_FRAME_COLUMNS = ("quantity", "estimate", "stderr", "ci_lower", "ci_upper")
#: Dim of the quantities in :meth:`EstimatesResult.interval`.
QUANTITY = "quantity"

_SUFFIXES = ("_se", "_ci")


def _as_dataset(value: Any, argument: str) -> xr.Dataset:
    """Return the Dataset of a fit or a Dataset; a clear error for anything else."""
    if isinstance(value, EstimatesResult):
        return value.dataset
    if isinstance(value, xr.Dataset):
        return value
    hint = " (a DataArray: pass `.to_dataset()`)" if isinstance(value, xr.DataArray) else ""
    raise CvstatsTypeError(
        f"`{argument}` must be an xarray.Dataset or an EstimatesResult, got "
        f"{type(value).__name__}{hint}."
    )


class EstimatesResult(Result):
    """Estimates ``q``, standard errors ``q_se`` and intervals ``q_ci``, held in a Dataset.

    Holds an :class:`xarray.Dataset` (:attr:`dataset`) and reads like one:
    variables and coordinates by item and by attribute (``fit["rho"]``,
    ``fit.rho_ci.sel(ci_bound="lower")``), ``"rho" in fit``, iteration over
    the variable names, :attr:`attrs`, :attr:`data_vars`, :attr:`coords`,
    :attr:`dims`, :attr:`sizes`; :meth:`sel`, :meth:`isel`, :meth:`squeeze`,
    :meth:`compute`, :meth:`load` and a list of names (``fit[["rho", "rho0"]]``)
    give an :class:`EstimatesResult` again; :meth:`to_netcdf`,
    :meth:`to_dataframe` and :meth:`to_dataset` export it. Any other Dataset
    operation is one of :attr:`dataset` (``fit.dataset * 2``), and
    :meth:`concat` stacks fits (``xr.concat`` takes Datasets only).

    It has the reporting protocol of every cvstats result: :meth:`to_frame`
    (tidy: one row per quantity and element of the dims), ``to_markdown``,
    ``to_latex``, ``to_html``, ``summary`` and ``str()``, :meth:`interval`
    (every ``q_ci`` on one ``quantity`` dim), :meth:`verdict`, a short ``repr``
    and ``_repr_html_`` that lead with the estimates, and :attr:`plot`
    (``fit.plot()`` draws a quantity and its intervals; ``fit.plot.scatter(...)``
    and the other xarray Dataset plots work as before). Unlike the dataclass
    results it is mutable, as its Dataset (``fit["x"] = ...``, ``fit.attrs``).

    Parameters
    ----------
    dataset : xarray.Dataset
        Variables ``q``, ``q_se``, ``q_ci`` (the last two optional) and attrs;
        held as is (no copy; lazy stays lazy).

    Raises
    ------
    CvstatsTypeError
        When ``dataset`` is not an :class:`xarray.Dataset`.

    Examples
    --------
    >>> import xarray as xr
    >>> from cvstats.results import EstimatesResult, bounds
    >>> ds = xr.Dataset(
    ...     {"mu": xr.DataArray([1.0, 2.0], dims="model", coords={"model": ["a", "b"]})},
    ...     attrs={"alpha": 0.05},
    ... )
    >>> ds["mu_ci"] = bounds(ds.mu - 0.5, ds.mu + 0.5, alpha=0.05)
    >>> fit = EstimatesResult(ds)
    >>> float(fit.mu_ci.sel(model="b", ci_bound="upper")), "mu" in fit, type(fit.sel(model="a"))
    (2.5, True, <class 'cvstats.results.estimates.EstimatesResult'>)
    >>> EstimatesResult.concat([fit, fit], "design").sizes["design"]
    2
    """

    __slots__ = ("_dataset",)

    frame_columns: ClassVar[tuple[str, ...]] = ESTIMATES_FRAME_COLUMNS

    def __init__(self, dataset: xr.Dataset) -> None:
        self._dataset = _as_dataset(dataset, "dataset")

    @classmethod
    def from_dataset(cls, ds: xr.Dataset | EstimatesResult) -> EstimatesResult:
        """Wrap a Dataset (no copy of its data; lazy stays lazy).

        Parameters
        ----------
        ds : xarray.Dataset or EstimatesResult
            Variables ``q``, ``q_se``, ``q_ci`` (the last two optional) and
            attrs; an :class:`EstimatesResult` is returned as is.

        Returns
        -------
        EstimatesResult
        """
        if isinstance(ds, cls):
            return ds
        return cls(_as_dataset(ds, "ds"))

    @classmethod
    def concat(
        cls,
        fits: Iterable[EstimatesResult | xr.Dataset],
        dim: Hashable | pd.Index | xr.DataArray,
        **kwargs: Any,
    ) -> EstimatesResult:
        """Stack fits along a new or existing dim (``xr.concat`` of their Datasets).

        ``xr.concat`` takes Datasets only: ``xr.concat([f.dataset for f in fits],
        dim)`` gives the plain Dataset, this the :class:`EstimatesResult`.

        Parameters
        ----------
        fits : iterable of EstimatesResult or xarray.Dataset
            The fits (at least one).
        dim : hashable, pandas.Index or xarray.DataArray
            As :func:`xarray.concat`'s ``dim``: a name, or an index that also
            labels the fits (``pd.Index(["a", "b"], name="design")``).
        **kwargs
            Passed to :func:`xarray.concat` (``coords="minimal"``,
            ``compat="override"``...); the attrs are the first fit's by default.

        Returns
        -------
        EstimatesResult

        Raises
        ------
        ArgumentError
            When ``fits`` is empty.
        CvstatsTypeError
            When one of ``fits`` is neither a fit nor a Dataset.
        """
        datasets = [_as_dataset(f, "fits") for f in fits]
        if not datasets:
            raise ArgumentError("`fits` is empty; pass at least one fit to concatenate.")
        return cls(xr.concat(datasets, dim, **kwargs))

    # ------------------------------------------------------------------
    # the Dataset held, and what reads like it
    # ------------------------------------------------------------------

    @property
    def dataset(self) -> xr.Dataset:
        """The :class:`xarray.Dataset` of the estimates (held, not copied)."""
        return self._dataset

    def to_dataset(self) -> xr.Dataset:
        """Return the estimates as a plain :class:`xarray.Dataset` (a shallow copy).

        Returns
        -------
        xarray.Dataset
            A new Dataset sharing the data of :attr:`dataset` (changing its
            variables or attrs leaves the fit as it is).
        """
        return self._dataset.copy(deep=False)

    def _wrap(self, value: Any) -> Any:
        """Return ``value``, as an :class:`EstimatesResult` when it is a Dataset."""
        return type(self)(value) if isinstance(value, xr.Dataset) else value

    @property
    def attrs(self) -> dict[Hashable, Any]:
        """The attrs of the fit (``method``, ``alpha``, ``N``...); settable."""
        return self._dataset.attrs

    @attrs.setter
    def attrs(self, value: Mapping[Any, Any]) -> None:
        self._dataset.attrs = dict(value)

    @property
    def data_vars(self) -> Any:
        """The data variables (``xarray.Dataset.data_vars``)."""
        return self._dataset.data_vars

    @property
    def coords(self) -> Any:
        """The coordinates (``xarray.Dataset.coords``)."""
        return self._dataset.coords

    @property
    def dims(self) -> Any:
        """The dims (``xarray.Dataset.dims``)."""
        return self._dataset.dims

    @property
    def sizes(self) -> Mapping[Hashable, int]:
        """The size of each dim (``xarray.Dataset.sizes``)."""
        return self._dataset.sizes

    def __getitem__(self, key: Any) -> Any:
        """``fit["rho"]``: a DataArray; ``fit[["rho", "rho0"]]``: an EstimatesResult."""
        return self._wrap(self._dataset[key])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._dataset[key] = value

    def __delitem__(self, key: Hashable) -> None:
        del self._dataset[key]

    def __contains__(self, key: object) -> bool:
        return key in self._dataset

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._dataset)

    def __len__(self) -> int:
        return len(self._dataset)

    def __getattr__(self, name: str) -> Any:
        """``fit.rho``: a variable or coordinate by attribute, as on a Dataset."""
        # (private names are never variables: no recursion before ``_dataset`` is set)
        if not name.startswith("_"):
            dataset = self._dataset
            if name in dataset.variables:
                return dataset[name]
            if hasattr(dataset, name):
                raise AttributeError(
                    f"{type(self).__name__} has no attribute {name!r}; it is a method of "
                    f"its Dataset: use `fit.dataset.{name}` (xarray.Dataset)."
                )
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}.")

    def __dir__(self) -> list[str]:
        names = [str(n) for n in self._dataset.variables if str(n).isidentifier()]
        return sorted({*super().__dir__(), *names})

    def sel(self, indexers: Mapping[Any, Any] | None = None, **kwargs: Any) -> EstimatesResult:
        """Select by label (``xarray.Dataset.sel``); an :class:`EstimatesResult`."""
        return self._wrap(self._dataset.sel(indexers, **kwargs))

    def isel(self, indexers: Mapping[Any, Any] | None = None, **kwargs: Any) -> EstimatesResult:
        """Select by position (``xarray.Dataset.isel``); an :class:`EstimatesResult`."""
        return self._wrap(self._dataset.isel(indexers, **kwargs))

    def squeeze(self, dim: Any = None, **kwargs: Any) -> EstimatesResult:
        """Drop dims of length one (``xarray.Dataset.squeeze``); an :class:`EstimatesResult`."""
        return self._wrap(self._dataset.squeeze(dim, **kwargs))

    def compute(self, **kwargs: Any) -> EstimatesResult:
        """Return a new fit with its lazy (dask) data computed (``xarray.Dataset.compute``)."""
        return self._wrap(self._dataset.compute(**kwargs))

    def load(self, **kwargs: Any) -> EstimatesResult:
        """Compute the lazy data in place (``xarray.Dataset.load``) and return the fit."""
        self._dataset.load(**kwargs)
        return self

    def copy(self, deep: bool = True) -> EstimatesResult:
        """Return a copy of the fit (``xarray.Dataset.copy``; ``deep=False``: shared data)."""
        return self._wrap(self._dataset.copy(deep=deep))

    def __copy__(self) -> EstimatesResult:
        return self.copy(deep=False)

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> EstimatesResult:
        return self._wrap(self._dataset.__deepcopy__(memo))

    def to_netcdf(self, *args: Any, **kwargs: Any) -> Any:
        """Write the Dataset to a netCDF file (``xarray.Dataset.to_netcdf``)."""
        return self._dataset.to_netcdf(*args, **kwargs)

    def to_dataframe(self, *args: Any, **kwargs: Any) -> pd.DataFrame:
        """Return xarray's wide frame of the Dataset (``xarray.Dataset.to_dataframe``).

        :meth:`to_frame` is the tidy frame of the result protocol.
        """
        return self._dataset.to_dataframe(*args, **kwargs)

    def equals(self, other: EstimatesResult | xr.Dataset) -> bool:
        """Whether ``other`` (a fit or a Dataset) holds the same values (``Dataset.equals``)."""
        return bool(self._dataset.equals(_as_dataset(other, "other")))

    def identical(self, other: EstimatesResult | xr.Dataset) -> bool:
        """Whether ``other`` holds the same values, names and attrs (``Dataset.identical``)."""
        return bool(self._dataset.identical(_as_dataset(other, "other")))

    # ------------------------------------------------------------------
    # the result protocol
    # ------------------------------------------------------------------

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

    def _repr_html_(self) -> str:
        dataset = self._dataset._repr_html_()
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
