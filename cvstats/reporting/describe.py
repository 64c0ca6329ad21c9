"""What a cube holds, at a glance: :func:`describe` and :class:`CubeDescription`.

:func:`describe` validates a cube (:func:`cvstats.validate`) and summarises it:
its form (a dense loss cube, a compact loss cube or a score cube, with its
metric and whether a larger value is better), its design, ``n`` and seed, its
dims, one row per block (number of splits, training and test sizes), and the
mean metric of each model over the main block (the estimate ``μ̂_J`` of
docs/theory.md §1; averaged over any extra dim such as ``dataset``). The result
prints as text (``cvstats describe CUBE`` prints it), shows as a small HTML
table in a notebook, and gives its blocks as a frame (:meth:`CubeDescription.to_frame`).

Part of the reporting layer (``docs/architecture.md``).
"""

from __future__ import annotations

import html
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from cvstats.cube.compact import EXAMPLE_INDEX, SLOT, compact_cube, is_compact
from cvstats.cube.dense import get_extra_dims, in_test, unit_dim
from cvstats.cube.groups import straddling_splits
from cvstats.cube.schema import (
    BLOCKS,
    EXAMPLE,
    GROUP,
    IN_TRAIN,
    METRIC,
    N_TEST,
    SPLIT,
    UNKNOWN_SEED,
)
from cvstats.cube.score import is_greater_better, is_score
from cvstats.cube.validation import validate
from cvstats.errors import CvstatsTypeError
from cvstats.inference.blocks import split_means
from cvstats.reporting.formatting import latex_escape

__all__ = ["BlockSummary", "CubeDescription", "describe"]

#: Forms of a cube, as :attr:`CubeDescription.form` names them.
DENSE, COMPACT, SCORE = "loss cube", "compact loss cube", "score cube"

#: Models listed by ``repr`` before "... and k more".
_REPR_MODELS = 12


@dataclass(frozen=True)
class BlockSummary:
    """One block of a cube's splits: how many, and their training and test sizes.

    Attributes
    ----------
    block : str
        ``"main"``, ``"half"``, ``"replicate"``, ``"5x2"`` or ``"nested"``.
    splits : int
        Number of splits in the block.
    n_train : tuple of int
        The distinct training-set sizes ``n1`` of its splits, ascending.
    n_test : tuple of int
        The distinct test-set sizes ``n2`` of its splits, ascending (over every
        element of the extra dims).
    """

    block: str
    splits: int
    n_train: tuple[int, ...]
    n_test: tuple[int, ...]


