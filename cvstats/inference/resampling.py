"""Tests built on random resampling splits (docs/theory.md §4, methods 2, 4–7, k-fold)."""

from __future__ import annotations

from typing import Any

import xarray as xr

from cvstats import kernels
from cvstats.cube.apply import apply_kernel
from cvstats.errors import DesignError
from cvstats.inference.blocks import (
    J_DIM,
    M_DIM,
    R_DIM,
    SIDE_DIM,
    block_sizes,
    check_one_size,
    half_means,
    kfold_layout,
    main_means,
    replicate_means,
    split_means,
)
from cvstats.inference.common import (
    check_options,
    check_sizes,
    correction_sizes,
    finish_test,
    reported_size,
    resolve_size,
)
from cvstats.inference.docs import fill_doc
from cvstats.inference.registry import METHODS
from cvstats.results import InferenceResult

__all__ = [
    "resampled_t",
    "corrected_resampled_t",
    "conservative_z",
    "bootstrap_t",
    "corrected_bootstrap_t",
    "kfold_t",
    "corrected_repeated_kfold_t",
]


def _main(
    cube: xr.DataArray,
    method: str,
    n1: int | None,
    n2: int | None,
    *,
    one_size: tuple[str, ...] = (),
) -> tuple[xr.DataArray, float, float, int]:
    """Main-block split means and the sizes; ``one_size``: the registry's blocks of one n2.

    With ``one_size`` (a correction), the sizes the correction uses
    (:func:`~cvstats.inference.common.correction_sizes`); otherwise the sizes
    reported (the medians, unless given).
    """
    sizes = block_sizes(cube, "main", method)
    mu = main_means(split_means(cube, ["main"], method), method, min_splits=2)
    if one_size:
        check_one_size(cube, one_size, method, n1, n2, known=sizes)
        n1_used, n2_used = correction_sizes(cube, sizes, n1, n2)
    else:
        n1_used, n2_used = check_sizes(
            cube, resolve_size("n1", n1, sizes.n1), resolve_size("n2", n2, sizes.n2)
        )
    return mu, n1_used, n2_used, sizes.n_splits


@fill_doc
def resampled_t(
    cube: xr.DataArray,
    *,
    mu0: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    n1: int | None = None,
    n2: int | None = None,
    **options: Any,
) -> InferenceResult:
    """Resampled t test (docs/theory.md §4, method 2).

    ``μ̂_J`` over the ``J`` main splits, ``σ̂² = S²_{μ̂_j} / J``, reference
    ``t_{J-1}``. Its variance only sees the spread across splits of the data at
    hand: valid for the conditional ``E[μ̂_J | data]``, liberal for ``n1μ`` with
    political ratio ``1 + Jρ/(1-ρ)``.

    Parameters
    ----------
    %(cube_main)s
    %(test_options)s
    n1, n2 : int, optional
        Training and test sizes; default from the cube (reported only: the
        plain resampled t does not use them, so its splits may differ in test
        size; the medians are reported).

    %(returns_inference_result)s

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> d = cvstats.designs.resampled(40, 8, J=5, seed=0)
    >>> cube = cvstats.from_arrays(np.random.default_rng(0).random((5, 40, 1)), design=d)
    >>> res = cvstats.resampled_t(cube, mu0=0.5)
    >>> res.df.item(), res.n_splits
    (4.0, 5)
    """
    opts = check_options(
        cube, mu0, alpha, alternative, method=METHODS["resampled_t"], extra=options
    )
    mu, n1, n2, J = _main(cube, "resampled t", n1, n2)
    stat = apply_kernel(kernels.resampled_t, [mu], [[J_DIM]], 4, mu0=opts.mu0)
    return finish_test(
        stat,
        cube,
        METHODS["resampled_t"],
        opts,
        n1=reported_size(n1),
        n2=reported_size(n2),
        n_splits=J,
        n_fits=J,
    )


