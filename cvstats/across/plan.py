"""Plan an experiment from a pilot: how many splits, for what width and power (docs/theory.md §10).

Before the fits are paid for: from a pilot cube of a few random splits, the
split means' sample variance ``S²`` estimates ``E[S²] = σ1 (1 - ρ)`` (Lemma 1,
docs/theory.md §2), and with ``ρ`` (the test's own ``ρ0``, ``rho=``, or
:func:`~cvstats.across.rho.fit_rho` across the pilot's datasets) Lemma 1 and
Lemma 2 give, for every number of splits ``J``, the expected half-width of the
test's interval, the power of its test to detect a given difference and the
fits it costs: for the corrected resampled t and the corrected repeated k-fold
t, for the (corrected) bootstrap with ``R`` replicates and, from a pilot with a
``"half"`` block, for the conservative Z with ``M`` half-splits (Nadeau & Bengio,
2000, eq. (8); 2003). :func:`plan` returns them with the smallest ``J`` meeting a
target width and/or power within a budget of fits, as a
:class:`~cvstats.results.plan.PlanResult`; when a target is out of reach, it says so and
recommends the knee, the smallest ``J`` within ``knee_tolerance`` (10 %) of the best
half-width (or power) the budget buys (docs/planning.md, "When a target is out of reach").
From a pilot of many datasets, the power and size of the corrected resampled t can also
come from the pilot's datasets themselves, without Lemma 2 (``power_model="pilot"``,
docs/theory.md §10, "The pilot power model").
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy
import xarray as xr
from scipy import special

from cvstats.across.rho import fit_rho
from cvstats.cube import is_score, unit_dim, validate
from cvstats.cube.checks import validate_alpha
from cvstats.cube.compact import SLOT
from cvstats.cube.formula import pairwise
from cvstats.cube.schema import EXAMPLE, MODEL, SPLIT
from cvstats.errors import ArgumentError, CubeError, CvstatsTypeError, DesignError
from cvstats.inference.blocks import (
    J_DIM,
    M_DIM,
    SIDE_DIM,
    block_positions,
    block_sizes,
    half_means,
    kfold_layout,
    main_means,
    split_means,
)
from cvstats.inference.common import check_not_time_ordered
from cvstats.results.base import BOUNDS, CI_BOUND
from cvstats.results.plan import PlanResult

__all__ = [
    "plan",
    "PLANNED_METHODS",
    "POWER_MODELS",
    "PILOT_MIN_DATASETS",
    "PILOT_MIN_SPLITS",
    "DEFAULT_J",
    "DEFAULT_M",
    "DEFAULT_R",
    "SEARCH_LIMIT",
    "KNEE_TOLERANCE",
]

#: The tests :func:`plan` plans for, and the title of their plans.
PLANNED_METHODS = {
    "corrected_resampled_t": "Plan for the corrected resampled t",
    "corrected_repeated_kfold_t": "Plan for the corrected repeated k-fold t",
    "conservative_z": "Plan for the conservative Z",
    "corrected_bootstrap_t": "Plan for the corrected bootstrap",
    "bootstrap_t": "Plan for the bootstrap (resampling replicates)",
}
#: The design reported when no ``J`` is asked and no target is met (Nadeau & Bengio, 2000, §4:
#: beyond 15 splits the power of the corrected resampled t grew little in their simulations).
DEFAULT_J = 15
#: Half-splits of a conservative Z plan when ``M`` is not given (Nadeau & Bengio, 2000, §4).
DEFAULT_M = 10
#: Replicates of a bootstrap plan when ``R`` is not given: the ``R = 15`` of the bootstrap
#: (resampling replicates, docs/theory.md §4, method 5) in the simulation study of Nadeau &
#: Bengio (2003), whose settings docs/theory.md §6 lists ("Settings studied").
DEFAULT_R = 15
#: Most splits searched for the smallest design meeting a target, without a budget.
SEARCH_LIMIT = 10_000
#: The default relative tolerance of the knee recommended when a target is out of reach:
#: the smallest ``J`` whose half-width is within 10 % of the best reachable (docs/planning.md,
#: "When a target is out of reach").
KNEE_TOLERANCE = 0.1
# the extra dim of independent datasets (as for fit_rho)
_DATASET = "dataset"
# the default grid: J = 2..50 (random splits), or K, 2K, ... up to 50 folds (10 repeats at least)
_GRID_MAX = 50
_NAME = "plan"
# points of ρ̂'s interval, evenly spaced in k = ρ/(1 - ρ), at which the power band is
# evaluated besides ρ̂ (the power is not monotone in ρ and can dip inside the interval)
_RHO_POINTS = 7
# the upper end of ρ̂'s interval is clipped below 1 (ρ = 1: no number of splits helps)
_RHO_MAX = 0.999
_BOOTSTRAPS = ("corrected_bootstrap_t", "bootstrap_t")
#: The power models of :func:`plan` (docs/theory.md §10, "The pilot power model").
POWER_MODELS = ("auto", "gaussian", "pilot")
#: Least independent datasets (a ``dataset`` dim) of a pilot for ``power_model="pilot"``.
PILOT_MIN_DATASETS = 20
#: Least main splits per dataset of a pilot for ``power_model="pilot"``.
PILOT_MIN_SPLITS = 5
# the methods the pilot power model plans: their statistic uses the main splits only
_PILOT_METHODS = ("corrected_resampled_t",)
# random subsets of each dataset's pilot splits (the same for every dataset) and their seed
_SUBSETS = 100
_SUBSET_SEED = 0
# beyond these degrees of freedom the pilot model's noncentral t tail is A&S 26.7.10
_NCT_DF = 100
# elements of the pilot model's per-dataset arrays computed at once
_CHUNK = 2_000_000
# groups of datasets of the jackknife of the pilot model's power beyond J_p
_GROUPS = 20


def _curves(
    v_true: np.ndarray,
    v_est: np.ndarray,
    nu: np.ndarray,
    crit: np.ndarray,
    *,
    effect: float | None,
) -> tuple[np.ndarray, ...]:
    """Return a design's numbers from its two variances (docs/theory.md §10), elementwise.

    ``v_true = Var[μ̂]`` of the estimate, ``v_est = E[σ̂²]`` of the test's variance
    estimate, ``nu`` the degrees of freedom of ``σ̂²`` (``ν σ̂²/E[σ̂²] ~ χ²_ν``;
    ``inf`` for a known variance) and ``crit`` the test's critical value. The test
    rejects when ``|μ̂| > crit σ̂``; with ``μ̂ ~ N(δ, v_true)`` independent of
    ``σ̂²`` (Lemma 2, Nadeau & Bengio, 2003) the statistic is ``sqrt(PR)`` times a
    noncentral ``t'_ν(δ/sqrt(v_true))``, ``PR = v_true/v_est`` the political
    ratio. Returns the root-mean-square half-width ``crit sqrt(v_est)``, the mean
    half-width ``c4 crit sqrt(v_est)``, the power to detect ``effect``, the size
    and ``PR``.
    """
    v_true, v_est, nu, crit = np.broadcast_arrays(
        *(np.asarray(a, dtype=float) for a in (v_true, v_est, nu, crit))
    )
    finite = np.isfinite(nu)
    safe_nu = np.where(finite, nu, 1.0)
    half = crit * np.sqrt(v_est)
    c4 = np.where(
        finite,
        np.sqrt(2.0 / safe_nu)
        * np.exp(special.gammaln((safe_nu + 1) / 2) - special.gammaln(safe_nu / 2)),
        1.0,
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = v_true / v_est
        q = crit / np.sqrt(ratio)  # ratio = inf (v_est = 0): q = 0, every test rejects
    size = 2.0 * scipy.stats.t.sf(q, nu)
    if effect is None:
        power = np.full(half.shape, np.nan)
    else:
        delta = abs(effect)
        degenerate = v_true <= 0  # μ̂ = δ exactly (the limit J → ∞ at ρ = 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(degenerate, 0.0, delta / np.sqrt(np.where(degenerate, 1.0, v_true)))
            # P(|δ| > crit σ̂) with ν σ̂²/v_est ~ χ²_ν
            sure = np.where(
                finite,
                scipy.stats.chi2.cdf(safe_nu * delta**2 / (crit**2 * v_est), safe_nu),
                (delta > half).astype(float),
            )
        # P(T' < -q) for noncentrality λ is P(T' > q) for -λ (symmetry)
        spread = _upper_tail(q, nu, lam) + _upper_tail(q, nu, -lam)
        power = np.where(degenerate, sure, spread)
        power = np.where(v_est <= 0, 1.0, power)
    return half, c4 * half, np.clip(power, 0.0, 1.0), size, ratio


def _upper_tail(q: np.ndarray, df: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Return ``P(T' > q)`` for a noncentral ``t'_df(λ)``, robust far in the tails.

    scipy's (Boost's) series may stop short of its tolerance far in a tail (``ρ``
    well below ``ρ0``, ``J`` in the thousands, a large ``λ``) and warn, or give
    NaN; the value is then ~0 or ~1 all the same, and a NaN is replaced by the
    normal approximation ``Φ((λ - q)/sqrt(1 + q²/(2 df)))`` (``Φ(λ - q)`` for
    ``df = inf``).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.asarray(scipy.stats.nct.sf(q, df, lam), dtype=float)
    bad = ~np.isfinite(out)
    if np.any(bad):
        with np.errstate(divide="ignore", invalid="ignore"):
            approx = scipy.stats.norm.cdf((lam - q) / np.sqrt(1.0 + q**2 / (2.0 * df)))
        out = np.where(bad, approx, out)
    return out


def _design_curves(
    v_true: xr.DataArray,
    v_est: xr.DataArray,
    nu: xr.DataArray,
    crit: xr.DataArray,
    effect: float | None,
) -> tuple[xr.DataArray, ...]:
    """:func:`_curves` on DataArrays, broadcast against each other."""
    arrays = xr.broadcast(v_true, v_est, nu, crit)
    outs = _curves(*(a.values for a in arrays), effect=effect)
    return tuple(arrays[0].copy(data=o) for o in outs)


# ---------------------------------------------------------------------- the pilot power model
def _two_sided_tail(q: np.ndarray, df: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Return ``P(|T'| > q)`` for a noncentral ``t'_df(λ)``, elementwise.

    scipy's noncentral t (through :func:`_upper_tail`) up to ``df = 100``; beyond,
    the normal approximation of Abramowitz & Stegun (1964, eq. 26.7.10),
    ``P(T' <= t) ≈ Φ((t (1 - 1/(4 df)) - λ) / sqrt(1 + t²/(2 df)))``, whose error
    there is below 3e-4 (1e-4 beyond ``df = 200``) and which costs a fraction of
    scipy's series.
    """
    q, df, lam = (np.asarray(a, dtype=float) for a in (q, df, lam))
    if np.all(df <= _NCT_DF):
        out = _upper_tail(q, df, lam) + _upper_tail(q, df, -lam)
    elif np.all(df > _NCT_DF):
        shift, scale = q * (1 - 1 / (4 * df)), np.sqrt(1 + q**2 / (2 * df))
        out = special.ndtr((lam - shift) / scale) + special.ndtr((-lam - shift) / scale)
    else:
        q, df, lam = np.broadcast_arrays(q, df, lam)
        small = df <= _NCT_DF
        out = np.empty(q.shape)
        out[small] = _two_sided_tail(q[small], df[small], lam[small])
        out[~small] = _two_sided_tail(q[~small], df[~small], lam[~small])
    return np.clip(out, 0.0, 1.0)


