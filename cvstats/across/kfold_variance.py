"""Variance components of K-fold cross-validation over loss cubes (docs/theory.md §7).

Bengio & Grandvalet: for one K-fold run the out-of-fold errors ``e_i`` (a
model's losses, or a contrast of models' losses) have covariance ``σ²`` on
the diagonal, ``ω`` within a test block and ``γ`` between blocks, and

    θ = Var[μ̂] = σ²/n + (m - 1) ω / n + (n - m) γ / n                      (4)

No unbiased estimator of ``θ`` exists from one run; with many independent
datasets (a simulation) ``σ², ω, γ`` can be estimated, and with them the
expected value and political ratio of any quadratic variance estimator.

The estimator layer over :mod:`cvstats.kernels.kfold`: named dims are mapped
to the kernels' axes by :func:`cvstats.cube.apply.apply_kernel`, so every
other dim (and the ``model``/``contrast`` dim) is vectorized over and
dask-backed cubes stay lazy. Results are
:class:`~cvstats.results.estimates.EstimatesResult` objects (results holding
an :class:`xarray.Dataset`, read like one); intervals lie on a trailing
``ci_bound`` dim with coordinates ``["lower", "upper"]``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import scipy
import xarray as xr
from numpy.typing import ArrayLike

from cvstats.cube import get_extra_dims, in_test, validate
from cvstats.cube.apply import apply_kernel
from cvstats.cube.checks import validate_alpha
from cvstats.cube.groups import group_codes
from cvstats.cube.schema import EXAMPLE, SPLIT
from cvstats.errors import ArgumentError, CvstatsTypeError, DesignError
from cvstats.inference.blocks import block_positions, kfold_layout
from cvstats.inference.clustered import warn_if_straddling
from cvstats.kernels import kfold as kk
from cvstats.kernels.cluster import check_enough_groups, cluster_moments
from cvstats.kernels.moments import sample_variance
from cvstats.results.base import bounds
from cvstats.results.estimates import EstimatesResult

__all__ = ["kfold_errors", "kfold_statistics", "kfold_moments", "quadratic_estimator_bias"]

# what holds moments with their attrs (``n``, ``K``)
_DATASETS = (xr.Dataset, EstimatesResult)

_DESCRIPTIONS = {
    "mu": "μ, mean of the errors e_i",
    "sigma2": "σ² = Var[e_i]",
    "omega": "ω = Cov[e_i, e_j], i != j in the same test block",
    "gamma": "γ = Cov[e_i, e_j], i, j in different test blocks",
    "contribution_sigma2": "σ²/n, the σ² term of eq. (4)",
    "contribution_omega": "(m-1)ω/n, the ω term of eq. (4)",
    "contribution_gamma": "(n-m)γ/n, the γ term of eq. (4)",
    "theta": "θ = Var[μ̂] from eq. (4)",
    "lambda1": "λ1 = σ² - ω (multiplicity n - K)",
    "lambda2": "λ2 = σ² + (m-1)ω - mγ (multiplicity K - 1)",
    "lambda3": "λ3 = σ² + (m-1)ω + (n-m)γ = nθ (eigenvector 1)",
    "empirical_var": "sample variance of μ̂ across datasets",
}
_WITH_SE = ("mu", "sigma2", "omega", "gamma", "theta")


# --------------------------------------------------------------------------
# from a cube to the errors of one K-fold run
# --------------------------------------------------------------------------


def kfold_errors(cube: xr.DataArray, *, method: str = "kfold_errors") -> xr.Dataset:
    """Out-of-fold errors ``e_i`` and fold labels of the cube's K-fold run (docs/theory.md §7).

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube (or contrast cube) whose main block is one K-fold run
        (:func:`cvstats.designs.kfold` with ``repeats=1``, or per-dataset
        test masks with ``fold``/``repeat`` coordinates); other blocks are
        ignored.
    method : str, default "kfold_errors"
        Name used in error messages.

    Returns
    -------
    xarray.Dataset
        ``e`` over ``(*extra, example, model|contrast)``: the loss of every
        example on the split that tests it; ``fold`` over ``(*extra, example)``:
        the fold (``fold`` coordinate of that split). Attrs ``K``, ``n``, ``m``.

    Raises
    ------
    CubeError
        If the cube is not valid.
    DesignError
        If the main block is not k-fold, has several repeats, or some example
        is not tested exactly once.
    """
    if not isinstance(cube, xr.DataArray):
        raise CvstatsTypeError(f"`cube` must be an xarray.DataArray, got {type(cube).__name__}.")
    validate(cube)
    K, repeats = kfold_layout(cube, method)
    if repeats != 1:
        raise DesignError(
            f"{method} needs one K-fold run, but the main block has {repeats} repeats; select "
            "one with cube.isel(split=cube.repeat <= 0), or simulate independent datasets "
            "(repeats of K-fold on the same data are not independent replicates)."
        )
    main = cube.isel({SPLIT: block_positions(cube, "main", method)})
    mask = in_test(main)
    times = mask.sum(SPLIT)
    if bool((times != 1).any()):
        raise DesignError(
            f"{method} needs every example tested exactly once in the K-fold run, but "
            f"{int((times != 1).sum())} example(s) (counted over the extra dims) are tested "
            f"{sorted(set(np.unique(times.values).tolist()) - {1})} times."
        )
    e = main.sum(SPLIT, skipna=True)
    fold = (mask * main["fold"]).sum(SPLIT)
    drop = [c for c in e.coords if c not in e.dims]
    e = e.drop_vars(drop)
    fold = fold.drop_vars([c for c in fold.coords if c not in fold.dims])
    n = int(cube.sizes[EXAMPLE])
    return xr.Dataset(
        {"e": e, "fold": fold},
        attrs={"K": K, "n": n, "m": n // K if n % K == 0 else -1, "loss": str(cube.name)},
    )


# --------------------------------------------------------------------------
# statistics of one run
# --------------------------------------------------------------------------


def _statistics_kernel(e: np.ndarray, fold: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(kk.kfold_statistics(e, fold))


def _iid_var_mu(e: np.ndarray) -> np.ndarray:
    """``S²/n`` over the last axis: the variance of the mean of independent errors."""
    return sample_variance(e, name="e", what="out-of-fold errors") / e.shape[-1]


def _cluster_var_mu(e: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Return the CR1 variance of the mean over the last axis; refuse too few groups."""
    moments = cluster_moments(e, codes)
    check_enough_groups(moments.n_groups, "kfold_statistics")
    return moments.variance


