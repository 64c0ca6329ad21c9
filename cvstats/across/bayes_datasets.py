"""Bayesian sign and signed-rank tests of two learners across datasets.

Benavoli, Corani, Demšar & Zaffalon (2017), "Time for a change: a tutorial for
comparing multiple classifiers through Bayesian analysis", JMLR 18(77): the
Bayesian sign test and the Bayesian signed-rank test (§4–5; Benavoli et al.
2014, ICML), with a region of practical equivalence (rope). Their answer is
the posterior probability that ``a`` is practically better on a new dataset,
that the two are practically equivalent, or that ``b`` is, instead of a
p-value. The numbers are those of baycomp's ``SignTest`` and
``SignedRankTest`` (same priors, rope and probabilities; numpy draws, so
equal within Monte Carlo error); the kernels are in
:mod:`cvstats.kernels.bayes_datasets`. See docs/many-datasets.md.

The input is the table of the rank tests (:mod:`cvstats.across.ranks`), in
any form :func:`cvstats.across.table.read_table` reads (a wide or long pandas
table, a DataArray or cube with a ``dataset`` dim, a method's per-dataset
result), whose direction is read from the data or given as
``greater_is_better=`` (never assumed).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np
import xarray as xr

from cvstats.across.ranks import DATASET_DIM, checked_table, direction_of
from cvstats.errors import ArgumentError, CvstatsTypeError
from cvstats.inference.docs import fill_docstring
from cvstats.kernels import bayes_datasets as kbd
from cvstats.results.bayes_datasets import BayesianDatasetsResult

__all__ = ["BayesianDatasetsResult", "bayesian_sign_test", "bayesian_signed_rank_test"]

#: Default number of posterior draws (baycomp's): a probability's Monte Carlo
#: standard error is at most ``sqrt(0.25 / 50000) ≈ 0.0022``.
N_SAMPLES = 50_000


#: The parameters both tests document alike.
_FRAGMENTS = {
    "pair": """\
table : pandas.DataFrame or Series, xarray.DataArray, cube or result
    Per-dataset scores or losses, one number per dataset and learner: a wide
    or long table, a cube with a ``dataset`` dim or a method's result over
    ``(dataset, model)`` (:func:`~cvstats.across.table.read_table`).
a, b : str
    The two learners (``a`` is *left*, ``b`` *right*).""",
    "draws": """\
n_samples : int, default 50000
    Posterior draws; a probability's Monte Carlo standard error is at most
    ``sqrt(0.25 / n_samples)``.
seed : int, numpy.random.Generator or None
    Seed of the draws; ``None`` draws one from fresh entropy and records
    it in the result's ``seed``.
greater_is_better : bool, optional
    Whether a larger value is better (it decides which learner a difference
    favours): read from the table (:func:`~cvstats.across.ranks.direction_of`);
    required when the table does not record it, and must agree when it does.
dataset_dim : hashable, default "dataset"
    The datasets dim of a DataArray or cube, or column of a long table.""",
}

_F = TypeVar("_F", bound=Callable[..., object])


def _test_doc(func: _F) -> _F:
    """Fill the shared parameter lines of a docstring."""
    if func.__doc__:
        func.__doc__ = fill_docstring(func.__doc__, _FRAGMENTS)
    return func


def check_number(name: str, value: Any, *, positive: bool, fix: str) -> float:
    """Return ``value`` as a float, checked finite and ``> 0`` (``positive``) or ``>= 0``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentError(f"`{name}` must be a real number, got {value!r}. {fix}")
    value = float(value)
    bad = not math.isfinite(value) or (value <= 0 if positive else value < 0)
    if bad:
        bound = "> 0" if positive else ">= 0"
        raise ArgumentError(f"`{name}` must be finite and {bound}, got {value!r}. {fix}")
    return value


def _check_n_samples(n_samples: Any) -> int:
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ArgumentError(
            f"`n_samples` must be a positive int, got {n_samples!r}; the default "
            f"{N_SAMPLES} gives a Monte Carlo standard error below 0.0023."
        )
    return int(n_samples)


def seeded_rng(seed: Any) -> tuple[np.random.Generator, int | None]:
    """Return the Generator of ``seed`` and the int seed to record (None for a Generator)."""
    if isinstance(seed, np.random.Generator):
        return seed, None
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise CvstatsTypeError(
            f"`seed` must be a non-negative int, a numpy Generator or None, got {seed!r}."
        )
    if seed is not None and seed < 0:
        raise ArgumentError(f"`seed` must be a non-negative int, got {seed}.")
    if seed is None:
        resolved = int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0])
    else:
        resolved = int(seed)
    return np.random.default_rng(resolved), resolved


