"""Results about the candidates of a hyper-parameter search (docs/after-a-search.md).

:class:`MCSResult` holds the model confidence set of Hansen, Lunde & Nason
(2011, Econometrica 79(2)) of :func:`cvstats.model_confidence_set`;
:class:`CVCResult` the cross-validation with confidence of Lei (2020, JASA 115)
of :func:`cvstats.cv_confidence_set`.

:class:`BBCResult` holds the bootstrap bias-corrected CV estimate of
Tsamardinos, Greasidou & Borboudakis (2018, Machine Learning 107) of the error
of a selection procedure (:func:`cvstats.bbc_cv`): its estimate and interval
(percentile, or rescaled: :data:`BBC_INTERVALS`), next to the naive best CV
score it corrects.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.checks import validate_alpha
from cvstats.errors import ArgumentError
from cvstats.kernels.bbc import oob_scale, rescaled_percentiles
from cvstats.results.base import ConfidenceInterval, Result, bounds, split_interval
from cvstats.results.verdict import Verdict

__all__ = ["BBCResult", "CVCResult", "MCSResult"]

#: BBC-CV's intervals: the percentiles of Tsamardinos et al. (2018), and
#: cvstats's percentiles rescaled about the estimate by
#: :func:`cvstats.kernels.bbc.oob_scale` (docs/after-a-search.md).
BBC_INTERVALS = ("percentile", "rescaled")
#: Dim of the bootstrap replications of :attr:`BBCResult.replicates`.
BOOTSTRAP = "bootstrap"
#: A candidate label's ``" [candidate i]"`` suffix (from_cv_results, grid_models).
_ROW_SUFFIX = re.compile(r" \[candidate \d+\]$")
#: The last frame columns of both results: the bootstrap's sizes and unit.
_SIZE_COLUMNS = ("n_examples", "n_units", "n_repeats", "unit")


@dataclass(frozen=True, repr=False)
class BBCResult(Result):
    """BBC-CV: the error of "choose the best candidate by CV", without nested CV.

    Tsamardinos, Greasidou & Borboudakis (2018), §4, Algorithm 1: each bootstrap
    replication draws units (examples, or groups) with replacement, selects the
    candidate with the smallest mean out-of-sample loss on the in-bag draws and
    scores it on the out-of-bag examples.

    Attributes
    ----------
    loss : str
        The loss (the cube's name).
    estimate : xarray.DataArray
        0-d: mean over the replications of the winner's out-of-bag loss, the
        BBC-CV estimate of the selection procedure's error.
    ci : xarray.DataArray
        The ``1 - alpha`` interval (``interval_method``) from the replications'
        out-of-bag losses, on a ``ci_bound`` dim; its attrs hold the level and
        ``interval``.
    naive : xarray.DataArray
        0-d: the smallest mean CV loss over the candidates (the "best CV
        score", optimistic: the winner's curse).
    optimism : xarray.DataArray
        0-d: ``estimate - naive``, how much the best CV score flatters the search.
    best : str
        The candidate with the smallest mean CV loss.
    cv_loss : xarray.DataArray
        Mean CV loss of every candidate (dim ``model``).
    selected : xarray.DataArray
        Share of the replications that selected each candidate (dim ``model``).
    replicates : xarray.DataArray
        Out-of-bag loss of each used replication (dim ``bootstrap``).
    alpha : float
        Level of the interval.
    n_boot : int
        Replications drawn; ``n_used`` of them had an out-of-bag example (the
        others, which drew every unit, are left out).
    n_used : int
        Replications used.
    n_examples, n_units, n_repeats : int
        Examples, bootstrap units (examples, or groups when the cube has a
        ``group`` coordinate) and repeats of the K-fold.
    unit : str
        ``"example"`` or ``"group"``: what the bootstrap draws.
    interval_method : str
        ``"percentile"`` (the replications' percentiles, Tsamardinos et al.
        2018) or ``"rescaled"`` (those percentiles' distances from the
        estimate times :func:`cvstats.kernels.bbc.oob_scale` of ``n_units``,
        cvstats's calibration).
    """

    loss: str
    estimate: xr.DataArray
    ci: xr.DataArray
    naive: xr.DataArray
    optimism: xr.DataArray
    best: str
    cv_loss: xr.DataArray
    selected: xr.DataArray
    replicates: xr.DataArray
    alpha: float
    n_boot: int
    n_used: int
    n_examples: int
    n_units: int
    n_repeats: int
    unit: str
    interval_method: str = "percentile"

    value_fields: ClassVar[tuple[str, ...]] = ("estimate", "ci", "naive", "optimism")
    frame_columns: ClassVar[tuple[str, ...]] = (
        "estimate",
        "ci_lower",
        "ci_upper",
        "naive",
        "optimism",
        "best",
        "alpha",
        "interval",
        "n_boot",
        "n_used",
        *_SIZE_COLUMNS,
    )

    def __post_init__(self) -> None:
        self._coerce_values()

    def to_frame(self) -> pd.DataFrame:
        """Return one row: the estimate, its interval, the naive score and the sizes."""
        low, high = split_interval(self.ci)
        row: dict[str, Any] = {
            "estimate": float(self.estimate),
            "ci_lower": float(low),
            "ci_upper": float(high),
            "naive": float(self.naive),
            "optimism": float(self.optimism),
            "best": self.best,
            "alpha": self.alpha,
            "interval": self.interval_method,
            "n_boot": self.n_boot,
            "n_used": self.n_used,
            "n_examples": self.n_examples,
            "n_units": self.n_units,
            "n_repeats": self.n_repeats,
            "unit": self.unit,
        }
        return pd.DataFrame([row], columns=list(self.frame_columns))

    def interval(self, alpha: float | None = None) -> xr.DataArray:
        """Return the interval (``interval_method``) at level ``1 - alpha``.

        Parameters
        ----------
        alpha : float, optional
            Level; default the result's. Another level takes other percentiles
            of the same replications.
        """
        if alpha is None or alpha == self.alpha:
            return self.ci
        return bbc_interval(
            self.replicates.values, validate_alpha(alpha), self.interval_method, self.n_units
        )

    def conf_int(self, alpha: float | None = None) -> ConfidenceInterval:
        """Return the tuple view ``(low, high)`` of :meth:`interval`."""
        return split_interval(self.interval(alpha))

    def _caption(self) -> str:
        n = self.cv_loss.sizes["model"]
        return f"BBC-CV: {self.loss} of the selection among {n} candidates"

    def _display_details(self) -> list[str]:
        return [
            f"{self.n_used} of {self.n_boot} bootstrap replications over {self.n_units} "
            f"{self.unit}s; {self.n_examples} examples × {self.n_repeats} repeat(s); "
            f"{self.interval_method} interval at level {1 - self.alpha:g}"
        ]

    def _summary_info(self, **options: Any) -> list[tuple[str, str]]:
        return [
            ("Result:", self._caption()),
            ("Best by CV:", self.best),
            ("Level:", f"{1 - self.alpha:g}"),
            ("Interval:", self.interval_method),
            ("Replications:", f"{self.n_used} of {self.n_boot} ({self.unit}s)"),
        ]

    def verdict(self) -> Verdict:
        """Return the estimate next to the naive best CV score, in plain words."""
        low, high = (float(v) for v in split_interval(self.ci))
        level = f"{100 * (1 - self.alpha):g}%"
        noun = self.loss if self.loss.endswith("loss") else f"{self.loss} loss"
        return Verdict(
            f"Choosing the best of {self.cv_loss.sizes['model']} candidates by CV "
            f"(here {self.best}, mean {noun} {float(self.naive):.4g}) is expected to give "
            f"{noun} {float(self.estimate):.4g} ({level} {self.interval_method} interval "
            f"[{low:.4g}, {high:.4g}]); "
            f"the best CV score is optimistic by {float(self.optimism):.4g} (BBC-CV, "
            "Tsamardinos et al. 2018)."
        )


def bbc_interval(replicates: np.ndarray, alpha: float, method: str, n_units: int) -> xr.DataArray:
    """Return BBC-CV's ``1 - alpha`` interval from its out-of-bag ``replicates`` (``ci_bound``).

    ``method`` ``"percentile"``: their ``alpha/2`` and ``1 - alpha/2`` quantiles
    (Tsamardinos et al. 2018); ``"rescaled"``: those quantiles' distances from
    the replicates' mean times :func:`cvstats.kernels.bbc.oob_scale` of
    ``n_units`` (:func:`cvstats.kernels.bbc.rescaled_percentiles`). The attrs
    hold the level and ``interval``.
    """
    if method == "percentile":
        low, high = np.quantile(replicates, [alpha / 2, 1 - alpha / 2])
    else:
        low, high = rescaled_percentiles(replicates, alpha, oob_scale(n_units))
    out = bounds(xr.DataArray(low), xr.DataArray(high), alpha=alpha)
    out.attrs["interval"] = method
    return out


def _label_params(labels: list[str]) -> list[dict[str, str]] | None:
    """Read the ``name=value`` pairs of each candidate label (None: a label has none).

    Reads the labels of :func:`cvstats.from_cv_results` and
    :func:`cvstats.designs.grid_models` (``"C=0.1, penalty=l2"``, a repeated one
    suffixed ``" [candidate i]"``).
    """
    out = []
    for label in labels:
        parts = [p.partition("=") for p in _ROW_SUFFIX.sub("", label).split(", ")]
        if not all(eq and name for name, eq, _ in parts):
            return None
        out.append({name: value for name, _, value in parts})
    return out


def _as_numbers(values: list[str]) -> np.ndarray | None:
    """``values`` as floats, or None when one is not a number."""
    try:
        return np.array([float(v) for v in values])
    except ValueError:
        return None


class _ConfidenceSet:
    """What a set of candidates as good as the best says: its members and its verdict.

    For a result with ``mean_loss``, ``pvalue``, ``in_set`` (over ``model``), ``alpha``,
    ``n_boot``, ``n_units``, ``unit`` and ``_method()``, the method in words.
    """

    mean_loss: xr.DataArray
    alpha: float
    n_boot: int
    n_units: int
    unit: str

    def __post_init__(self) -> None:
        self._coerce_values()  # type: ignore[attr-defined]

    #: The method in words (each result class defines it: MCS, CVC).
    _method: Callable[[], str]

    @property
    def members(self) -> list[str]:
        """The candidates in the set, from the smallest mean loss."""
        frame = self.to_frame().sort_values("mean_loss", kind="stable")  # type: ignore[attr-defined]
        return [str(m) for m in frame.loc[frame["in_set"], "model"]]

    def _display_details(self) -> list[str]:
        return [
            f"{len(self.members)} of {self.mean_loss.sizes['model']} in the set at level "
            f"{1 - self.alpha:g}; {self.n_boot} bootstrap replications over {self.n_units} "
            f"{self.unit}s"
        ]

    def plot(self, param: str | None = None, *, ax: Any = None) -> Any:
        """Draw each candidate's p-value, along a hyper-parameter when the labels carry one.

        With labels of the form ``"alpha=0.1, fit_intercept=True"`` (those of
        :func:`cvstats.from_cv_results` and :func:`cvstats.designs.grid_models`),
        the x axis is the parameter ``param`` (log-scaled when its values are
        positive numbers spanning a factor of 100 or more), one line per
        setting of the other varying parameters; otherwise the candidates, in
        order. Members of the set are filled markers, the others hollow; the
        dashed line is ``alpha``: a candidate above it is in the set.

        Parameters
        ----------
        param : str, optional
            The parameter on the x axis; default the only one that varies
            across the candidates.
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; default a new figure.

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        ArgumentError
            ``param`` is not a parameter of the labels, or is None while
            several parameters vary (name one), or is given while the labels
            carry no parameters.
        """
        import matplotlib.pyplot as plt

        frame = self.to_frame()  # type: ignore[attr-defined]
        labels = [str(m) for m in frame["model"]]
        params = _label_params(labels)
        x_name, groups = self._plot_axis(params, param, labels)
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 3.5))
        x_all = _as_numbers([p[x_name] for p in params]) if params and x_name else None
        for name, rows in groups.items():
            if x_all is not None:
                rows = sorted(rows, key=lambda i: x_all[i])
                x = x_all[rows]
            else:
                x = np.asarray(rows, dtype=float)
            y = frame["pvalue"].to_numpy()[rows]
            member = frame["in_set"].to_numpy()[rows].astype(bool)
            (line,) = ax.plot(x, y, "-", lw=1, label=name)
            ax.scatter(x[member], y[member], color=line.get_color(), zorder=3)
            ax.scatter(x[~member], y[~member], facecolors="none", edgecolors=line.get_color())
        if x_all is None:
            names = [
                params[i][x_name] if params and x_name else labels[i] for i in range(len(labels))
            ]
            ax.set_xticks(range(len(labels)), names, rotation=90 if len(labels) > 8 else 0)
        elif (x_all > 0).all() and x_all.max() >= 100 * x_all.min():
            ax.set_xscale("log")
        ax.axhline(self.alpha, color="grey", ls="--", lw=1)
        ax.set_xlabel(x_name or "candidate")
        ax.set_ylabel(f"p-value ({self._method()})")
        ax.set_ylim(-0.02, 1.02)
        if len(groups) > 1:
            ax.legend(fontsize=8)
        ax.set_title(self._caption(), fontsize=9)  # type: ignore[attr-defined]
        ax.figure.tight_layout()
        return ax

    def _plot_axis(
        self, params: list[dict[str, str]] | None, param: str | None, labels: list[str]
    ) -> tuple[str | None, dict[str, list[int]]]:
        """Return the x parameter and the rows of each setting of the other varying ones."""
        if params is None:
            if param is not None:
                raise ArgumentError(
                    f"`param` {param!r} given, but the model labels carry no parameters "
                    f"(e.g. {labels[0]!r}); label them 'name=value, ...', as "
                    "cvstats.designs.grid_models does, or call plot() without `param`."
                )
            return None, {"": list(range(len(labels)))}
        names = list(dict.fromkeys(k for p in params for k in p))
        varying = [k for k in names if len({p.get(k) for p in params}) > 1]
        if param is None:
            if len(varying) > 1:
                raise ArgumentError(
                    f"the candidates vary in {varying}; name the one on the x axis, e.g. "
                    f"plot(param={varying[0]!r})."
                )
            param = varying[0] if varying else names[0]
        if param not in names:
            raise ArgumentError(
                f"`param` must be one of the labels' parameters {names}, got {param!r}."
            )
        others = [k for k in varying if k != param]
        groups: dict[str, list[int]] = {}
        for i, p in enumerate(params):
            key = ", ".join(f"{k}={p.get(k, '-')}" for k in others)
            groups.setdefault(key, []).append(i)
        return param, groups

    def verdict(self) -> Verdict:
        """Return how many candidates are as good as the best, and which."""
        members = self.members
        n = self.mean_loss.sizes["model"]
        level = f"{100 * (1 - self.alpha):g}%"
        shown = ", ".join(members[:10]) + (
            f", … ({len(members) - 10} more)" if len(members) > 10 else ""
        )
        return Verdict(
            f"{len(members)} of {n} candidates are as good as the best at {level}: {shown} "
            f"({self._method()})."
        )


@dataclass(frozen=True, repr=False)
class MCSResult(_ConfidenceSet, Result):
    """The model confidence set: the candidates as good as the best, at a level.

    Hansen, Lunde & Nason (2011, Econometrica 79(2)): the set contains the
    best candidate(s) with probability at least ``1 - alpha`` (asymptotically);
    a candidate's p-value is the smallest ``alpha`` at which it leaves the set.

    Attributes
    ----------
    loss : str
        The loss (the cube's name).
    mean_loss : xarray.DataArray
        Mean CV loss of each candidate (dim ``model``).
    pvalue : xarray.DataArray
        MCS p-value of each candidate (dim ``model``).
    in_set : xarray.DataArray
        Whether the candidate is in the set at level ``1 - alpha``
        (``pvalue > alpha``; dim ``model``).
    step : xarray.DataArray
        The elimination step at which the candidate left the set (1 first);
        the survivors of every step get one more than the last step.
    statistic : str
        ``"R"`` (``T_R``) or ``"max"`` (``T_max``).
    alpha : float
        The set's level is ``1 - alpha``.
    n_boot : int
        Bootstrap replications.
    n_examples, n_units, n_repeats : int
        Examples, bootstrap units (examples, or groups) and K-fold repeats.
    unit : str
        ``"example"`` or ``"group"``: what the bootstrap draws.
    """

    loss: str
    mean_loss: xr.DataArray
    pvalue: xr.DataArray
    in_set: xr.DataArray
    step: xr.DataArray
    statistic: str
    alpha: float
    n_boot: int
    n_examples: int
    n_units: int
    n_repeats: int
    unit: str

    value_fields: ClassVar[tuple[str, ...]] = ("mean_loss", "pvalue", "in_set", "step")
    frame_columns: ClassVar[tuple[str, ...]] = (
        *value_fields,
        "statistic",
        "alpha",
        "n_boot",
        *_SIZE_COLUMNS,
    )

    def _method(self) -> str:
        return f"model confidence set, T_{self.statistic}, Hansen, Lunde & Nason 2011"

    def _caption(self) -> str:
        n = self.mean_loss.sizes["model"]
        return f"Model confidence set (T_{self.statistic}) of {n} candidates, {self.loss}"


@dataclass(frozen=True, repr=False)
class CVCResult(_ConfidenceSet, Result):
    """Cross-validation with confidence: the candidates not shown worse than the best.

    Lei (2020, JASA 115, §3): candidate ``m`` stays in the set unless the test
    of "``m`` is the best" (its largest standardized mean loss difference with
    another candidate, against a Gaussian multiplier bootstrap) rejects at
    ``alpha``; the set contains the best candidate with probability at least
    ``1 - alpha`` (asymptotically).

    Attributes
    ----------
    loss : str
        The loss (the cube's name).
    mean_loss : xarray.DataArray
        Mean CV loss of each candidate (dim ``model``).
    pvalue : xarray.DataArray
        p-value of "this candidate is the best" (dim ``model``).
    in_set : xarray.DataArray
        ``pvalue > alpha`` (dim ``model``).
    alpha : float
        The set's level is ``1 - alpha``.
    n_boot : int
        Bootstrap replications.
    n_examples, n_units, n_folds : int
        Examples, multiplier units (examples, or groups) and folds.
    unit : str
        ``"example"`` or ``"group"``: what carries one multiplier.
    """

    loss: str
    mean_loss: xr.DataArray
    pvalue: xr.DataArray
    in_set: xr.DataArray
    alpha: float
    n_boot: int
    n_examples: int
    n_units: int
    n_folds: int
    unit: str

    value_fields: ClassVar[tuple[str, ...]] = ("mean_loss", "pvalue", "in_set")
    frame_columns: ClassVar[tuple[str, ...]] = (
        *value_fields,
        "alpha",
        "n_boot",
        "n_examples",
        "n_units",
        "n_folds",
        "unit",
    )

    def _method(self) -> str:
        return "cross-validation with confidence, Lei 2020"

    def _caption(self) -> str:
        n = self.mean_loss.sizes["model"]
        return f"Cross-validation with confidence of {n} candidates, {self.loss}"
