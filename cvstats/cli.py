"""The ``cvstats`` command line: ``cvstats demo`` and ``cvstats table``.

``cvstats demo`` is the main job on a built-in default: it draws a
Nadeau–Bengio design (every block every method needs) on scikit-learn's
breast-cancer data, collects the 0/1 losses of three classifiers, saves the
cube, prints what it holds and the comparison table of every method.
``cvstats table CUBE`` prints that table for a saved cube; ``cvstats study``
re-runs the simulation studies of the papers (:mod:`cvstats.studies`).

The top layer of cvstats (see ``docs/architecture.md``): may import every layer;
nothing imports it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import xarray as xr

from cvstats.reporting.compare import compare

__all__ = ["main", "describe"]


def describe(cube: xr.DataArray) -> str:
    """Return a short text description of a cube: design, sizes, blocks and mean losses.

    Parameters
    ----------
    cube : xarray.DataArray
        A valid loss cube.

    Returns
    -------
    str
        Several lines of text.
    """
    from cvstats.cube import in_test

    attrs = cube.attrs
    lines = [
        f"cube {cube.name!r}: design {attrs['design']!r}, n = {attrs['n']}, "
        f"seed = {attrs['seed']}",
        "dims: " + ", ".join(f"{d} = {s}" for d, s in cube.sizes.items()),
        "splits per block:",
    ]
    block = cube["block"].to_series()
    n_test = in_test(cube).sum("example")
    for name, count in block.value_counts(sort=False).items():
        sel = (cube["block"] == name).values
        n2 = sorted(set(n_test.isel(split=sel).values.ravel().tolist()))
        n1 = sorted(set(cube["n_train"].values[sel].tolist()))
        sizes = f"n_train = {_fmt(n1)}   n_test = {_fmt(n2)}"
        lines.append(f"  {name:<10} {count:>5} splits   {sizes}")
    main = cube.isel(split=(cube["block"] == "main").values)
    means = main.mean("example").mean("split")
    if means.ndim > 1:
        means = means.mean([d for d in means.dims if d != "model"])
    lines.append("mean loss over the main block (the estimate μ̂_J of each model):")
    for model, value in zip(means["model"].values, means.values, strict=True):
        lines.append(f"  {model:<12} {value:.4f}")
    return "\n".join(lines)


def _fmt(values: list[int]) -> str:
    return str(values[0]) if len(values) == 1 else "/".join(map(str, values))


def _demo(args: argparse.Namespace) -> int:
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    from cvstats import designs
    from cvstats.cube.storage import save
    from cvstats.designs.collect import collect

    X, y = load_breast_cancer(return_X_y=True)
    n = len(y)
    n_test = n // 10
    design = designs.nadeau_bengio(n, n_test, J=args.J, M=args.M, R=args.R, seed=args.seed)
    learners = {
        "logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        "tree": DecisionTreeClassifier(min_samples_leaf=5),
        "naive_bayes": GaussianNB(),
    }
    print(
        f"breast cancer data (scikit-learn): n = {n}, n_test = {n_test}; "
        f"{design.sizes['split']} splits x {len(learners)} learners",
        flush=True,
    )
    cube = collect(
        learners,
        X,
        y,
        design,
        loss="zero_one",
        n_jobs=args.n_jobs,
        progress=not args.quiet,
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save(cube, out, overwrite=True)
    print(describe(cube))
    print(f"saved to {out}")
    print()
    print(compare("zero_one ~ model", cube).summary().as_text())
    print(f"\nthe same table for the saved cube: cvstats table {out} --formula 'zero_one ~ model'")
    return 0


def _table(args: argparse.Namespace) -> int:
    from cvstats.cube.storage import open_cube

    cube = open_cube(args.cube)
    formula = args.formula or f"{cube.name} ~ model"
    table = compare(
        formula,
        cube,
        methods=args.methods,
        mu0=args.mu0,
        alpha=args.alpha,
        target=args.target,
    )
    if args.format == "text":
        print(table.summary(precision=args.precision).as_text())
    elif args.format == "latex":
        print(table.to_latex(precision=args.precision))
    elif args.format == "markdown":
        print(table.to_markdown(precision=args.precision))
    else:
        print(table.to_html(precision=args.precision))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cvstats",
        description="Honest inference about generalization error from cross-validation.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo",
        help="collect losses of three classifiers on a built-in data set and save the cube",
    )
    demo.add_argument("--J", type=int, default=15, help="splits per resampled estimate")
    demo.add_argument("--M", type=int, default=10, help="half-splits of the conservative Z")
    demo.add_argument("--R", type=int, default=15, help="bootstrap replicates")
    demo.add_argument("--seed", type=int, default=0, help="seed of the design")
    demo.add_argument(
        "--n-jobs", type=int, default=-1, help="parallel jobs (joblib; default all cores)"
    )
    demo.add_argument(
        "--out", default="cvstats-demo/demo.nc", help="where to save the cube (.nc or .zarr)"
    )
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    demo.set_defaults(func=_demo)

    table = sub.add_parser(
        "table", help="comparison table of inference methods for a saved cube (.nc or .zarr)"
    )
    table.add_argument("cube", help="path of a cube saved by cvstats.save")
    table.add_argument(
        "--formula", default=None, help="contrasts, e.g. 'loss ~ model' (default: <name> ~ model)"
    )
    table.add_argument(
        "--methods", nargs="+", default=None, help="method names (default: all applicable)"
    )
    table.add_argument("--mu0", type=float, default=0.0, help="null value")
    table.add_argument("--alpha", type=float, default=0.05, help="1 - confidence level")
    table.add_argument("--target", choices=["learner", "model"], default="learner")
    table.add_argument("--format", choices=["text", "latex", "markdown", "html"], default="text")
    table.add_argument("--precision", type=int, default=4, help="significant digits")
    table.set_defaults(func=_table)

    from cvstats.studies.cli import add_study_parser

    add_study_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``cvstats`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status.
    """
    from cvstats.errors import CvstatsError

    args = _parser().parse_args(argv)
    try:
        return int(args.func(args))
    except CvstatsError as e:  # a user's mistake: one line, no traceback
        print(f"cvstats: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
