"""Split means and sample variances (docs/theory.md §1–§2)."""

from __future__ import annotations

import numpy as np
import pytest

from cvstats.errors import CubeError, DesignError
from cvstats.kernels import n_test, nan_moments, sample_variance, split_means

NAN = np.nan


def test_split_means_hand():
    # split 0 tests examples 0 and 2: (1 + 3)/2 = 2; split 1 tests example 1: 5
    losses = np.array([[1.0, NAN, 3.0], [NAN, 5.0, NAN]])
    np.testing.assert_array_equal(split_means(losses), [2.0, 5.0])
    np.testing.assert_array_equal(n_test(losses), [2, 1])


def test_split_means_batch_matches_loop():
    rng = np.random.default_rng(2)
    losses = rng.normal(size=(3, 4, 6, 20))
    losses[rng.random(losses.shape) < 0.4] = NAN
    losses[..., 0] = 1.0  # every split keeps a test example
    got = split_means(losses)
    for idx in np.ndindex(got.shape):
        vals = [v for v in losses[idx] if not np.isnan(v)]
        assert got[idx] == pytest.approx(sum(vals) / len(vals))


def test_split_without_test_example_raises():
    losses = np.array([[1.0, 2.0], [NAN, NAN], [NAN, NAN]])
    with pytest.raises(CubeError, match="2 of 3 split"):
        split_means(losses)
    with pytest.raises(CubeError, match="no test example"):
        nan_moments(losses)


def test_sample_variance_hand():
    # mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5, / (4 - 1)
    assert sample_variance([1.0, 2.0, 3.0, 4.0]) == pytest.approx(5 / 3)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 7))
    np.testing.assert_allclose(sample_variance(x), np.var(x, axis=-1, ddof=1))


def test_sample_variance_exactly_zero_when_equal():
    # two-pass formula on 0.1 * 3 leaves a residue; the kernel returns exactly 0
    assert sample_variance([0.1, 0.1, 0.1]) == 0.0
    assert np.isnan(sample_variance([0.1, NAN, 0.1]))


def test_sample_variance_needs_two():
    with pytest.raises(DesignError, match="at least 2 split means"):
        sample_variance([[1.0], [2.0]], name="mu", what="split means")


def test_nan_moments_hand():
    # test losses 1, 2, 4: mean 7/3, deviations^2 16/9 + 1/9 + 25/9 = 42/9, /2 = 7/3
    count, mean, var = nan_moments([1.0, NAN, 2.0, 4.0, NAN])
    assert count == 3
    assert mean == pytest.approx(7 / 3)
    assert var == pytest.approx(7 / 3)
    count, mean, var = nan_moments([[NAN, 0.1, 0.1, 0.1], [3.0, NAN, NAN, NAN]])
    np.testing.assert_array_equal(count, [3, 1])
    assert var[0] == 0.0 and np.isnan(var[1])
