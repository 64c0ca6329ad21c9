"""Array kernels: the formulas of docs/theory.md §2–§4 as plain numpy/scipy functions.

No xarray here. Every kernel takes arrays whose *last* axes are the core dims
and is vectorized over any leading batch dims, so that the layers above can
call it through :func:`cvstats.cube.apply.apply_kernel` (the one wrapper of
``xarray.apply_ufunc``) with the core dims moved to the end.
Test kernels return :class:`StatArrays` ``(estimate, stderr, statistic, df)``
(or :class:`FArrays`, :class:`McNemarArrays`); p-values and intervals come
from :mod:`cvstats.kernels.reference`.

The numeric layer of cvstats (see ``docs/architecture.md``). May import numpy and
scipy, and from the rest of the package only the foundation (:mod:`cvstats.errors`
and the numpy-only checks of :mod:`cvstats.checks`); never xarray, pandas or dask,
so that ``import cvstats.kernels`` loads neither (``tests/architecture/test_import_cost.py``).
"""

from __future__ import annotations

from cvstats.checks import ALTERNATIVES, ArgumentError

# every kernel module, so that ``cvstats.kernels.<module>`` resolves after ``import cvstats``
# as it did when the package root imported the whole API eagerly
from cvstats.kernels import (  # noqa: F401
    bayes,
    bayes_datasets,
    bayle,
    bbc,
    cluster,
    cvc,
    evals,
    hierarchical,
    kfold,
    lemma1,
    mcmc,
    mcs,
    nested,
    ranks,
)
from cvstats.kernels._core import FArrays, StatArrays
from cvstats.kernels.correlation import fisher_z_interval, pearson_r
from cvstats.kernels.fivebytwo import (
    FIVE_BY_TWO_VARIANTS,
    alpaydin_f,
    dietterich_5x2_t,
    dietterich_variance,
)
from cvstats.kernels.holdout import (
    McNemarArrays,
    holdout_t,
    mcnemar_chi2,
    mcnemar_counts,
    mcnemar_exact,
    mcnemar_z,
)
from cvstats.kernels.moments import n_test, nan_moments, sample_variance, split_means
from cvstats.kernels.political import (
    political_ratio_bootstrap,
    political_ratio_corrected,
    political_ratio_dietterich,
    political_ratio_holdout,
    political_ratio_resampled,
    predicted_rejection_rate,
    rho0,
)
from cvstats.kernels.reference import conf_int, critical_value, pvalue, pvalue_f
from cvstats.kernels.resampling import (
    bootstrap_t,
    conservative_z,
    corrected_bootstrap_t,
    corrected_repeated_kfold_t,
    corrected_resampled_t,
    kfold_t,
    resampled_t,
)

__all__ = [
    "ALTERNATIVES",
    "ArgumentError",
    "FArrays",
    "FIVE_BY_TWO_VARIANTS",
    "McNemarArrays",
    "StatArrays",
    "alpaydin_f",
    "bootstrap_t",
    "conf_int",
    "conservative_z",
    "corrected_bootstrap_t",
    "corrected_repeated_kfold_t",
    "corrected_resampled_t",
    "critical_value",
    "dietterich_5x2_t",
    "dietterich_variance",
    "fisher_z_interval",
    "holdout_t",
    "kfold_t",
    "mcnemar_chi2",
    "mcnemar_counts",
    "mcnemar_exact",
    "mcnemar_z",
    "n_test",
    "nan_moments",
    "pearson_r",
    "political_ratio_bootstrap",
    "political_ratio_corrected",
    "political_ratio_dietterich",
    "political_ratio_holdout",
    "political_ratio_resampled",
    "predicted_rejection_rate",
    "pvalue",
    "pvalue_f",
    "resampled_t",
    "rho0",
    "sample_variance",
    "split_means",
]