_STATISTICS = {
    "s1": "(1/n) Σ e_i²",
    "s2": "(1/(n(m-1))) Σ_k Σ_{i≠j in T_k} e_i e_j",
    "s3": "(1/(n(n-m))) Σ_{k≠l} Σ_{i in T_k, j in T_l} e_i e_j",
    "mu": "μ̂ = (1/n) Σ e_i",
}

#: The attr ``note`` of :func:`kfold_statistics` on a cube with groups.
_GROUPED_NOTE = (
    "the examples come in groups: var_mu is cluster-robust (CR1); s1, s2, s3 are the sums "
    "defined without groups, so s2 pools the pairs within a group with the other pairs of a "
    "test block (Bengio & Grandvalet's 2004 covariance classes assume exchangeable examples "
    "in a block: E[s2] - μ² is then the average covariance over a block's pairs, not one ω)"
)


def kfold_statistics(cube: xr.DataArray) -> EstimatesResult:
    """``s1, s2, s3``, ``μ̂`` and ``Var̂[μ̂]`` of the cube's K-fold run (docs/theory.md §7).

    With ``e_i`` the out-of-fold error of example ``i`` and ``T_k`` the test
    blocks of size ``m = n/K``: ``s1 = (1/n) Σ e_i²``,
    ``s2 = (1/(n(m-1))) Σ_k Σ_{i≠j ∈ T_k} e_i e_j``,
    ``s3 = (1/(n(n-m))) Σ_{k≠ℓ} Σ_{i∈T_k, j∈T_ℓ} e_i e_j`` (O(n), see
    :func:`cvstats.kernels.kfold.kfold_statistics`); ``E[s1] = σ² + μ²``,
    ``E[s2] = ω + μ²``, ``E[s3] = γ + μ²``.

    ``var_mu`` is the variance of ``μ̂`` computed over the examples, as if
    the ``e_i`` were independent draws (what Bayle et al.'s interval uses;
    Bengio & Grandvalet 2004 show that it ignores the ``ω`` and ``γ`` terms of
    eq. 4): without groups ``S²/n`` (sample variance, denominator ``n - 1``;
    statsmodels' ``OLS(e, 1).fit().bse**2``). With a ``group`` coordinate on
    the cube (docs/grouped-data.md) it is the cluster-robust (CR1) variance of
    the mean over the ``G`` groups, ``G/(G-1) · Σ_g u_g² / n²`` with
    ``u_g = Σ_{i ∈ g} (e_i - μ̂)`` (Cameron & Miller 2015, "A practitioner's
    guide to cluster-robust inference", §II;
    :func:`cvstats.kernels.cluster.cluster_moments`; statsmodels'
    ``cov_type="cluster"``), which is ``S²/n`` again with one example per
    group. ``s1, s2, s3`` and ``μ̂`` do not change with groups; the attr
    ``note`` then says what ``s2`` pools.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube or contrast cube whose main block is one K-fold run with
        equal folds (``K`` divides ``n``), with or without a ``group``
        coordinate.

    Returns
    -------
    EstimatesResult
        A result holding the Dataset of ``s1``, ``s2``, ``s3``, ``mu``
        (``μ̂``) and ``var_mu`` over the cube's extra dims and
        ``model``/``contrast``; attrs ``n``, ``K``, ``m``, ``loss``,
        ``method``, ``variance`` (``"iid"`` or ``"cluster-robust (CR1), G
        groups"``) and, with groups, ``note``.

    Raises
    ------
    DesignError
        If the main block is not a single K-fold run, ``K`` does not divide
        ``n``, or the cube has groups but fewer than
        :data:`cvstats.kernels.cluster.MIN_GROUPS` of them.

    Warns
    -----
    CvstatsWarning
        When a group has examples in both the training and the test set of a
        split (:func:`cvstats.inference.clustered.warn_if_straddling`).

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.across.kfold_variance import kfold_statistics
    >>> d = cvstats.designs.kfold(20, 4, seed=0)
    >>> e = np.random.default_rng(0).normal(size=20)
    >>> cube = cvstats.from_arrays(np.broadcast_to(e[None, :, None], (4, 20, 1)), design=d)
    >>> st = kfold_statistics(cube)
    >>> bool(np.isclose(st.s1 + 4 * st.s2 + 15 * st.s3, 20 * st.mu**2))
    True
    >>> bool(np.isclose(st.var_mu, e.var(ddof=1) / 20)), st.attrs["variance"]
    (True, 'iid')
    """
    err = kfold_errors(cube, method="kfold_statistics")
    warn_if_straddling(cube)
    out = apply_kernel(_statistics_kernel, [err.e, err.fold], [[EXAMPLE], [EXAMPLE]], 4)
    data = {
        k: v.assign_attrs(description=_STATISTICS[k])
        for k, v in zip(_STATISTICS, out, strict=True)
    }
    attrs = {**err.attrs, "method": "K-fold statistics (docs/theory.md §7)"}
    codes = group_codes(cube)
    if codes is None:
        (var_mu,) = apply_kernel(_iid_var_mu, [err.e], [[EXAMPLE]], 1)
        attrs["variance"] = "iid"
        what = "S²/n, the variance of μ̂ over independent examples"
    else:
        (var_mu,) = apply_kernel(_cluster_var_mu, [err.e, codes], [[EXAMPLE], [EXAMPLE]], 1)
        n_groups = int(codes.max()) + 1
        attrs["variance"] = f"cluster-robust (CR1), {n_groups} groups"
        attrs["note"] = _GROUPED_NOTE
        what = "G/(G-1) Σ_g u_g²/n², the cluster-robust (CR1) variance of μ̂ over the groups"
    data["var_mu"] = var_mu.assign_attrs(description=what)
    return EstimatesResult.from_dataset(xr.Dataset(data, attrs=attrs))


