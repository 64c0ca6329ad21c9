"""The Diebold–Mariano test of equal predictive accuracy on time-ordered splits.

Diebold & Mariano (1995), §1.1, with the small-sample correction of Harvey,
Leybourne & Newbold (1997), eq. (9). A forward-chaining design
(``TimeSeriesSplit``: every split trains on the past and tests the next
periods) tests each out-of-sample period once; the per-example loss
differences ``d_t`` of those periods, in time order, are one series whose
mean is tested with a variance that allows for their autocorrelation. The
long-run variance is statsmodels' HAC sum
(:func:`statsmodels.stats.sandwich_covariance.S_hac_simple`), which is why the
numeric part lives here and not in :mod:`cvstats.kernels` (numpy and scipy
only).
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
import xarray as xr
from numpy.typing import NDArray

from cvstats.checks import check_float_range
from cvstats.cube import in_test
from cvstats.cube.compact import EXAMPLE_INDEX, SLOT
from cvstats.cube.dense import NESTED_TRAIN, time_ordered
from cvstats.cube.dense import TIME_ORDERED as ORDERED_ATTR
from cvstats.cube.schema import EXAMPLE, SPLIT
from cvstats.errors import ArgumentError, CvstatsWarning, DesignError
from cvstats.inference.engine import Call, Check, Choice, method
from cvstats.inference.registry import LIBERAL_FLAG, DesignKind, MethodSpec
from cvstats.kernels._core import StatArrays, statistic_from_variance
from cvstats.results import InferenceResult

__all__ = ["DM_VARIANTS", "TIME_ORDERED", "bartlett_lags", "diebold_mariano", "hln_factor"]

#: The long-run variance estimators: Diebold & Mariano's truncated (rectangular) window up
#: to lag ``h - 1``, and Newey & West's Bartlett weights up to :func:`bartlett_lags`.
DM_VARIANTS = ("rectangular", "bartlett")

_NAME = "diebold_mariano"

#: Columns of loss differences handed to statsmodels at once (its HAC sum is a k x k
#: matrix, of which the diagonal is kept).
_COLUMNS = 64


def _main_positions(cube: xr.DataArray) -> np.ndarray:
    """Positions along ``split`` of the main block's splits (empty if none)."""
    return np.flatnonzero(np.asarray(cube["block"].values) == "main")


def _tested(main: xr.DataArray) -> xr.DataArray:
    """Position along ``example`` of each tested value of the main block, -1 elsewhere.

    ``(*extra, split, example)`` for a dense cube; ``(*extra, split, slot)`` for a
    compact one (its ``example_index``). In memory: the test mask is read here.
    """
    if SLOT in main.dims:
        return main[EXAMPLE_INDEX].astype(np.int64)
    mask = in_test(main)
    arange = np.arange(main.sizes[EXAMPLE], dtype=np.int64)
    return mask.copy(data=np.where(np.asarray(mask.values), arange, -1))