@fill_doc
def corrected_resampled_t(
    cube: xr.DataArray,
    *,
    mu0: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    n1: int | None = None,
    n2: int | None = None,
    **options: Any,
) -> InferenceResult:
    """Corrected resampled t test of Nadeau & Bengio (docs/theory.md §4, method 6).

    ``μ̂_J`` over the ``J`` main splits, ``σ̂² = (1/J + n2/n1) S²_{μ̂_j}`` (the
    unbiased ``(1/J + ρ/(1-ρ)) S²`` with ``ρ0 = n2/(n1 + n2)``), reference
    ``t_{J-1}``; exact under Lemma 2 when ``ρ = ρ0``. Estimand ``n1μ``.

    Parameters
    ----------
    %(cube_main)s
    %(test_options)s
    n1, n2 : int, optional
        Training and test sizes in ``n2/n1``; default the cube's ``n_train`` and
        test count of the main block. Required (both) when the main block's
        random splits differ in test size: the correction assumes one ``n1``
        and one ``n2``, so the test is refused
        (:class:`~cvstats.errors.DesignError`) until they are stated. A k-fold
        main block whose folds differ (e.g. ``GroupKFold``) partitions the
        examples, so its mean sizes ``n - n/K`` and ``n/K`` are exact and are
        the default (reported rounded).

    %(returns_inference_result)s
    """
    opts = check_options(
        cube, mu0, alpha, alternative, method=METHODS["corrected_resampled_t"], extra=options
    )
    mu, n1, n2, J = _main(
        cube, "corrected resampled t", n1, n2, one_size=METHODS["corrected_resampled_t"].one_size
    )
    stat = apply_kernel(
        kernels.corrected_resampled_t, [mu], [[J_DIM]], 4, n1=n1, n2=n2, mu0=opts.mu0
    )
    return finish_test(
        stat,
        cube,
        METHODS["corrected_resampled_t"],
        opts,
        n1=reported_size(n1),
        n2=reported_size(n2),
        n_splits=J,
        n_fits=J,
    )


@fill_doc
def conservative_z(
    cube: xr.DataArray,
    *,
    mu0: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    n1: int | None = None,
    n2: int | None = None,
    **options: Any,
) -> InferenceResult:
    """Conservative Z of Nadeau & Bengio (docs/theory.md §4, method 4, eq. 11).

    ``μ̂_J`` from the main block; ``σ̂²_cz = (1/2M) Σ_m (μ̂_(m) - μ̂^c_(m))²`` from
    the ``M`` half-splits, each half holding ``J`` splits; reference ``N(0, 1)``.
    ``σ̂²_cz`` is unbiased for the variance at the smaller training size
    ``⌊n/2⌋ - n2``, hence conservative when the variance decreases with the
    training size. Cost ``J (1 + 2M)`` fits.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube with a main block and a ``"half"`` block
        (:func:`cvstats.designs.conservative_z` or ``nadeau_bengio``).
    %(test_options)s
    n1, n2 : int, optional
        Sizes reported for the estimand; default from the main block. Required
        (both) when the main or the ``"half"`` block has splits of different
        test sizes: ``σ̂²_cz`` estimates the variance at one training size
        ``⌊n/2⌋ - n2``, so the test is refused
        (:class:`~cvstats.errors.DesignError`) until the sizes are stated.

    %(returns_inference_result)s
    """
    opts = check_options(
        cube, mu0, alpha, alternative, method=METHODS["conservative_z"], extra=options
    )
    means = split_means(cube, ["main", "half"], "conservative Z")
    sizes = block_sizes(cube, "main", "conservative Z")
    mu = main_means(means, "conservative Z")
    halves = half_means(means, "conservative Z")
    reported = resolve_size("n1", n1, sizes.n1), resolve_size("n2", n2, sizes.n2)
    check_one_size(cube, METHODS["conservative_z"].one_size, "conservative Z", n1, n2, known=sizes)
    M, J_half = halves.sizes[M_DIM], halves.sizes[J_DIM]
    stat = apply_kernel(
        kernels.conservative_z,
        [mu, halves],
        [[J_DIM], [M_DIM, SIDE_DIM, J_DIM]],
        4,
        mu0=opts.mu0,
    )
    return finish_test(
        stat,
        cube,
        METHODS["conservative_z"],
        opts,
        n1=reported[0],
        n2=reported[1],
        n_splits=sizes.n_splits + 2 * M * J_half,
        n_fits=sizes.n_splits + 2 * M * J_half,
    )