def _differences(
    table: Any,
    a: str,
    b: str,
    greater_is_better: bool | None,
    dataset_dim: Hashable,
    func: str,
) -> tuple[np.ndarray, bool]:
    """Return the per-dataset differences, positive where ``b`` is better, and the direction."""
    frame = checked_table(table, [a, b], dataset_dim=dataset_dim)
    if a == b:
        raise ArgumentError(f"`a` and `b` must be two different learners, got {a!r} twice.")
    greater = direction_of(table, greater_is_better, func=func, dataset_dim=dataset_dim)
    diff = (frame[b] - frame[a]).to_numpy()
    return (diff if greater else -diff), greater


def _result(
    method: str,
    title: str,
    a: str,
    b: str,
    diff: np.ndarray,
    draws: np.ndarray,
    *,
    rope: float,
    prior: float,
    prior_region: str,
    greater: bool,
    seed: int | None,
) -> BayesianDatasetsResult:
    p_left, p_rope, p_right = kbd.winner_probabilities(draws, rope > 0)
    wins, ties, losses = (int(c) for c in kbd.region_counts(diff, rope))
    posterior = xr.DataArray(
        draws[None, :, :],
        dims=("chain", "draw", "region"),
        coords={
            "chain": [0],
            "draw": np.arange(draws.shape[0]),
            "region": list(kbd.REGIONS),
        },
        name="theta",
        attrs={
            "description": (
                f"posterior probability of each region on a new dataset: left = {a} better "
                f"by more than the rope, rope = practically equivalent, right = {b} better"
            ),
            "rope": rope,
            "method": method,
        },
    )
    return BayesianDatasetsResult(
        method=method,
        title=title,
        model_a=str(a),
        model_b=str(b),
        p_left=float(p_left),
        p_rope=float(p_rope),
        p_right=float(p_right),
        posterior=posterior,
        rope=rope,
        prior=prior,
        prior_region=prior_region,
        wins=wins,
        ties=ties,
        losses=losses,
        n_datasets=int(diff.size),
        n_samples=int(draws.shape[0]),
        greater_is_better=greater,
        seed=seed,
    )


def _check_options(diff: np.ndarray, rope: Any, n_samples: Any, func: str) -> tuple[float, int]:
    """Return the checked ``rope`` and ``n_samples``.

    Identical scores on every dataset without a rope are refused: no region can be
    preferred (every draw would tie).
    """
    rope = check_number(
        "rope", rope, positive=False, fix="It is a half-width, in the table's units."
    )
    n_samples = _check_n_samples(n_samples)
    if rope == 0 and not np.any(diff):
        raise ArgumentError(
            f"{func}: the two learners have the same score on every dataset and `rope` = 0, "
            "so neither side can be preferred; give a `rope` > 0 to measure their "
            "practical equivalence."
        )
    return rope, n_samples


@_test_doc
def bayesian_signed_rank_test(
    table: Any,
    a: str,
    b: str,
    *,
    rope: float = 0.0,
    prior: float = 0.5,
    n_samples: int = N_SAMPLES,
    seed: int | np.random.Generator | None = None,
    greater_is_better: bool | None = None,
    dataset_dim: Hashable = DATASET_DIM,
) -> BayesianDatasetsResult:
    """Bayesian signed-rank test of ``a`` and ``b`` over datasets (Benavoli et al. 2017).

    The posterior of a Dirichlet process on the per-dataset differences, with
    a prior pseudo-observation at a zero difference (Benavoli et al. 2014): each
    draw gives the probabilities ``θ_left, θ_rope, θ_right`` that a new
    dataset's difference falls below, inside or above the rope (computed on
    the pairwise Walsh averages, the Bayesian counterpart of Wilcoxon's
    signed ranks). ``p_left`` is the probability that *left* (``a``
    practically better) is the most probable region, and so on: baycomp's
    ``SignedRankTest.probs``.

    Parameters
    ----------
    %(pair)s
    rope : float, default 0.0
        Half-width of the region of practical equivalence, in the table's
        units (``0.01`` for one point of accuracy on a 0–1 scale). ``0``: no
        rope; ``p_rope`` is then ``0`` and ``p_left + p_right = 1``.
    prior : float, default 0.5
        Weight of the prior pseudo-observation at a zero difference (baycomp's).
    %(draws)s

    Returns
    -------
    BayesianDatasetsResult

    Raises
    ------
    ArgumentError
        If the table has fewer than 2 datasets, a missing or non-finite score,
        an unknown learner or an unknown direction; if ``rope < 0``,
        ``prior <= 0`` or ``n_samples < 1``; if every difference is zero and
        ``rope = 0``.

    Examples
    --------
    >>> import pandas as pd
    >>> acc = pd.DataFrame({"nb": [0.81, 0.74, 0.91, 0.66, 0.85],
    ...                     "j48": [0.84, 0.78, 0.89, 0.72, 0.88]})
    >>> res = bayesian_signed_rank_test(acc, "nb", "j48", rope=0.01, seed=1,
    ...                                 greater_is_better=True)
    >>> round(float(res.p_right), 2) > 0.5
    True
    """
    func = "bayesian_signed_rank_test"
    diff, greater = _differences(table, a, b, greater_is_better, dataset_dim, func)
    rope, n_samples = _check_options(diff, rope, n_samples, func)
    prior = check_number("prior", prior, positive=True, fix="baycomp's default is 0.5.")
    rng, recorded = seeded_rng(seed)
    draws = kbd.signed_rank_posterior(diff, rope, prior=prior, n_samples=n_samples, rng=rng)
    return _result(
        func,
        "Bayesian signed-rank test",
        a,
        b,
        diff,
        draws,
        rope=rope,
        prior=prior,
        prior_region="zero",
        greater=greater,
        seed=recorded,
    )


