"""Tests built on random resampling splits (docs/theory.md §4, methods 2, 4–7, k-fold).

Each function is declared once, next to it (:func:`cvstats.inference.engine.method`).
"""

from __future__ import annotations

import xarray as xr

from cvstats import kernels
from cvstats.errors import DesignError
from cvstats.inference.blocks import (
    J_DIM,
    M_DIM,
    R_DIM,
    SIDE_DIM,
    check_one_size,
    half_means,
    kfold_layout,
    main_means,
    replicate_means,
)
from cvstats.inference.common import (
    check_sizes,
    correction_sizes,
    reported_size,
    resolve_size,
)
from cvstats.inference.engine import Call, method
from cvstats.inference.registry import (
    CORRECTED_DIRECTION,
    LIBERAL_FLAG,
    RESAMPLED_DIRECTION,
    MethodSpec,
)
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
    call: Call,
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
    cube = call.cube
    sizes = call.block_sizes("main", method)
    mu = main_means(call.split_means(["main"], method), method, min_splits=2)
    if one_size:
        check_one_size(cube, one_size, method, n1, n2, known=sizes, checked=call.known)
        n1_used, n2_used = correction_sizes(cube, sizes, n1, n2)
    else:
        n1_used, n2_used = check_sizes(
            cube, resolve_size("n1", n1, sizes.n1), resolve_size("n2", n2, sizes.n2)
        )
    return mu, n1_used, n2_used, sizes.n_splits


@method(
    MethodSpec(
        name="resampled_t",
        title="Resampled t",
        design="resampled",
        kernel="resampled_t",
        estimand="conditional",
        target="model",
        reference="t",
        direction=RESAMPLED_DIRECTION,
        short="liberal",
        flag=LIBERAL_FLAG,
        rank=4,
        reason="the J random splits' spread: valid for E[μ̂_J | data]",
        source="Nadeau & Bengio (2003), §4, method 2",
        fits="J",
        row=70,
    )
)
def resampled_t(call: Call, *, n1: int | None = None, n2: int | None = None) -> InferenceResult:
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
    mu, n1, n2, J = _main(call, "resampled t", n1, n2)
    stat = call.kernel(kernels.resampled_t, [mu], [[J_DIM]], mu0=call.mu0)
    return call.test(stat, n1=reported_size(n1), n2=reported_size(n2), n_splits=J)