class _PilotModel:
    """The pilot power model of the corrected resampled t (docs/theory.md §10).

    From the main split means ``x`` of a pilot of ``D`` independent datasets,
    shape ``(U, D, J_p)`` (units, datasets, splits), it gives the rejection
    probability of the test at ``J`` splits on a new dataset of the problem when
    the true value is the null plus ``δ`` (a location shift of every split mean),
    as the mean over the pilot's datasets of a per-dataset probability ``p_d``:

    * ``J <= J_p``: the rejection rate of the test on ``_SUBSETS`` random subsets of
      ``J`` of the dataset's ``J_p`` split means (the same subsets for every dataset),
      centred at ``μ̄``, the mean of the datasets' means, plus ``δ``. Split means of
      one dataset are independent draws given the data, so a subset of ``J`` of them
      is distributed as ``J`` fresh splits of it: the mean of ``p_d`` is unbiased
      for the rejection rate, whatever the distribution of the split means (up to
      ``μ̄`` for ``μ``);
    * ``J > J_p``: with split means Gaussian given the data, of mean ``A_d`` and
      spread ``τ_d²`` of their own, the test's statistic on a dataset is
      ``t'_{J-1}(θ_d sqrt(J)) / sqrt(1 + J c)``, ``θ_d = (A_d - μ + δ)/τ_d`` and ``c``
      the test's correction, so ``p_d = P(|t'_{J-1}(θ̃_d sqrt(J))| > t_{J-1} sqrt(1 + J c))``
      with ``θ̃_d = (Ã_d - μ̄ + δ)/τ̃_d`` from the dataset's mean and log-variance mapped
      onto the first two moments of ``(A_d, log τ_d²)`` across datasets
      (:meth:`_deconvolved`): an approximation.

    The standard error of the mean of ``p_d``: for ``J <= J_p`` the datasets' spread
    and ``μ̄``'s error (the influence function of each dataset, with ``dP/dμ̄`` by a
    central difference over ``μ̄``'s standard error); beyond, where every ``p_d``
    also depends on the moments the datasets share, a delete-a-group jackknife over
    ``_GROUPS`` groups of datasets.
    """

    def __init__(self, x: np.ndarray, c_test: float, alpha: float) -> None:
        self.x = np.asarray(x, dtype=float)
        n_units, n_datasets, J_p = self.x.shape
        self.D, self.J_p, self.c, self.alpha = n_datasets, J_p, float(c_test), alpha
        self.A = self.x.mean(-1)  # Â_d
        self.centered = self.x - self.A[..., None]
        self.tau2 = self.centered.var(-1, ddof=1)  # τ̂²_d
        self.mu = self.A.mean(-1)  # μ̄, per unit
        self.h = self.A.std(-1, ddof=1) / np.sqrt(n_datasets)  # μ̄'s standard error
        rng = np.random.default_rng(_SUBSET_SEED)
        self.perms = rng.permuted(np.tile(np.arange(J_p), (_SUBSETS, 1)), axis=1)
        self._denoised: tuple[np.ndarray, np.ndarray] | None = None

    # --------------------------------------------------------------- per dataset
    def _subsets(self, J: int, offsets: np.ndarray) -> np.ndarray:
        """Return ``p_d`` for ``J <= J_p``, shape ``(U, D, S)``; ``offsets`` ``(U, S)``."""
        crit = scipy.stats.t.isf(self.alpha / 2, J - 1)
        bound = crit**2 * (self.c + 1.0 / J)
        idx = self.perms[:, :J]
        n_units = self.x.shape[0]
        step = max(1, _CHUNK // (n_units * _SUBSETS * J * offsets.shape[-1]))
        out = np.empty((n_units, self.D, offsets.shape[-1]))
        for start in range(0, self.D, step):
            part = self.centered[:, start : start + step][..., idx]  # (U, d, B, J)
            mean, var = part.mean(-1), part.var(-1, ddof=1)
            num = (self.A[:, start : start + step, None] + mean)[..., None]
            reject = (num + offsets[:, None, None, :]) ** 2 > bound * var[..., None]
            out[:, start : start + step] = reject.mean(2)
        return out

    def _deconvolved(self) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(Ã_d, τ̃_d)``, shape ``(U, D)``: the datasets' effects and spreads, denoised.

        Under Gaussian split means given the data, ``Â_d = A_d + e_d`` with
        ``Var[e_d] = τ_d²/J_p`` and ``L̂_d = log τ̂²_d = log τ_d² + f_d`` with
        ``E[f_d] = ψ(ν/2) + log(2/ν)``, ``Var[f_d] = ψ'(ν/2)`` (``ν = J_p - 1``,
        digamma and trigamma: the log of a ``χ²_ν/ν``), ``e_d`` and ``f_d``
        independent of each other and of ``(A_d, τ_d)``. So the moments of
        ``(A_d, log τ_d²)`` across datasets follow from the pilot's: the means, and the
        covariance ``Σ = Σ̂ - diag(mean τ̂²_d / J_p, ψ'(ν/2))`` (its variances clipped at
        0, its covariance to keep it positive semi-definite). ``L̃_d`` is ``L̂_d``
        shrunk toward the mean of ``log τ_d²`` to its variance; ``Ã_d`` is ``μ̄`` plus
        the regression of ``A_d`` on ``log τ_d²`` at ``L̃_d`` plus the residual ``r_d``
        of ``Â_d`` on ``L̂_d``, shrunk dataset by dataset by
        ``sqrt(v / (v + τ̂²_d/J_p))``, ``v`` the residual variance of ``A_d`` (its noise
        ``e_d`` is the smaller the smaller ``τ_d``: a common factor would shrink the
        precise means of the datasets with small spreads, which dominate the rejections,
        as much as the noisy ones). The map is triangular, so the units of the loss do
        not matter.
        """
        if self._denoised is not None:
            return self._denoised
        nu = self.J_p - 1
        logs = np.log(self.tau2)
        d_log = logs - logs.mean(1, keepdims=True)
        d_eff = self.A - self.mu[:, None]
        v_log, v_eff = (d_log**2).mean(1, keepdims=True), (d_eff**2).mean(1, keepdims=True)
        cov = (d_eff * d_log).mean(1, keepdims=True)
        t_log = np.clip(v_log - special.polygamma(1, nu / 2), 0.0, None)
        t_eff = np.clip(v_eff - self.tau2.mean(1, keepdims=True) / self.J_p, 0.0, None)
        bound = np.sqrt(t_log * t_eff)
        t_cov = np.clip(cov, -bound, bound)
        with np.errstate(divide="ignore", invalid="ignore"):
            shrink = np.where(v_log > 0, np.sqrt(t_log / v_log), 0.0)
            slope_hat = np.where(v_log > 0, cov / v_log, 0.0)
            slope = np.where(t_log > 0, t_cov / t_log, 0.0)
            rest = d_eff - slope_hat * d_log
            t_rest = np.clip(t_eff - slope * t_cov, 0.0, None)
            noise = self.tau2 / self.J_p  # Var[e_d], dataset by dataset
            scale = np.where(t_rest + noise > 0, np.sqrt(t_rest / (t_rest + noise)), 0.0)
        centred = shrink * d_log  # L̃_d minus its mean
        mean_log = logs.mean(1, keepdims=True) - special.digamma(nu / 2) - np.log(2 / nu)
        effects = self.mu[:, None] + slope * centred + scale * rest
        self._denoised = (effects, np.exp((mean_log + centred) / 2))
        return self._denoised

    def theta(self, offsets: np.ndarray) -> np.ndarray:
        """Return ``θ̃_d = (Ã_d + offset)/τ̃_d``, shape ``(U, D, S)``; ``offsets`` ``(U, S)``."""
        effects, spread = self._deconvolved()
        return (effects[..., None] + offsets[:, None, :]) / spread[..., None]

    def per_dataset(self, Js: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Return ``p_d`` over ``Js``, shape ``(U, D, len(Js), S)``."""
        Js = np.asarray(Js, dtype=np.int64)
        out = np.empty((self.x.shape[0], self.D, Js.size, offsets.shape[-1]))
        small = np.flatnonzero(Js <= self.J_p)
        for i in small:
            out[:, :, i] = self._subsets(int(Js[i]), offsets)
        large = np.flatnonzero(Js > self.J_p)
        if large.size:
            theta = self.theta(offsets)[:, :, None, :]  # (U, D, 1, S)
            step = max(1, _CHUNK // theta.size)
            # chunks of J, split where the tail changes from scipy's to the approximation
            cut = int(np.searchsorted(Js[large], _NCT_DF + 1, side="right"))
            bounds = sorted({*range(0, large.size, step), cut, large.size})
            for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
                pos = large[start:stop]
                J = Js[pos].astype(float)[:, None]  # (n, 1)
                nu = J - 1
                q = scipy.stats.t.isf(self.alpha / 2, nu) * np.sqrt(1 + J * self.c)
                out[:, :, pos] = _two_sided_tail(q, nu, theta * np.sqrt(J))
        return out

    # --------------------------------------------------------------- the mixture
    def curve(
        self, Js: np.ndarray, deltas: Sequence[float], *, se: bool = False
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Return the rejection rate at each ``δ`` over ``Js``, ``(U, len(Js), len(deltas))``.

        With ``se``, also its standard error over the pilot's datasets (the same shape).
        """
        deltas = np.asarray(deltas, dtype=float)
        base = deltas[None, :] - self.mu[:, None]  # (U, S): the numerator's shift
        if not se:
            return self.per_dataset(Js, base).mean(1), None
        h = self.h[:, None]
        offsets = np.concatenate([base, base - h, base + h], axis=-1)
        p = self.per_dataset(Js, offsets)
        n = deltas.size
        p0, up, down = p[..., :n], p[..., n : 2 * n].mean(1), p[..., 2 * n :].mean(1)
        # dP/dμ̄: raising μ̄ by h lowers the shift by h
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(h[..., None] > 0, (up - down) / (2 * h[..., None]), 0.0)
        centred = (self.A - self.mu[:, None])[:, :, None, None]
        influence = p0 + slope[:, None] * centred
        error = influence.std(1, ddof=1) / np.sqrt(self.D)
        large = np.flatnonzero(np.asarray(Js) > self.J_p)
        if large.size:
            # beyond J_p every p_d also depends on the moments the datasets share: a
            # delete-a-group jackknife over _GROUPS groups of datasets
            groups = np.array_split(np.arange(self.D), min(_GROUPS, self.D))
            thetas = []
            for out in groups:
                part = _PilotModel(np.delete(self.x, out, axis=1), self.c, self.alpha)
                thetas.append(np.abs(part.theta(deltas[None, :] - part.mu[:, None])))
            top = max(float(t.max()) for t in thetas)
            rates = np.empty((len(groups), self.x.shape[0], large.size, deltas.size))
            for i, J in enumerate(np.asarray(Js)[large]):
                # p_d is an even function of λ = θ̃_d sqrt(J), the same for every group:
                # tabulated once per J, interpolated for each group
                grid, values = self._tail_table(int(J), top * np.sqrt(J))
                for g, theta in enumerate(thetas):
                    rates[g, :, i] = np.interp(theta * np.sqrt(J), grid, values).mean(1)
            G = len(groups)
            spread = np.sqrt((G - 1) / G * ((rates - rates.mean(0)) ** 2).sum(0))
            error[:, large] = spread
        return p0.mean(1), error

    def _tail_table(self, J: int, top: float) -> tuple[np.ndarray, np.ndarray]:
        """Tabulate ``P(|t'_{J-1}(λ)| > t_{J-1} sqrt(1 + J c))`` for ``λ`` in ``[0, top]``.

        Every 0.02 up to 40 beyond the critical value (linear interpolation then errs by
        less than 1e-4), and 1 beyond that.
        """
        nu = J - 1.0
        q = scipy.stats.t.isf(self.alpha / 2, nu) * np.sqrt(1 + J * self.c)
        end = min(top, q + 40.0)
        grid = np.append(np.arange(0.0, end + 0.02, 0.02), max(top, end) + 1.0)
        values = _two_sided_tail(q, nu, grid)
        values[grid > q + 40.0] = 1.0
        return grid, values

    def limit(self, delta: float) -> np.ndarray:
        """Return the rejection rate as ``J → ∞``: the share of ``|θ̃_d| > z sqrt(c)``, ``(U,)``."""
        theta = self.theta((delta - self.mu)[:, None])[..., 0]
        z = scipy.stats.norm.isf(self.alpha / 2)
        return (np.abs(theta) > z * np.sqrt(self.c)).mean(1)


def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ArgumentError(f"`{name}` must be a finite real number, got {value!r}.")
    return float(value)


def _count(name: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ArgumentError(f"`{name}` must be an int >= {least}, got {value!r}.")
    return int(value)


def _check_targets(
    target_width: Any, effect: Any, power: Any, alpha: float
) -> tuple[float | None, float | None, float]:
    if target_width is not None:
        target_width = _real("target_width", target_width)
        if target_width <= 0:
            raise ArgumentError(
                f"`target_width` must be a positive half-width (in the loss's units), "
                f"got {target_width!r}."
            )
    if effect is not None:
        effect = _real("effect", effect)
        if effect == 0:
            raise ArgumentError(
                "`effect` must be a non-zero difference to detect (the power to detect 0 "
                "is the test's level)."
            )
    power = _real("power", power)
    if not alpha < power < 1:
        raise ArgumentError(
            f"`power` must lie strictly between `alpha` = {alpha:g} and 1, got {power!r}."
        )
    return target_width, effect, power


def _units(pilot: xr.DataArray) -> tuple[xr.DataArray, str]:
    """Return the cube the plan runs on: the pairwise contrasts of a cube of >= 2 models."""
    unit = unit_dim(pilot)
    if unit == MODEL and pilot.sizes.get(MODEL, 1) >= 2:
        models = [str(m) for m in pilot[MODEL].values]
        pairs = len(models) * (len(models) - 1) // 2
        what = "difference" if pairs == 1 else f"{pairs} pairwise differences"
        note = f"planned for the {what} of the models {models} (cvstats.pairwise)"
        return pairwise(pilot), note
    return pilot, ""


def _within_variance(units: xr.DataArray) -> xr.DataArray:
    """Mean over the main splits of the sample variance of their test losses (σ0 - σ3)."""
    pos = block_positions(units, "main", _NAME)
    main = units.isel({SPLIT: pos})
    over = SLOT if SLOT in main.dims else EXAMPLE
    return main.var(over, ddof=1, skipna=True).mean(SPLIT)


def _check_rho(rho: Any, like: xr.DataArray) -> xr.DataArray:
    if isinstance(rho, xr.DataArray):
        extra = [str(d) for d in rho.dims if d not in like.dims]
        if extra:
            raise ArgumentError(
                f"`rho` has dims {extra} that the plan does not have (its dims: "
                f"{[str(d) for d in like.dims]})."
            )
        values = np.asarray(rho.values, dtype=float)
        out = rho.astype(float)
    else:
        value = _real("rho", rho)
        values = np.asarray(value)
        out = xr.DataArray(value)
    if not np.all((values >= 0) & (values < 1)):
        raise ArgumentError(
            f"`rho` must lie in [0, 1) (a correlation of split means, docs/theory.md §2), got "
            f"{np.ravel(values)[:5].tolist()}."
        )
    return out


def _labels(arr: xr.DataArray) -> list[str]:
    dims = [d for d in arr.dims]
    if not dims:
        return []
    stacked = arr.stack(_unit=dims) if len(dims) > 1 else arr.rename({dims[0]: "_unit"})
    return [str(v) for v in stacked["_unit"].values]


def _first_met(J: xr.DataArray, met: xr.DataArray) -> xr.DataArray:
    """Return the smallest ``J`` where ``met`` holds (NaN where it never does)."""
    return J.astype(float).where(met).min("J")


def _knee(
    J: xr.DataArray, curve: xr.DataArray, afford: Any, tolerance: float, *, higher: bool
) -> tuple[xr.DataArray, xr.DataArray]:
    """Return the knee of a curve over ``J`` and the ``J`` where its best is reached.

    The best reachable value is the least half-width (``higher=False``) or the
    greatest power (``higher=True``) of the designs searched within the budget
    (``afford``); the knee is the smallest ``J`` within the budget whose value is
    within ``tolerance`` of it, relatively: a half-width at most ``(1 + tolerance)``
    times the best, a power at least ``(1 - tolerance)`` times the best
    (docs/planning.md, "When a target is out of reach"). No monotonicity is assumed.
    """
    reach = curve.where(afford)
    best = reach.max("J") if higher else reach.min("J")
    near = curve >= (1 - tolerance) * best if higher else curve <= (1 + tolerance) * best
    return _first_met(J, near & afford), _first_met(J, reach == best)


def _design_values(method: str, M: Any, R: Any) -> tuple[str, np.ndarray]:
    """Return the design parameter of the method (``"M"``, ``"R"`` or none) and its values."""
    if method == "conservative_z":
        dim, given, default, least, other = "M", M, DEFAULT_M, 1, ("R", R)
    elif method in _BOOTSTRAPS:
        dim, given, default, least, other = "R", R, DEFAULT_R, 2, ("M", M)
    else:
        for name, value in (("M", M), ("R", R)):
            if value is not None:
                raise ArgumentError(
                    f"`{name}` applies to the conservative Z (M) and the bootstraps (R) only, "
                    f"not to method={method!r}."
                )
        return "", np.array([0])
    if other[1] is not None:
        raise ArgumentError(f"`{other[0]}` does not apply to method={method!r}; use `{dim}`.")
    if given is None:
        return dim, np.array([default])
    items = list(given) if isinstance(given, Sequence) and not isinstance(given, str) else [given]
    if not items:
        raise ArgumentError(f"`{dim}` must be an int or a non-empty sequence of ints.")
    values = np.unique([_count(dim, v, least) for v in items])
    return dim, values


def _unplanned_method(method: str) -> str:
    """Return why the pilot power model does not plan ``method``, and the fix."""
    return (
        f"power_model='pilot' is implemented for {list(_PILOT_METHODS)} only, not "
        f"method={method!r} (docs/theory.md §10); use power_model='gaussian' (Lemma 2)"
    )


def _choose_power_model(
    requested: str,
    method: str,
    means: xr.DataArray,
    n_datasets: int,
    J_p: int,
    *,
    rho_given: bool,
    n2_changed: bool,
) -> tuple[str, str]:
    """Return the power model used (``"gaussian"`` or ``"pilot"``) and what the note says of it.

    ``"pilot"`` raises, naming the fix, when the pilot model cannot be used; ``"auto"``
    then falls back to ``"gaussian"`` and, for a pilot with a ``dataset`` dim, says why.
    """
    if requested == "gaussian":
        return "gaussian", ""
    why: tuple[type[Exception], str] | None = None
    fix = "use power_model='gaussian' (Lemma 2)"
    if method not in _PILOT_METHODS:
        why = (ArgumentError, _unplanned_method(method))
    elif rho_given:
        why = (
            ArgumentError,
            "`rho` enters the Gaussian power model only: the pilot model takes the datasets' "
            "own spread of their means; drop `rho` or use power_model='gaussian'",
        )
    elif n2_changed:
        why = (
            ArgumentError,
            "the pilot power model needs the pilot's own test size: its datasets' split means "
            "cannot be carried to another `n_test`; drop `n_test` or use power_model='gaussian'",
        )
    elif not n_datasets:
        why = (
            CubeError,
            f"power_model='pilot' needs a pilot with a {_DATASET!r} dim of at least "
            f"{PILOT_MIN_DATASETS} independent datasets of the problem (as for fit_rho), but "
            f"the pilot has none; add one (e.g. cvstats.from_scores(..., "
            f"extra_dims=['{_DATASET}'])) or {fix}",
        )
    elif n_datasets < PILOT_MIN_DATASETS:
        why = (
            DesignError,
            f"power_model='pilot' needs at least {PILOT_MIN_DATASETS} datasets in the pilot's "
            f"{_DATASET!r} dim to average over, but it has {n_datasets}; pilot more datasets "
            f"or {fix}",
        )
    elif J_p < PILOT_MIN_SPLITS:
        why = (
            DesignError,
            f"power_model='pilot' needs at least {PILOT_MIN_SPLITS} main splits per dataset, "
            f"but the pilot has {J_p}; pilot more splits or {fix}",
        )
    else:
        per_dataset = means.var(J_DIM, ddof=1).compute()
        if not bool((per_dataset > 0).all()):
            why = (
                DesignError,
                "power_model='pilot' needs split means that vary within every dataset of the "
                "pilot, but some dataset's sample variance S² is zero or undefined (a missing "
                f"split mean, or identical models on it); {fix}",
            )
    if why is None:
        return "pilot", (
            f"power and size from the pilot's {n_datasets} datasets (power_model='pilot'): "
            f"random subsets of each dataset's {J_p} splits for J <= {J_p}, an "
            f"approximation beyond (docs/theory.md §10)"
        )
    if requested == "pilot":
        raise why[0](why[1][0].upper() + why[1][1:] + ".")
    if not n_datasets:
        return "gaussian", ""
    reason = why[1].split(";")[0]
    return "gaussian", f"power and size under Lemma 2 (power_model='gaussian'): {reason}"


def _half_variance(units: xr.DataArray, n2: int, n_datasets: int) -> dict[str, Any]:
    """Return the conservative Z's variance at half data from the pilot's "half" block (§10).

    ``τ'²`` is the mean of the within-half sample variances of the inner split
    means (Lemma 1.3 inside each half), ``V'_{J_h}`` the mean of
    ``(μ̂_(m) - μ̂^c_(m))²/2`` (the two halves are independent copies), and
    ``σ2' = V'_{J_h} - τ'²/J_h``, clipped at 0 (Lemma 1.2; the clipping biases the
    plan's ``E[σ̂²_cz]`` upward, most from a small pilot); pooled (averaged) over a
    ``dataset`` dim.
    """
    method = "plan (conservative_z)"
    sizes = block_sizes(units, "half", method)
    if not sizes.equal or sizes.n2 != n2:
        raise DesignError(
            f"plan (conservative_z) needs a 'half' block whose inner splits test n2 = {n2} "
            f"examples, as the main block does, but they test {sizes.n2_min} to "
            f"{sizes.n2_max}; draw the pilot with cvstats.designs.conservative_z(n, {n2}, ...)."
        )
    halves = half_means(split_means(units, ["half"], method), method)
    M_p, J_h = int(halves.sizes[M_DIM]), int(halves.sizes[J_DIM])
    if J_h < 2:
        raise DesignError(
            "plan (conservative_z) needs at least 2 inner splits per half (J >= 2 in "
            "cvstats.designs.conservative_z) to estimate their variance τ'² inside a half, "
            f"but the pilot's halves hold {J_h}."
        )
    tau2 = halves.var(J_DIM, ddof=1).mean((M_DIM, SIDE_DIM))
    side = halves.mean(J_DIM)
    diff = side.isel({SIDE_DIM: 0}, drop=True) - side.isel({SIDE_DIM: 1}, drop=True)
    v_h = (diff**2 / 2).mean(M_DIM)
    copies = max(n_datasets, 1)
    if n_datasets:
        tau2, v_h = tau2.mean(_DATASET), v_h.mean(_DATASET)
    tau2, v_h = tau2.compute(), v_h.compute()
    if bool((~(v_h > 0) | ~(tau2 > 0)).any()):
        raise DesignError(
            "plan (conservative_z) needs half means and inner split means that vary, but the "
            "pilot's 'half' block gives a zero variance: nothing to plan from."
        )
    return {
        "tau2": tau2,
        "v_h": v_h,
        "J_h": J_h,
        "M_p": M_p,
        "sigma2": (v_h - tau2 / J_h).clip(min=0.0),
        "clipped": (v_h - tau2 / J_h < 0).compute(),
        "df_v": M_p * copies,
        "df_tau": 2 * M_p * (J_h - 1) * copies,
        "n1": int(units.attrs["n"]) // 2 - n2,
    }


def _chi2_factors(df: Any, alpha: float) -> tuple[Any, Any]:
    """Factors ``ν/χ²_{ν,1-α/2}`` and ``ν/χ²_{ν,α/2}``: the ends of the interval for a variance."""
    return df / scipy.stats.chi2.isf(alpha / 2, df), df / scipy.stats.chi2.ppf(alpha / 2, df)


def _cz_ends(halves: dict[str, Any], inv_J: Any, alpha: float) -> tuple[Any, Any]:
    """Least and greatest ``σ2' + τ'²/J`` over the box of the pilot's two intervals (§10).

    ``V'_{J_h}`` and ``τ'²`` each get their own ``1 - alpha`` chi-square interval (``M_p``
    and ``2 M_p (J_h - 1)`` degrees of freedom, times the datasets); over the box they
    span, with ``σ2' = V'_{J_h} - τ'²/J_h >= 0`` (Lemma 1.2), ``W = (V - τ/J_h)_+ + τ/J``
    is greatest at ``V``'s upper end and an end of ``τ``'s interval (it is convex in
    ``τ``), and least at ``V``'s lower end and an end of ``τ``'s interval or its kink
    ``τ = J_h V``. Unlike a Satterthwaite interval for ``V̂'_{J_h} + (1/J - 1/J_h) τ̂'²``,
    the upper end keeps the uncertainty of ``V̂'_{J_h}`` when ``σ̂2'`` is clipped at 0.
    """
    J_h = halves["J_h"]
    v_lo, v_hi = (halves["v_h"] * f for f in _chi2_factors(halves["df_v"], alpha))
    t_lo, t_hi = (halves["tau2"] * f for f in _chi2_factors(halves["df_tau"], alpha))

    def w(v: Any, t: Any) -> Any:
        return (v - t / J_h).clip(min=0.0) + t * inv_J

    kink = (J_h * v_lo).clip(min=t_lo, max=t_hi)
    low = np.minimum(np.minimum(w(v_lo, t_lo), w(v_lo, t_hi)), w(v_lo, kink))
    high = np.maximum(w(v_hi, t_lo), w(v_hi, t_hi))
    return low, high


def plan(
    pilot: xr.DataArray,
    *,
    target_width: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    budget_fits: int | None = None,
    method: str = "corrected_resampled_t",
    J: int | None = None,
    rho: float | xr.DataArray | None = None,
    n_test: int | None = None,
    M: int | Sequence[int] | None = None,
    R: int | Sequence[int] | None = None,
    power_model: str = "auto",
    knee_tolerance: float = KNEE_TOLERANCE,
) -> PlanResult:
    """Plan an experiment from a pilot: width, power and cost against the number of splits.

    From the pilot's main block of ``J_p >= 2`` splits, ``S²`` (the sample
    variance of the split means) estimates ``τ² = E[S²] = σ1 (1 - ρ)`` without
    bias (Lemma 1, docs/theory.md §2), and ``Var[μ̂_J] = τ² (1/J + ρ/(1-ρ))``
    (Nadeau & Bengio, 2000, eq. (6)). Each test rejects when
    ``|μ̂_J| > c σ̂``; with ``E[σ̂²]`` its expected variance estimate and ``ν`` the
    degrees of freedom of ``σ̂²``, the plan gives for ``J`` splits
    (docs/theory.md §10):

    * the half-width ``c sqrt(E[σ̂²])`` of the ``1 - alpha`` interval at the
      expected variance estimate, which is the root mean square of the half-width
      (Lemma 1 only); the mean half-width under Lemma 2 is ``c4`` times it;
    * the power of the two-sided test at level ``alpha`` to detect a true
      difference ``effect``, and its size: under Lemma 2 (``power_model="gaussian"``)
      the statistic is ``sqrt(PR)`` times a noncentral ``t_ν`` with noncentrality
      ``effect / sqrt(Var[μ̂_J])``, ``PR = Var[μ̂_J] / E[σ̂²]`` the political ratio;
      from a pilot of many datasets (``power_model="pilot"``, the corrected resampled
      t only) the mean over the pilot's datasets of each one's rejection rate, without
      Lemma 2's Gaussian split means of one common spread (docs/theory.md §10, "The
      pilot power model");
    * the fits per learner;

    and the smallest ``J`` meeting ``target_width`` and/or the ``power`` to
    detect ``effect`` within ``budget_fits``. The methods
    (docs/theory.md §4):

    * corrected resampled t (method 6): ``E[σ̂²] = (1/J + n2/n1) τ²``,
      ``c = t_{J-1}``, ``ν = J - 1``, ``J`` fits;
    * corrected repeated k-fold t (§9.2): the same with ``n2/n1 = 1/(K-1)``;
    * corrected bootstrap (method 7): ``E[σ̂²] = (1 + J n2/n1) τ²/J``, the same
      as the corrected resampled t's, but ``c = t_{R-1}``, ``ν = R - 1``,
      ``(R + 1) J`` fits; the bootstrap (method 5) with ``n2/n1`` replaced by 0;
    * conservative Z (method 4, Nadeau & Bengio, 2000, eq. (8)):
      ``E[σ̂²_cz] = Var[μ̂'_J] = σ2' + τ'²/J``, the variance of the estimate on
      half the data at the training size ``⌊n/2⌋ - n2``, estimated from the
      pilot's ``"half"`` block; ``c = z_{1-alpha/2}``, ``ν = M`` (assuming
      ``r = 0`` and Gaussian half differences), ``J (1 + 2M)`` fits.

    A target no design can meet is not an error: the plan says so first, and why
    (within the budget, or at any ``J``: the half-width never falls below its
    limit as ``J → ∞``, since ``σ1 ρ`` does not shrink with more splits of the
    same data), and recommends the **knee** rather than the whole budget: for a
    width target out of reach, the smallest ``J`` whose half-width is at most
    ``1 + knee_tolerance`` times the best reachable one (the least half-width of the
    designs searched within the budget, or up to :data:`SEARCH_LIMIT` splits); for a
    power target out of reach, the smallest ``J`` whose power is at least
    ``1 - knee_tolerance`` times the best reachable power; with both targets, the
    larger of the two ``J`` (a target that can be met counting from the smallest ``J``
    meeting it). Beyond the knee, more fits buy less than ``knee_tolerance`` of the
    answer (docs/planning.md, "When a target is out of reach").

    Parameters
    ----------
    pilot : xarray.DataArray
        A loss cube or score cube (:func:`cvstats.from_scores`) with a main block
        of ``J_p >= 2`` splits of one test size, e.g. on
        ``cvstats.designs.resampled(n, n // 10, J=5)``; for
        ``method="conservative_z"`` also a ``"half"`` block of ``J_h >= 2`` inner
        splits per half of the same test size, e.g. on
        ``cvstats.designs.conservative_z(n, n // 10, J=5, M=5)`` (with fewer, the
        clipping of ``σ̂2'`` at 0 biases the plan upward: docs/theory.md §10). A cube of two or
        more models is planned for their pairwise differences
        (:func:`cvstats.pairwise`, which the result's ``note`` says); a contrast
        cube (:func:`cvstats.contrasts`) for its contrasts; a cube of one model for
        its level. Extra dims are kept, except ``dataset``: a ``dataset`` dim holds
        independent datasets of one problem (as for :func:`cvstats.fit_rho`), whose
        variances are pooled (averaged), whose ``ρ`` comes from ``fit_rho`` and, with
        20 or more datasets, over which the power is averaged (``power_model``).
    target_width : float, optional
        The half-width wanted, in the loss's (or score's) units.
    effect : float, optional
        The true difference to detect (``n1μ_a - n1μ_b`` for a contrast), against the
        null of no difference. Under the Gaussian model its sign does not matter
        (two-sided test); under the pilot model it may, as the datasets' effects need
        not be symmetric: the truth is then the null plus ``effect``.
    power : float, default 0.8
        The power wanted to detect ``effect``.
    alpha : float, default 0.05
        Level of the intervals (``1 - alpha``), of the tests and of the pilot's
        bands.
    budget_fits : int, optional
        Most fits per learner allowed.
    method : str, default "corrected_resampled_t"
        The test planned for, one of :data:`PLANNED_METHODS`:
        ``"corrected_resampled_t"``, ``"corrected_repeated_kfold_t"`` (a k-fold
        pilot, :func:`cvstats.designs.kfold`; ``J = K × repeats`` folds with
        ``ρ0 = 1/K``), ``"conservative_z"``, ``"corrected_bootstrap_t"`` or
        ``"bootstrap_t"``. The other tests are not planned (docs/planning.md says
        why).
    J : int, optional
        A number of splits to report on (for k-fold: of folds, a multiple of
        ``K``); default the smallest meeting the targets.
    rho : float or xarray.DataArray, optional
        The correlation ``ρ`` of two split means of the planned design, in
        ``[0, 1)`` (a DataArray over the units for one per contrast). Default:
        from ``fit_rho`` when the pilot has a ``dataset`` dim of two or more
        datasets (random splits), whose interval then widens the power band,
        else the test's own ``ρ0`` (``n2/(n1 + n2)``, or ``1/K``).
    n_test : int, optional
        The test size ``n2`` of the planned random splits (training size
        ``n1 = n1_p + n2_p - n2``); default the pilot's. A loss cube only, and not
        for the conservative Z: the within-split variance of the losses
        (``σ0 - σ3``) carries ``E[S²]`` from the pilot's ``n2`` to this one,
        assuming ``σ0 - σ3`` and ``σ3 - σ2`` do not change with the training size
        (docs/theory.md §10).
    M : int or sequence of int, optional
        Half-splits of the conservative Z (default 10, Nadeau & Bengio, 2000, §4);
        a sequence plans each (an ``M`` dim).
    R : int or sequence of int, optional
        Replicates (``>= 2``) of the bootstraps (default 15); a sequence plans each
        (an ``R`` dim).
    power_model : {"auto", "gaussian", "pilot"}, default "auto"
        The model of the power, the size and their bands (the width does not depend
        on it). ``"gaussian"``: Lemma 2 of Nadeau & Bengio (2003), split means
        jointly Gaussian with one conditional spread (a noncentral t). ``"pilot"``:
        a mixture over the pilot's ``dataset`` dim (at least
        :data:`PILOT_MIN_DATASETS` datasets of at least :data:`PILOT_MIN_SPLITS` main
        splits each, every one with varying split means), for the corrected
        resampled t; for ``J <= J_p`` the rate of rejections on random subsets of
        ``J`` of each dataset's splits (unbiased, whatever the distribution of the
        split means), beyond an approximation assuming split means Gaussian given the
        data, with a spread of their own per dataset (docs/theory.md §10). Not with
        ``rho`` or another ``n_test``. ``"auto"``: ``"pilot"`` when these hold, else
        ``"gaussian"`` (the ``note`` says why, for a pilot with a ``dataset`` dim).
        The result's ``power_model`` says which was used.
    knee_tolerance : float, default 0.1
        Relative tolerance of the knee recommended when a target cannot be met
        (:data:`KNEE_TOLERANCE`, in ``[0, 1)``): the smallest ``J`` within 10 % (by
        default) of the best reachable half-width (or power). 0 recommends the design
        reaching the best, e.g. the whole budget.

    Returns
    -------
    PlanResult
        Over ``J`` (the grid: 2 (or 1) to 50, the ``J`` asked, the designs found and
        the budget's), ``contrast`` (or ``model``), the pilot's extra dims and
        ``M`` or ``R`` (:class:`~cvstats.results.plan.PlanResult`); ``verdict()``
        says it in words.

    Raises
    ------
    DesignError
        If the pilot's main block has fewer than 2 splits or splits of different
        test sizes, if its split means do not vary (zero ``S²``: nothing to plan
        from), if ``fit_rho`` gives ``ρ̂ >= 1``, for a k-fold plan of a pilot
        that is not k-fold, for a conservative Z plan of a pilot without a
        ``"half"`` block of ``J_h >= 2`` inner splits of the main block's test size,
        or for ``power_model="pilot"`` with fewer than 20 datasets, fewer than 5
        main splits per dataset or a dataset whose split means do not vary.
    ArgumentError
        For an unknown ``method`` or ``power_model``, a non-positive
        ``target_width``, a zero ``effect``, ``power`` outside ``(alpha, 1)``, a
        ``budget_fits`` below the smallest design, a ``J`` below 2 (1 for the
        conservative Z and the bootstraps; for k-fold not a multiple of ``K``), a
        ``rho`` outside ``[0, 1)``, an ``n_test`` that leaves no training example,
        an ``M`` (``R``) for another method or below 1 (2), or
        ``power_model="pilot"`` for another method than the corrected resampled t,
        with ``rho`` or with another ``n_test``, or a ``knee_tolerance`` outside
        ``[0, 1)``.
    CubeError
        For a pilot that is not a valid cube, an ``n_test`` other than the
        pilot's on a score cube, or ``power_model="pilot"`` for a pilot without a
        ``dataset`` dim.
    CvstatsTypeError
        For a pilot that is not an xarray.DataArray.

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> d = cvstats.designs.resampled(100, 10, J=5, seed=0)
    >>> rng = np.random.default_rng(0)
    >>> losses = rng.normal(size=(5, 100, 2))
    >>> pilot = cvstats.from_arrays(losses, design=d, models=["a", "b"], name="sq")
    >>> res = cvstats.plan(pilot, target_width=0.3)
    >>> res.J_plan.values.tolist()
    [7.0]
    >>> print(res.verdict())
    J = 7 splits (7 fits per learner) give a 95% half-width of 0.29 for a − b, assuming
    ρ = ρ0 = n2/(n1 + n2) = 0.1; the target half-width 0.3 is met from J = 7.
    """
    if not isinstance(method, str) or method not in PLANNED_METHODS:
        raise ArgumentError(
            f"`method` must be one of {list(PLANNED_METHODS)}, got {method!r}; the other tests "
            "have no number of splits to plan, or an interval for another quantity "
            "(docs/planning.md)."
        )
    if not isinstance(power_model, str) or power_model not in POWER_MODELS:
        raise ArgumentError(
            f"`power_model` must be one of {list(POWER_MODELS)}, got {power_model!r} "
            '(docs/planning.md, "Which power model").'
        )
    if power_model == "pilot" and method not in _PILOT_METHODS:  # before reading the pilot
        raise ArgumentError(_unplanned_method(method) + ".")
    alpha = validate_alpha(alpha)
    target_width, effect, power = _check_targets(target_width, effect, power, alpha)
    knee_tolerance = _real("knee_tolerance", knee_tolerance)
    if not 0 <= knee_tolerance < 1:
        raise ArgumentError(
            f"`knee_tolerance` must lie in [0, 1) (a relative tolerance, e.g. 0.1 for 10 %), "
            f"got {knee_tolerance!r}."
        )
    if not isinstance(pilot, xr.DataArray):
        raise CvstatsTypeError(
            f"`pilot` must be a cube (xarray.DataArray), got {type(pilot).__name__}."
        )
    validate(pilot)
    check_not_time_ordered(pilot, _NAME)
    param, param_values = _design_values(method, M, R)
    units, note = _units(pilot)
    unit = unit_dim(units)
    score = is_score(units)
    cz, boot = method == "conservative_z", method in _BOOTSTRAPS

    # ------------------------------------------------------------------ the pilot
    means = main_means(split_means(units, ["main"], _NAME), _NAME, min_splits=2)
    sizes = block_sizes(units, "main", _NAME)
    if not sizes.equal:
        raise DesignError(
            f"plan needs a pilot whose main splits share one test size, but they test "
            f"{sizes.n2_min} to {sizes.n2_max} examples; draw the pilot with "
            "cvstats.designs.resampled(n, n_test, J=...)."
        )
    n = int(units.attrs["n"])
    n1_p, n2_p, J_p = sizes.n1, sizes.n2, sizes.n_splits
    s2_p = means.var(J_DIM, ddof=1)
    estimate = means.mean(J_DIM)
    df = J_p - 1
    n_datasets = int(s2_p.sizes.get(_DATASET, 0))
    if n_datasets:
        s2_p, estimate = s2_p.mean(_DATASET), estimate.mean(_DATASET)
        df *= n_datasets
    s2_p, estimate = s2_p.compute(), estimate.compute()
    estimate.attrs = dict(units.attrs)
    bad = ~(s2_p > 0)
    if bool(bad.any()):
        raise DesignError(
            "plan needs split means that vary across the pilot's splits, but their sample "
            f"variance S² is zero (or undefined) for {_labels(s2_p.where(bad, drop=True))}: "
            "with no variance there is nothing to plan from (identical models, or losses "
            "that do not depend on the split)."
        )

    # ------------------------------------------------------------------ the planned design
    kfold = method == "corrected_repeated_kfold_t"
    if kfold:
        K, _ = kfold_layout(units, "plan (corrected_repeated_kfold_t)")
        if n_test is not None:
            raise ArgumentError(
                "`n_test` applies to random splits only: a k-fold design tests n/K examples "
                "per fold."
            )
        n1, n2 = n1_p, n2_p
        c, rho0 = 1.0 / (K - 1), 1.0 / K
        step, smallest = K, K
    else:
        K = 0
        if cz and n_test is not None:
            raise ArgumentError(
                "`n_test` does not apply to the conservative Z: its halves' training size "
                "⌊n/2⌋ - n2 moves with n2, which the pilot's 'half' block does not show; plan "
                "at the pilot's test size."
            )
        n2 = n2_p if n_test is None else _count("n_test", n_test, 1)
        n1 = n1_p + n2_p - n2
        if n1 < 1:
            raise ArgumentError(
                f"`n_test` = {n2} leaves no training example (the pilot's splits use "
                f"{n1_p + n2_p} of n = {n} examples)."
            )
        c, rho0 = n2 / n1, n2 / (n1 + n2)
        step, smallest = 1, (1 if cz or boot else 2)
    # the test's own correction: 0 for the uncorrected bootstrap
    c_test = 0.0 if method == "bootstrap_t" else c
    model, model_note = _choose_power_model(
        power_model,
        method,
        means,
        n_datasets,
        J_p,
        rho_given=rho is not None,
        n2_changed=n2 != n2_p,
    )
    pilot_model = None
    if model == "pilot":
        stacked = means.transpose(*s2_p.dims, _DATASET, J_DIM).values
        pilot_model = _PilotModel(stacked.reshape(-1, n_datasets, J_p), c_test=c_test, alpha=alpha)
    if model_note:
        note = "; ".join(p for p in (note, model_note) if p)
    s2 = s2_p
    if n2 != n2_p:
        if score:
            raise CubeError(
                f"`n_test` = {n2} differs from the pilot's test size {n2_p}, but a score cube "
                "holds no per-example losses from which to carry E[S²] to another test size "
                "(docs/theory.md §10); plan at the pilot's test size, or pilot with losses."
            )
        if n2_p < 2:
            raise DesignError(
                "`n_test` needs the within-split variance of the pilot's losses, which a test "
                "size of 1 does not give."
            )
        within = _within_variance(units)
        if n_datasets:
            within = within.mean(_DATASET)
        within = within.compute()
        between = (s2_p - within / n2_p).clip(min=0.0)
        s2 = between + within / n2
        note = "; ".join(
            p
            for p in (
                note,
                f"E[S²] carried from the pilot's n2 = {n2_p} to n2 = {n2} with the "
                "within-split variance of the losses",
            )
            if p
        )
    halves = _half_variance(units, n2, n_datasets) if cz else None
    pilot_halves = halves["M_p"] if halves else 0
    if halves:
        clipped = halves["clipped"]
        if bool(clipped.any()):
            labels = _labels(clipped.where(clipped, drop=True))
            where = f" for {labels}" if labels else ""
            if len(labels) > 3:
                where = f" for {len(labels)} of {clipped.size} units, e.g. {labels[:3]}"
            caveat = (
                f"σ̂2' = V̂'_(J_h) - τ̂'²/J_h < 0 clipped at 0{where}: E[σ̂²_cz] is then "
                "biased upward and its band wide; pilot more half-splits (M >= 5, J >= 5)"
            )
        else:
            caveat = ""
        note = "; ".join(
            p
            for p in (
                note,
                f"E[σ̂²_cz] from the pilot's {halves['M_p']} half-splits of {halves['J_h']} "
                f"inner splits (n1' = {halves['n1']}), assuming r = 0 and Gaussian half "
                "differences for the power",
                caveat,
            )
            if p
        )

    # ------------------------------------------------------------------ ρ
    k_lo = k_hi = None
    if rho is not None:
        rho_used = _check_rho(rho, s2)
        k = rho_used / (1 - rho_used)
        source, assumption = "given", "as given"
    elif n_datasets >= 2 and not kfold:
        fit = fit_rho(units, alpha=alpha)
        rho_hat = fit["rho"].clip(min=0.0).compute()
        high = rho_hat >= 1
        if bool(high.any()):
            raise DesignError(
                f"fit_rho gives ρ̂ >= 1 for {_labels(rho_hat.where(high, drop=True))}: the "
                "split means of a dataset barely vary, so no number of splits reduces the "
                "variance; pass `rho=` to plan anyway."
            )
        # k = ρ/(1 - ρ) = σ2 / E[S²]: σ2 stays, E[S²] moves with n2
        k = rho_hat / (1 - rho_hat) * s2_p / s2
        rho_used = k / (1 + k)
        ends = fit["rho_ci"].clip(min=0.0, max=_RHO_MAX).compute()
        k_ends = ends / (1 - ends) * s2_p / s2
        k_lo = k_ends.sel({CI_BOUND: BOUNDS[0]}, drop=True)
        k_hi = k_ends.sel({CI_BOUND: BOUNDS[1]}, drop=True)
        source, assumption = "fit_rho", f"fit_rho across {n_datasets} datasets"
    else:
        k = xr.DataArray(c)
        rho_used = xr.DataArray(rho0)
        source = "rho0"
        if kfold:
            assumption = f"ρ = ρ0 = 1/K = {rho0:.2g}"
        else:
            assumption = f"ρ = ρ0 = n2/(n1 + n2) = {rho0:.2g}"
        extra = []
        if score:
            extra.append(
                "for a score, ρ0 = n2/(n1 + n2) is a guess (docs/theory.md §9.8); pass rho= or "
                "pilot many datasets"
            )
        if n_datasets >= 2:
            extra.append(
                "ρ0 used: fit_rho's ρ̂ of a k-fold cube averages pairs of folds and depends on "
                "the number of repeats (docs/theory.md §9.2)"
            )
        note = "; ".join(p for p in (note, *extra) if p)
    k, rho_used = k.broadcast_like(s2), rho_used.broadcast_like(s2)
    if k_lo is None:
        k_lo = k_hi = k
    k_lo, k_hi = k_lo.broadcast_like(s2), k_hi.broadcast_like(s2)
    sigma1 = s2 * (1 + k)  # σ1 = E[S²]/(1 - ρ)
    rho_ci = xr.concat(
        [k_lo / (1 + k_lo), k_hi / (1 + k_hi)], dim=CI_BOUND, coords="minimal"
    ).assign_coords({CI_BOUND: np.array(BOUNDS)})

    # ------------------------------------------------------------------ the designs' variances
    P = xr.DataArray(param_values, dims=param, coords={param: param_values}) if param else None

    def fits(Js: xr.DataArray) -> xr.DataArray:
        if cz:
            return Js * (1 + 2 * P)
        if boot:
            return Js * (P + 1)
        return Js * 1

    def parts(
        Js: xr.DataArray, kk: xr.DataArray, f_tau: Any = 1.0, f_est: Any = 1.0
    ) -> tuple[xr.DataArray, ...]:
        """Var[μ̂_J], E[σ̂²], ν and the critical value for ``J`` splits (``J = inf``: the limit).

        ``f_tau`` scales τ² (both variances for the t and the bootstraps), ``f_est``
        the conservative Z's E[σ̂²_cz].
        """
        inv = 1.0 / Js.astype(float)
        v_true = s2 * f_tau * (inv + kk)
        if cz:
            v_est = (halves["sigma2"] + halves["tau2"] * inv) * f_est
            nu = P.astype(float)
            crit = xr.full_like(nu, scipy.stats.norm.isf(alpha / 2))
        elif boot:
            v_est = s2 * f_tau * (inv + c_test)
            nu = (P - 1).astype(float)
            crit = nu.copy(data=scipy.stats.t.isf(alpha / 2, nu.values))
        else:
            v_est = s2 * f_tau * (inv + c_test)
            nu = Js.astype(float) - 1
            crit = nu.copy(data=scipy.stats.t.isf(alpha / 2, nu.values))
        return v_true, v_est, nu, crit

    def cz_band(Js: xr.DataArray) -> tuple[Any, Any]:
        """Return the ends of E[σ̂²_cz] = σ2' + τ'²/J over the box for (V'_{J_h}, τ'²) (§10).

        As factors of the point estimate ``(V̂'_{J_h} - τ̂'²/J_h)_+ + τ̂'²/J``.
        """
        if not cz:
            return 1.0, 1.0
        lo, hi = _cz_ends(halves, 1.0 / Js.astype(float), alpha)
        point = halves["sigma2"] + halves["tau2"] / Js.astype(float)
        return lo / point, hi / point

    # ------------------------------------------------------------------ the search
    if J is not None:
        J = _count("J", J, smallest)
        if J % step:
            raise ArgumentError(f"`J` must be a multiple of K = {K} (J = K × repeats), got {J}.")
    one = xr.DataArray([1], dims="J", coords={"J": [1]})
    cost = fits(one).isel(J=0, drop=True)  # fits per split, per M or R
    limit = SEARCH_LIMIT * step
    budget_J = None
    if budget_fits is not None:
        budget_fits = _count("budget_fits", budget_fits, 1)
        budget_J = (budget_fits // cost) // step * step
        if bool((budget_J < smallest).any()):
            worst = int(cost.max()) * smallest
            where = f" with {param} = {int(P.max())}" if param else ""
            raise ArgumentError(
                f"`budget_fits` = {budget_fits} does not pay for the smallest design{where} "
                f"(J = {smallest}: {worst} fits per learner)."
            )
    # the search ends at the budget, or at SEARCH_LIMIT splits (beyond, σ1 ρ dominates anyway)
    top = limit if budget_J is None else min(int(budget_J.max()), limit)
    opts = {"effect": effect}

    def pilot_da(Js: np.ndarray, values: np.ndarray) -> xr.DataArray:
        """Return the pilot model's ``(U, len(Js))`` numbers over ``(J, *s2.dims)``."""
        data = np.moveaxis(np.asarray(values).reshape(*s2.shape, len(Js)), -1, 0)
        return s2.expand_dims({"J": np.asarray(Js)}).copy(data=data)

    values = np.arange(smallest, top + 1, step)
    searched = xr.DataArray(values, dims="J", coords={"J": values})
    half, _, pwr, _, _ = _design_curves(*parts(searched, k), **opts)
    afford = fits(searched) <= budget_fits if budget_fits is not None else True
    wide = (half <= target_width) & afford if target_width is not None else None
    if effect is None:
        strong = None
    elif pilot_model is None:
        strong = (pwr >= power) & afford
    else:
        # the pilot model costs a mixture over the datasets per J: search in growing chunks
        # of J, up to the first J meeting every target for every unit
        chunks, powers, start, size = [], [], 0, 64
        done = xr.zeros_like(s2, dtype=bool)
        while start < values.size:
            Js = values[start : start + size]
            powers.append(pilot_da(Js, pilot_model.curve(Js, [effect])[0][..., 0]))
            ok = powers[-1] >= power
            if isinstance(afford, xr.DataArray):
                ok = ok & afford.sel(J=Js)
            chunks.append(ok)
            met = (ok & wide.sel(J=Js)) if wide is not None else ok
            done = done | met.any("J")
            start, size = start + size, min(2 * size, 4096)
            if bool(done.all()):
                break
        strong = xr.concat(chunks, dim="J").reindex(J=values, fill_value=False)
        # the power searched, for the knee (every J is searched unless every target is met)
        pwr = xr.concat(powers, dim="J").reindex(J=values)
    nan = xr.full_like(s2 * cost, np.nan, dtype=float)
    J_width = _first_met(searched, wide) if wide is not None else nan
    J_power = _first_met(searched, strong) if strong is not None else nan
    if wide is not None or strong is not None:
        both = (wide if wide is not None else True) & (strong if strong is not None else True)
        J_plan = _first_met(searched, both)
    else:
        J_plan = nan
    J_width, J_power, J_plan = (a.broadcast_like(nan) for a in (J_width, J_power, J_plan))
    # targets out of reach (within the budget, or the search): the knee of each curve
    # (docs/planning.md, "When a target is out of reach")
    knees, bests = [], []
    for met_from, curve, higher in ((J_width, half, False), (J_power, pwr, True)):
        if (higher and effect is None) or (not higher and target_width is None):
            continue
        knee, best = _knee(searched, curve, afford, knee_tolerance, higher=higher)
        knees.append(met_from.fillna(knee))
        bests.append(best.where(met_from.isnull()))
    if knees:
        J_knee = xr.concat(knees, dim="_target").max("_target").where(J_plan.isnull())
    else:
        J_knee = nan
    J_knee = J_knee.broadcast_like(nan)
    if J is not None:
        J_chosen = xr.full_like(nan, J, dtype=np.int64)
    elif knees:
        # a target out of reach: the knee; else the smallest design meeting every target
        J_chosen = J_plan.fillna(J_knee).astype(np.int64)
    else:
        # no target: DEFAULT_J (within the budget)
        usual = -(-DEFAULT_J // step) * step
        fallback = usual if budget_J is None else np.minimum(budget_J, usual)
        J_chosen = (nan.fillna(0) + fallback).astype(np.int64)

    # ------------------------------------------------------------------ the grid
    default = np.arange(smallest, max(_GRID_MAX, 10 * step) + 1, step)
    # the designs found, and around the knee: the J before it, and where the best is reached
    before = J_knee - step
    found = [
        a.values[np.isfinite(a.values)] for a in (J_width, J_power, J_plan, J_knee, before, *bests)
    ]
    extra_J = [J_chosen.values.ravel(), *found, [J] if J is not None else [], [top]]
    if budget_J is not None:
        extra_J.append(np.minimum(np.ravel(budget_J.values), limit))
    grid = np.union1d(default, np.concatenate([np.asarray(v, dtype=float) for v in extra_J]))
    grid = grid[grid >= smallest].astype(np.int64)
    Jg = xr.DataArray(grid, dims="J", coords={"J": grid})
    central = parts(Jg, k)
    half, mean_half, pwr, size, ratio = _design_curves(*central, **opts)
    # the pilot's band: τ² at the ends of its 1 - alpha interval (E[σ̂²_cz] at the ends of its
    # range over the box of V'_{J_h}'s and τ'²'s), and, for the power and the size, ρ̂ and
    # _RHO_POINTS points of ρ̂'s interval (fit_rho), evenly spaced in k = ρ/(1 - ρ); the
    # width is ρ-free
    tau_lo, tau_hi = _chi2_factors(df, alpha)
    est_lo, est_hi = cz_band(Jg)
    if cz:
        half_lo = _design_curves(*parts(Jg, k, f_est=est_lo), **opts)[0]
        half_hi = _design_curves(*parts(Jg, k, f_est=est_hi), **opts)[0]
    else:
        half_lo = _design_curves(*parts(Jg, k, f_tau=tau_lo), **opts)[0]
        half_hi = _design_curves(*parts(Jg, k, f_tau=tau_hi), **opts)[0]
    if pilot_model is None:
        ks = [k] if k_lo is k_hi else [
            k_lo + (k_hi - k_lo) * i / (_RHO_POINTS - 1) for i in range(_RHO_POINTS)
        ] + [k]  # fmt: skip
        ests = [est_lo, 1.0, est_hi] if cz else [1.0]
        scenarios = [
            _design_curves(*parts(Jg, kk, f_tau=ft, f_est=fe), **opts)
            for kk in ks
            for ft in (tau_lo, 1.0, tau_hi)
            for fe in ests
        ]
        sizes = xr.concat([sc[3] for sc in scenarios], dim="_scenario", coords="minimal")
        size_lo, size_hi = sizes.min("_scenario"), sizes.max("_scenario")
        if effect is None:
            pwr_lo = pwr_hi = pwr
        else:
            powers = xr.concat([sc[2] for sc in scenarios], dim="_scenario", coords="minimal")
            pwr_lo, pwr_hi = powers.min("_scenario"), powers.max("_scenario")
    else:
        # the mixture over the pilot's datasets (docs/theory.md §10, "The pilot power model"),
        # plus or minus z standard errors over them
        z = scipy.stats.norm.isf(alpha / 2)
        deltas = [0.0] if effect is None else [0.0, effect]
        rates, errors = pilot_model.curve(grid, deltas, se=True)
        ends = [np.clip(rates + side * z * errors, 0.0, 1.0) for side in (-1, 1)]
        size, size_lo, size_hi = (pilot_da(grid, a[..., 0]) for a in (rates, *ends))
        if effect is None:
            pwr_lo = pwr_hi = pwr
        else:
            pwr, pwr_lo, pwr_hi = (pilot_da(grid, a[..., 1]) for a in (rates, *ends))
    n_fits = fits(Jg)
    meets = xr.ones_like(half, dtype=bool)
    if target_width is not None:
        meets = meets & (half <= target_width)
    if effect is not None:
        meets = meets & (pwr >= power)
    if budget_fits is not None:
        meets = meets & (n_fits <= budget_fits)
    inf = xr.DataArray([np.inf], dims="J", coords={"J": [np.inf]})
    lim = _design_curves(*parts(inf, k), **opts)
    half_limit, power_limit = (a.isel(J=0, drop=True) for a in (lim[0], lim[2]))
    if pilot_model is not None and effect is not None:
        power_limit = s2.copy(data=pilot_model.limit(effect).reshape(s2.shape))

    tail = [param] if param else []
    order = ["J", unit, *[d for d in s2.dims if d != unit], *tail]
    units_order = order[1:]

    def grid_da(a: xr.DataArray) -> xr.DataArray:
        a = a.broadcast_like(half)
        return a.transpose(*order)

    def unit_da(a: xr.DataArray) -> xr.DataArray:
        return a.transpose(*[d for d in units_order if d in a.dims])

    def interval(low: xr.DataArray, high: xr.DataArray) -> xr.DataArray:
        out = xr.concat([grid_da(low), grid_da(high)], dim=CI_BOUND, coords="minimal")
        return out.assign_coords({CI_BOUND: np.array(BOUNDS)}).transpose(*order, CI_BOUND)

    return PlanResult(
        method=method,
        title=PLANNED_METHODS[method],
        loss=str(units.name),
        alpha=alpha,
        target_width=target_width,
        effect=effect,
        target_power=power,
        budget_fits=budget_fits,
        n=n,
        n1=n1,
        n2=n2,
        K=K,
        design_dim=param,
        half_n1=halves["n1"] if halves else 0,
        pilot_splits=J_p,
        pilot_n2=n2_p,
        pilot_df=df,
        pilot_halves=pilot_halves,
        search_end=int(top),
        search_limit=int(limit),
        rho_source=source,
        assumption=assumption,
        note=note,
        power_model=model,
        n_fits=n_fits.transpose("J", *tail),
        half_width=grid_da(half),
        half_width_ci=interval(half_lo, half_hi),
        mean_half_width=grid_da(mean_half),
        power=grid_da(pwr),
        power_ci=interval(pwr_lo, pwr_hi),
        size=grid_da(size),
        size_ci=interval(size_lo, size_hi),
        political_ratio=grid_da(ratio),
        variance=grid_da(central[0]),
        expected_variance=grid_da(central[1]),
        meets_target=grid_da(meets),
        pilot_estimate=unit_da(estimate),
        s2=unit_da(s2),
        rho=unit_da(rho_used),
        rho_ci=rho_ci.transpose(*[d for d in units_order if d in rho_ci.dims], CI_BOUND),
        sigma1=unit_da(sigma1),
        half_width_limit=unit_da(half_limit),
        power_limit=unit_da(power_limit),
        J_width=unit_da(J_width),
        J_power=unit_da(J_power),
        J_plan=unit_da(J_plan),
        J_knee=unit_da(J_knee),
        J_chosen=unit_da(J_chosen),
        knee_tolerance=knee_tolerance,
    )