def _bootstrap(
    cube: xr.DataArray,
    corrected: bool,
    mu0: float,
    alpha: float,
    alternative: str,
    n1: int | None,
    n2: int | None,
    options: dict[str, Any],
) -> InferenceResult:
    method = "corrected bootstrap" if corrected else "bootstrap"
    spec = METHODS["corrected_bootstrap_t" if corrected else "bootstrap_t"]
    opts = check_options(cube, mu0, alpha, alternative, method=spec, extra=options)
    means = split_means(cube, ["main", "replicate"], method)
    sizes = block_sizes(cube, "main", method)
    mu = main_means(means, method)
    reps = replicate_means(means, method)
    if corrected:
        check_one_size(cube, spec.one_size, method, n1, n2, known=sizes)
        n1_used, n2_used = correction_sizes(cube, sizes, n1, n2)
        kernel, extra = kernels.corrected_bootstrap_t, {"n1": n1_used, "n2": n2_used}
    else:
        n1_used, n2_used = check_sizes(
            cube, resolve_size("n1", n1, sizes.n1), resolve_size("n2", n2, sizes.n2)
        )
        kernel, extra = kernels.bootstrap_t, {}
    stat = apply_kernel(kernel, [mu, reps], [[J_DIM], [R_DIM, J_DIM]], 4, mu0=opts.mu0, **extra)
    n = sizes.n_splits + reps.sizes[R_DIM] * reps.sizes[J_DIM]
    return finish_test(
        stat,
        cube,
        spec,
        opts,
        n1=reported_size(n1_used),
        n2=reported_size(n2_used),
        n_splits=n,
        n_fits=n,
    )


@fill_doc
def bootstrap_t(
    cube: xr.DataArray,
    *,
    mu0: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    n1: int | None = None,
    n2: int | None = None,
    **options: Any,
) -> InferenceResult:
    """Bootstrap (resampling replicates) test (docs/theory.md §4, method 5).

    ``μ̂_J`` from the main block; ``σ̌²`` = sample variance of the ``R`` replicate
    estimates ``μ̌_r`` (each the mean of ``J`` fresh splits); reference
    ``t_{R-1}``. Like the resampled t it only sees the variability of the
    splits, not of the data: liberal for ``n1μ``. Cost ``(R + 1) J`` fits.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube with a main and a ``"replicate"`` block
        (:func:`cvstats.designs.bootstrap` or ``nadeau_bengio``).
    %(test_options)s
    n1, n2 : int, optional
        Sizes reported; default from the main block.

    %(returns_inference_result)s
    """
    return _bootstrap(cube, False, mu0, alpha, alternative, n1, n2, options)


@fill_doc
def corrected_bootstrap_t(
    cube: xr.DataArray,
    *,
    mu0: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    n1: int | None = None,
    n2: int | None = None,
    **options: Any,
) -> InferenceResult:
    """Corrected bootstrap of Nadeau & Bengio (docs/theory.md §4, method 7).

    As :func:`bootstrap_t` with ``σ̂² = (1 + J n2/n1) σ̌²`` (``ρ0`` plugged into
    ``(1 + Jρ/(1-ρ)) σ̌²``); reference ``t_{R-1}``; estimand ``n1μ``.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube with a main and a ``"replicate"`` block.
    %(test_options)s
    n1, n2 : int, optional
        Sizes in ``n2/n1``; default from the main block. Required (both) when
        the main or the ``"replicate"`` block has splits of different test
        sizes (refused with a :class:`~cvstats.errors.DesignError` otherwise).

    %(returns_inference_result)s
    """
    return _bootstrap(cube, True, mu0, alpha, alternative, n1, n2, options)


def _fold_means(cube: xr.DataArray, method: str) -> tuple[xr.DataArray, int, int]:
    K, repeats = kfold_layout(cube, method)
    return main_means(split_means(cube, ["main"], method), method, min_splits=2), K, repeats