@_test_doc
def bayesian_sign_test(
    table: Any,
    a: str,
    b: str,
    *,
    rope: float = 0.0,
    prior: float = 1.0,
    prior_region: str = "rope",
    n_samples: int = N_SAMPLES,
    seed: int | np.random.Generator | None = None,
    greater_is_better: bool | None = None,
    dataset_dim: Hashable = DATASET_DIM,
) -> BayesianDatasetsResult:
    """Bayesian sign test of learners ``a`` and ``b`` over datasets (Benavoli et al. 2017).

    The probabilities ``θ_left, θ_rope, θ_right`` that a new dataset's
    difference falls below, inside or above the rope have the posterior
    ``Dirichlet(n_left, n_rope, n_right)`` plus the prior's pseudo-count on
    ``prior_region`` (and ``1e-4`` on each region, as baycomp). ``p_left`` is
    the probability that *left* (``a`` practically better) is the most
    probable region, and so on: baycomp's ``SignTest.probs``. It counts the
    datasets only; the signed-rank test (:func:`bayesian_signed_rank_test`)
    also weighs how large the differences are.

    Parameters
    ----------
    %(pair)s
    rope : float, default 0.0
        Half-width of the region of practical equivalence, in the table's
        units. ``0``: the rope holds the ties only, and ``p_left`` and
        ``p_right`` are renormalised to sum to one (``p_rope = 0``), as baycomp.
    prior : float, default 1.0
        Prior pseudo-count (baycomp's).
    prior_region : {"rope", "left", "right"}, default "rope"
        Region the prior's pseudo-count goes to.
    %(draws)s

    Returns
    -------
    BayesianDatasetsResult

    Raises
    ------
    ArgumentError
        As :func:`bayesian_signed_rank_test`; also for an unknown ``prior_region``
        (``prior`` may be ``0``).

    Examples
    --------
    >>> import pandas as pd
    >>> acc = pd.DataFrame({"nb": [0.81, 0.74, 0.91, 0.66, 0.85],
    ...                     "j48": [0.84, 0.78, 0.89, 0.72, 0.88]})
    >>> res = bayesian_sign_test(acc, "nb", "j48", rope=0.01, seed=1, greater_is_better=True)
    >>> res.wins, res.ties, res.losses
    (1, 0, 4)
    """
    func = "bayesian_sign_test"
    diff, greater = _differences(table, a, b, greater_is_better, dataset_dim, func)
    rope, n_samples = _check_options(diff, rope, n_samples, func)
    prior = check_number("prior", prior, positive=False, fix="baycomp's default is 1.")
    if prior_region not in kbd.REGIONS:
        raise ArgumentError(
            f"`prior_region` must be one of {list(kbd.REGIONS)}, got {prior_region!r}."
        )
    rng, recorded = seeded_rng(seed)
    draws = kbd.sign_posterior(
        diff,
        rope,
        prior=prior,
        prior_region=kbd.REGIONS.index(prior_region),
        n_samples=n_samples,
        rng=rng,
    )
    return _result(
        func,
        "Bayesian sign test",
        a,
        b,
        diff,
        draws,
        rope=rope,
        prior=prior,
        prior_region=prior_region,
        greater=greater,
        seed=recorded,
    )
