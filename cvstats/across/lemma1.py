"""Fit the Lemma-1 structure across many independent datasets (docs/theory.md §5).

The estimator layer over :mod:`cvstats.kernels.lemma1`: named dims are mapped
to the kernel's axes by :func:`cvstats.cube.apply.apply_kernel` (one
``xarray.apply_ufunc`` bridge), so every other dim is vectorized over and
dask-backed arrays stay lazy. Results are
:class:`~cvstats.results.estimates.EstimatesResult` objects (results holding
an :class:`xarray.Dataset`, read like one) whose intervals lie on a
``ci_bound`` dim with coordinates ``["lower", "upper"]`` (:data:`CI_BOUND`
and :func:`bounds` come from :mod:`cvstats.results.base`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np
import scipy
import xarray as xr

from cvstats._deprecation import renamed_argument
from cvstats.cube.apply import apply_kernel
from cvstats.cube.checks import validate_alpha
from cvstats.errors import ArgumentError, CvstatsTypeError, DesignError
from cvstats.inference.common import check_not_time_ordered
from cvstats.kernels.lemma1 import lemma1_components, lemma1_fit
from cvstats.results.base import CI_BOUND, as_dataarray, bounds
from cvstats.results.estimates import EstimatesResult

__all__ = [
    "CI_BOUND",
    "bounds",
    "fit_lemma1",
    "fit_components",
    "normal_interval",
    "with_interval",
]

_PARAMS = ("beta", "delta", "pi")


def normal_interval(estimate: xr.DataArray, stderr: xr.DataArray, alpha: float) -> xr.DataArray:
    """``estimate ± z_{1-α/2} stderr`` over a trailing ``ci_bound`` dim (lazy on dask)."""
    z = float(scipy.stats.norm.isf(alpha / 2))
    return bounds(estimate - z * stderr, estimate + z * stderr, alpha=alpha)


def with_interval(
    values: Mapping[str, tuple[xr.DataArray, xr.DataArray]], alpha: float
) -> dict[str, xr.DataArray]:
    """``{name, name_se, name_ci}`` variables from ``{name: (estimate, stderr)}``."""
    out: dict[str, xr.DataArray] = {}
    for name, (est, se) in values.items():
        out[name] = est
        out[f"{name}_se"] = se
        out[f"{name}_ci"] = normal_interval(est, se, alpha)
    return out


def _check_dims(
    T: object, dataset_dim: Hashable, member_dim: Hashable | None, what: str
) -> xr.DataArray:
    if not isinstance(T, xr.DataArray):
        raise CvstatsTypeError(f"`{what}` must be an xarray.DataArray, got {type(T).__name__}.")
    if member_dim is None:
        raise ArgumentError(
            "`member_dim` is required: the dim of the members of a row (e.g. 'split'), "
            f"one of {[str(d) for d in T.dims]}."
        )
    if dataset_dim == member_dim:
        raise ArgumentError(
            f"`dataset_dim` and `member_dim` must differ, got {dataset_dim!r} for both."
        )
    for arg, dim in (("dataset_dim", dataset_dim), ("member_dim", member_dim)):
        if dim not in T.dims:
            raise ArgumentError(
                f"`{arg}` = {dim!r} is not a dim of `{what}`; its dims are "
                f"{[str(d) for d in T.dims]}."
            )
    # members from the splits of nested training sets (TimeSeriesSplit) are no Lemma-1 row
    check_not_time_ordered(T, "the Lemma-1 fit")
    N, K = T.sizes[dataset_dim], T.sizes[member_dim]
    if N < 2:
        raise DesignError(
            f"the Lemma-1 fit needs at least 2 independent rows along `{dataset_dim}`, got {N}."
        )
    if K < 2:
        raise DesignError(
            f"the Lemma-1 fit needs at least 2 members along `{member_dim}`, got {K}."
        )
    return T


def _fit_kernel(T: np.ndarray) -> tuple[np.ndarray, ...]:
    fit = lemma1_fit(T)
    se = fit.stderr
    return (*np.moveaxis(fit.theta, -1, 0), *np.moveaxis(se, -1, 0))


def _components_kernel(T: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(v, dtype=float) for v in lemma1_components(T))


def fit_lemma1(
    T: xr.DataArray,
    dataset_dim: Hashable = "dataset",
    member_dim: Hashable | None = None,
    *,
    alpha: float = 0.05,
    sample_dim: Hashable | None = None,
) -> EstimatesResult:
    """Fit ``(β, δ, π)`` of Lemma 1 across independent rows (docs/theory.md §5).

    Every slice along ``dataset_dim`` is an independent row ``T_i`` whose ``K``
    members (along ``member_dim``) have the structure of Lemma 1 (docs/theory.md §2):
    common mean ``β``, variance ``δ`` and pairwise correlation ``π``. The
    estimating equations ``Σ_i g_i(θ) = 0`` of docs/theory.md §5 give
    ``β̂ = mean of all T``, ``δ̂ = mean of (T_{i,k} - β̂)²`` and
    ``π̂ = (K v̂/δ̂ - 1)/(K - 1)`` with ``v̂ = mean_i (T̄_i - β̂)²``; the standard
    errors come from the sandwich ``V = A⁻¹ B A⁻ᵀ`` and the intervals are
    ``θ̂ ± z_{1-α/2} sqrt(V_jj)`` (for ``β``: ``T̄ ± z sqrt((1/N²) Σ_i (T̄_i - T̄)²)``).
    See :func:`cvstats.kernels.lemma1_fit`.

    Parameters
    ----------
    T : xarray.DataArray
        The rows, with at least the dims ``dataset_dim`` and ``member_dim``;
        every other dim is a batch dim. numpy or dask backed (a dask-backed
        ``T`` gives a lazy result). No NaN.
    dataset_dim : hashable, default "dataset"
        Dim of the ``N >= 2`` independent rows (the datasets, as in every
        analysis across datasets).
    member_dim : hashable
        Dim of the ``K >= 2`` members of a row (e.g. the splits); required.
    alpha : float, default 0.05
        The intervals have level ``1 - alpha``.
    sample_dim : hashable, optional
        Old name of ``dataset_dim`` (FutureWarning).

    Returns
    -------
    EstimatesResult
        A result holding the Dataset of the variables over the batch dims of ``T``:
        ``beta``, ``delta``, ``pi``; their
        standard errors ``beta_se``, ``delta_se``, ``pi_se``; and intervals
        ``beta_ci``, ``delta_ci``, ``pi_ci`` over a trailing ``ci_bound`` dim
        (``["lower", "upper"]``). Attrs ``alpha``, ``N``, ``K``, ``sample_dim``
        (the ``dataset_dim`` given; the attr kept its name), ``member_dim`` and
        ``method``.

    Raises
    ------
    CvstatsTypeError
        If ``T`` is not a DataArray.
    ArgumentError
        If a dim is missing (or ``member_dim`` not given), both dims are the
        same, both ``dataset_dim`` and its old name ``sample_dim`` are given,
        ``alpha`` is not in ``(0, 1)``, or ``T`` holds NaN (at compute time for a
        dask-backed ``T``).
    DesignError
        If ``N < 2`` or ``K < 2``; if ``T`` carries the attr ``nested_train = 1``
        of a cube whose training sets are nested (``TimeSeriesSplit``): its
        splits are not exchangeable members of one row, as Lemma 1 needs.

    Warns
    -----
    ZeroVarianceWarning
        Where all values are equal (``δ̂ = 0``; ``π̂`` is NaN there).
    FutureWarning
        If ``sample_dim`` (the old name of ``dataset_dim``) is given.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from cvstats.across.lemma1 import fit_lemma1
    >>> rng = np.random.default_rng(0)
    >>> values = 1.0 + rng.normal(size=(400, 1)) + rng.normal(size=(400, 10))
    >>> T = xr.DataArray(values, dims=("dataset", "split"))
    >>> fit = fit_lemma1(T, "dataset", "split")
    >>> round(float(fit.pi), 1), fit.pi_ci.ci_bound.values.tolist()  # true π = 0.5
    (0.5, ['lower', 'upper'])
    """
    dataset_dim = renamed_argument(
        "sample_dim", "dataset_dim", sample_dim, dataset_dim, "fit_lemma1", default="dataset"
    )
    alpha = validate_alpha(alpha)
    T = _check_dims(T, dataset_dim, member_dim, "T")
    out = apply_kernel(_fit_kernel, [T], [[dataset_dim, member_dim]], 6)
    est = dict(zip(_PARAMS, out[:3], strict=True))
    se = dict(zip(_PARAMS, out[3:], strict=True))
    data = with_interval({p: (est[p], se[p]) for p in _PARAMS}, alpha)
    # (an interval keeps its level: bounds' attrs ``alpha`` and ``level``)
    data = {
        name: as_dataarray(value, keep_attrs=name.endswith("_ci")) for name, value in data.items()
    }
    ds = xr.Dataset(
        data,
        attrs={
            "method": "Lemma-1 estimating equations, sandwich variance (docs/theory.md §5)",
            "alpha": alpha,
            "N": int(T.sizes[dataset_dim]),
            "K": int(T.sizes[member_dim]),
            "sample_dim": str(dataset_dim),
            "member_dim": str(member_dim),
        },
    )
    return EstimatesResult.from_dataset(ds)


def fit_components(
    T: xr.DataArray, dataset_dim: Hashable, member_dim: Hashable
) -> dict[str, tuple[xr.DataArray, xr.DataArray]]:
    """``{name: (estimate, stderr)}`` for ``beta, delta, gamma, within, pi`` (delta method).

    See :func:`cvstats.kernels.lemma1_components`; same checks as :func:`fit_lemma1`.
    """
    T = _check_dims(T, dataset_dim, member_dim, "T")
    out = apply_kernel(_components_kernel, [T], [[dataset_dim, member_dim]], 10)
    out = tuple(as_dataarray(v, keep_attrs=False) for v in out)
    names = ("beta", "delta", "gamma", "within", "pi")
    return {name: (out[i], out[i + 5]) for i, name in enumerate(names)}
