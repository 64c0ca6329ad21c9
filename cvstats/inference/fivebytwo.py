"""Dietterich's 5x2cv t test, its variants, and Alpaydın's combined F (docs/theory.md §4, 3).

Each function is declared once, next to it (:func:`cvstats.inference.engine.method`);
the 5x2cv t runs as three methods of a comparison table, one per ``variant``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from cvstats import kernels
from cvstats.inference.blocks import M_DIM, SIDE_DIM, five_by_two_means
from cvstats.inference.common import make_result
from cvstats.inference.engine import Call, method
from cvstats.inference.registry import MethodSpec
from cvstats.results import InferenceResult

__all__ = ["dietterich_5x2cv", "combined_5x2cv_f", "FIVE_BY_TWO_VARIANTS"]

#: Public variant names and the kernel's names for them.
FIVE_BY_TWO_VARIANTS = {"original": "dietterich", "t4": "t4", "t5": "t5"}

_S4 = "liberal if σ4 > 0"
_FIVE_BY_TWO = "σ1/(σ1 - σ4): liberal if σ4 = Cov[μ̃_(m), μ̃^c_(m)] > 0, conservative if < 0"
# the t5 numerator averages both halves of m = 1: Var = (σ1 + σ4)/2, times 2 (docs/theory.md §4)
_FIVE_BY_TWO_T5 = (
    "(σ1 + σ4)/(σ1 - σ4): liberal if σ4 = Cov[μ̃_(m), μ̃^c_(m)] > 0, conservative if < 0"
)
_REASONS = {
    "original": (
        "the learner's error at training size n/2; Dietterich (1998) found its size acceptable"
    ),
    "t4": "Nadeau & Bengio's t4 correction of the 5x2cv t (n/2 μ)",
    "t5": "Nadeau & Bengio's t5 correction of the 5x2cv t (n/2 μ)",
}
_SOURCES = {
    "original": "Dietterich (1998), §3.5",
    "t4": "Nadeau & Bengio (2003), §4, method 3 (t4)",
    "t5": "Nadeau & Bengio (2003), §4, method 3 (t5)",
}


def _five_by_two(variant: str, rank: int) -> MethodSpec:
    return MethodSpec(
        name="dietterich_5x2cv" + ("" if variant == "original" else f"_{variant}"),
        title="Dietterich 5x2cv t ({variant})",
        design="5x2",
        kernel="dietterich_5x2cv",
        estimand="n/2 μ",
        target="learner",
        reference="t",
        direction=_FIVE_BY_TWO_T5 if variant == "t5" else _FIVE_BY_TWO,
        short=_S4,
        rank=rank,
        reason=_REASONS[variant],
        source=_SOURCES[variant],
        fits="10",
        row=70 + 10 * rank,
        fixed={"variant": variant},
    )


@method(*(_five_by_two(v, 5 + i) for i, v in enumerate(FIVE_BY_TWO_VARIANTS)))
def dietterich_5x2cv(call: Call, *, variant: str = "original") -> InferenceResult:
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
    label = "5x2cv t"
    p = five_by_two_means(call.split_means(["5x2"], label), label)
    sizes = call.block_sizes("5x2", label)
    stat = call.kernel(
        kernels.dietterich_5x2_t,
        [p],
        [[M_DIM, SIDE_DIM]],
        mu0=call.mu0,
        variant=FIVE_BY_TWO_VARIANTS[variant],
    )
    return call.test(stat, n1=sizes.n1, n2=sizes.n2, n_splits=10)


@method(
    MethodSpec(
        name="combined_5x2cv_f",
        title="Combined 5x2cv F (Alpaydın)",
        design="5x2",
        kernel="combined_5x2cv_f",
        estimand="n/2 μ",
        target="learner",
        reference="F(10, 5)",
        direction="like 5x2cv t (depends on σ4)",
        short=_S4,
        rank=8,
        reason="Alpaydın's (1999) F on 5x2 CV; a p-value without an interval",
        source="Alpaydın (1999)",
        fits="10",
        row=150,
        interval="none",
        only={"alternative": "two-sided"},
        why_only="Alpaydın's combined F is two-sided only",
    )
)
def combined_5x2cv_f(call: Call) -> InferenceResult:
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
    label = "combined 5x2cv F"
    p = five_by_two_means(call.split_means(["5x2"], label), label)
    sizes = call.block_sizes("5x2", label)
    statistic, _, _, pvalue = call.kernel(
        kernels.alpaydin_f, [p], [[M_DIM, SIDE_DIM]], mu0=call.mu0
    )
    estimate = p.mean([M_DIM, SIDE_DIM])
    nan = xr.full_like(estimate, np.nan)
    return make_result(
        estimate,
        nan,
        statistic,
        nan,
        pvalue,
        loss=str(call.cube.name),
        **call.spec.result_fields(),
        **call.options._asdict(),
        n1=sizes.n1,
        n2=sizes.n2,
        n_splits=10,
        n_fits=10,
    )
