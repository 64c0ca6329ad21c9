"""``cvstats study ...``: run the Nadeau–Bengio studies from the command line.

Hook into the main parser with :func:`add_study_parser`; the commands are

    cvstats study nb-regression --sim 1 --datasets 1000 --out DIR [--n-jobs N] [--seed S]
    cvstats study nb-classification --sim 1 2 3 4 --datasets 300 --out DIR [--n-jobs N]
    cvstats study nb-letter --w 1 --datasets 1000 --out DIR [--learners nn] [--n-jobs N]
    cvstats study population --population letter --learners nb dt --samples 100 --out DIR
    cvstats study bg-experiment1 --out DIR [--replicates 1000]
    cvstats study bg-experiment2 --out DIR [--replicates 1000]

``--scheduler ADDRESS`` runs the batches on a dask.distributed cluster
instead of joblib workers (same results).

Every option is checked before anything is computed or written (the level
``--alpha``, the sizes, ``--datasets``, the simulation, learners, seeds,
``--out``): an invalid one, an ``--out`` that is not a usable directory, or
any other :class:`~cvstats.errors.CvstatsError` prints one line
``cvstats study <command>: error: <message>`` to stderr and exits with
status 2, without a traceback. A damaged batch file of an earlier run is
reported (:class:`~cvstats.studies.BatchFileWarning`) and recomputed
(:mod:`cvstats.studies._runner`).

The Nadeau–Bengio commands print the Table-2-style summary (docs/studies.md), the
comparison of its Monte Carlo cells with their truths
(:func:`cvstats.studies.truth_comparison`), the sizes of every method at the
truth, the J-study and the M-study, and write to ``DIR`` the batch files,
``<tag>-rates.nc`` (rejection rates over the ``μ0`` grid) and
``<tag>-power.png`` (power curves). Several simulations (``--sim 1 2 3 4``)
run one after the other, each in its own ``DIR/sim<N>`` (one simulation
keeps ``DIR`` itself), each reported as above; then one combined table
(one column per simulation) and the comparison of all its cells are
printed. ``--report-only`` reads the batch files of finished runs and
computes nothing (an incomplete run is an error; the Monte Carlo truth of
problems 2 and 3 is recomputed, deterministically, from ``--seed`` and
``--truth-sets``, and for problem 2 ``--truth-test-size``, the size of the
truth's common test sample, default 100 000). ``population`` runs
the survey's Algorithm 1 (docs/studies.md §F) and prints ``εu``, the bias
table, the variance decomposition and the winner tables
(:func:`cvstats.studies.population_analysis.population_report`). The
``bg-experiment*`` commands run Bengio & Grandvalet's experiments
(:mod:`cvstats.studies.kfold_experiments`, docs/studies.md §E), print their
tables and write ``bg-experiment*.png`` and ``bg-experiment*.nc``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import xarray as xr

from cvstats.checks import check_int, validate_alpha
from cvstats.errors import ArgumentError, CvstatsError, StorageError
from cvstats.studies import _analysis as analysis

__all__ = [
    "DefaultsHelpFormatter", "add_study_parser", "study_report", "sim_out_dirs", "main",
]  # fmt: skip


class DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` that shows every option's default (``(default: 15)``).

    Options without a meaningful default (``None``, or ``False`` for a flag) are
    shown without one. Used by every parser and subparser of ``cvstats``.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


#: ``J`` values of the report's J-study and ``M`` values of its M-study.
REPORT_JS: tuple[int, ...] = (5, 10, 15, 25)
REPORT_MS: tuple[int, ...] = (5, 10, 20)


def study_report(
    ds: xr.Dataset,
    out_dir: str | os.PathLike[str],
    *,
    alpha: float = 0.1,
    J: int = 15,
    M: int = 10,
    R: int = 15,
    Js: Sequence[int] = REPORT_JS,
    Ms: Sequence[int] = REPORT_MS,
    title: str | None = None,
) -> dict[str, Any]:
    """Tables and figures of one simulation (docs/studies.md, docs/theory.md).

    Parameters
    ----------
    ds : xarray.Dataset
        Output of :func:`cvstats.studies.run_study` (or ``run_regression`` /
        ``run_classification``).
    out_dir : path
        Where ``<tag>-rates.nc`` and ``<tag>-power.png`` are written.
    alpha : float, default 0.1
        Nominal level.
    J, M, R : int
        Sizes of the size/power comparison (15, 10, 15 in the paper; lowered
        to what the run has).
    Js, Ms : sequence of int
        The J-study (configuration ``(9n/10, n/10)``) and M-study (conservative
        Z); values above the run's ``J`` or ``M`` are skipped.
    title : str, optional
        Figure title and table caption.

    Returns
    -------
    dict
        ``table`` (PublicationTable), ``sizes`` (DataFrame: rejection rate at
        the target per configuration, quantity and method), ``j_study`` and
        ``m_study`` (DataFrames), ``rates`` (DataArray) and the paths written.

    Raises
    ------
    ArgumentError
        If ``alpha`` is not in ``(0, 1)``, or no value of ``Js`` (``Ms``) is
        within the run's ``J`` (``M``); checked before anything is computed.
    """
    alpha = validate_alpha(alpha)
    for name, values, dim in (("Js", Js, "j"), ("Ms", Ms, "m")):
        if not any(v <= ds.sizes[dim] for v in values):
            raise ArgumentError(
                f"`{name}` = {list(values)} has no value <= the run's {dim.upper()} = "
                f"{ds.sizes[dim]}; rerun with a larger `{dim.upper()}`."
            )
    out = Path(out_dir)
    tag = str(ds.attrs.get("tag", "study"))
    J, M, R = min(J, ds.sizes["j"]), min(M, ds.sizes["m"]), min(R, ds.sizes["replicate"])
    res = analysis.method_results(ds, J=J, M=M, R=R)
    grid = analysis.mu0_grid(ds, res)
    rates = analysis.rejection_rates(res, grid, alpha=alpha)
    sizes = analysis.rejection_rates(res, analysis.targets(ds, res), alpha=alpha)
    js = analysis.j_study(ds, Js, M=M, R=R, alpha=alpha)
    ms = analysis.m_study(ds, Ms, J=J, alpha=alpha)
    table = analysis.study_table({title or tag: ds}, caption=title)
    rates_path = out / f"{tag}-rates.nc"
    xr.Dataset(
        {"rejection_rate": rates, "mu0": grid, "size": sizes}, attrs={"alpha": alpha}
    ).to_netcdf(rates_path, engine="h5netcdf")
    fig_path = out / f"{tag}-power.png"
    fig = analysis.power_figure(
        rates, grid, truth_ci=analysis.mc_truth(ds), path=fig_path, title=title
    )
    import matplotlib.pyplot as plt

    plt.close(fig)
    return {
        "table": table,
        "sizes": sizes.to_pandas() if sizes.ndim == 2 else sizes.to_dataframe(),
        "j_study": js.to_dataframe().unstack("J")["rejection_rate"].dropna(how="all"),
        "m_study": ms.to_dataframe().unstack("M")["rejection_rate"],
        "rates": rates,
        "paths": [rates_path, fig_path],
    }


def _comparison_text(runs: dict[str, xr.Dataset]) -> str:
    """Return the truth comparison of ``runs`` (:func:`truth_comparison`) as text, or ``""``."""
    if not any("truth" in ds for ds in runs.values()):
        return ""
    frame = analysis.truth_comparison(runs)
    cells, band = frame.attrs["cells"], frame.attrs["band"]
    counts = frame["verdict"].value_counts()
    shown = frame[["estimate", "lower", "upper", "truth", "truth_lower", "truth_upper", "z",
                   "verdict", "within_band"]]  # fmt: skip
    lines = [
        "\nMonte Carlo mean of μ̂_J against the truth, per cell (z = (mean − truth) / "
        "sqrt(se² + se_truth²)):",
        shown.to_string(float_format="{:.4f}".format),
        f"{cells} cells: "
        + ", ".join(f"{counts.get(v, 0)} {v}" for v in ("inside", "overlapping", "disjoint"))
        + f"; Bonferroni band |z| < Φ⁻¹(1 − 0.05/(2·{cells})) = {band:.2f}: "
        f"{int(frame['within_band'].sum())} of {cells} within.",
    ]
    return "\n".join(lines)


def _print_report(report: dict[str, Any], alpha: float, comparison: str = "") -> None:
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(report["table"])
        if comparison:
            print(comparison)
        print(f"\nRejection rates at the target (α = {alpha}):")
        print(report["size_frame"].round(3).to_string())
        print("\nJ-study, configuration (9n/10, n/10) — rejection rate at the target:")
        print(report["j_study"].round(3).to_string())
        print("\nM-study, conservative Z — rejection rate at the target:")
        print(report["m_study"].round(3).to_string())
        print("\nwritten:", *map(str, report["paths"]))


def _check_out(out: str) -> None:
    """Refuse an ``--out`` that exists and is not a directory (nothing is created here)."""
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise StorageError(
            f"`--out` {out!r} exists and is not a directory; give a directory "
            "(it is created if missing)."
        )


def _check_args(args: argparse.Namespace) -> None:
    """Validate the options of a ``study`` command before anything is computed.

    The run functions check their own arguments again (and the population
    command's sizes and learners there, before any batch); these are the
    checks of the report and the command line.

    Raises
    ------
    ArgumentError, StorageError
        For the first invalid option.
    """
    from cvstats.studies._runner import check_truth_sets, prepare_out_dir

    _check_out(args.out)
    check_int("--seed", args.seed, 0)
    if args.study.startswith("bg-"):
        check_int("--K", args.K, 2)
        check_int("--replicates", args.replicates, 3)
        prepare_out_dir(args.out, name="--out")
        return
    if args.n_jobs == 0:
        raise ArgumentError("`--n-jobs` must be a non-zero int (-1: all cores), got 0.")
    if args.batch_size is not None:
        check_int("--batch-size", args.batch_size, 1)
    if args.study == "population":
        return  # run_population checks its sizes and learners, then makes `--out`
    try:
        validate_alpha(args.alpha)
    except ArgumentError as e:
        raise ArgumentError(str(e).replace("`alpha`", "`--alpha`", 1)) from e
    for name, value, minimum, why in (
        ("--datasets", args.datasets, 2, "the report's fits of rho and r need 2 datasets"),
        ("--J", args.J, min(REPORT_JS), f"the report's J-study uses J = {list(REPORT_JS)}"),
        ("--M", args.M, min(REPORT_MS), f"the report's M-study uses M = {list(REPORT_MS)}"),
        ("--R", args.R, 2, "bootstrap replicates"),
    ):
        if value < minimum:
            raise ArgumentError(f"`{name}` must be >= {minimum} ({why}), got {value}.")
    if args.study == "nb-letter":
        from cvstats.studies.letter import letter_problem

        letter_problem(args.w, learners=args.learners, tree=args.tree)
    else:
        from cvstats.studies.classification import classification_problem
        from cvstats.studies.regression import regression_problem

        if len(set(args.sim)) != len(args.sim):
            raise ArgumentError(f"`--sim` must not repeat a simulation, got {args.sim}.")
        for sim, out in sim_out_dirs(args.sim, args.out).items():
            if args.study == "nb-regression":
                regression_problem(sim)
            else:
                classification_problem(sim, tree=args.tree)
            _check_out(str(out))
    if args.study in ("nb-classification", "nb-letter"):
        check_truth_sets(args.truth_sets)
    if args.study == "nb-classification":
        from cvstats.studies.classification import check_truth_test_size

        check_truth_test_size(args.truth_test_size, "--truth-test-size")
    if not args.report_only:
        prepare_out_dir(args.out, name="--out")


def _run(args: argparse.Namespace) -> int:
    """Run a ``study`` command; exit status 2 with a one-line message on a cvstats error."""
    try:
        _check_args(args)
        if getattr(args, "scheduler", None):
            with _connect(args.scheduler) as client:
                return _run_with(args, client)
        return _run_with(args, None)
    except CvstatsError as e:
        message = " ".join(str(e).split())
        print(f"cvstats study {args.study}: error: {message}", file=sys.stderr)
        return 2


def _connect(address: str) -> Any:
    """Return a dask.distributed client of the scheduler at `address`, or raise ArgumentError."""
    try:
        from distributed import Client
    except ImportError as e:
        raise ArgumentError(
            "`--scheduler` needs dask.distributed; install it (pip install distributed) or "
            "leave `--scheduler` out to run on joblib workers."
        ) from e
    import dask
    from distributed import default_client

    config = dask.config.get("scheduler", None)
    try:
        before = default_client()
    except ValueError:  # no client yet
        before = None
    try:
        return Client(address)
    except (OSError, ValueError) as e:  # a bad address, or no scheduler there (timeout)
        # a Client that failed to connect has still made itself the default scheduler and
        # client of this process: undo both, or every later dask computation goes to it
        try:
            failed = default_client()
        except ValueError:  # no default client left: nothing to undo
            failed = before
        if failed is not before:
            failed.close()
        dask.config.set(scheduler=config)
        raise ArgumentError(
            f"`--scheduler` {address!r}: cannot connect to a dask scheduler ({e}); give the "
            "address the scheduler prints, e.g. tcp://host:8786."
        ) from e


def _run_population(args: argparse.Namespace, client: Any) -> int:
    from cvstats.studies.population import run_population
    from cvstats.studies.population_analysis import population_report

    ds = run_population(
        args.population, args.learners, args.samples, args.out, N=args.N, folds=args.folds,
        repetitions=args.repetitions, seed=args.seed, batch_size=args.batch_size,
        n_jobs=args.n_jobs, progress=not args.quiet, client=client,
    )  # fmt: skip
    title = f"Algorithm 1 on {args.population}, N = {args.N}"
    report = population_report(ds, args.out, title=title)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(title)
        print("\nεu (mean εc over the samples):")
        print(report["unconditional"].round(4).to_string())
        print("\nCV estimate vs εc and εu (1 and R repetitions):")
        cols = ["cv_estimate", "eps_u", "bias", "bias_lo", "bias_hi", "rmse_c", "rmse_u", "corr"]
        print(report["bias"][cols].round(4).to_string())
        if report["decomposition"] is not None:
            print("\nVariance of one repetition's estimate: sample vs internal:")
            print(report["decomposition"].to_string(float_format="{:.3g}".format))
        if report["winners"] is not None:
            print("\nWinner tables (a worse = a has the larger error):")
            print(report["winners"].round(3).to_string())
        print("\nwritten:", *map(str, report["paths"]))
    return 0


#: ``K`` values of experiment 2 against ``K`` (``n = 120``; every divisor of 120 from 2).
BG_KS = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30, 40, 60, 120)


def _run_bg(args: argparse.Namespace) -> int:
    import matplotlib.pyplot as plt

    from cvstats.studies import kfold_experiments as kx
    from cvstats.studies._runner import prepare_out_dir

    out = prepare_out_dir(args.out, name="--out")
    kw = {"replicates": args.replicates, "seed": args.seed}
    paths = []
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        if args.study == "bg-experiment1":
            ds = kx.experiment1(K=args.K, **kw)
            cols = ["ratio1", "ratio1_se", "ratio2", "ratio2_se", "sigma2", "omega", "gamma"]
            print(f"Experiment 1 (ideal hold-out, K = {args.K}): E[θ̂]/θ against n")
            print(ds[cols].to_dataframe().round(4).to_string())
            ds.to_netcdf(out / "bg-experiment1.nc", engine="h5netcdf")
            plt.close(kx.experiment1_figure(ds, path=str(out / "bg-experiment1.png")))
            paths += [out / "bg-experiment1.nc", out / "bg-experiment1.png"]
        else:
            runs = {
                "regression": kx.experiment2(K=args.K, **kw),
                "outliers": kx.experiment2(K=args.K, outliers=True, **kw),
                "against-K": kx.experiment2((120,), K=BG_KS, **kw),
            }
            cols = ["n_train", "contribution_sigma2", "contribution_omega",
                    "contribution_gamma", "theta"]  # fmt: skip
            for name, ds in runs.items():
                print(f"\nExperiment 2 ({name}): contributions to Var[CV]")
                frame = ds[cols].to_dataframe().dropna(subset=["theta"])
                frame["share_gamma"] = frame["contribution_gamma"] / frame["theta"]
                print(frame.to_string(float_format="{:.4g}".format))
                ds.to_netcdf(out / f"bg-experiment2-{name}.nc", engine="h5netcdf")
                paths.append(out / f"bg-experiment2-{name}.nc")
            panels = {"regression": runs["regression"], "outliers": runs["outliers"]}
            plt.close(kx.experiment2_figure(panels, path=str(out / "bg-experiment2-n.png")))
            plt.close(
                kx.experiment2_figure(
                    {"regression": runs["against-K"]}, against="K",
                    path=str(out / "bg-experiment2-K.png"),
                )
            )  # fmt: skip
            paths += [out / "bg-experiment2-n.png", out / "bg-experiment2-K.png"]
        print("\nwritten:", *map(str, paths))
    return 0


def _run_with(args: argparse.Namespace, client: Any) -> int:
    if args.study == "population":
        return _run_population(args, client)
    if args.study.startswith("bg-"):
        return _run_bg(args)
    common = dict(
        seed=args.seed, J=args.J, M=args.M, R=args.R, batch_size=args.batch_size,
        n_jobs=args.n_jobs, progress=not args.quiet, client=client,
        compute=not args.report_only,
    )  # fmt: skip
    if args.study == "nb-letter":
        from cvstats.studies.letter import run_letter

        ds = run_letter(
            args.w, args.datasets, args.out, learners=args.learners,
            truth_sets=args.truth_sets, tree=args.tree, **common,
        )  # fmt: skip
        title = f"Nadeau & Bengio problem 3 (letter), w = {args.w:g}"
        _report(ds, args.out, args.alpha, title, label=f"w = {args.w:g}")
        return 0
    from cvstats.studies.classification import run_classification
    from cvstats.studies.regression import run_regression

    def load(sim: int, out: Path) -> xr.Dataset:
        if args.study == "nb-regression":
            return run_regression(sim, args.datasets, out, **common)
        return run_classification(
            sim, args.datasets, out, truth_sets=args.truth_sets, tree=args.tree,
            truth_test_size=args.truth_test_size, **common,
        )  # fmt: skip

    dirs = sim_out_dirs(args.sim, args.out)
    # a report of saved runs reads them all first: a missing batch stops it before any output
    loaded = {sim: load(sim, out) for sim, out in dirs.items()} if args.report_only else {}
    number = 1 if args.study == "nb-regression" else 2
    runs = {}
    for sim, out in dirs.items():
        ds = loaded[sim] if sim in loaded else load(sim, out)
        title = f"Nadeau & Bengio problem {number}, simulation {sim}"
        if len(args.sim) > 1:
            print(f"\n=== {title} ({out}) ===")
        _report(
            ds, out, args.alpha, title, label=None if len(args.sim) > 1 else f"simulation {sim}"
        )
        runs[f"simulation {sim}"] = ds
    if len(runs) > 1:
        sims = " ".join(map(str, args.sim))
        caption = f"Nadeau & Bengio problem {number}, simulations {sims}"
        print(f"\n=== {caption} ===")
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(analysis.study_table(runs, caption=caption))
            print(_comparison_text(runs))
    return 0


def _report(
    ds: xr.Dataset, out: str | os.PathLike[str], alpha: float, title: str, label: str | None
) -> None:
    """Write and print the report of one run; its truth comparison (run `label`) unless None."""
    report = study_report(ds, out, alpha=alpha, title=title)
    report["size_frame"] = rejection_rates_frame(report)
    _print_report(report, alpha, "" if label is None else _comparison_text({label: ds}))


def sim_out_dirs(sims: Sequence[int], out: str | os.PathLike[str]) -> dict[int, Path]:
    """Return the directory of each simulation: ``out`` for one, ``out/sim<N>`` for several.

    One simulation keeps the layout of earlier runs (its batch files in
    ``out``, so they resume); several are kept apart in ``out/sim1``,
    ``out/sim2`` ... A single-simulation run made in a directory named
    ``sim<N>`` therefore joins a multi-simulation report of its parent
    (``--out`` the parent, ``--report-only``).

    Examples
    --------
    >>> {k: v.as_posix() for k, v in sim_out_dirs([2, 3], "runs").items()}
    {2: 'runs/sim2', 3: 'runs/sim3'}
    >>> sim_out_dirs([1], "runs")[1].as_posix()
    'runs'
    """
    if len(sims) == 1:
        return {int(sims[0]): Path(out)}
    return {int(s): Path(out) / f"sim{int(s)}" for s in sims}


def rejection_rates_frame(report: dict[str, Any]) -> pd.DataFrame:
    """Sizes of :func:`study_report` as a frame: rows method, columns (config, quantity)."""
    sizes = report["sizes"]
    if isinstance(sizes, pd.DataFrame) and "rejection_rate" in sizes:
        return sizes["rejection_rate"].unstack(["config", "quantity"])
    return sizes


def add_study_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``study`` command (Nadeau–Bengio, population and Bengio–Grandvalet studies).

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``add_subparsers()`` object of the main ``cvstats`` parser.

    Returns
    -------
    argparse.ArgumentParser
        The ``study`` parser (its handler is set with ``set_defaults(func=...)``).
    """
    study = subparsers.add_parser(
        "study",
        help="re-run a simulation study of the papers (docs/studies.md)",
        description="Re-run a simulation study of the papers (docs/studies.md §A–§F).",
        formatter_class=DefaultsHelpFormatter,
    )
    inner = study.add_subparsers(dest="study", required=True)
    for name, sims, help_ in (
        ("nb-regression", "1..4", "problem 1: simple linear regression (fast, closed form)"),
        ("nb-classification", "1..4", "problem 2: two Gaussian populations (tree: see --tree)"),
        ("nb-letter", "", "problem 3: letter recognition, tree vs distorted 1-NN (tree: slow)"),
    ):
        p = inner.add_parser(
            name, help=help_, description=help_, formatter_class=DefaultsHelpFormatter
        )
        if name == "nb-letter":
            p.add_argument(
                "--w", type=float, default=1.0,
                help="distortion weight of the 1-NN distance (1, 5, 10, 17.25, 25, 2048)",
            )  # fmt: skip
            p.add_argument(
                "--learners", choices=("both", "nn", "tree"), default="both",
                help="learners to run (nn: the fast 1-NN alone)",
            )  # fmt: skip
        else:
            p.add_argument(
                "--sim", type=int, nargs="+", default=[1],
                help=f"simulation number(s) ({sims}); several run one by one, each in "
                "OUT/sim<N> (one: OUT itself), then one combined table",
            )  # fmt: skip
        p.add_argument("--datasets", type=int, default=1000, help="independent datasets")
        p.add_argument("--out", required=True, help="output directory (batch files, PNG, nc)")
        p.add_argument("--n-jobs", type=int, default=1, help="joblib workers over batches")
        p.add_argument("--seed", type=int, default=0, help="study seed")
        p.add_argument("--J", type=int, default=25, help="largest J (rho and J-study)")
        p.add_argument("--M", type=int, default=20, help="largest M (r and M-study)")
        p.add_argument("--R", type=int, default=15, help="bootstrap replicates")
        p.add_argument("--alpha", type=float, default=0.1, help="nominal level")
        p.add_argument(
            "--batch-size", type=int, default=None,
            help="datasets per batch file (default: from the sizes of the run)",
        )  # fmt: skip
        p.add_argument("--quiet", action="store_true", help="no progress bar")
        p.add_argument(
            "--report-only", action="store_true",
            help="print the report of a finished run from its batch files, computing no "
            "batch (same options as the run; an incomplete run is an error)",
        )  # fmt: skip
        p.add_argument(
            "--scheduler",
            default=None,
            metavar="ADDRESS",
            help="dask.distributed scheduler address (e.g. tcp://host:8786): "
            "batches run on the cluster instead of joblib",
        )
        if name in ("nb-classification", "nb-letter"):
            p.add_argument(
                "--tree", choices=("auto", "batched", "sklearn"), default="auto",
                help="tree path: batched (every split of a dataset at once, numpy), sklearn "
                "(split by split) or auto (batched for n <= the study's BATCHED_MAX_N, "
                "see docs/studies.md)",
            )  # fmt: skip
            p.add_argument(
                "--truth-sets",
                type=int,
                default=200,
                help="training sets of the Monte Carlo truth (0: mean of the estimates)",
            )
        if name == "nb-classification":
            from cvstats.studies.classification import MIN_TRUTH_TEST_SIZE, TRUTH_TEST_SIZE

            p.add_argument(
                "--truth-test-size", type=int, default=TRUTH_TEST_SIZE,
                help="size of the one test sample every truth training set is scored on "
                f"(an int >= {MIN_TRUTH_TEST_SIZE}; its noise is part of the truth's "
                "standard error)",
            )  # fmt: skip
        p.set_defaults(func=_run)
    _add_population_parser(inner)
    for name, help_ in (
        ("bg-experiment1", "Bengio & Grandvalet experiment 1: ideal hold-out, θ̂1/θ and θ̂2/θ"),
        ("bg-experiment2", "Bengio & Grandvalet experiment 2: σ², ω, γ contributions to Var[CV]"),
    ):
        p = inner.add_parser(
            name, help=help_, description=help_ + " (docs/studies.md §E).",
            formatter_class=DefaultsHelpFormatter,
        )  # fmt: skip
        p.add_argument("--out", required=True, help="output directory (PNG, nc)")
        p.add_argument("--replicates", type=int, default=1000, help="independent replicates")
        p.add_argument("--K", type=int, default=10, help="number of blocks / folds")
        p.add_argument("--seed", type=int, default=0, help="seed")
        p.set_defaults(func=_run, scheduler=None)
    return study


def _add_population_parser(inner: Any) -> None:
    help_ = "survey's Algorithm 1: CV vs conditional/unconditional error on a population"
    p = inner.add_parser(
        "population", help=help_, description=help_ + " (docs/studies.md §F).",
        formatter_class=DefaultsHelpFormatter,
    )  # fmt: skip
    p.add_argument(
        "--population",
        choices=("letter", "synthetic"),
        default="letter",
        help="letter (UCI, shipped) or synthetic (N&B problem 2 draw of 20,000)",
    )
    p.add_argument(
        "--learners",
        nargs="+",
        default=["nb", "dt"],
        help="learners: nb 4nn 10nn lr dt rf (lr, rf: slow, fitted fold by fold)",
    )
    p.add_argument("--samples", type=int, default=100, help="samples T drawn from the population")
    p.add_argument("--N", type=int, default=300, help="size of a sample T")
    p.add_argument("--folds", type=int, nargs="+", default=[2, 10, 30], help="k of the k-fold CV")
    p.add_argument("--repetitions", type=int, default=30, help="repetitions of each k-fold CV")
    p.add_argument("--out", required=True, help="output directory (batch files, PNG, CSV)")
    p.add_argument("--n-jobs", type=int, default=1, help="joblib workers over batches")
    p.add_argument("--seed", type=int, default=0, help="study seed")
    p.add_argument("--batch-size", type=int, default=4, help="samples per batch file")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="dask.distributed scheduler address: batches run on the cluster",
    )
    p.set_defaults(func=_run)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``study ...`` on its own (``python -m cvstats.studies.cli study nb-regression ...``)."""
    parser = argparse.ArgumentParser(prog="cvstats", formatter_class=DefaultsHelpFormatter)
    add_study_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main())