def _repeats(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted tested positions per slice, and where a position repeats (tested twice).

    ``positions`` ``(..., split, over)``; returns ``(sorted, repeated)`` of shape
    ``(slices, split * over)`` and ``(slices, split * over - 1)``.
    """
    flat = np.sort(positions.reshape(-1, positions.shape[-2] * positions.shape[-1]), axis=-1)
    return flat, (flat[:, 1:] == flat[:, :-1]) & (flat[:, 1:] >= 0)


def _is_time_ordered(cube: xr.DataArray) -> bool:
    """Whether a cube is of the ``time_ordered`` design kind (:data:`TIME_ORDERED`).

    Time-ordered splits (attr ``nested_train`` or ``time_ordered`` = 1:
    :func:`~cvstats.cube.dense.time_ordered`) and a main block of ``J >= 2``
    splits whose test sets do not overlap (not read on a score cube, which has no
    per-example losses: the methods that need them are left out of it anyway).
    """
    if not time_ordered(cube) or "block" not in cube.coords:
        return False
    pos = _main_positions(cube)
    if pos.size < 2:
        return False
    if EXAMPLE not in cube.dims and SLOT not in cube.dims:
        return True
    return not _repeats(np.asarray(_tested(cube.isel({SPLIT: pos})).values))[1].any()


def _example(n: int) -> xr.Dataset:
    """Return a forward-chaining design of ``n`` examples: ``TimeSeriesSplit(4)``."""
    from sklearn.model_selection import TimeSeriesSplit

    from cvstats.designs import from_splitter

    return from_splitter(TimeSeriesSplit(4), n=n)


#: The design kind of the forward-chaining splits the Diebold–Mariano test reads.
TIME_ORDERED = DesignKind(
    "time_ordered",
    "time-ordered splits (TimeSeriesSplit, growing or sliding windows), J >= 2 test sets "
    "that do not overlap",
    test=_is_time_ordered,
    example=_example,
)


def _check_horizon(horizon: Any) -> int:
    """Return ``horizon`` if it is a positive int, else raise an ArgumentError."""
    if isinstance(horizon, bool) or not isinstance(horizon, numbers.Integral) or horizon < 1:
        raise ArgumentError(
            f"`horizon` must be a positive int (the forecast horizon h: autocovariances up to "
            f"lag h - 1 enter the variance), got {horizon!r}."
        )
    return int(horizon)


def bartlett_lags(T: int, horizon: int) -> int:
    """Return the lag of ``variant="bartlett"``: ``max(h - 1, floor(4 (T/100)^(2/9)))``.

    Newey & West's (1994) rule of thumb, statsmodels' default in ``S_hac_simple``;
    never fewer lags than the horizon implies.
    """
    return max(horizon - 1, int(np.floor(4 * (T / 100.0) ** (2.0 / 9.0))))


def _long_run_variance(x: NDArray[np.float64], horizon: int, variant: str) -> np.ndarray:
    """``γ̂_0 + 2 Σ_{k=1}^{L} w_k γ̂_k`` of each column of the centred ``x`` ``(T, k)``.

    statsmodels' HAC sum (``S_hac_simple``) over ``T``: ``"rectangular"``, uniform
    weights up to ``L = h - 1`` (Diebold & Mariano's truncated window);
    ``"bartlett"``, ``w_k = 1 - k/(L + 1)`` up to ``L =`` :func:`bartlett_lags`
    (Newey & West). The autocovariances ``γ̂_k`` divide by ``T``.
    """
    from statsmodels.stats.sandwich_covariance import (
        S_hac_simple,
        weights_bartlett,
        weights_uniform,
    )

    T = x.shape[0]
    if variant == "rectangular":
        weights, lags = weights_uniform, horizon - 1
    else:
        weights, lags = weights_bartlett, bartlett_lags(T, horizon)
    out = np.empty(x.shape[1])
    for start in range(0, x.shape[1], _COLUMNS):
        block = x[:, start : start + _COLUMNS]
        hac = S_hac_simple(block, nlags=lags, weights_func=weights)
        out[start : start + _COLUMNS] = np.diag(hac)
    return out / T


def hln_factor(T: Any, horizon: int) -> Any:
    """Harvey, Leybourne & Newbold's (1997) factor ``sqrt((T + 1 - 2h + h(h - 1)/T) / T)``.

    ``DM* = factor · DM``, compared with ``t_{T-1}`` (their eq. (9)); positive for
    ``T > h``.
    """
    T = np.asarray(T, dtype=np.float64)
    return np.sqrt((T + 1.0 - 2.0 * horizon + horizon * (horizon - 1.0) / T) / T)


def _dm_arrays(
    losses: NDArray[np.float64],
    positions: NDArray[np.int64],
    *,
    mu0: float,
    horizon: int,
    variant: str,
) -> StatArrays:
    """``(d̄, stderr, DM*, T - 1)`` of each batch slice (docs/methods.md, "Diebold–Mariano test").

    ``losses`` ``(..., split, over)``: loss differences of the main block;
    ``positions`` (broadcast to them): each value's position in time, -1 where
    not tested. The tested values of a slice, ordered by position, are its
    series ``d_1..d_T``; slices with the same positions are stacked as columns
    of one statsmodels call. ``stderr = sqrt(V̂/T) / c`` with ``c`` the HLN
    factor, so that ``(d̄ - μ0) / stderr`` is DM* and ``d̄ ± t_{T-1} stderr``
    the interval the test inverts.
    """
    shape = losses.shape[:-2]
    flat = losses.reshape(-1, losses.shape[-2] * losses.shape[-1])
    where = np.broadcast_to(positions, losses.shape).reshape(flat.shape)
    mean, lrv, gamma0, count = (np.full(flat.shape[0], np.nan) for _ in range(4))
    patterns, group = np.unique(where, axis=0, return_inverse=True)
    series: list[np.ndarray] = []
    for g, pattern in enumerate(patterns):
        rows = np.flatnonzero(group.ravel() == g)
        tested = np.flatnonzero(pattern >= 0)
        d = flat[np.ix_(rows, tested[np.argsort(pattern[tested], kind="stable")])]
        with np.errstate(over="ignore", invalid="ignore"):  # overflow: an error, raised below
            mean[rows] = d.mean(axis=1)
            x = (d - mean[rows, None]).T
            gamma0[rows] = (x**2).mean(axis=0)
            lrv[rows] = _long_run_variance(x, horizon, variant)
        count[rows] = d.shape[1]
        series.append(d)
    width = max(s.shape[1] for s in series)
    values = np.full((flat.shape[0], width), np.nan)
    for g, d in enumerate(series):
        values[np.flatnonzero(group.ravel() == g), : d.shape[1]] = d
    what = "the variance γ̂_0 of the loss differences"
    check_float_range(values, gamma0, method=_NAME, what=what, of="loss differences")
    negative = lrv < 0
    if negative.any():
        warnings.warn(
            f"{_NAME}: the rectangular-window long-run variance γ̂_0 + 2 Σ γ̂_k (lags 1..h-1, "
            f"h = {horizon}) is negative in {int(negative.sum())} of {negative.size} batch "
            "element(s) (negative autocovariances outweigh γ̂_0); the statistic there is nan. "
            "Pass variant='bartlett' (Newey–West weights, never negative).",
            CvstatsWarning,
            stacklevel=2,
        )
        lrv = np.where(negative, np.nan, lrv)
    factor = hln_factor(count, horizon)
    stat = statistic_from_variance(
        mean,
        lrv / count / factor**2,
        count - 1.0,
        mu0,
        method=_NAME,
        what=f"the long-run variance of the loss differences ({variant}, h = {horizon})",
        why="all out-of-sample loss differences are equal",
    )
    return StatArrays(*(np.reshape(a, shape) for a in stat))


def _check_series(positions: np.ndarray, horizon: int) -> int:
    """Refuse a main block whose tested examples are not one series; return its length ``T``.

    Every example tested at most once, the tested examples consecutive, and
    ``T > h`` (the HLN factor is positive for ``T > h`` only); the largest ``T``
    of the slices is returned (reported as ``n2``).
    """
    flat, twice = _repeats(positions)
    if twice.any():
        example = int(flat[:, 1:][twice][0])
        raise DesignError(
            f"{_NAME} reads each out-of-sample period once, but the example at position "
            f"{example} is tested by more than one split of the main block (the test sets "
            "overlap). Forward-chaining splits test disjoint, later chunks "
            "(sklearn.model_selection.TimeSeriesSplit); select splits whose test sets do "
            "not overlap."
        )
    for row in flat:
        tested = row[row >= 0]
        gaps = np.flatnonzero(np.diff(tested) > 1)
        if gaps.size:
            a, b = int(tested[gaps[0]]), int(tested[gaps[0] + 1])
            raise DesignError(
                f"{_NAME} reads the out-of-sample periods as one series, but the test sets of "
                f"the main block skip examples {a + 1}..{b - 1} (positions along `example`) "
                f"between {a} and {b}; the autocovariances would join periods that are not "
                "adjacent. Test consecutive chunks (TimeSeriesSplit), or select the splits of "
                "one run of consecutive test sets."
            )
    counts = (flat >= 0).sum(axis=-1)
    T = int(counts.min())
    if T <= horizon:
        raise DesignError(
            f"{_NAME} with horizon h = {horizon} needs more than h out-of-sample periods "
            f"(the HLN correction is defined for T > h), but the main block tests {T}."
        )
    return int(counts.max())


def _check_time_stamps(main: xr.DataArray) -> None:
    """Refuse time stamps on ``example`` that do not increase (the order read is the positions)."""
    if EXAMPLE not in main.coords:
        return
    stamps = np.asarray(main[EXAMPLE].values)
    if np.issubdtype(stamps.dtype, np.datetime64) and (np.diff(stamps) <= np.timedelta64(0)).any():
        at = int(np.flatnonzero(np.diff(stamps) <= np.timedelta64(0))[0])
        raise DesignError(
            f"{_NAME} reads the examples in their order along `example` as the time order, but "
            f"its time stamps do not increase ({stamps[at]} at position {at}, then "
            f"{stamps[at + 1]}); sort the cube by time first (cube.sortby('example')) and "
            "build its splits on the sorted data."
        )


@method(
    MethodSpec(
        name=_NAME,
        title="Diebold–Mariano (h = {horizon}, {variant} window, HLN)",
        design=TIME_ORDERED,
        kernel="HAC long-run variance by statsmodels (S_hac_simple)",
        estimand="conditional",
        target="model",
        reference="t",
        direction=(
            "ignores the estimation of the models (West, 1996): valid for the forecasts "
            "made, liberal for the learners unless that effect vanishes"
        ),
        short="liberal",
        flag=LIBERAL_FLAG,
        rank=9,
        reason=(
            "the loss differences of every out-of-sample period in time order, with a HAC "
            "variance (time-ordered splits)"
        ),
        source=("Diebold & Mariano (1995), §1.1; Harvey, Leybourne & Newbold (1997), eq. (9)"),
        fits="J",
        row=180,
        needs="examples",
        random_splits=False,
        checks={
            "horizon": Check(_check_horizon, (1, 2, 3)),
            "variant": Choice(DM_VARIANTS),
        },
    )
)
def diebold_mariano(
    call: Call, *, horizon: int = 1, variant: str = "rectangular"
) -> InferenceResult:
    """Diebold–Mariano test of equal predictive accuracy, with the HLN correction.

    On a forward-chaining design (``TimeSeriesSplit``, with growing windows or a
    sliding one: attr ``nested_train`` or ``time_ordered`` = 1, the main block's
    test sets disjoint), the loss differences ``d_t`` of the
    ``T`` out-of-sample periods (the test examples of the main block's splits,
    in time order: their order along ``example``) are one series;
    ``d̄ = mean(d_t)`` and ``V̂ = γ̂_0 + 2 Σ_{k=1}^{L} w_k γ̂_k`` (``L = h - 1``) with
    ``γ̂_k = (1/T) Σ_t (d_t - d̄)(d_{t-k} - d̄)`` (Diebold & Mariano 1995,
    §1.1), computed by statsmodels' HAC sum. The statistic
    ``DM* = c (d̄ - μ0) / sqrt(V̂/T)`` with Harvey, Leybourne & Newbold's
    (1997, eq. (9)) factor ``c = sqrt((T + 1 - 2h + h(h - 1)/T) / T)`` is
    compared with ``t_{T-1}``. See docs/methods.md ("Diebold–Mariano test").

    It tests equal expected loss of the forecasts the fitted models made over
    the out-of-sample period (``estimand="conditional"``, ``target="model"``):
    like every test on a cube of one model, ``d_t`` is a model's own loss and
    the null its mean ``mu0``. It treats the forecasts as given, so it ignores
    the estimation of the models (West, 1996): liberal for the learners.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube (or contrast cube) of forward-chaining splits, e.g. built on
        ``cvstats.designs.from_splitter(TimeSeriesSplit(...), X)``.
    %(test_options)s
    horizon : int, default 1
        The forecast horizon ``h``: each test example is forecast ``h`` steps
        ahead, so ``d_t`` is autocorrelated up to lag ``h - 1`` (an MA(h - 1)
        under the null) and those lags enter ``V̂``. Needs ``T > h``.
    variant : {"rectangular", "bartlett"}, default "rectangular"
        The long-run variance ``V̂``. ``"rectangular"``: ``w_k = 1`` up to lag
        ``h - 1`` (Diebold & Mariano's truncated window: exact for the MA(h - 1)
        loss differences of optimal h-step forecasts, and the estimator HLN
        derived their correction for; it can be negative for ``h >= 2``, then
        the statistic is nan with a warning). ``"bartlett"``: Newey & West's
        (1987) ``w_k = 1 - k/(L + 1)`` up to ``L = max(h - 1, floor(4 (T/100)^(2/9)))``
        (Newey & West's 1994 rule, statsmodels' default): never negative, and
        consistent for autocorrelation beyond lag ``h - 1`` (e.g. an AR(1)),
        with the HLN factor applied as to the rectangular one.

    %(returns_inference_result)s
        ``stderr`` is ``sqrt(V̂/T) / c``, so that ``statistic = (d̄ - μ0) /
        stderr`` and the interval ``d̄ ± t_{T-1} stderr`` is the set of ``mu0``
        the test does not reject; ``df = T - 1``; ``n2 = T``; ``n1`` the last
        split's training size.

    Raises
    ------
    DesignError
        If the splits are not time-ordered (attrs ``time_ordered``,
        ``nested_train``), the main
        block has fewer than 2 splits, an example is tested by two splits, the
        tested examples skip some, ``T <= h``, or the ``example`` coordinate
        holds time stamps that do not increase.

    Warns
    -----
    CvstatsWarning
        Where the rectangular-window variance is negative.

    References
    ----------
    .. [1] Diebold, F. X. & Mariano, R. S. (1995). Comparing predictive accuracy.
       *Journal of Business & Economic Statistics* 13(3), 253–263.
    .. [2] Harvey, D., Leybourne, S. & Newbold, P. (1997). Testing the equality of
       prediction mean squared errors. *International Journal of Forecasting*
       13(2), 281–291.
    .. [3] Newey, W. K. & West, K. D. (1987). A simple, positive semi-definite,
       heteroskedasticity and autocorrelation consistent covariance matrix.
       *Econometrica* 55(3), 703–708.
    .. [4] Newey, W. K. & West, K. D. (1994). Automatic lag selection in covariance
       matrix estimation. *Review of Economic Studies* 61(4), 631–653.
    .. [5] West, K. D. (1996). Asymptotic inference about predictive ability.
       *Econometrica* 64(5), 1067–1084.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from sklearn.model_selection import TimeSeriesSplit
    >>> d = cvstats.designs.from_splitter(TimeSeriesSplit(4), n=50)
    >>> losses = np.random.default_rng(0).random((4, 50, 2))
    >>> cube = cvstats.from_arrays(losses, design=d, models=["a", "b"])
    >>> res = cvstats.diebold_mariano(cvstats.pairwise(cube), horizon=2)
    >>> res.n2, res.df.item()
    (40, 39.0)
    """
    cube = call.cube
    if not time_ordered(cube):
        raise DesignError(
            f"{_NAME} needs time-ordered splits, each training on the past and testing later "
            f"examples (attr `{ORDERED_ATTR}` or `{NESTED_TRAIN}` = 1, as "
            "cvstats.designs.from_splitter records for TimeSeriesSplit), but this cube has "
            "neither; build the design with from_splitter(TimeSeriesSplit(...), X), declare "
            "the examples a time series with from_splitter(cv, X, time_ordered=True), or set "
            f"cube.attrs[{ORDERED_ATTR!r}] = 1."
        )
    pos = _main_positions(cube)
    if pos.size < 2:
        raise DesignError(
            f"{_NAME} needs a main block of J >= 2 time-ordered splits, got {pos.size}; for one "
            "split use holdout_t."
        )
    main = cube.isel({SPLIT: pos})
    _check_time_stamps(main)
    where = _tested(main)
    T = _check_series(np.asarray(where.values), horizon)
    over = SLOT if SLOT in main.dims else EXAMPLE
    stat = call.kernel(
        _dm_arrays,
        [main, where],
        [[SPLIT, over], [SPLIT, over]],
        mu0=call.mu0,
        horizon=horizon,
        variant=variant,
    )
    n1 = int(np.asarray(main["n_train"].values).max())
    return call.test(
        stat,
        n1=n1,
        n2=T,
        n_splits=int(pos.size),
        params={"horizon": horizon, "variant": variant},
    )
