"""Options shared by every test (docs/architecture.md, "Option names unified")."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import cvstats
from cvstats import designs
from cvstats.inference.registry import METHODS


def _cube(design, seed=0, zero_one=False):
    rng = np.random.default_rng(seed)
    shape = (design.sizes["split"], design.sizes["example"], 2)
    losses = (rng.random(shape) < 0.3).astype(float) if zero_one else rng.random(shape)
    return cvstats.from_arrays(losses, design=design, models=["a", "b"], name="loss")


def _renamed_to_variant(method, cube, old, value, field):
    """``method(cube, variant=value)``, after checking that the old name ``old=value``
    warns that it is now ``variant=`` and gives the same ``field``."""
    new = method(cube, variant=value)
    with pytest.warns(FutureWarning, match=f"`{old}=` is now called `variant=`"):
        before = method(cube, **{old: value})
    np.testing.assert_array_equal(
        np.asarray(getattr(new, field)), np.asarray(getattr(before, field))
    )
    return new


def test_holdout_reference_is_now_variant_and_the_old_name_warns():
    cube = cvstats.pairwise(_cube(designs.holdout(60, 20, seed=1)))
    new = _renamed_to_variant(cvstats.holdout_t, cube, "reference", "t", "pvalue")
    assert new.reference == "t" and new.title == "Hold-out t (t reference)"
    assert cvstats.holdout_t(cube).title == "Hold-out t (z reference)"
    with pytest.raises(cvstats.ArgumentError, match="give `variant` only"):
        cvstats.holdout_t(cube, variant="t", reference="t")


def test_bayle_variance_is_now_variant_and_the_old_name_warns():
    cube = cvstats.pairwise(_cube(designs.kfold(60, 5, seed=2)))
    new = _renamed_to_variant(cvstats.bayle_cv, cube, "variance", "in", "stderr")
    assert new.method == "bayle_cv_in" and "(in)" in new.title
    with pytest.raises(cvstats.ArgumentError, match="`variant` must be one of"):
        cvstats.bayle_cv(cube, variant="both")


@pytest.mark.parametrize("name", sorted({s.function for s in METHODS.values()}))
def test_every_test_takes_mu0_alpha_alternative_with_the_same_defaults(name):
    module, attr = name.split(":")
    params = inspect.signature(getattr(cvstats, attr)).parameters
    assert params["mu0"].default == 0.0
    assert params["alpha"].default == 0.05
    assert params["alternative"].default == "two-sided"
    assert any(p.kind is p.VAR_KEYWORD for p in params.values())


def test_unknown_options_are_argument_errors_not_type_errors():
    cube = cvstats.pairwise(_cube(designs.resampled(60, 12, J=5, seed=3)))
    refused = r"does not take the option\(s\) \['variant'\]"
    with pytest.raises(cvstats.ArgumentError, match=refused):
        cvstats.corrected_resampled_t(cube, variant="t4")
    with pytest.raises(cvstats.ArgumentError, match=r"\['alpah'\]"):
        cvstats.resampled_t(cube, alpah=0.1)


def test_single_value_options_are_refused_with_the_reason():
    cube = cvstats.pairwise(_cube(designs.holdout(60, 20, seed=4), zero_one=True))
    with pytest.raises(cvstats.ArgumentError, match="McNemar's test is a test of mu0 = 0"):
        cvstats.mcnemar(cube, mu0=0.1)
    five = cvstats.pairwise(_cube(designs.five_by_two(60, seed=5)))
    with pytest.raises(cvstats.ArgumentError, match="two-sided only"):
        cvstats.combined_5x2cv_f(five, alternative="less")
    # compare leaves an applicable method out for such options and says so
    table = cvstats.compare(five, alternative="less")
    assert "combined_5x2cv_f" not in table.results
    assert any("combined_5x2cv_f left out" in note for note in table.notes)
    assert "combined_5x2cv_f left out" in str(table)


def test_nested_cv_interval_uses_the_package_level_default_alpha():
    assert inspect.signature(cvstats.nested_cv_interval).parameters["alpha"].default == 0.05