@fill_doc
def kfold_t(
    cube: xr.DataArray,
    *,
    mu0: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    n1: int | None = None,
    n2: int | None = None,
    **options: Any,
) -> InferenceResult:
    """Naive K-fold cross-validation t test (docs/theory.md §4, "K-fold cv t").

    ``μ̂`` = mean of the ``K`` fold means, ``σ̂² = S²_folds / K``, reference
    ``t_{K-1}``. Ignores the correlation between folds (Bengio & Grandvalet):
    liberal for the learner's error.

    Parameters
    ----------
    %(cube_kfold)s
    %(test_options)s
    n1, n2 : int, optional
        Sizes reported; default the median fold's.

    %(returns_inference_result)s
    """
    opts = check_options(cube, mu0, alpha, alternative, method=METHODS["kfold_t"], extra=options)
    mu, K, repeats = _fold_means(cube, "k-fold t")
    if repeats != 1:
        raise DesignError(
            f"k-fold t uses one K-fold run, but the main block has {repeats} repeats; use "
            "corrected_repeated_kfold_t, or select one repeat with "
            "cube.isel(split=cube.repeat == 0)."
        )
    sizes = block_sizes(cube, "main", "k-fold t")
    stat = apply_kernel(kernels.kfold_t, [mu], [[J_DIM]], 4, mu0=opts.mu0)
    return finish_test(
        stat,
        cube,
        METHODS["kfold_t"],
        opts,
        n1=resolve_size("n1", n1, sizes.n1),
        n2=resolve_size("n2", n2, sizes.n2),
        n_splits=K,
        n_fits=K,
        params={"K": K},
    )


@fill_doc
def corrected_repeated_kfold_t(
    cube: xr.DataArray,
    *,
    mu0: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    n1: int | None = None,
    n2: int | None = None,
    **options: Any,
) -> InferenceResult:
    """Corrected repeated k-fold t of Bouckaert & Frank (2004) (docs/theory.md §4).

    All ``r·k`` fold means ``μ̂_j`` of ``r`` repetitions of ``k``-fold;
    ``σ̂² = (1/(r k) + 1/(k - 1)) S²``, reference ``t_{rk-1}`` — method 6 applied to
    the folds with ``n2/n1 = 1/(k-1)``. Estimand ``n1μ`` at ``n1 = n (k-1)/k``.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube whose main block is a repeated k-fold
        (:func:`cvstats.designs.kfold` with ``repeats >= 1``).
    %(test_options)s
    n1, n2 : int, optional
        Sizes reported; default the median fold's, or for folds that differ
        by more than one example the mean sizes. With folds of one size (up to
        the rounding of ``n`` into ``k`` folds: sizes differing by one example
        at most) the correction uses ``n2/n1 = 1/(k-1)`` as docs/theory.md §9
        says, whatever ``n1`` and ``n2``. With folds that differ by more (e.g.
        ``GroupKFold`` on groups of unequal size) every repeat still
        partitions the ``n`` examples, so the mean test size is exactly
        ``n/k`` and the mean training size ``n - n/k``: by default the
        correction uses them, ``n2/n1 = 1/(k-1)`` again, and reports them
        rounded. Given ``n1`` or ``n2`` (the other from the means), it uses
        their ``n2/n1`` instead (``σ̂² = (1/(r k) + n2/n1) S²``, as
        :func:`corrected_resampled_t`).

    %(returns_inference_result)s
    """
    opts = check_options(
        cube, mu0, alpha, alternative, method=METHODS["corrected_repeated_kfold_t"], extra=options
    )
    method = "corrected repeated k-fold t"
    mu, K, repeats = _fold_means(cube, method)
    sizes = block_sizes(cube, "main", method)
    n1_used, n2_used = resolve_size("n1", n1, sizes.n1), resolve_size("n2", n2, sizes.n2)
    if sizes.equal or (n1 is None and n2 is None):
        # folds of one size (up to rounding), or a partition's mean sizes n - n/k and n/k:
        # n2/n1 = 1/(k-1)
        if not sizes.equal:
            n1_used, n2_used = correction_sizes(cube, sizes, n1, n2)
        stat = apply_kernel(
            kernels.corrected_repeated_kfold_t, [mu], [[J_DIM]], 4, k=K, mu0=opts.mu0
        )
    else:  # folds of different sizes and stated sizes: their n2/n1
        n1_used, n2_used = correction_sizes(cube, sizes, n1, n2)
        stat = apply_kernel(
            kernels.corrected_resampled_t,
            [mu],
            [[J_DIM]],
            4,
            n1=n1_used,
            n2=n2_used,
            mu0=opts.mu0,
        )
    return finish_test(
        stat,
        cube,
        METHODS["corrected_repeated_kfold_t"],
        opts,
        n1=reported_size(n1_used),
        n2=reported_size(n2_used),
        n_splits=K * repeats,
        n_fits=K * repeats,
        params={"K": K, "repeats": repeats},
    )