# --------------------------------------------------------------------------
# moments from replicated runs
# --------------------------------------------------------------------------


def _moments_kernel(e: np.ndarray, fold: np.ndarray) -> tuple[np.ndarray, ...]:
    est = kk.kfold_moments(e, fold)
    se = kk.kfold_moments_stderr(e, fold)
    return (*est, *se)


def kfold_moments(
    cube: xr.DataArray, *, dataset_dim: Hashable = "dataset", alpha: float = 0.05
) -> EstimatesResult:
    """Estimate ``σ², ω, γ`` and eq. (4) from replicated K-fold runs (docs/theory.md §7).

    Every element of ``dataset_dim`` is an independent dataset of the same
    size ``n`` with one K-fold run (its own fold assignment is allowed).
    From the per-run statistics ``s1, s2, s3, μ̂_r`` (:func:`kfold_statistics`):
    ``μ̂ = mean_r μ̂_r``, ``U = (1/(N(N-1))) Σ_{r≠r'} μ̂_r μ̂_r'`` (unbiased for
    ``μ²``), ``σ̂² = s̄1 - U``, ``ω̂ = s̄2 - U``, ``γ̂ = s̄3 - U`` — each unbiased.
    They equal the averages of the empirical covariances ``(e_i - μ̄)(e_j - μ̄)``
    over the diagonal, within-block and between-block pairs, plus ``V/N``
    (``V`` the sample variance of the ``μ̂_r``), which corrects the ``-θ/N``
    bias of centring with the grand mean ``μ̄``. Then ``θ`` from eq. (4), its
    three contributions and the eigenvalues ``λ1..3``. With these unbiased
    estimates, ``θ = V = empirical_var`` holds *identically* (summing the
    classes of pairs re-assembles ``Var[μ̂]``): (4) decomposes the across-dataset
    variance into ``σ²``, ``ω`` and ``γ`` parts; it is not an independent check
    on the same data (compare with the variance on other datasets instead).

    Standard errors (``*_se``) are leave-one-dataset-out jackknife standard
    errors (no normality assumption), ``*_ci`` the normal intervals
    ``estimate ± z_{1-α/2} se``. ``empirical_var_ci`` is the chi-square
    interval ``[(N-1)V/χ²_{N-1,1-α/2}, (N-1)V/χ²_{N-1,α/2}]``, exact if the
    ``μ̂_r`` are Gaussian (``theta_ci`` is the jackknife alternative).

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube or contrast cube with the extra dim ``dataset_dim`` whose
        main block is one K-fold run with equal folds (``K`` divides ``n``).
    dataset_dim : hashable, default "dataset"
        Extra dim of the ``N >= 2`` independent datasets (``N >= 3`` for the
        standard errors).
    alpha : float, default 0.05
        The intervals have level ``1 - alpha``.

    Returns
    -------
    EstimatesResult
        A result holding the Dataset of the variables over the other extra dims and
        ``model``/``contrast``: ``mu``,
        ``sigma2``, ``omega``, ``gamma``; ``contribution_sigma2``,
        ``contribution_omega``, ``contribution_gamma`` (the terms of eq. 4) and
        ``theta``; ``lambda1``, ``lambda2``, ``lambda3``; ``admissible``
        (bool: the estimates satisfy ``0 <= ω <= σ²`` and
        ``-(σ² + (m-1)ω)/(n-m) <= γ <= (σ² + (m-1)ω)/m``); ``empirical_var``;
        ``mu_se``, ``sigma2_se``, ``omega_se``, ``gamma_se``, ``theta_se`` and
        the matching ``*_ci``; ``empirical_var_ci``. Attrs ``n``, ``K``,
        ``m``, ``N``, ``alpha``, ``dataset_dim``, ``loss`` and ``method``.

    Raises
    ------
    ArgumentError
        If ``dataset_dim`` is not an extra dim of the cube or ``alpha`` is not
        in ``(0, 1)``.
    DesignError
        If there are fewer than 2 datasets, the main block is not a single
        K-fold run, or ``K`` does not divide ``n``.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.across.kfold_variance import kfold_moments
    >>> d = cvstats.designs.kfold(20, 4, seed=0)
    >>> rng = np.random.default_rng(1)
    >>> e = rng.normal(size=(500, 1, 20, 1)) + rng.normal(size=(500, 1, 1, 1))
    >>> cube = cvstats.from_arrays(np.broadcast_to(e, (500, 4, 20, 1)), design=d,
    ...                            extra_dims=["dataset"])
    >>> mom = kfold_moments(cube)
    >>> [round(float(mom[v].squeeze()), 1) for v in ("sigma2", "omega", "gamma")]
    [2.0, 1.0, 1.0]
    >>> bool(np.isclose(mom.theta, mom.empirical_var).all())
    True
    """
    alpha = validate_alpha(alpha)
    if not isinstance(cube, xr.DataArray):
        raise CvstatsTypeError(f"`cube` must be an xarray.DataArray, got {type(cube).__name__}.")
    extra = get_extra_dims(cube)
    if dataset_dim not in extra:
        raise ArgumentError(
            f"`dataset_dim` = {dataset_dim!r} is not an extra dim of the cube; its extra dims "
            f"are {[str(d) for d in extra]} (dims {[str(d) for d in cube.dims]}). Build the "
            "cube with extra_dims=[...] naming the dim of independent datasets."
        )
    N = int(cube.sizes[dataset_dim])
    if N < 2:
        raise DesignError(
            f"kfold_moments needs at least 2 independent datasets along {dataset_dim!r}, got {N}."
        )
    err = kfold_errors(cube, method="kfold_moments")
    core = [dataset_dim, EXAMPLE]
    out = apply_kernel(_moments_kernel, [err.e, err.fold], [core, core], 24)
    fields = kk.KFoldMoments._fields
    est = dict(zip(fields, out[:12], strict=True))
    se = dict(zip(fields, out[12:], strict=True))
    n, K = int(err.attrs["n"]), int(err.attrs["K"])
    m = n // K
    data: dict[str, xr.DataArray] = {}
    for name in fields:
        data[name] = est[name].assign_attrs(description=_DESCRIPTIONS[name])
    (ok,) = apply_kernel(
        kk.admissible, [est["sigma2"], est["omega"], est["gamma"]], [[], [], []], 1, n=n, K=K
    )
    data["admissible"] = ok.astype(bool).assign_attrs(
        description="0 <= ω <= σ² and -(σ²+(m-1)ω)/(n-m) <= γ <= (σ²+(m-1)ω)/m"
    )
    z = float(scipy.stats.norm.isf(alpha / 2))
    for name in _WITH_SE:
        data[f"{name}_se"] = se[name].assign_attrs(
            description=f"jackknife standard error of {name}"
        )
        data[f"{name}_ci"] = bounds(
            est[name] - z * se[name], est[name] + z * se[name], alpha=alpha
        )
    lo, hi = apply_kernel(kk.variance_ci, [est["empirical_var"]], [[]], 2, df=N - 1, alpha=alpha)
    data["empirical_var_ci"] = bounds(lo, hi, alpha=alpha).assign_attrs(
        description="chi-square interval for Var[μ̂] (Gaussian μ̂)"
    )
    out = xr.Dataset(
        data,
        attrs={
            "method": "K-fold variance components from replicated runs (docs/theory.md §7, eq. 4)",
            "n": n,
            "K": K,
            "m": m,
            "N": N,
            "alpha": alpha,
            "dataset_dim": str(dataset_dim),
            "loss": err.attrs["loss"],
        },
    )
    return EstimatesResult.from_dataset(out)


