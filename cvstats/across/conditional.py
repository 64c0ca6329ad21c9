"""Conditional vs. unconditional error across many datasets (docs/theory.md §1).

The survey seed (``conditional-vs-unconditional.txt``) distinguishes the
conditional error ``εc(L, T) = ε(L(T))`` of the model learned on the data at
hand from the unconditional error ``εu(L, N) = E_T[εc(L, T)]`` of the
learner. A cross-validation estimate ``ε̂(L, T, π)`` depends on the dataset
``T`` and on the random partition ``π``, and its variance splits as

``Var(ε̂) = Var_T(E_π[ε̂]) + E_T[Var_π(ε̂)]``

(sample variance + internal variance). With ``N`` independent datasets
(the survey's Algorithm 1: datasets drawn from a large population, the
conditional error of each measured on the rest of it) this module estimates
the two components (:func:`variance_decomposition`), the bias of CV for
``εc`` and ``εu`` (:func:`cv_bias`), and how often CV picks the model that is
truly better on the data at hand (:func:`winner_table`). Its result,
:class:`~cvstats.results.conditional.WinnerTable`, lives in
:mod:`cvstats.results.conditional` and is re-exported here.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from cvstats import kernels
from cvstats.across.lemma1 import bounds, fit_components, with_interval
from cvstats.across.rho import check_datasets, resolve_cube
from cvstats.cube import unit_dim, validate
from cvstats.cube.apply import apply_kernel
from cvstats.cube.checks import validate_alpha
from cvstats.cube.schema import EXAMPLE, MODEL, SPLIT
from cvstats.cube.score import examples_refusal, is_score, recorded_direction
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError, DesignError
from cvstats.inference.blocks import block_positions
from cvstats.results import EstimatesResult, as_dataarray
from cvstats.results.conditional import WinnerTable

__all__ = [
    "REPETITION",
    "TIES",
    "WinnerTable",
    "cv_estimates",
    "variance_decomposition",
    "cv_bias",
    "winner_table",
]

#: Name of the dim of repetitions of the cross-validation estimate.
REPETITION = "repetition"
#: Ways :func:`winner_table` can treat ties.
TIES = ("not_worse", "exclude")


# --------------------------------------------------------------------------
# the CV estimate of each repetition
# --------------------------------------------------------------------------


def cv_estimates(cube: xr.DataArray) -> xr.DataArray:
    """Cross-validation estimate ``ε̂`` of every repetition of the main block.

    A *repetition* is one repeat of a (repeated) k-fold main block (splits
    sharing a ``repeat`` index), or, when the main block holds random splits
    (``repeat = -1``), each main split on its own (a hold-out estimate).
    ``ε̂`` of a repetition is the mean of the per-example out-of-fold losses
    of that repetition, i.e. the sum of its test losses over the number of
    its test examples. For a k-fold repeat this is ``(1/n) Σ_i L(i)``, the
    fold means weighted by fold sizes; it equals the plain mean of the fold
    means when all folds have the same size.

    Parameters
    ----------
    cube : xarray.DataArray
        A (contrast) cube with a main block. Not validated here.

    Returns
    -------
    xarray.DataArray
        Dims ``(*extra, "repetition", model|contrast)``; the ``repetition``
        coordinate holds the ``repeat`` indices (k-fold) or ``0..J-1`` (random
        splits); attr ``repetition`` says which.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.across.conditional import cv_estimates
    >>> d = cvstats.designs.kfold(6, K=3, repeats=2, seed=0)
    >>> cube = cvstats.from_arrays(np.arange(36.0).reshape(6, 6, 1) % 6, design=d)
    >>> cv_estimates(cube).values.ravel().tolist()  # mean of the 6 examples' losses
    [2.5, 2.5]
    """
    if is_score(cube):
        raise CubeError(examples_refusal("cv_estimates (and variance_decomposition, cv_bias)"))
    pos = block_positions(cube, "main", "the cross-validation estimate")
    main = cube.isel({SPLIT: pos})
    repeat = np.asarray(main["repeat"].values)
    if (repeat >= 0).all():
        labels, kind = repeat, "repeat of the k-fold main block"
    else:
        labels, kind = np.arange(pos.size), "main split (random splits: one hold-out each)"
    uniq, codes = np.unique(labels, return_inverse=True)
    onehot = xr.DataArray(
        (codes[None, :] == np.arange(uniq.size)[:, None]).astype(float),
        dims=(REPETITION, SPLIT),
        coords={REPETITION: uniq},
    )
    split_coords = [c for c in main.coords if SPLIT in main[c].dims or c == SPLIT]
    sums = main.sum(EXAMPLE, skipna=True).drop_vars(split_coords, errors="ignore")
    counts = main.count(EXAMPLE).drop_vars(split_coords, errors="ignore")
    est = xr.dot(sums, onehot, dim=SPLIT) / xr.dot(counts, onehot, dim=SPLIT)
    dims = [d for d in est.dims if d not in (REPETITION, unit_dim(cube))]
    est = est.transpose(*dims, REPETITION, unit_dim(cube))
    est.name = cube.name
    est.attrs = {"repetition": kind}
    return est


def _repetitions(cube: xr.DataArray, method: str, minimum: int) -> xr.DataArray:
    est = cv_estimates(cube)
    R = est.sizes[REPETITION]
    if R < minimum:
        raise DesignError(
            f"{method} needs at least {minimum} repetitions of the cross-validation on every "
            f"dataset (repeats of a k-fold main block, or random main splits), got {R}; draw "
            "them with cvstats.designs.kfold(n, K, repeats=...) or designs.resampled."
        )
    return est


def _is_estimates(obj: object) -> bool:
    """Tell whether ``obj`` holds CV estimates (a ``repetition`` dim, no ``split`` dim)."""
    return isinstance(obj, xr.DataArray) and REPETITION in obj.dims and SPLIT not in obj.dims


def _given_estimates(est: xr.DataArray, method: str, minimum: int) -> xr.DataArray:
    """Check CV estimates given directly over ``(dataset, repetition, model|contrast)``."""
    unit = est.dims[-1]
    if unit not in (MODEL, "contrast"):
        raise ArgumentError(
            f"{method}: estimates given over dims {[str(d) for d in est.dims]} need `model` "
            "(or `contrast`) as the last dim; transpose them, e.g. est.transpose(..., 'model')."
        )
    if bool(est.isnull().any()):
        raise ArgumentError(
            f"{method}: the CV estimates hold NaN; every dataset needs every repetition."
        )
    R = int(est.sizes[REPETITION])
    if R < minimum:
        raise DesignError(
            f"{method} needs at least {minimum} repetitions of the cross-validation on every "
            f"dataset, got {R} along `{REPETITION}`."
        )
    out = est.copy(deep=False)
    out.attrs = {"repetition": f"given (the `{REPETITION}` dim of the estimates)"}
    return out


def _estimates(data: xr.DataArray, method: str, minimum: int) -> xr.DataArray:
    """Per-repetition estimates from a cube (validated) or given directly."""
    if _is_estimates(data):
        return _given_estimates(data, method, minimum)
    validate(data)
    return _repetitions(data, method, minimum)


# --------------------------------------------------------------------------
# variance decomposition
# --------------------------------------------------------------------------


def variance_decomposition(
    data: xr.DataArray | xr.Dataset | str,
    formula: str | xr.DataArray | xr.Dataset | None = None,
    *,
    dataset_dim: Hashable = "dataset",
    alpha: float = 0.05,
) -> EstimatesResult:
    """Split ``Var(ε̂)`` into sample and internal variance (docs/theory.md §1).

    On every dataset ``t`` the ``R`` repetitions ``ε̂_{t,1..R}`` of the
    cross-validation estimate (:func:`cv_estimates`: repeats of a k-fold, or
    random main splits) are independent given the data, so the vector has
    the Lemma-1 structure of docs/theory.md §2 with

    * ``δ = Var(ε̂)``, the total variance;
    * ``γ = πδ = Cov(ε̂_r, ε̂_r') = Var_T(E_π[ε̂])``, the *sample variance*
      (the covariance of two repetitions on the same data is the variance of
      their common conditional mean);
    * ``δ - γ = δ (1 - π) = E_T[Var_π(ε̂)]``, the *internal variance*
      (Lemma 1.3: the expected within-dataset sample variance).

    ``(β, δ, π)`` is fitted across the datasets by the estimating equations of
    docs/theory.md §5 (:func:`cvstats.across.lemma1.fit_lemma1`); the standard errors of
    ``γ̂ = π̂δ̂`` and ``δ̂ - γ̂`` follow by the delta method from the sandwich
    covariance ``V`` (gradients ``(0, π̂, δ̂)`` and ``(0, 1 - π̂, -δ̂)``), and every
    interval is ``estimate ± z_{1-α/2} se``.

    Parameters
    ----------
    data : xarray.DataArray or xarray.Dataset or str
        A cube (or contrast cube) with an extra dim of datasets whose main
        block is a repeated k-fold (``repeats >= 2``) or ``J >= 2`` random
        splits; with a formula, a cube or a Dataset of cubes. Also
        ``variance_decomposition(formula, data)``. Or the CV estimates
        themselves, over ``(dataset_dim, "repetition", model|contrast)`` (as
        :func:`cv_estimates` returns them, or as a study stores them).
    formula : str, optional
        Decompose the contrasts of a formula (see :func:`cvstats.contrasts`).
    dataset_dim : hashable, default "dataset"
        The extra dim of the ``N >= 2`` independent datasets.
    alpha : float, default 0.05
        Intervals have level ``1 - alpha``.

    Returns
    -------
    EstimatesResult
        The variables (a result holding their Dataset,
        :class:`~cvstats.results.estimates.EstimatesResult`), over ``model``
        (or ``contrast``) and any other extra dim, each with
        ``_se`` and ``_ci`` (on ``ci_bound``):

        * ``mean``: ``E[ε̂]`` (``β̂``);
        * ``total_variance``: ``Var(ε̂)`` (``δ̂``);
        * ``sample_variance``: ``Var_T(E_π[ε̂])`` (``γ̂ = π̂δ̂``);
        * ``internal_variance``: ``E_T[Var_π(ε̂)]`` (``δ̂ - γ̂``);
        * ``sample_fraction``: ``π̂``, the share of the total variance due to
          the sample.

        Attrs ``R`` (repetitions per dataset), ``N``, ``alpha``, ``repetition``
        (what a repetition is), ``loss``, ``method``.

    Raises
    ------
    CubeError
        If the cube has no ``dataset_dim``.
    DesignError
        If there are fewer than 2 datasets or 2 repetitions.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.across.conditional import variance_decomposition
    >>> rng = np.random.default_rng(0)
    >>> d = cvstats.designs.kfold(10, K=2, repeats=4, seed=0)
    >>> a = rng.normal(size=(200, 1, 1, 1))  # per-dataset level: sample variance 1
    >>> losses = a + 0.5 * rng.normal(size=(200, 8, 10, 1))
    >>> cube = cvstats.from_arrays(losses, design=d, extra_dims=["dataset"])
    >>> out = variance_decomposition(cube)
    >>> sorted(out.data_vars)[:3]
    ['internal_variance', 'internal_variance_ci', 'internal_variance_se']
    """
    alpha = validate_alpha(alpha)
    if formula is None and _is_estimates(data):
        cube = est = _given_estimates(data, "variance_decomposition", 2)  # type: ignore[arg-type]
        N = check_datasets(est, dataset_dim, "variance_decomposition")
    else:
        cube = resolve_cube(data, formula, "variance_decomposition")
        N = check_datasets(cube, dataset_dim, "variance_decomposition")
        est = _repetitions(cube, "variance_decomposition", 2)
    comps = fit_components(est, dataset_dim, REPETITION)
    names = {
        "mean": "beta",
        "total_variance": "delta",
        "sample_variance": "gamma",
        "internal_variance": "within",
        "sample_fraction": "pi",
    }
    out = xr.Dataset(with_interval({new: comps[old] for new, old in names.items()}, alpha))
    attrs: dict[str, object] = {
        "method": "variance_decomposition: Lemma-1 fit across datasets, delta method "
        "(docs/theory.md §1, §5)",
        "loss": str(cube.name),
        "alpha": alpha,
        "N": N,
        "R": int(est.sizes[REPETITION]),
        "repetition": est.attrs["repetition"],
        "dataset_dim": str(dataset_dim),
    }
    if "formula" in cube.attrs:
        attrs["formula"] = cube.attrs["formula"]
    out.attrs = attrs
    return EstimatesResult.from_dataset(out)


# --------------------------------------------------------------------------
# bias of CV
# --------------------------------------------------------------------------


def _check_errors(errors: object, name: str, dataset_dim: Hashable, unit: str) -> xr.DataArray:
    if not isinstance(errors, xr.DataArray):
        raise CvstatsTypeError(
            f"`{name}` must be an xarray.DataArray over ({dataset_dim!s}, {unit}), got "
            f"{type(errors).__name__}."
        )
    missing = [str(d) for d in (dataset_dim, unit) if d not in errors.dims]
    if missing:
        raise ArgumentError(
            f"`{name}` lacks the dim(s) {missing}; it has dims {[str(d) for d in errors.dims]} "
            f"and needs ({dataset_dim!s}, {unit})."
        )
    if errors.isnull().any():
        raise ArgumentError(f"`{name}` holds NaN; every dataset needs its error for every {unit}.")
    return errors


def _align(a: xr.DataArray, b: xr.DataArray, name: str) -> tuple[xr.DataArray, xr.DataArray]:
    try:
        return xr.align(a, b, join="exact")
    except ValueError as e:
        raise ArgumentError(
            f"`{name}` does not match the cube's datasets or models (coordinates or sizes "
            f"differ): {e}"
        ) from e


def _t_interval(est: xr.DataArray, se: xr.DataArray, N: int, alpha: float) -> xr.DataArray:
    c = float(kernels.critical_value(N - 1, alpha))
    return bounds(est - c * se, est + c * se, alpha=alpha)


def cv_bias(
    cube: xr.DataArray,
    conditional_error: xr.DataArray,
    *,
    dataset_dim: Hashable = "dataset",
    alpha: float = 0.05,
    unconditional_error: float | xr.DataArray | None = None,
) -> EstimatesResult:
    """Bias and accuracy of cross-validation for ``εc`` and ``εu`` (docs/theory.md §1).

    For every dataset ``t``, ``E_π[ε̂]_t`` is estimated by the mean of the
    cube's repetitions of the CV estimate (:func:`cv_estimates`; with random
    main splits, ``μ̂_J``). Against the conditional errors ``εc_t``
    (the survey's Algorithm 1) this gives

    * the bias for ``εc``: ``mean_t (E_π[ε̂]_t - εc_t)``, with the ``t_{N-1}``
      interval ``± t s/sqrt(N)`` of a mean of ``N`` independent differences;
    * the bias for ``εu``: ``mean_t E_π[ε̂]_t - εu``. When ``εu`` is estimated by
      the mean of ``εc`` over the same datasets (the default) this is the same
      number and interval as the bias for ``εc``: the bias ``E_{T,π}[ε̂ - ε]``
      of the survey's Definition 16 averages over datasets. With a known
      ``unconditional_error`` its interval is ``± t s_{E_π[ε̂]}/sqrt(N)``;
    * what does differ is how far each dataset's estimate is from each target:
      ``rmse_conditional = sqrt(mean_t (E_π[ε̂]_t - εc_t)²)`` and
      ``rmse_unconditional = sqrt(mean_t (E_π[ε̂]_t - εu)²)``;
    * the Pearson correlation of ``E_π[ε̂]_t`` and ``εc_t`` across datasets, with
      a Fisher-z interval (needs ``N > 3``). A correlation near zero says CV
      tracks the learner's ``εu`` rather than the model's ``εc``.

    Parameters
    ----------
    cube : xarray.DataArray
        A cube (or contrast cube) with an extra dim of datasets and a main block,
        or the CV estimates themselves over ``(dataset_dim, "repetition",
        model|contrast)`` (as :func:`cv_estimates` returns them).
    conditional_error : xarray.DataArray
        ``εc(L, T)`` over ``(dataset_dim, model)`` (or ``contrast`` for a contrast
        cube), e.g. the error of each model trained on the whole dataset and
        measured on a large held-out population; coordinates must match the cube.
    dataset_dim : hashable, default "dataset"
        The extra dim of the ``N >= 2`` independent datasets.
    alpha : float, default 0.05
        Intervals have level ``1 - alpha``.
    unconditional_error : float or xarray.DataArray, optional
        A known ``εu`` (per model); default the mean of ``conditional_error``
        over the datasets.

    Returns
    -------
    EstimatesResult
        The variables (a result holding their Dataset,
        :class:`~cvstats.results.estimates.EstimatesResult`), over ``model``
        (or ``contrast``) and any other extra dim: ``cv_estimate`` (mean over
        datasets of ``E_π[ε̂]``),
        ``conditional_error`` (mean ``εc``), ``unconditional_error`` (``εu``),
        ``bias_conditional`` and ``bias_unconditional`` (each with ``_se`` and
        ``_ci``), ``rmse_conditional``, ``rmse_unconditional``, ``sd_cv`` and
        ``sd_conditional`` (standard deviations across datasets, ``ddof=1``),
        ``correlation`` and ``correlation_ci``. Attrs ``N``, ``R``, ``alpha``,
        ``unconditional_error`` (``"mean of conditional_error"`` or ``"given"``).

    Examples
    --------
    >>> import numpy as np, xarray as xr, cvstats
    >>> from cvstats.across.conditional import cv_bias
    >>> d = cvstats.designs.resampled(10, 5, J=2, seed=0)
    >>> level = np.array([0.2, 0.3, 0.4, 0.5])[:, None, None, None]
    >>> cube = cvstats.from_arrays(np.broadcast_to(level, (4, 2, 10, 1)), design=d,
    ...                            extra_dims=["dataset"])
    >>> ec = xr.DataArray(level[:, 0, 0] - 0.1, dims=("dataset", "model"))
    >>> out = cv_bias(cube, ec)
    >>> out.bias_conditional.round(10).values.tolist(), out.correlation.round(10).values.tolist()
    ([0.1], [1.0])
    """
    alpha = validate_alpha(alpha)
    if not isinstance(cube, xr.DataArray):
        raise CvstatsTypeError(
            f"`cube` must be a cube or CV estimates (xarray.DataArray), got {type(cube).__name__}."
        )
    est = _estimates(cube, "cv_bias", 1)
    N = check_datasets(est, dataset_dim, "cv_bias")
    unit = unit_dim(est)
    per_dataset = est.mean(REPETITION)
    ec = _check_errors(conditional_error, "conditional_error", dataset_dim, unit)
    per_dataset, ec = _align(per_dataset, ec, "conditional_error")
    ec = ec.transpose(*per_dataset.dims)
    given = unconditional_error is not None
    if given:
        if isinstance(unconditional_error, xr.DataArray):
            eu = unconditional_error
        elif isinstance(unconditional_error, numbers.Real) and not isinstance(
            unconditional_error, bool
        ):
            eu = xr.DataArray(float(unconditional_error))
        else:
            raise CvstatsTypeError(
                "`unconditional_error` must be a float or an xarray.DataArray, got "
                f"{type(unconditional_error).__name__}."
            )
    else:
        eu = ec.mean(dataset_dim)
    sqrt_n = float(np.sqrt(N))
    diff = per_dataset - ec
    bias_c = diff.mean(dataset_dim)
    bias_c_se = diff.std(dataset_dim, ddof=1) / sqrt_n
    bias_u = per_dataset.mean(dataset_dim) - eu
    bias_u_se = per_dataset.std(dataset_dim, ddof=1) / sqrt_n if given else bias_c_se
    (corr,) = apply_kernel(kernels.pearson_r, [per_dataset, ec], [[dataset_dim], [dataset_dim]], 1)
    lo, hi = apply_kernel(kernels.fisher_z_interval, [corr], [[]], 2, n=N, alpha=alpha)
    data_vars = {
        "cv_estimate": per_dataset.mean(dataset_dim),
        "conditional_error": ec.mean(dataset_dim),
        "unconditional_error": eu,
        "bias_conditional": bias_c,
        "bias_conditional_se": bias_c_se,
        "bias_conditional_ci": _t_interval(bias_c, bias_c_se, N, alpha),
        "bias_unconditional": bias_u,
        "bias_unconditional_se": bias_u_se,
        "bias_unconditional_ci": _t_interval(bias_u, bias_u_se, N, alpha),
        "rmse_conditional": np.sqrt((diff**2).mean(dataset_dim)),
        "rmse_unconditional": np.sqrt(((per_dataset - eu) ** 2).mean(dataset_dim)),
        "sd_cv": per_dataset.std(dataset_dim, ddof=1),
        "sd_conditional": ec.std(dataset_dim, ddof=1),
        "correlation": corr,
        "correlation_ci": bounds(lo, hi, alpha=alpha),
    }
    out = xr.Dataset({k: as_dataarray(v, keep_attrs=False) for k, v in data_vars.items()})
    out.attrs = {
        "method": "cv_bias: CV estimates against conditional errors across datasets "
        "(docs/theory.md §1)",
        "loss": str(cube.name),
        "alpha": alpha,
        "N": N,
        "R": int(est.sizes[REPETITION]),
        "repetition": est.attrs["repetition"],
        "unconditional_error": "given" if given else "mean of conditional_error",
        "bias_interval": "t_{N-1}",
        "correlation_interval": "Fisher z, N > 3",
        "dataset_dim": str(dataset_dim),
    }
    return EstimatesResult.from_dataset(out)


# --------------------------------------------------------------------------
# who wins
# --------------------------------------------------------------------------


def _per_dataset_cv(cv_estimate: object) -> xr.DataArray:
    if not isinstance(cv_estimate, xr.DataArray):
        raise CvstatsTypeError(
            "`cv_estimate` must be an xarray.DataArray over (dataset, model), or a cube, got "
            f"{type(cv_estimate).__name__}."
        )
    if SPLIT in cv_estimate.dims:  # a cube: E_π[ε̂] of every dataset
        validate(cv_estimate)
        return cv_estimates(cv_estimate).mean(REPETITION)
    if _is_estimates(cv_estimate):  # per-repetition estimates: their mean
        return _given_estimates(cv_estimate, "winner_table", 1).mean(REPETITION)
    return cv_estimate


def _ratio(num: int, den: int) -> float:
    return num / den if den > 0 else float("nan")


def _winner_direction(inputs: dict[str, object], greater_is_better: object) -> bool:
    """Whether a larger value is better, from ``greater_is_better`` or what the inputs record.

    An input that records nothing (no attrs of a cube or a score cube, no
    metric name whose direction is known) is what :func:`winner_table`
    documents: an error. The inputs must agree with each other and with
    ``greater_is_better``.
    """
    if greater_is_better is not None and not isinstance(greater_is_better, bool | np.bool_):
        raise ArgumentError(
            f"winner_table: `greater_is_better` must be True or False, got {greater_is_better!r}."
        )
    recorded = {
        name: rec
        for name, arr in inputs.items()
        if isinstance(arr, xr.DataArray)
        for rec in [recorded_direction(arr.attrs, arr.name)]
        if rec is not None
    }
    for name, (known, why) in recorded.items():
        if greater_is_better is not None and bool(known) != bool(greater_is_better):
            raise ArgumentError(
                f"winner_table: `greater_is_better` is {bool(greater_is_better)}, but `{name}` "
                f"records the opposite ({why}); drop the argument, or fix the attrs of `{name}` "
                "if its values are no longer what they say (attrs survive arithmetic such as "
                "1 - error)."
            )
    if greater_is_better is not None:
        return bool(greater_is_better)
    if any(known for known, _ in recorded.values()):
        plain = [name for name in inputs if name not in recorded]
        if plain or len({known for known, _ in recorded.values()}) > 1:
            said = [f"`{n}`: {why}" for n, (_, why) in recorded.items()]
            said += [f"`{n}`: nothing, so an error as documented" for n in plain]
            raise ArgumentError(
                "winner_table: `cv_estimate` and `conditional_error` must be the same metric, "
                f"but they do not record the same direction ({'; '.join(said)}). Pass "
                "greater_is_better=True if both are scores where larger is better (accuracies, "
                "AUCs), False if both are errors."
            )
        return True
    return False


def winner_table(
    cv_estimate: xr.DataArray,
    conditional_error: xr.DataArray,
    models: Sequence[str],
    *,
    dataset_dim: Hashable = "dataset",
    ties: str = "not_worse",
    greater_is_better: bool | None = None,
) -> WinnerTable:
    """Contingency table of CV's verdict against the truth over datasets (survey §5.2).

    For models ``a, b`` and every dataset: does CV say ``a`` is worse
    (``ε̂_a > ε̂_b``) or not, and is ``a`` truly worse on that dataset
    (``εc_a > εc_b``) or not. A model is the "winner" when its error is the
    smaller one -- or, for scores where larger is better (accuracies, AUCs), the
    larger one: then ``a`` is worse when ``a < b``. See :class:`WinnerTable` for
    the exact cells behind each conditional probability.

    Parameters
    ----------
    cv_estimate : xarray.DataArray
        ``ε̂`` over ``(dataset_dim, "model")`` (e.g. a k-fold estimate per
        dataset), or a cube with a ``dataset_dim``: then ``E_π[ε̂]`` is the mean
        of its repetitions (:func:`cv_estimates`), or per-repetition estimates
        over ``(dataset_dim, "repetition", "model")`` (their mean).
    conditional_error : xarray.DataArray
        ``εc`` over ``(dataset_dim, "model")``, coordinates matching.
    models : sequence of two str
        ``(a, b)``, the models compared (``a`` first in every label).
    dataset_dim : hashable, default "dataset"
        The dim of datasets.
    ties : {"not_worse", "exclude"}, default "not_worse"
        ``"not_worse"``: a tie (``ε̂_a == ε̂_b`` or ``εc_a == εc_b``) is counted
        as ``"a <= b"`` (not worse), as in the survey's table; ``"exclude"``:
        datasets with a tie in either are left out. Tie counts are reported
        either way.
    greater_is_better : bool, optional
        Whether a larger value is better. By default read from what the inputs
        record (:func:`cvstats.cube.score.recorded_direction`: a score cube's
        ``greater_is_better`` kept on a method's ``estimate``, a loss cube's
        attrs, a metric name such as ``accuracy`` or ``zero_one``); inputs that
        record nothing are errors, as documented above. When given, it must
        agree with what the inputs record; the two inputs must agree with each
        other (one recording a score and the other nothing is refused).

    Returns
    -------
    WinnerTable

    Raises
    ------
    ArgumentError
        For unknown models, missing dims, extra dims, NaN, mismatched
        coordinates, an unknown ``ties``, or inputs whose directions disagree.

    Examples
    --------
    >>> import xarray as xr
    >>> from cvstats.across.conditional import winner_table
    >>> cv = xr.DataArray([[0.3, 0.2], [0.1, 0.2], [0.3, 0.1]], dims=("dataset", "model"),
    ...                   coords={"model": ["nb", "dt"]})
    >>> true = xr.DataArray([[0.3, 0.2], [0.3, 0.2], [0.1, 0.2]], dims=("dataset", "model"),
    ...                     coords={"model": ["nb", "dt"]})
    >>> res = winner_table(cv, true, ("nb", "dt"))
    >>> res.table
    conditional  nb > dt  nb <= dt
    cv
    nb > dt            1         1
    nb <= dt           1         0
    >>> res.p_true_given_cv.tolist(), res.agreement
    ([0.5, 0.0], 0.3333333333333333)
    """
    if ties not in TIES:
        raise ArgumentError(f"`ties` must be one of {list(TIES)}, got {ties!r}.")
    pair = tuple(str(m) for m in models)
    if len(pair) != 2 or pair[0] == pair[1]:
        raise ArgumentError(f"`models` must name two different models, got {list(models)}.")
    a, b = pair
    cv = _per_dataset_cv(cv_estimate)
    greater = _winner_direction(
        {"cv_estimate": cv_estimate, "conditional_error": conditional_error}, greater_is_better
    )
    arrays = {}
    for name, arr in (("cv_estimate", cv), ("conditional_error", conditional_error)):
        arr = _check_errors(arr, name, dataset_dim, MODEL)
        extra = [str(d) for d in arr.dims if d not in (dataset_dim, MODEL)]
        if extra:
            raise ArgumentError(
                f"`{name}` has dims {extra} besides ({dataset_dim!s}, {MODEL}); select one "
                "element of them first (e.g. .sel(...))."
            )
        names = [str(m) for m in arr[MODEL].values.tolist()] if MODEL in arr.coords else []
        unknown = [m for m in pair if m not in names]
        if unknown:
            raise ArgumentError(f"`models` names {unknown}, not models of `{name}` ({names}).")
        arrays[name] = arr.sel({MODEL: list(pair)})
    cv, true = _align(arrays["cv_estimate"], arrays["conditional_error"], "conditional_error")
    cv_a, cv_b = (cv.sel({MODEL: m}).values for m in pair)
    true_a, true_b = (true.sel({MODEL: m}).values for m in pair)
    cv_tie, true_tie = cv_a == cv_b, true_a == true_b
    keep = np.ones(cv_a.shape, dtype=bool)
    if ties == "exclude":
        keep = ~(cv_tie | true_tie)
    # "a worse": the larger error, or the smaller score
    cv_worse = ((cv_a < cv_b) if greater else (cv_a > cv_b))[keep]
    true_worse = ((true_a < true_b) if greater else (true_a > true_b))[keep]
    labels = [f"{a} < {b}", f"{a} >= {b}"] if greater else [f"{a} > {b}", f"{a} <= {b}"]
    counts = np.array(
        [
            [np.sum(cv_worse & true_worse), np.sum(cv_worse & ~true_worse)],
            [np.sum(~cv_worse & true_worse), np.sum(~cv_worse & ~true_worse)],
        ],
        dtype=np.int64,
    )
    table = pd.DataFrame(
        counts,
        index=pd.Index(labels, name="cv", dtype=object),
        columns=pd.Index(labels, name="conditional", dtype=object),
    )
    rows, cols = counts.sum(axis=1), counts.sum(axis=0)
    n = int(counts.sum())
    p_true = pd.Series(
        [_ratio(int(counts[i, i]), int(rows[i])) for i in range(2)],
        index=pd.Index(labels, name="cv", dtype=object),
        name="p_true_given_cv",
    )
    p_cv = pd.Series(
        [_ratio(int(counts[i, i]), int(cols[i])) for i in range(2)],
        index=pd.Index(labels, name="conditional", dtype=object),
        name="p_cv_given_true",
    )
    return WinnerTable(
        table=table,
        p_true_given_cv=p_true,
        p_cv_given_true=p_cv,
        agreement=_ratio(int(np.trace(counts)), n),
        n_datasets=n,
        ties_cv=int(cv_tie.sum()),
        ties_true=int(true_tie.sum()),
        ties=ties,
        models=(a, b),
        greater_is_better=greater,
    )
