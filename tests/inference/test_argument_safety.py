"""Arguments that were once accepted silently (issue 12, point 10).

Each case used to give a result that did not say the input was wrong: a NaN
rope taken as 0, McNemar on one model against itself (NaN with a warning), a
``methods`` string read character by character, an empty ``methods`` list
returning an empty table, a method named twice. Each is now a clear error.
"""

from __future__ import annotations

import numpy as np
import pytest

import cvstats
from cvstats import ArgumentError, CvstatsTypeError, designs


def _nb_cube():
    d = designs.nadeau_bengio(40, 4, J=3, M=2, R=2, seed=0)
    losses = np.random.default_rng(0).random((d.sizes["split"], 40, 2))
    return cvstats.from_arrays(losses, design=d, models=["a", "b"], name="loss")


def _holdout_cube():
    d = designs.holdout(40, 12, seed=2)
    rng = np.random.default_rng(2)
    losses = (rng.random((1, 40, 2)) < [0.3, 0.5]).astype(float)
    return cvstats.from_arrays(losses, design=d, models=["a", "b"], name="zero_one")


@pytest.mark.parametrize("rope", [float("nan"), (float("nan"), 0.1), float("inf"), -0.1])
def test_bayesian_rope_not_finite_or_negative(rope):
    with pytest.raises(ArgumentError, match=r"`rope` must be"):
        cvstats.bayesian_correlated_t(cvstats.pairwise(_nb_cube()), rope=rope)


def test_bayesian_rope_zero_still_accepted():
    res = cvstats.bayesian_correlated_t(cvstats.pairwise(_nb_cube()), rope=0)
    assert res.rope == (0.0, 0.0)


def test_mcnemar_same_model_twice():
    with pytest.raises(ArgumentError, match=r"two distinct models .*got \['a', 'a'\]"):
        cvstats.mcnemar(_holdout_cube(), models=("a", "a"))


def test_mcnemar_models_as_a_string():
    with pytest.raises(CvstatsTypeError, match=r"pair of model names, got the str 'ab'"):
        cvstats.mcnemar(_holdout_cube(), models="ab")


def test_mcnemar_distinct_models_still_work():
    res = cvstats.mcnemar(_holdout_cube(), models=("b", "a"))
    assert np.isfinite(float(res.statistic))


def test_compare_methods_as_a_string():
    with pytest.raises(CvstatsTypeError, match=r"methods=\['corrected_resampled_t'\]"):
        cvstats.compare(cvstats.pairwise(_nb_cube()), methods="corrected_resampled_t")


def test_compare_methods_empty():
    with pytest.raises(ArgumentError, match=r"`methods` is empty"):
        cvstats.compare(cvstats.pairwise(_nb_cube()), methods=[])


def test_compare_method_named_twice():
    with pytest.raises(ArgumentError, match=r"names \['resampled_t'\] more than once"):
        cvstats.compare(cvstats.pairwise(_nb_cube()), methods=["resampled_t", "resampled_t"])


@pytest.mark.parametrize("scale", [1e200, 1e-320])
def test_bayesian_out_of_range_losses_are_a_clear_error(scale):
    cube = _nb_cube() * scale
    with pytest.raises(cvstats.CubeError, match=r"rescale the losses"):
        cvstats.bayesian_correlated_t(cvstats.pairwise(cube))


def test_bayesian_in_range_rescaling_keeps_the_probabilities():
    cube = cvstats.pairwise(_nb_cube())
    base = cvstats.bayesian_correlated_t(cube, rope=0.01)
    scaled = cvstats.bayesian_correlated_t(cube * 1e6, rope=0.01 * 1e6)
    np.testing.assert_allclose(np.asarray(scaled.p_rope), np.asarray(base.p_rope), rtol=1e-9)


@pytest.mark.parametrize("mu0", [-1e308, 7e307, np.finfo(np.float64).max])
@pytest.mark.parametrize(
    "method, cube",
    [
        ("corrected_resampled_t", lambda: cvstats.pairwise(_nb_cube())),
        ("holdout_t", lambda: cvstats.pairwise(_holdout_cube())),
        ("resampled_t", lambda: _nb_cube()),
    ],
)
def test_mu0_that_overflows_the_statistic_is_an_error(method, cube, mu0):
    # (estimate - mu0) / stderr beyond float64 gave statistic -inf and p = 0, no error
    with pytest.raises(ArgumentError, match=r"`mu0` = .* overflows float64.*scale of the losses"):
        getattr(cvstats, method)(cube(), mu0=mu0)


def test_mu0_far_but_representable_gives_the_exact_statistic():
    # a finite statistic is the test's answer, however far mu0 is: kept
    res = cvstats.corrected_resampled_t(cvstats.pairwise(_nb_cube()), mu0=1e200)
    expected = (res.estimate.values - 1e200) / res.stderr.values
    np.testing.assert_allclose(res.statistic.values, expected, rtol=1e-12)
    assert np.isfinite(res.statistic.values).all()
