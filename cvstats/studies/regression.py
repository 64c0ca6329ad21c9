"""Nadeau & Bengio, problem 1: simple normal linear regression (docs/studies.md §A).

``X ~ N(μ_X, σ_X²)``, ``Y | X ~ N(α + β X, σ²_{Y|X})``, squared loss.
Learner A predicts the training mean ``Ȳ_S``; learner B is the ordinary
least-squares fit of ``Y`` on ``(1, X)``. Both are fitted for every
(dataset, split) at once from sums of ``(1, x, y, x², xy, y²)`` over the
training set, and their mean test loss comes from the same sums over the
test set (:func:`ols_from_sums`, :func:`mean_loss_from_sums`): no model
object and no per-example loss is needed, except for the hold-out t
(:func:`example_losses`).

The analytic generalization errors (docs/studies.md §A) are
``n1μ_A = (n1+1)/n1 (σ²_{Y|X} + β² σ_X²)`` and
``n1μ_B = (n1+1)/n1 (n1-2)/(n1-3) σ²_{Y|X}`` (:func:`true_errors`).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np
import xarray as xr
from numpy.typing import NDArray

from cvstats.studies._common import FloatArray, IntArray, study_doc
from cvstats.studies._runner import SimulationProblem, run_study
from cvstats.studies._splits import gather_sums

__all__ = [
    "SIMULATIONS",
    "RegressionProblem",
    "regression_problem",
    "ols_from_sums",
    "mean_from_sums",
    "mean_loss_from_sums",
    "example_losses",
    "true_errors",
    "run_regression",
]

#: Parameters of the four simulations (docs/studies.md §A).
SIMULATIONS: dict[int, dict[str, float]] = {
    1: {"n": 200, "mu_x": 10.0, "alpha": 100.0, "beta": 1.0, "var_x": 1.0, "var_y": 97.0},
    2: {"n": 200, "mu_x": 10.0, "alpha": 100.0, "beta": 2.0, "var_x": 2.0, "var_y": 64.0},
    3: {"n": 2000, "mu_x": 10.0, "alpha": 100.0, "beta": 0.1, "var_x": 1.0, "var_y": 9.97},
    4: {"n": 2000, "mu_x": 10.0, "alpha": 100.0, "beta": 0.1, "var_x": 5.0, "var_y": 9.0},
}

# columns of the per-example statistics
_ONE, _X, _Y, _XX, _XY, _YY = range(6)


@study_doc
def mean_from_sums(sums: FloatArray) -> FloatArray:
    """Learner A (sample mean) fitted from training sums.

    %(coefficients_from_training_sums)s
        Coefficients ``(a, b)`` of the prediction ``a + b x``: ``(Ȳ_S, 0)``.
    """
    a = sums[..., _Y] / sums[..., _ONE]
    return np.stack([a, np.zeros_like(a)], axis=-1)


@study_doc
def ols_from_sums(sums: FloatArray) -> FloatArray:
    """Learner B (OLS of ``y`` on ``(1, x)``) fitted from training sums.

    ``b = (Σxy - Σx Σy / N) / (Σx² - (Σx)² / N)``, ``a = (Σy - b Σx) / N``.

    %(coefficients_from_training_sums)s
        ``(a, b)``.
    """
    N = sums[..., _ONE]
    sx, sy = sums[..., _X], sums[..., _Y]
    b = (sums[..., _XY] - sx * sy / N) / (sums[..., _XX] - sx * sx / N)
    a = (sy - b * sx) / N
    return np.stack([a, b], axis=-1)


def mean_loss_from_sums(coef: FloatArray, sums: FloatArray) -> FloatArray:
    """Mean squared test loss of ``a + b x`` from test sums.

    ``Σ(y - a - b x)² = Σy² - 2aΣy - 2bΣxy + a²N + 2abΣx + b²Σx²``, divided by ``N``.

    Parameters
    ----------
    coef : ndarray, shape (..., 2)
        ``(a, b)`` per split.
    sums : ndarray, shape (..., 6)
        Sums of ``(1, x, y, x², xy, y²)`` over each test set.

    Returns
    -------
    ndarray, shape (...)
        Mean test loss per split.
    """
    a, b = coef[..., 0], coef[..., 1]
    total = (
        sums[..., _YY]
        - 2 * a * sums[..., _Y]
        - 2 * b * sums[..., _XY]
        + a * a * sums[..., _ONE]
        + 2 * a * b * sums[..., _X]
        + b * b * sums[..., _XX]
    )
    return total / sums[..., _ONE]


def _stats(x: FloatArray, y: FloatArray) -> FloatArray:
    return np.stack([np.ones_like(x), x, y, x * x, x * y, y * y], axis=-1)


def _centred(data: FloatArray) -> tuple[FloatArray, FloatArray]:
    # both learners are equivariant to shifts of x and y: centring per dataset
    # changes no loss and keeps the sums of squares well conditioned
    x = data[..., 0] - data[..., 0].mean(axis=-1, keepdims=True)
    y = data[..., 1] - data[..., 1].mean(axis=-1, keepdims=True)
    return x, y


def example_losses(data: FloatArray, test_idx: IntArray, train_idx: IntArray) -> FloatArray:
    """Per-example squared test losses of learners A and B, one split per dataset.

    Parameters
    ----------
    data : ndarray, shape (B, n, 2)
        Columns ``(x, y)`` of ``B`` datasets.
    test_idx, train_idx : ndarray of int, shapes (B, ..., n2), (B, ..., n1)
        Test and training indices of each split.

    Returns
    -------
    ndarray, shape (B, ..., n2, 2)
        ``(y_i - ŷ_i)²`` of the sample mean (A) and OLS (B) on each test example.
    """
    x, y = _centred(data)
    stats = _stats(x, y)
    train = gather_sums(stats, train_idx)
    B = data.shape[0]
    rows = np.arange(B).reshape((B,) + (1,) * (test_idx.ndim - 1))
    xt, yt = x[rows, test_idx], y[rows, test_idx]
    out = []
    for coef in (mean_from_sums(train), ols_from_sums(train)):
        pred = coef[..., 0, None] + coef[..., 1, None] * xt
        out.append((yt - pred) ** 2)
    return np.stack(out, axis=-1)


def true_errors(n1: int, params: dict[str, float]) -> dict[str, float]:
    """Analytic ``n1μ`` of learners A, B and of A−B (docs/studies.md §A).

    Parameters
    ----------
    n1 : int
        Training size (> 3).
    params : dict
        A row of :data:`SIMULATIONS`.

    Returns
    -------
    dict
        ``{"A": n1μ_A, "B": n1μ_B, "A-B": n1μ_A - n1μ_B}``.

    Examples
    --------
    >>> t = true_errors(100, SIMULATIONS[1])
    >>> round(t["A"], 2), round(t["B"], 2)
    (98.98, 98.98)
    """
    f = (n1 + 1) / n1
    a = f * (params["var_y"] + params["beta"] ** 2 * params["var_x"])
    b = f * (n1 - 2) / (n1 - 3) * params["var_y"]
    return {"A": a, "B": b, "A-B": a - b}


@dataclass(frozen=True)
class RegressionProblem(SimulationProblem):
    """One simulation of problem A, in the form the runner needs (:class:`~._runner.Problem`).

    Attributes
    ----------
    simulation : int
        1..4 (:data:`SIMULATIONS`), or any int with custom parameters.
    n, mu_x, alpha, beta, var_x, var_y : float
        The simulation's parameters (docs/studies.md §A).
    """

    kind: ClassVar[str] = "nb-regression"
    mu_x: float
    alpha: float
    beta: float
    var_x: float
    var_y: float
    models: tuple[str, str] = ("A", "B")
    n_stats: int = 6

    def truth(self, n1: int) -> dict[str, float]:
        """Analytic ``n1μ`` (:func:`true_errors`)."""
        return true_errors(n1, asdict(self))

    def generate(self, rng: np.random.Generator) -> FloatArray:
        """One dataset: columns ``(x, y)``, shape ``(n, 2)``."""
        x = self.mu_x + np.sqrt(self.var_x) * rng.standard_normal(self.n)
        y = self.alpha + self.beta * x + np.sqrt(self.var_y) * rng.standard_normal(self.n)
        return np.stack([x, y], axis=-1)

    def stats(self, data: FloatArray) -> FloatArray:
        """Per-example ``(1, x, y, x², xy, y²)`` of the centred data, shape ``(B, n, 6)``."""
        return _stats(*_centred(data))

    def split_means(
        self,
        data: FloatArray,
        test_idx: NDArray[np.int32],
        train_idx: NDArray[np.int32],
        test_sums: FloatArray,
        train_sums: FloatArray,
    ) -> FloatArray:
        """Mean test losses of A and B from the sums, shape ``(B, ..., 2)``."""
        return np.stack(
            [
                mean_loss_from_sums(mean_from_sums(train_sums), test_sums),
                mean_loss_from_sums(ols_from_sums(train_sums), test_sums),
            ],
            axis=-1,
        )

    def example_losses(
        self, data: FloatArray, test_idx: NDArray[np.int32], train_idx: NDArray[np.int32]
    ) -> FloatArray:
        """Per-example test losses (:func:`example_losses`)."""
        return example_losses(data, test_idx, train_idx)


@study_doc
def regression_problem(simulation: int, **overrides: float) -> RegressionProblem:
    """Return simulation ``1..4`` of docs/studies.md §A (parameters overridable).

    %(parameters_simulation)s
    **overrides
        Parameters to change (e.g. ``n=50`` for a quick run): ``n`` (an int
        ``>= 20``), ``mu_x``, ``alpha``, ``beta``, ``var_x``, ``var_y``
        (variances ``> 0``).

    Returns
    -------
    RegressionProblem

    %(raises_simulation)s
    """
    return RegressionProblem.of_simulation(
        SIMULATIONS, simulation, overrides, positive=("var_x", "var_y"), what="problem 1"
    )


@study_doc
def run_regression(
    simulation: int,
    n_datasets: int,
    out_dir: str | os.PathLike[str],
    *,
    seed: int = 0,
    J: int = 25,
    M: int = 20,
    R: int = 15,
    J_rep: int = 15,
    batch_size: int | None = None,
    n_jobs: int = 1,
    progress: bool = False,
    client: Any = None,
    compute: bool = True,
    **overrides: float,
) -> xr.Dataset:
    """Run (or resume) simulation ``simulation`` of problem A (docs/studies.md §A, §D).

    %(run_simulation)s
    **overrides
        Simulation parameters to change (e.g. ``n=60``).

    Returns
    -------
    xarray.Dataset
        Split means of every block (:func:`cvstats.studies.compute_batch`), with
        the analytic truths ``truth (config, quantity)`` (``n1μ``) and
        ``truth_half (quantity)`` (``n/2 μ``, the target of 5x2cv) added.
    """
    problem = regression_problem(simulation, **overrides)
    ds = run_study(
        problem, n_datasets, out_dir, seed=seed, J=J, M=M, R=R, J_rep=J_rep, batch_size=batch_size,
        n_jobs=n_jobs, progress=progress, client=client, compute=compute,
    )  # fmt: skip
    quantities = list(ds["quantity"].values)
    ds["truth"] = (
        ("config", "quantity"),
        np.array([[problem.truth(int(n1))[q] for q in quantities] for n1 in ds["n1"].values]),
    )
    ds["truth_half"] = ("quantity", [problem.truth(problem.n // 2)[q] for q in quantities])
    ds["truth"].attrs["kind"] = ds["truth_half"].attrs["kind"] = "analytic"
    return ds