@method(
    MethodSpec(
        name="corrected_resampled_t",
        title="Corrected resampled t (Nadeau & Bengio)",
        design="resampled",
        kernel="corrected_resampled_t",
        estimand="n1μ",
        target="learner",
        reference="t",
        direction=CORRECTED_DIRECTION,
        short="liberal if ρ > ρ0",
        rank=1,
        reason=(
            "valid for the learner at no cost beyond the J fits; exact when ρ = ρ0 = n2/n "
            "(Nadeau & Bengio 2003, §4)"
        ),
        source="Nadeau & Bengio (2003), §4, method 6",
        fits="J",
        row=80,
        one_size=("main",),
    )
)
def corrected_resampled_t(
    call: Call, *, n1: int | None = None, n2: int | None = None
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
    mu, n1, n2, J = _main(call, "corrected resampled t", n1, n2, one_size=call.spec.one_size)
    stat = call.kernel(kernels.corrected_resampled_t, [mu], [[J_DIM]], n1=n1, n2=n2, mu0=call.mu0)
    return call.test(stat, n1=reported_size(n1), n2=reported_size(n2), n_splits=J)


@method(
    MethodSpec(
        name="conservative_z",
        title="Conservative Z (Nadeau & Bengio)",
        design="half",
        kernel="conservative_z",
        estimand="n1μ",
        target="learner",
        reference="normal",
        direction="conservative (ratio < 1, a conjecture: variance falls with training size)",
        short="conservative",
        rank=3,
        reason=(
            "valid for the learner and on the safe side (Nadeau & Bengio 2003, §4); "
            "used when no corrected t applies"
        ),
        source="Nadeau & Bengio (2003), §4, method 4, eq. (11)",
        fits="J (1 + 2M)",
        row=90,
        one_size=("main", "half"),
    )
)
def conservative_z(call: Call, *, n1: int | None = None, n2: int | None = None) -> InferenceResult:
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
    cube, label = call.cube, "conservative Z"
    means = call.split_means(["main", "half"], label)
    sizes = call.block_sizes("main", label)
    mu = main_means(means, label)
    halves = half_means(means, label)
    reported = resolve_size("n1", n1, sizes.n1), resolve_size("n2", n2, sizes.n2)
    check_one_size(cube, call.spec.one_size, label, n1, n2, known=sizes, checked=call.known)
    M, J_half = halves.sizes[M_DIM], halves.sizes[J_DIM]
    stat = call.kernel(
        kernels.conservative_z, [mu, halves], [[J_DIM], [M_DIM, SIDE_DIM, J_DIM]], mu0=call.mu0
    )
    return call.test(
        stat, n1=reported[0], n2=reported[1], n_splits=sizes.n_splits + 2 * M * J_half
    )


def _bootstrap(call: Call, n1: int | None, n2: int | None) -> InferenceResult:
    """Both bootstrap tests: the replicates' spread, with or without the correction."""
    corrected = bool(call.spec.one_size)
    cube, label = call.cube, "corrected bootstrap" if corrected else "bootstrap"
    means = call.split_means(["main", "replicate"], label)
    sizes = call.block_sizes("main", label)
    mu = main_means(means, label)
    reps = replicate_means(means, label)
    if corrected:
        check_one_size(cube, call.spec.one_size, label, n1, n2, known=sizes, checked=call.known)
        n1_used, n2_used = correction_sizes(cube, sizes, n1, n2)
        kernel, extra = kernels.corrected_bootstrap_t, {"n1": n1_used, "n2": n2_used}
    else:
        n1_used, n2_used = check_sizes(
            cube, resolve_size("n1", n1, sizes.n1), resolve_size("n2", n2, sizes.n2)
        )
        kernel, extra = kernels.bootstrap_t, {}
    stat = call.kernel(kernel, [mu, reps], [[J_DIM], [R_DIM, J_DIM]], mu0=call.mu0, **extra)
    n = sizes.n_splits + reps.sizes[R_DIM] * reps.sizes[J_DIM]
    return call.test(stat, n1=reported_size(n1_used), n2=reported_size(n2_used), n_splits=n)


@method(
    MethodSpec(
        name="bootstrap_t",
        title="Bootstrap (resampling)",
        design="replicate",
        kernel="bootstrap_t",
        estimand="conditional",
        target="model",
        reference="t",
        direction=RESAMPLED_DIRECTION,
        short="liberal",
        flag=LIBERAL_FLAG,
        rank=5,
        reason="the bootstrap replicates' spread: valid for E[μ̂_J | data]",
        source="Nadeau & Bengio (2003), §4, method 5",
        fits="(R + 1) J",
        row=100,
    )
)
def bootstrap_t(call: Call, *, n1: int | None = None, n2: int | None = None) -> InferenceResult:
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
    return _bootstrap(call, n1, n2)


@method(
    MethodSpec(
        name="corrected_bootstrap_t",
        title="Corrected bootstrap (Nadeau & Bengio)",
        design="replicate",
        kernel="bootstrap_t",
        estimand="n1μ",
        target="learner",
        reference="t",
        direction=CORRECTED_DIRECTION,
        short="liberal if ρ > ρ0",
        rank=4,
        reason="the Nadeau–Bengio correction on bootstrap replicates (Nadeau & Bengio 2003, §4)",
        source="Nadeau & Bengio (2003), §4, method 7",
        fits="(R + 1) J",
        row=110,
        one_size=("main", "replicate"),
    )
)
def corrected_bootstrap_t(
    call: Call, *, n1: int | None = None, n2: int | None = None
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
    return _bootstrap(call, n1, n2)


def _fold_means(call: Call, method: str) -> tuple[xr.DataArray, int, int]:
    K, repeats = kfold_layout(call.cube, method)
    return main_means(call.split_means(["main"], method), method, min_splits=2), K, repeats


@method(
    MethodSpec(
        name="kfold_t",
        title="{K}-fold cv t",
        design="kfold",
        kernel="resampled_t",
        estimand="conditional",
        target="model",
        reference="t",
        direction="liberal for n1μ (ignores the correlation between folds)",
        short="liberal",
        flag=LIBERAL_FLAG,
        rank=8,
        reason=(
            "the folds' spread; ignores the correlation between folds "
            "(Bengio & Grandvalet 2004), so only a last resort"
        ),
        source="Dietterich (1998); Bengio & Grandvalet (2004)",
        fits="K",
        row=30,
    )
)
def kfold_t(call: Call, *, n1: int | None = None, n2: int | None = None) -> InferenceResult:
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
    mu, K, repeats = _fold_means(call, "k-fold t")
    if repeats != 1:
        raise DesignError(
            f"k-fold t uses one K-fold run, but the main block has {repeats} repeats; use "
            "corrected_repeated_kfold_t, or select one repeat with "
            "cube.isel(split=cube.repeat == 0)."
        )
    sizes = call.block_sizes("main", "k-fold t")
    stat = call.kernel(kernels.kfold_t, [mu], [[J_DIM]], mu0=call.mu0)
    return call.test(
        stat,
        n1=resolve_size("n1", n1, sizes.n1),
        n2=resolve_size("n2", n2, sizes.n2),
        n_splits=K,
        params={"K": K},
    )


@method(
    MethodSpec(
        name="corrected_repeated_kfold_t",
        title="Corrected repeated {K}-fold t (Bouckaert & Frank), {repeats}",
        design="repeated_kfold",
        kernel="corrected_resampled_t",
        estimand="n1μ",
        target="learner",
        reference="t",
        direction=(
            "liberal if ρ > ρ0 = 1/{K} (the correction's n2/n1 = 1/(K-1) as a correlation; "
            "the design's effective ρ, e.g. from fit_rho), conservative if ρ < ρ0"
        ),
        short="liberal if ρ > 1/K",
        rank=2,
        reason=(
            "the Nadeau–Bengio correction on repeated k-fold CV, ρ0 = 1/K (Bouckaert & Frank 2004)"
        ),
        source="Bouckaert & Frank (2004); Nadeau & Bengio (2003), §4, method 6",
        fits="r k",
        row=60,
        one_size=("main",),
    )
)
def corrected_repeated_kfold_t(
    call: Call, *, n1: int | None = None, n2: int | None = None
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
    method_label = "corrected repeated k-fold t"
    mu, K, repeats = _fold_means(call, method_label)
    sizes = call.block_sizes("main", method_label)
    n1_used, n2_used = resolve_size("n1", n1, sizes.n1), resolve_size("n2", n2, sizes.n2)
    if sizes.equal or (n1 is None and n2 is None):
        # folds of one size (up to rounding), or a partition's mean sizes n - n/k and n/k:
        # n2/n1 = 1/(k-1)
        if not sizes.equal:
            n1_used, n2_used = correction_sizes(call.cube, sizes, n1, n2)
        stat = call.kernel(kernels.corrected_repeated_kfold_t, [mu], [[J_DIM]], k=K, mu0=call.mu0)
    else:  # folds of different sizes and stated sizes: their n2/n1
        n1_used, n2_used = correction_sizes(call.cube, sizes, n1, n2)
        stat = call.kernel(
            kernels.corrected_resampled_t, [mu], [[J_DIM]], n1=n1_used, n2=n2_used, mu0=call.mu0
        )
    return call.test(
        stat,
        n1=reported_size(n1_used),
        n2=reported_size(n2_used),
        n_splits=K * repeats,
        params={"K": K, "repeats": repeats},
    )