@dataclass(frozen=True)
class CubeDescription:
    """What a valid cube holds; returned by :func:`describe`.

    ``print()`` it for the full text, ``repr`` gives a short summary (at most 20
    lines), a notebook shows it as an HTML table, :meth:`to_frame` gives the
    blocks as a frame.

    Attributes
    ----------
    name : str
        The cube's name: its loss or metric, the left side of formulas.
    form : str
        ``"loss cube"`` (dense, per-example losses), ``"compact loss cube"``
        (test losses on a ``slot`` dim) or ``"score cube"`` (one value per split).
    metric : str
        The loss (a loss cube's ``loss`` attr, else its name) or the metric (a
        score cube's ``metric`` attr).
    greater_is_better : bool
        Whether a larger value is better (a score cube's attr; False for losses).
    design, n, seed : str, int, int
        The cube's attrs (``seed`` is -1 when the splits were not drawn by cvstats).
    sizes : tuple of (str, int)
        The dims and their sizes, in the cube's order.
    unit : str
        The last dim: ``"model"``, or ``"contrast"`` for a contrast cube.
    blocks : tuple of BlockSummary
        One per block present, in the schema's order (main, half, replicate, 5x2, nested).
    models : tuple of str
        The labels of the last dim.
    means : tuple of float
        Per model, the mean over the splits of :attr:`mean_block` of the split
        means (a loss cube) or split scores (a score cube), averaged over
        :attr:`averaged_over`.
    mean_block : str
        The block the means are over: ``"main"``, or the first block present
        when the cube has no main block.
    averaged_over : tuple of str
        The extra dims (e.g. ``dataset``) the means are averaged over.
    checks : tuple of str
        What :func:`cvstats.validate` verified on this cube.
    groups : int
        Number of groups of the cube's ``group`` coordinate (0: no groups, the
        examples are independent; docs/grouped-data.md).
    straddling : tuple of (int, int)
        ``(split, k)`` for every split in which ``k`` groups have examples in
        both the training and the test set (a dense cube with groups only).
    """

    name: str
    form: str
    metric: str
    greater_is_better: bool
    design: str
    n: int
    seed: int
    sizes: tuple[tuple[str, int], ...]
    unit: str
    blocks: tuple[BlockSummary, ...]
    models: tuple[str, ...]
    means: tuple[float, ...]
    mean_block: str
    averaged_over: tuple[str, ...]
    checks: tuple[str, ...]
    groups: int = 0
    straddling: tuple[tuple[int, int], ...] = ()

    @property
    def mean_label(self) -> str:
        """``"mean loss"`` for a loss cube, ``"mean <metric>, higher is better"`` for a score."""
        if self.form != SCORE:
            return "mean loss"
        better = "higher" if self.greater_is_better else "lower"
        return f"mean {_printable(self.metric)}, {better} is better"

    def _headline(self) -> str:
        better = "higher" if self.greater_is_better else "lower"
        what = {
            DENSE: "per-example losses",
            COMPACT: "test losses only, on a `slot` dim",
            SCORE: f"one {_printable(self.metric)} per split and {self.unit}",
        }[self.form]
        return f"cube {self.name!r}: {self.form} ({what}; {better} is better)"

    def _attrs_line(self) -> str:
        seed = f"{self.seed} (unknown)" if self.seed == UNKNOWN_SEED else str(self.seed)
        return f"design {self.design!r}, n = {self.n}, seed = {seed}"

    def _dims_line(self) -> str:
        return "dims: " + ", ".join(f"{_printable(d)} = {s}" for d, s in self.sizes)

    def _groups_line(self) -> str:
        line = f"groups: {self.groups} (coordinate `group`); "
        if not self.straddling:
            return line + "no group straddles the training and test sets of a split"
        shown = ", ".join(f"split {s} ({k})" for s, k in self.straddling[:3])
        more = f", ... ({len(self.straddling)} splits)" if len(self.straddling) > 3 else ""
        return line + f"groups straddle training and test sets in {shown}{more}"

    def _means_title(self, *, short: bool = False) -> str:
        label = "mean loss" if self.form != SCORE else f"mean {_printable(self.metric)}"
        better = self.mean_label[len(label) + 2 :]  # "higher is better" (a score), else ""
        what = "the mean of the split means" if self.form != SCORE else "the mean split score"
        title = f"{label} over the {self.mean_block} block"
        if not short:
            title += f" ({what}" + (", the estimate μ̂_J)" if self.mean_block == "main" else ")")
        if self.averaged_over:
            title += ", averaged over " + ", ".join(map(_printable, self.averaged_over))
        return title + (f"; {better}:" if better else ":")

    def __str__(self) -> str:
        lines = [self._headline(), self._attrs_line(), self._dims_line()]
        if self.groups:
            lines.append(self._groups_line())
        lines.append("blocks:")
        rows = [("block", "splits", "n_train", "n_test")] + [
            (b.block, str(b.splits), _sizes_text(b.n_train), _sizes_text(b.n_test))
            for b in self.blocks
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        for row in rows:
            cells = [row[0].ljust(widths[0])]
            cells += [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
            lines.append("  " + "  ".join(cells).rstrip())
        lines.append(self._means_title())
        labels = [_printable(m) for m in self.models]
        width = max(12, *map(len, labels))
        for label, value in zip(labels, self.means, strict=True):
            lines.append(f"  {label:<{width}} {_number(value)}")
        lines.append("checks passed (cvstats.validate):")
        lines.extend(f"  - {check}" for check in self.checks)
        return "\n".join(lines)

    def __repr__(self) -> str:
        blocks = ", ".join(f"{b.block} ({b.splits})" for b in self.blocks)
        lines = [
            f"<CubeDescription: {self._headline()}",
            f" {self._attrs_line()}",
            f" {self._dims_line()}",
            f" blocks (splits): {blocks}",
            f" {self._means_title(short=True)}",
        ]
        shown = list(zip(self.models, self.means, strict=True))[:_REPR_MODELS]
        lines += [f"   {m!r}: {_number(v)}" for m, v in shown]
        if len(self.models) > _REPR_MODELS:
            lines.append(f"   ... and {len(self.models) - _REPR_MODELS} more {self.unit}s")
        lines[-1] += ">"
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        block_rows = "".join(
            f"<tr><td>{esc(b.block)}</td><td>{b.splits}</td>"
            f"<td>{esc(_sizes_text(b.n_train))}</td><td>{esc(_sizes_text(b.n_test))}</td></tr>"
            for b in self.blocks
        )
        mean_rows = "".join(
            f"<tr><td>{esc(str(m))}</td><td>{esc(_number(v))}</td></tr>"
            for m, v in zip(self.models, self.means, strict=True)
        )
        checks = "".join(f"<li>{esc(c)}</li>" for c in self.checks)
        return (
            '<div class="cvstats-description">'
            f"<p><b>{esc(self._headline())}</b><br>{esc(self._attrs_line())}<br>"
            f"{esc(self._dims_line())}</p>"
            "<table><thead><tr><th>block</th><th>splits</th><th>n_train</th><th>n_test</th>"
            f"</tr></thead><tbody>{block_rows}</tbody></table>"
            f"<table><caption>{esc(self._means_title().rstrip(':'))}</caption>"
            f"<thead><tr><th>{esc(self.unit)}</th><th>{esc(self.mean_label)}</th></tr></thead>"
            f"<tbody>{mean_rows}</tbody></table>"
            f"<details><summary>checks passed (cvstats.validate)</summary><ul>{checks}</ul>"
            "</details></div>"
        )

    def to_frame(self) -> pd.DataFrame:
        """Return one row per block: its splits and the range of its training and test sizes.

        Returns
        -------
        pandas.DataFrame
            Index ``block``; int columns ``splits``, ``n_train_min``,
            ``n_train_max``, ``n_test_min``, ``n_test_max``.
        """
        frame = pd.DataFrame(
            {
                "splits": [b.splits for b in self.blocks],
                "n_train_min": [min(b.n_train) for b in self.blocks],
                "n_train_max": [max(b.n_train) for b in self.blocks],
                "n_test_min": [min(b.n_test) for b in self.blocks],
                "n_test_max": [max(b.n_test) for b in self.blocks],
            },
            index=pd.Index([b.block for b in self.blocks], name="block"),
        )
        return frame.astype("int64")

    def to_markdown(self) -> str:
        """Return the description as Markdown: the headline, then the blocks as a pipe table."""
        return f"{self._headline()}\n\n{self.to_frame().reset_index().to_markdown(index=False)}"

    def to_latex(self, caption: str | None = None) -> str:
        """Return the blocks as a booktabs LaTeX table captioned by the headline."""
        styler = self.to_frame().reset_index().style.hide(axis="index")
        styler = styler.format(escape="latex").format_index(escape="latex", axis=1)
        return str(styler.to_latex(hrules=True, caption=caption or latex_escape(self._headline())))

    def to_html(self) -> str:
        """Return the HTML display (as in a notebook)."""
        return self._repr_html_()


def describe(cube: xr.DataArray | xr.Dataset) -> CubeDescription:
    """Validate a cube and describe it: form, design, blocks, sizes and mean metric per model.

    Parameters
    ----------
    cube : xarray.DataArray or xarray.Dataset
        A loss cube, a compact cube or compact Dataset (:mod:`cvstats.cube.compact`),
        a score cube (:func:`cvstats.from_scores`, :func:`cvstats.from_cv_results`,
        :func:`cvstats.collect` with ``scoring=``), or a contrast cube; with any
        extra dims (e.g. ``dataset``).

    Returns
    -------
    CubeDescription
        Printable (``print(describe(cube))``), with an HTML form for notebooks and
        :meth:`CubeDescription.to_frame` for the blocks.

    Raises
    ------
    CubeError
        If the cube does not follow the schema (from :func:`cvstats.validate`).
    CvstatsTypeError
        If `cube` is a Dataset that is not a compact Dataset (pick its variable).

    Examples
    --------
    >>> import numpy as np, cvstats
    >>> d = cvstats.designs.kfold(6, 2, seed=0)
    >>> cube = cvstats.from_arrays(np.ones((2, 6, 1)), design=d, models=["m"])
    >>> desc = cvstats.describe(cube)
    >>> desc.form, desc.models, desc.means
    ('loss cube', ('m',), (1.0,))
    >>> print(desc.to_frame())
           splits  n_train_min  n_train_max  n_test_min  n_test_max
    block
    main        2            3            3           3           3
    """
    if isinstance(cube, xr.Dataset):
        if not is_compact(cube):
            raise CvstatsTypeError(
                "`cube` is a Dataset; describe takes one cube: pass one of its variables "
                f"{sorted(map(str, cube.data_vars))}, e.g. describe(ds[name])."
            )
        cube = compact_cube(cube)
    validate(cube)
    if is_score(cube):
        form, metric, better = SCORE, str(cube.attrs[METRIC]), is_greater_better(cube)
    else:
        form = COMPACT if SLOT in cube.dims else DENSE
        metric, better = str(cube.attrs.get("loss", cube.name)), False
    unit = unit_dim(cube)
    present = set(np.asarray(cube["block"].values).tolist())
    blocks = [b for b in BLOCKS if b in present]
    extra = tuple(str(d) for d in get_extra_dims(cube) if d != SLOT)
    means = _block_means(cube, blocks[0] if "main" not in present else "main", unit)
    return CubeDescription(
        name=str(cube.name),
        form=form,
        metric=metric,
        greater_is_better=bool(better),
        design=str(cube.attrs["design"]),
        n=int(cube.attrs["n"]),
        seed=int(cube.attrs["seed"]),
        sizes=tuple((str(d), int(s)) for d, s in cube.sizes.items()),
        unit=unit,
        blocks=_block_summaries(cube, blocks),
        models=tuple(str(m) for m in cube[unit].values),
        means=tuple(float(v) for v in means),
        mean_block="main" if "main" in present else blocks[0],
        averaged_over=extra,
        checks=_checks(cube, form, unit),
        groups=0 if GROUP not in cube.coords else int(pd.unique(cube[GROUP].values).size),
        straddling=tuple(straddling_splits(cube).items()),
    )


def _block_means(cube: xr.DataArray, block: str, unit: str) -> np.ndarray:
    """Mean over the block's splits of the split means, averaged over the extra dims."""
    means = split_means(cube, blocks=[block], method="describe").mean(SPLIT)
    others: list[Hashable] = [d for d in means.dims if d != unit]
    if others:
        means = means.mean(others)
    return np.asarray(means.transpose(unit).values, dtype=float)


def _test_sizes(cube: xr.DataArray) -> xr.DataArray:
    """Test-set size of every split, over ``(*extra, split)`` (or ``split`` when stated)."""
    if N_TEST in cube.coords:  # a score cube's, or sizes a loss cube states
        return cube[N_TEST]
    if SLOT in cube.dims:
        return (cube[EXAMPLE_INDEX] >= 0).sum(SLOT)
    return in_test(cube).sum(EXAMPLE)


def _block_summaries(cube: xr.DataArray, blocks: list[str]) -> tuple[BlockSummary, ...]:
    block = np.asarray(cube["block"].values)
    n_train = np.asarray(cube["n_train"].values)
    sizes = _test_sizes(cube)
    n_test = np.asarray(sizes.transpose(..., SPLIT).values).reshape(-1, block.size)
    rows = []
    for name in blocks:
        sel = block == name
        rows.append(
            BlockSummary(
                block=name,
                splits=int(sel.sum()),
                n_train=tuple(int(v) for v in np.unique(n_train[sel])),
                n_test=tuple(int(v) for v in np.unique(n_test[:, sel])),
            )
        )
    return tuple(rows)


def _checks(cube: xr.DataArray, form: str, unit: str) -> tuple[str, ...]:
    """Say in words what :func:`cvstats.validate` verified for this cube's form."""
    extra = "".join(f"{_printable(d)}, " for d in get_extra_dims(cube) if d != SLOT)
    if form == SCORE:
        return (
            "name: a non-empty str, the metric name formulas use",
            f"dims ({extra}split, {unit}), none empty, no `example` dim",
            f"dtype float32 or float64; unique int split and str {unit} labels",
            "attrs design, n, seed, greater_is_better and metric",
            "split coordinates and their per-block rules",
            "n_test >= 1 on every split, with n_train + n_test <= n",
            "test sizes fit each block's design (half-splits within n/2, k-fold repeats)",
            "every score finite",
        )
    core = SLOT if form == COMPACT else EXAMPLE
    checks = [
        "name: a non-empty str, the loss name formulas use",
        f"dims ({extra}split, {core}, {unit}), none empty",
        f"dtype float32 or float64; unique int split and str {unit} labels",
        "attrs design (str), n and seed (ints)",
        "split coordinates and their per-block rules",
    ]
    if form == COMPACT:
        checks += [
            "example_index: ints in [0, n_examples), ascending within a split, padding last",
            "losses finite on the test slots and NaN exactly on the padding, for every model",
        ]
    else:
        checks += ["losses finite where not NaN; the same NaN pattern (test sets) for every model"]
        if IN_TRAIN in cube.coords:
            checks.append("test sets disjoint from `in_train`")
        if GROUP in cube.coords:
            checks.append("`group` on `example`: one label per example, none missing")
    if N_TEST in cube.coords and form != COMPACT:
        checks.append("the NaN pattern matches the stated test sizes (`n_test`)")
    else:
        checks.append("one test size per block (k-fold folds may differ by one example)")
    checks.append("k-fold repeats partition the examples; the halves of a half-split disjoint")
    return tuple(checks)


def _sizes_text(values: tuple[int, ...]) -> str:
    """``"56"``, ``"56/57"`` (two or three sizes) or ``"50–60"`` (more)."""
    if len(values) <= 3:
        return "/".join(map(str, values))
    return f"{values[0]}–{values[-1]}"


def _number(value: float) -> str:
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return f"{value:.4f}"
    return f"{value:.4g}"


def _printable(text: Any) -> str:
    """Return ``text`` as a str on one line, its control characters escaped."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
