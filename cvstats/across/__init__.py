"""Analyses across datasets and of a design's variance components.

Layer 6 of cvstats (see ``docs/architecture.md``). What lives here:

* :mod:`~cvstats.across.lemma1` — the Lemma-1 estimating-function fit of
  Nadeau & Bengio (2003) across independent datasets;
* :mod:`~cvstats.across.rho` — ``ρ`` and ``r`` from many datasets;
* :mod:`~cvstats.across.kfold_variance` — Bengio & Grandvalet's (2004) K-fold
  covariance components;
* :mod:`~cvstats.across.conditional` — conditional vs unconditional error;
* :mod:`~cvstats.across.table` — the one reader of the tables across datasets: wide or long
  pandas tables, DataArrays, cubes with a ``dataset`` dim, per-dataset results;
* :mod:`~cvstats.across.ranks` — Friedman, Wilcoxon and critical differences (Demšar, 2006);
* :mod:`~cvstats.across.auto` — the automatic choice of test as autorank's (Herbold, 2020)
  and ``compare_datasets``, the one report across datasets;
* :mod:`~cvstats.across.bayes_datasets` — the Bayesian sign and signed-rank tests with a
  rope (Benavoli, Corani, Demšar & Zaffalon, 2017);
* :mod:`~cvstats.across.hierarchical` — the hierarchical correlated t test of fold scores
  over datasets (Corani, Benavoli, Demšar, Mangili & Zaffalon, 2017);
* :mod:`~cvstats.across.plan` — planning an experiment from a pilot (how many splits for
  a target width or power; docs/theory.md §10), a package of the pilot's estimates
  (``pilot``), the power models (``power``) and the search over designs (``design``).

May import every layer below (data model, designs, kernels, results, inference);
never reporting, the studies or the CLI.
"""
