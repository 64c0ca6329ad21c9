"""Bayesian correlated t test (Benavoli, Corani, Demšar & Zaffalon 2017) on a cube.

See docs/beyond.md. The ``J`` main-block split means of a model or contrast
give a Student-t posterior of its mean (:mod:`cvstats.kernels.bayes`), with
the correlation ``ρ`` between splits taken from the design: ``1/K`` for a
(repeated) k-fold main block, ``n2/(n1 + n2)`` for random splits. The result,
:class:`~cvstats.results.bayes.BayesianResult`, lives in :mod:`cvstats.results.bayes`
and is re-exported here.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from cvstats.cube.apply import apply_kernel
from cvstats.errors import DesignError
from cvstats.inference.blocks import (
    J_DIM,
    block_sizes,
    kfold_layout,
    main_means,
    unequal_sizes_error,
)
from cvstats.inference.engine import Call, Check, method
from cvstats.inference.registry import MethodSpec
from cvstats.kernels import bayes as kb
from cvstats.results.bayes import BAYES_FRAME_COLUMNS, BayesianResult

__all__ = ["BayesianResult", "BAYES_FRAME_COLUMNS", "bayesian_correlated_t", "design_rho"]


def design_rho(cube: xr.DataArray, method: str = "the Bayesian correlated t") -> float:
    """``ρ`` of the main block: ``1/K`` for k-fold, ``n2/(n1 + n2)`` for random splits."""
    fold = np.asarray(cube["fold"].values)[np.asarray(cube["block"].values) == "main"]
    if fold.size and (fold >= 0).all():
        K, _ = kfold_layout(cube, method)
        return 1.0 / K
    sizes = block_sizes(cube, "main", method)
    if not sizes.equal:
        raise unequal_sizes_error(
            sizes,
            method,
            fix="Pass `rho=` (e.g. rho={n2}/({n1} + {n2}) from the medians), or draw splits "
            "of one test size.",
        )
    return sizes.n2 / (sizes.n1 + sizes.n2)


def _kernel(x: np.ndarray, *, rho: float, rope: tuple[float, float]) -> tuple[np.ndarray, ...]:
    post = kb.correlated_t_posterior(x, rho=rho)
    return (*post, *kb.posterior_probabilities(post, rope))


@method(
    MethodSpec(
        name="bayesian_correlated_t",
        title="Bayesian correlated t (Benavoli et al. 2017), ρ = {rho:.4g}",
        design="main",
        kernel="correlated_t_posterior",
        estimand="n1μ",
        target="learner",
        reference="posterior t",
        direction="as the corrected resampled t: right if ρ is (ρ = 1/K or n2/n by default)",
        short="as corrected t",
        rank=9,
        reason="a posterior with the corrected t's correlation (Corani & Benavoli 2015)",
        source="Corani & Benavoli (2015); Benavoli, Corani, Demšar & Zaffalon (2017), §3",
        fits="J",
        row=160,
        interval="credible",
        one_size=("main",),
        only={"mu0": 0.0, "alternative": "two-sided"},
        why_only=(
            "the Bayesian correlated t gives the posterior probabilities of the mean left of, "
            "inside and right of the rope (set `rope`), not a test of mu0 against an alternative"
        ),
        default=False,
        checks={
            "rope": Check(kb.validate_rope, (0.01, (-0.02, 0.01))),
            "rho": Check(lambda rho: None if rho is None else kb.validate_rho(rho), (0.2,)),
        },
    )
)
def bayesian_correlated_t(
    call: Call,
    *,
    rope: float | tuple[float, float] = 0.0,
    rho: float | None = None,
) -> BayesianResult:
    """Bayesian correlated t test of Benavoli et al. (2017) on the main block's splits.

    With ``x_j`` the ``J`` test means of the main block (of a model's loss or of a
    contrast, e.g. ``cvstats.pairwise(cube)``), the posterior of their expected
    value is Student ``t`` with ``df = J - 1``, location ``x̄`` and
    ``scale² = (1/J + ρ/(1 - ρ)) S²`` (``S²`` the sample variance of the ``x_j``);
    the probabilities of ``μ`` below, inside and above the rope follow. It is
    the corrected resampled t (docs/theory.md §4, method 6) read as a posterior, and
    shares its assumption that ``ρ`` is right: ``ρ0 = n2/(n1 + n2)`` for random
    splits (docs/theory.md §3) and, for a (repeated) k-fold main block, ``ρ = 1/K``:
    the value at which ``ρ/(1 - ρ)`` equals the corrected repeated k-fold t's
    ``n2/n1 = 1/(K - 1)`` (Bouckaert & Frank 2004; Corani & Benavoli 2015). For
    ``R > 1`` repetitions this is the correction's assumed correlation, not the
    average correlation of the ``R K`` fold means, which :func:`cvstats.fit_rho`
    estimates (``(R - 1)/(K R - 1)`` when the loss depends only on the test
    example; docs/theory.md §9.2, §9.5).

    Parameters
    ----------
    %(cube_main)s
    mu0 : float, default 0
        Taken like every test's; the posterior is not a test of ``mu0``, so only 0
        is accepted (put the value of interest in the ``rope``).
    alpha : float, default 0.05
        Level of the credible interval.
    alternative : {"two-sided"}
        Taken like every test's; only ``"two-sided"`` is accepted (the posterior
        gives the probabilities on both sides of the rope).
    rope : float or (float, float), default 0
        Region of practical equivalence: a half-width ``r`` (``(-r, r)``) or bounds.
    rho : float, optional
        Correlation between splits, in ``[0, 1)``; default from the design.

    Returns
    -------
    BayesianResult
        Over the cube's extra dims and ``model``/``contrast``.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> from cvstats.inference.bayes import bayesian_correlated_t
    >>> d = cvstats.designs.kfold(50, 10, seed=0)
    >>> losses = np.random.default_rng(0).random((10, 50, 2))
    >>> cube = cvstats.from_arrays(losses, design=d, models=["a", "b"])
    >>> res = bayesian_correlated_t(cvstats.pairwise(cube), rope=0.01)
    >>> res.rho, res.df.item(), res.to_frame().shape
    (0.1, 9.0, (1, 15))
    """
    cube, spec, opts = call.cube, call.spec, call.options
    method = "the Bayesian correlated t"
    low_high = kb.validate_rope(rope)
    rho_value = design_rho(cube, method) if rho is None else rho
    mu = main_means(call.split_means(["main"], method), method, min_splits=2)
    sizes = call.block_sizes("main", method)
    if sizes.n_splits < 2:  # pragma: no cover - main_means already checks
        raise DesignError(f"{method} needs at least 2 main splits.")
    out = apply_kernel(_kernel, [mu], [[J_DIM]], 6, rho=rho_value, rope=low_high)
    mean, scale, df, p_left, p_rope, p_right = out
    fields = spec.result_fields(rho=rho_value)
    return BayesianResult(
        method=fields["method"],
        title=fields["title"],
        loss=str(cube.name),
        mean=mean,
        scale=scale,
        df=df,
        p_left=p_left,
        p_rope=p_rope,
        p_right=p_right,
        rope=low_high,
        rho=rho_value,
        alpha=opts.alpha,
        n1=sizes.n1,
        n2=sizes.n2,
        n_splits=sizes.n_splits,
        reference=fields["reference"],
        estimand=fields["estimand"],
        target=fields["target"],
        direction=fields["direction"],
    )
