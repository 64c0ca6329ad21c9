"""The power models of a plan: width, power and size of a design (docs/theory.md §10).

Under Lemma 2 of Nadeau & Bengio (2003) (``power_model="gaussian"``), a design's numbers
follow from two variances, ``Var[μ̂_J]`` and ``E[σ̂²]``, its degrees of freedom and
critical value (:func:`curves`, :class:`Variances`); from a pilot of many datasets
(``power_model="pilot"``) the power and the size of the corrected resampled t are a
mixture over the pilot's datasets (:class:`PilotModel`, docs/theory.md §10, "The pilot
power model"). May import the layers below ``across`` (docs/architecture.md), and the
plan's options.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy
import xarray as xr
from scipy import special

from cvstats.across.plan.options import (
    BOOTSTRAPS,
    DATASET,
    PILOT_METHODS,
    PILOT_MIN_DATASETS,
    PILOT_MIN_SPLITS,
    unplanned_method,
)
from cvstats.errors import ArgumentError, CubeError, DesignError
from cvstats.inference.blocks import J_DIM

# points of ρ̂'s interval, evenly spaced in k = ρ/(1 - ρ), at which the power band is
# evaluated besides ρ̂ (the power is not monotone in ρ and can dip inside the interval)
_RHO_POINTS = 7
#: Random subsets of each dataset's pilot splits (the same for every dataset) and their seed.
SUBSETS = 100
SUBSET_SEED = 0
# beyond these degrees of freedom the pilot model's noncentral t tail is A&S 26.7.10
_NCT_DF = 100
# elements of the pilot model's per-dataset arrays computed at once
_CHUNK = 2_000_000
# groups of datasets of the jackknife of the pilot model's power beyond J_p
_GROUPS = 20


def curves(
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


def design_curves(
    v_true: xr.DataArray,
    v_est: xr.DataArray,
    nu: xr.DataArray,
    crit: xr.DataArray,
    effect: float | None,
) -> tuple[xr.DataArray, ...]:
    """:func:`curves` on DataArrays, broadcast against each other."""
    arrays = xr.broadcast(v_true, v_est, nu, crit)
    outs = curves(*(a.values for a in arrays), effect=effect)
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


class PilotModel:
    """The pilot power model of the corrected resampled t (docs/theory.md §10).

    From the main split means ``x`` of a pilot of ``D`` independent datasets,
    shape ``(U, D, J_p)`` (units, datasets, splits), it gives the rejection
    probability of the test at ``J`` splits on a new dataset of the problem when
    the true value is the null plus ``δ`` (a location shift of every split mean),
    as the mean over the pilot's datasets of a per-dataset probability ``p_d``:

    * ``J <= J_p``: the rejection rate of the test on ``SUBSETS`` random subsets of
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
        rng = np.random.default_rng(SUBSET_SEED)
        self.perms = rng.permuted(np.tile(np.arange(J_p), (SUBSETS, 1)), axis=1)
        self._denoised: tuple[np.ndarray, np.ndarray] | None = None

    # --------------------------------------------------------------- per dataset
    def _subsets(self, J: int, offsets: np.ndarray) -> np.ndarray:
        """Return ``p_d`` for ``J <= J_p``, shape ``(U, D, S)``; ``offsets`` ``(U, S)``."""
        crit = scipy.stats.t.isf(self.alpha / 2, J - 1)
        bound = crit**2 * (self.c + 1.0 / J)
        idx = self.perms[:, :J]
        n_units = self.x.shape[0]
        step = max(1, _CHUNK // (n_units * SUBSETS * J * offsets.shape[-1]))
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
                part = PilotModel(np.delete(self.x, out, axis=1), self.c, self.alpha)
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


def choose_power_model(
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
    if method not in PILOT_METHODS:
        why = (ArgumentError, unplanned_method(method))
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
            f"power_model='pilot' needs a pilot with a {DATASET!r} dim of at least "
            f"{PILOT_MIN_DATASETS} independent datasets of the problem (as for fit_rho), but "
            f"the pilot has none; add one (e.g. cvstats.from_scores(..., "
            f"extra_dims=['{DATASET}'])) or {fix}",
        )
    elif n_datasets < PILOT_MIN_DATASETS:
        why = (
            DesignError,
            f"power_model='pilot' needs at least {PILOT_MIN_DATASETS} datasets in the pilot's "
            f"{DATASET!r} dim to average over, but it has {n_datasets}; pilot more datasets "
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


def chi2_factors(df: Any, alpha: float) -> tuple[Any, Any]:
    """Factors ``ν/χ²_{ν,1-α/2}`` and ``ν/χ²_{ν,α/2}``: the ends of the interval for a variance."""
    return df / scipy.stats.chi2.isf(alpha / 2, df), df / scipy.stats.chi2.ppf(alpha / 2, df)


def cz_ends(halves: dict[str, Any], inv_J: Any, alpha: float) -> tuple[Any, Any]:
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
    v_lo, v_hi = (halves["v_h"] * f for f in chi2_factors(halves["df_v"], alpha))
    t_lo, t_hi = (halves["tau2"] * f for f in chi2_factors(halves["df_tau"], alpha))

    def w(v: Any, t: Any) -> Any:
        return (v - t / J_h).clip(min=0.0) + t * inv_J

    kink = (J_h * v_lo).clip(min=t_lo, max=t_hi)
    low = np.minimum(np.minimum(w(v_lo, t_lo), w(v_lo, t_hi)), w(v_lo, kink))
    high = np.maximum(w(v_hi, t_lo), w(v_hi, t_hi))
    return low, high


def pilot_model_of(
    means: xr.DataArray, s2: xr.DataArray, n_datasets: int, J_p: int, c_test: float, alpha: float
) -> PilotModel:
    """Return the pilot power model of the main split means ``means`` (units as ``s2``'s)."""
    stacked = means.transpose(*s2.dims, DATASET, J_DIM).values
    return PilotModel(stacked.reshape(-1, n_datasets, J_p), c_test=c_test, alpha=alpha)


def on_units(s2: xr.DataArray, Js: np.ndarray, values: np.ndarray) -> xr.DataArray:
    """Return the pilot model's ``(U, len(Js))`` numbers over ``(J, *s2.dims)``."""
    data = np.moveaxis(np.asarray(values).reshape(*s2.shape, len(Js)), -1, 0)
    return s2.expand_dims({"J": np.asarray(Js)}).copy(data=data)


@dataclass
class Variances:
    """A planned design's variances, degrees of freedom, critical value and cost (§10).

    ``s2`` is ``E[S²]`` at the planned test size, ``P`` the values of the design
    parameter (``M`` or ``R``; ``None`` for the t tests), ``halves`` the conservative Z's
    variances at half data and ``c_test`` the test's own correction (0 for the
    uncorrected bootstrap).
    """

    method: str
    s2: xr.DataArray
    P: xr.DataArray | None
    halves: dict[str, Any] | None
    c_test: float
    alpha: float

    @property
    def cz(self) -> bool:
        """Whether the design is the conservative Z's (``M`` half-splits)."""
        return self.method == "conservative_z"

    @property
    def boot(self) -> bool:
        """Whether the design is a bootstrap's (``R`` replicates)."""
        return self.method in BOOTSTRAPS

    def fits(self, Js: xr.DataArray) -> xr.DataArray:
        """Return the fits per learner of ``J`` splits (per ``M`` or ``R``)."""
        if self.cz:
            return Js * (1 + 2 * self.P)
        if self.boot:
            return Js * (self.P + 1)
        return Js * 1

    def parts(
        self, Js: xr.DataArray, kk: xr.DataArray, f_tau: Any = 1.0, f_est: Any = 1.0
    ) -> tuple[xr.DataArray, ...]:
        """Var[μ̂_J], E[σ̂²], ν and the critical value for ``J`` splits (``J = inf``: the limit).

        ``kk`` is ``k = ρ/(1 - ρ)``; ``f_tau`` scales τ² (both variances for the t and the
        bootstraps), ``f_est`` the conservative Z's E[σ̂²_cz].
        """
        s2, P, alpha = self.s2, self.P, self.alpha
        inv = 1.0 / Js.astype(float)
        v_true = s2 * f_tau * (inv + kk)
        if self.cz:
            v_est = (self.halves["sigma2"] + self.halves["tau2"] * inv) * f_est
            nu = P.astype(float)
            crit = xr.full_like(nu, scipy.stats.norm.isf(alpha / 2))
        elif self.boot:
            v_est = s2 * f_tau * (inv + self.c_test)
            nu = (P - 1).astype(float)
            crit = nu.copy(data=scipy.stats.t.isf(alpha / 2, nu.values))
        else:
            v_est = s2 * f_tau * (inv + self.c_test)
            nu = Js.astype(float) - 1
            crit = nu.copy(data=scipy.stats.t.isf(alpha / 2, nu.values))
        return v_true, v_est, nu, crit

    def curves(
        self, Js: xr.DataArray, kk: xr.DataArray, effect: float | None, **factors: Any
    ) -> tuple[xr.DataArray, ...]:
        """:func:`design_curves` of :meth:`parts`: half-widths, power, size and ``PR``."""
        return design_curves(*self.parts(Js, kk, **factors), effect=effect)

    def cz_band(self, Js: xr.DataArray) -> tuple[Any, Any]:
        """Return the ends of E[σ̂²_cz] = σ2' + τ'²/J over the box for (V'_{J_h}, τ'²) (§10).

        As factors of the point estimate ``(V̂'_{J_h} - τ̂'²/J_h)_+ + τ̂'²/J``.
        """
        if not self.cz:
            return 1.0, 1.0
        lo, hi = cz_ends(self.halves, 1.0 / Js.astype(float), self.alpha)
        point = self.halves["sigma2"] + self.halves["tau2"] / Js.astype(float)
        return lo / point, hi / point


@dataclass
class GridCurves:
    """A plan's numbers over its grid of ``J``, with the pilot's bands (docs/theory.md §10)."""

    half: xr.DataArray
    mean_half: xr.DataArray
    power: xr.DataArray
    size: xr.DataArray
    ratio: xr.DataArray
    variance: xr.DataArray
    expected_variance: xr.DataArray
    half_lo: xr.DataArray
    half_hi: xr.DataArray
    power_lo: xr.DataArray
    power_hi: xr.DataArray
    size_lo: xr.DataArray
    size_hi: xr.DataArray


def grid_curves(
    var: Variances,
    Jg: xr.DataArray,
    ks: tuple[xr.DataArray, xr.DataArray, xr.DataArray],
    df: int,
    effect: float | None,
    pilot_model: PilotModel | None,
) -> GridCurves:
    """Return the plan's numbers over the grid ``Jg``, and the pilot's bands.

    ``ks`` is ``(k, k_lo, k_hi)``: ``k = ρ/(1 - ρ)`` and the ends of its interval. The
    band of the width: τ² at the ends of its ``1 - alpha`` interval (``df`` degrees of
    freedom; E[σ̂²_cz] at the ends of its range over the box of V'_{J_h}'s and τ'²'s);
    of the power and the size, under Lemma 2, their extremes over those ends, ρ̂ and
    ``_RHO_POINTS`` points of ρ̂'s interval (fit_rho), evenly spaced in ``k`` (the width
    is ρ-free); under the pilot model, plus or minus z standard errors over the pilot's
    datasets.
    """
    k, k_lo, k_hi = ks
    alpha, grid = var.alpha, Jg.values
    central = var.parts(Jg, k)
    half, mean_half, pwr, size, ratio = design_curves(*central, effect=effect)
    tau_lo, tau_hi = chi2_factors(df, alpha)
    est_lo, est_hi = var.cz_band(Jg)
    if var.cz:
        half_lo = var.curves(Jg, k, effect, f_est=est_lo)[0]
        half_hi = var.curves(Jg, k, effect, f_est=est_hi)[0]
    else:
        half_lo = var.curves(Jg, k, effect, f_tau=tau_lo)[0]
        half_hi = var.curves(Jg, k, effect, f_tau=tau_hi)[0]
    if pilot_model is None:
        ks_all = [k] if k_lo is k_hi else [
            k_lo + (k_hi - k_lo) * i / (_RHO_POINTS - 1) for i in range(_RHO_POINTS)
        ] + [k]  # fmt: skip
        ests = [est_lo, 1.0, est_hi] if var.cz else [1.0]
        scenarios = [
            var.curves(Jg, kk, effect, f_tau=ft, f_est=fe)
            for kk in ks_all
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
        size, size_lo, size_hi = (on_units(var.s2, grid, a[..., 0]) for a in (rates, *ends))
        if effect is None:
            pwr_lo = pwr_hi = pwr
        else:
            pwr, pwr_lo, pwr_hi = (on_units(var.s2, grid, a[..., 1]) for a in (rates, *ends))
    return GridCurves(
        half=half,
        mean_half=mean_half,
        power=pwr,
        size=size,
        ratio=ratio,
        variance=central[0],
        expected_variance=central[1],
        half_lo=half_lo,
        half_hi=half_hi,
        power_lo=pwr_lo,
        power_hi=pwr_hi,
        size_lo=size_lo,
        size_hi=size_hi,
    )


def limits(
    var: Variances, k: xr.DataArray, effect: float | None, pilot_model: PilotModel | None
) -> tuple[xr.DataArray, xr.DataArray]:
    """Return the half-width and the power as ``J → ∞`` (``σ1 ρ`` does not shrink)."""
    inf = xr.DataArray([np.inf], dims="J", coords={"J": [np.inf]})
    lim = var.curves(inf, k, effect)
    half_limit, power_limit = (a.isel(J=0, drop=True) for a in (lim[0], lim[2]))
    if pilot_model is not None and effect is not None:
        power_limit = var.s2.copy(data=pilot_model.limit(effect).reshape(var.s2.shape))
    return half_limit, power_limit
