"""Dietterich's 5x2cv t test, its variants, and Alpaydın's combined F (docs/theory.md §4, 3)."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from cvstats import kernels
from cvstats.cube.apply import apply_kernel
from cvstats.errors import ArgumentError
from cvstats.inference.blocks import M_DIM, SIDE_DIM, block_sizes, five_by_two_means, split_means
from cvstats.inference.common import check_options, finish_test, make_result
from cvstats.inference.docs import fill_doc
from cvstats.inference.registry import METHODS
from cvstats.results import InferenceResult

__all__ = ["dietterich_5x2cv", "combined_5x2cv_f", "FIVE_BY_TWO_VARIANTS"]

#: Public variant names and the kernel's names for them.
FIVE_BY_TWO_VARIANTS = {"original": "dietterich", "t4": "t4", "t5": "t5"}


@fill_doc
def dietterich_5x2cv(
    cube: xr.DataArray,
    *,
    variant: str = "original",
    mu0: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    **options: Any,
) -> InferenceResult:
    """Dietterich's 5x2cv paired t test (docs/theory.md §4, method 3).

    ``μ̃_(m)``: mean loss on ``D_m^c`` of the model trained on ``D_m``;
    ``μ̃^c_(m)`` the reverse; ``σ̂²_Diet = (1/10) Σ_m (μ̃_(m) - μ̃^c_(m))²``.

    * ``"original"``: ``(μ̃_(1) - μ0)/σ̂_Diet`` against ``t_5``;
    * ``"t4"``: the ``m = 1`` term dropped from the sum (divide by 8), ``t_4``;
    * ``"t5"``: numerator ``sqrt(2) ((μ̃_(1) + μ̃^c_(1))/2 - μ0)``, ``t_5``.

    Targets ``n/2 μ``. The statistic does not use the sizes: each ``μ̃`` is the
    mean over its own test half, so the two halves may differ in size (a
    2-fold split of an odd ``n``, as mlxtend's ``paired_ttest_5x2cv`` makes with
    ``train_test_split(test_size=0.5)``: halves of 284 and 285 on 569
    examples); the reported ``n1`` and ``n2`` are then the medians.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube with a ``"5x2"`` block (:func:`cvstats.designs.five_by_two` or
        ``nadeau_bengio``).
    variant : {"original", "t4", "t5"}, default "original"
        Which statistic.
    %(test_options)s

    %(returns_inference_result)s
    """
    if variant not in FIVE_BY_TWO_VARIANTS:
        raise ArgumentError(
            f"`variant` must be one of {list(FIVE_BY_TWO_VARIANTS)}, got {variant!r}."
        )
    spec = METHODS["dietterich_5x2cv" + ("" if variant == "original" else f"_{variant}")]
    opts = check_options(cube, mu0, alpha, alternative, method=spec, extra=options)
    p = five_by_two_means(split_means(cube, ["5x2"], "5x2cv t"), "5x2cv t")
    sizes = block_sizes(cube, "5x2", "5x2cv t")
    stat = apply_kernel(
        kernels.dietterich_5x2_t,
        [p],
        [[M_DIM, SIDE_DIM]],
        4,
        mu0=opts.mu0,
        variant=FIVE_BY_TWO_VARIANTS[variant],
    )
    return finish_test(
        stat,
        cube,
        spec,
        opts,
        n1=sizes.n1,
        n2=sizes.n2,
        n_splits=10,
        n_fits=10,
    )


@fill_doc
def combined_5x2cv_f(
    cube: xr.DataArray,
    *,
    mu0: float = 0.0,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    **options: Any,
) -> InferenceResult:
    """Alpaydın's combined 5x2cv F test (docs/theory.md §4, method 3).

    With ``p_m^(1) = μ̃_(m) - μ0``, ``p_m^(2) = μ̃^c_(m) - μ0`` and
    ``s_m² = (p_m^(1) - p̄_m)² + (p_m^(2) - p̄_m)²``:
    ``F = Σ_m Σ_k (p_m^(k))² / (2 Σ_m s_m²)`` against ``F(10, 5)``, rejecting for
    large ``F``. As for :func:`dietterich_5x2cv`, the halves may differ in size
    (the statistic uses the ten means only). The test has no standard error or
    interval of its own: the result reports ``estimate`` = mean of the ten
    ``μ̃``, and NaN ``stderr``, ``df`` and interval bounds. Two-sided by nature.

    Parameters
    ----------
    cube : xarray.DataArray
        Loss cube with a ``"5x2"`` block.
    %(mu0)s
    alpha : float, default 0.05
        Kept for a uniform interface (no interval).
    alternative : {"two-sided"}
        The F test is two-sided by nature; any other value is refused.

    %(returns_inference_result)s
    """
    spec = METHODS["combined_5x2cv_f"]
    opts = check_options(cube, mu0, alpha, alternative, method=spec, extra=options)
    p = five_by_two_means(split_means(cube, ["5x2"], "combined 5x2cv F"), "combined 5x2cv F")
    sizes = block_sizes(cube, "5x2", "combined 5x2cv F")
    statistic, _, _, pvalue = apply_kernel(
        kernels.alpaydin_f, [p], [[M_DIM, SIDE_DIM]], 4, mu0=opts.mu0
    )
    estimate = p.mean([M_DIM, SIDE_DIM])
    nan = xr.full_like(estimate, np.nan)
    return make_result(
        estimate,
        nan,
        statistic,
        nan,
        pvalue,
        loss=str(cube.name),
        **spec.result_fields(),
        **opts._asdict(),
        n1=sizes.n1,
        n2=sizes.n2,
        n_splits=10,
        n_fits=10,
    )