# --------------------------------------------------------------------------
# quadratic estimators
# --------------------------------------------------------------------------


def _moment(moments: Mapping[str, Any] | xr.Dataset | EstimatesResult, name: str) -> xr.DataArray:
    try:
        value = moments[name]
    except KeyError as e:
        have = list(moments.data_vars if isinstance(moments, _DATASETS) else moments)
        raise ArgumentError(
            f"`moments` lacks {name!r}; it needs 'mu', 'sigma2', 'omega' and 'gamma' "
            f"(e.g. the Dataset of kfold_moments), got {[str(h) for h in have]}."
        ) from e
    if isinstance(value, xr.DataArray):
        return value
    arr = np.asarray(value, dtype=float)
    if arr.ndim:
        raise ArgumentError(
            f"`moments[{name!r}]` must be a scalar or an xarray.DataArray, got an array of "
            f"shape {arr.shape}."
        )
    return xr.DataArray(arr)


def quadratic_estimator_bias(
    estimator: str | ArrayLike,
    moments: Mapping[str, Any] | xr.Dataset | EstimatesResult,
    *,
    n: int | None = None,
    K: int | None = None,
    fold: ArrayLike | None = None,
) -> EstimatesResult:
    """Compute the expectation and political ratio of a quadratic variance estimator (§7).

    Any ``θ̂ = eᵀ W e`` has ``E[θ̂] = a(σ² + μ²) + b(ω + μ²) + c(γ + μ²)``
    with ``a = Σ_i W_ii``, ``b`` the sum of ``W_ij`` over pairs ``i ≠ j`` of the
    same block and ``c`` over pairs of different blocks (Lemma 3), while
    ``θ = Var[μ̂]`` is eq. (4). Unbiasedness for all moments would need
    ``a = 1/n``, ``b = (m-1)/n``, ``c = (n-m)/n`` and ``a + b + c = 0``:
    impossible (Theorem 1). The political ratio ``θ / E[θ̂]`` is above 1 when
    inference with ``θ̂`` is liberal.

    Named estimators (closed forms in
    :func:`cvstats.kernels.kfold.estimator_coefficients`):

    * ``"naive"`` — ``s²/n``, ``s²`` the sample variance of the ``n`` errors:
      ``(a, b, c) = (1/n, -(m-1)/(n(n-1)), -(n-m)/(n(n-1)))``.
    * ``"folds"`` — ``S²_folds/K``, the sample variance of the ``K`` fold means
      over ``K`` (the K-fold t): ``(1/n, (m-1)/n, -m/n)``, ``E = λ2/n``.
    * ``"theta1"``, ``"theta2"`` — Bengio & Grandvalet's hold-out estimators
      with ``K`` independent training sets and ``K`` independent test sets of
      ``n_test`` examples: the errors are the ``n = K n_test`` losses ``L_ki``
      and the blocks are the ``K`` test sets (``m = n_test``; ``ω`` is the
      covariance of two losses of one test set, ``γ = 0`` by independence).
      ``θ̂1`` is the same quadratic form as ``"naive"`` and ``θ̂2`` as
      ``"folds"``; ``θ̂2`` is unbiased when ``γ = 0``. **Pass ``n = K n_test``**
      (the total number of losses), not the paper's ``n``.

    Parameters
    ----------
    estimator : {"naive", "folds", "theta1", "theta2"} or array_like of shape (n, n)
        A named estimator or the matrix ``W``.
    moments : EstimatesResult, xarray.Dataset or mapping
        ``mu``, ``sigma2``, ``omega``, ``gamma`` (scalars or DataArrays), e.g.
        the result of :func:`kfold_moments`.
    n : int, optional
        Number of errors; default ``W``'s size, else ``moments.attrs["n"]``.
    K : int, optional
        Number of blocks; default ``moments.attrs["K"]``. Must divide ``n``.
    fold : array_like of int, shape (n,), optional
        Block of each error for a matrix ``W``; default ``K`` equal
        contiguous blocks.

    Returns
    -------
    EstimatesResult
        A result holding the Dataset of ``a``, ``b``, ``c`` (0-d);
        ``expected`` (``E[θ̂]``), ``theta``
        (eq. 4), ``bias`` (``E[θ̂] - θ``) and ``political_ratio``
        (``θ / E[θ̂]``) over the dims of the moments. Attrs ``estimator``,
        ``n``, ``K``, ``m``.

    Raises
    ------
    ArgumentError
        For an unknown name, a non-square ``W``, missing moments, or missing
        ``n``/``K``.
    DesignError
        If ``K`` does not divide ``n``.

    Examples
    --------
    >>> from cvstats.across.kfold_variance import quadratic_estimator_bias
    >>> mom = {"mu": 0.0, "sigma2": 1.0, "omega": 0.2, "gamma": 0.0}
    >>> res = quadratic_estimator_bias("theta2", mom, n=100, K=10)
    >>> round(float(res.political_ratio), 12)  # unbiased when γ = 0
    1.0
    >>> round(float(quadratic_estimator_bias("naive", mom, n=100, K=10).political_ratio), 2)
    2.85
    """
    attrs = moments.attrs if isinstance(moments, _DATASETS) else {}
    if isinstance(estimator, str):
        name = estimator
        W = None
    else:
        name = "matrix"
        W = np.asarray(estimator, dtype=float)
        if W.ndim != 2 or W.shape[0] != W.shape[1]:
            raise ArgumentError(f"`estimator` as a matrix W must be square (n, n), got {W.shape}.")
        if n is not None and n != W.shape[0]:
            raise ArgumentError(f"`n` = {n} but W is {W.shape[0]} x {W.shape[0]}.")
        n = W.shape[0]
    if n is None:
        n = attrs.get("n")
    if K is None:
        K = attrs.get("K") if fold is None else int(np.unique(np.asarray(fold)).size)
    if n is None or K is None:
        raise ArgumentError(
            "pass `n` (number of errors) and `K` (number of blocks), or moments from "
            "kfold_moments, whose attrs hold them."
        )
    if W is None:
        a, b, c = kk.estimator_coefficients(name, n, K)
    else:
        a, b, c = (float(x) for x in kk.block_coefficients(W, fold, K=K))
    m = n // K
    mu, s, w, g = (_moment(moments, k) for k in ("mu", "sigma2", "omega", "gamma"))
    (expected,) = apply_kernel(
        kk.expected_quadratic, [mu, s, w, g], [[], [], [], []], 1, a=a, b=b, c=c
    )
    theta = apply_kernel(kk.variance_components, [s, w, g], [[], [], []], 4, n=n, K=K)[3]
    out = xr.Dataset(
        {
            "a": xr.DataArray(a),
            "b": xr.DataArray(b),
            "c": xr.DataArray(c),
            "expected": expected,
            "theta": theta,
            "bias": expected - theta,
            "political_ratio": theta / expected,
        },
        attrs={"estimator": name, "n": n, "K": K, "m": m, "method": "Lemma 3 (docs/theory.md §7)"},
    )
    return EstimatesResult.from_dataset(out)
