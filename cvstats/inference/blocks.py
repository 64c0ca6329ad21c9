"""From a cube to the arrays each method needs: split means arranged by block.

Every inference method starts from the test means ``μ̂_j`` of the splits
(docs/theory.md §1), computed once over the ``example`` dim, and picks the
blocks it needs (docs/theory.md §4): the main resampling, the conservative-Z
halves, the bootstrap replicates or Dietterich's 5x2 halves. This module
arranges them into the core dims the kernels expect, through vectorized
indexing on the ``split`` dim (so dask-backed cubes stay lazy), and raises
a :class:`~cvstats.errors.DesignError` naming the design function that
provides a missing block.

A score cube (:mod:`cvstats.cube.score`) holds one value per split already: its
scores are the split means, taken as they are, and its test sizes are its
``n_test`` coordinate.

The splits of a block may differ in test size (``docs/cube-schema.md``, "Unequal
test sizes"). :func:`block_sizes` says whether a block has one size
(``BlockSizes.equal``), in one place for every method: the methods whose formula
uses one ``n1`` and one ``n2`` call :func:`check_one_size`, which refuses a block
without one unless the caller states ``n1`` and ``n2``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import bottleneck as bn
import numpy as np
import xarray as xr

from cvstats.cube import in_test
from cvstats.cube.apply import labelled
from cvstats.cube.compact import EXAMPLE_INDEX, SLOT
from cvstats.cube.dense import coord
from cvstats.cube.known import Checked, lazy, recall
from cvstats.cube.schema import EXAMPLE, N_TEST, SPLIT
from cvstats.cube.score import is_score
from cvstats.cube.threads import leading_parts, map_parts
from cvstats.errors import DesignError

__all__ = [
    "PROVIDERS",
    "BlockSizes",
    "split_means",
    "share_split_means",
    "block_positions",
    "main_means",
    "half_means",
    "replicate_means",
    "five_by_two_means",
    "block_sizes",
    "check_one_size",
    "unequal_sizes_error",
    "SIZES_FIX",
    "kfold_layout",
    "coord",
]

#: The design functions that provide each block, for error messages.
PROVIDERS: dict[str, str] = {
    "main": "cvstats.designs.resampled, kfold or holdout",
    "half": "cvstats.designs.conservative_z or nadeau_bengio",
    "replicate": "cvstats.designs.bootstrap or nadeau_bengio",
    "5x2": "cvstats.designs.five_by_two or nadeau_bengio",
    "nested": "cvstats.designs.nested_cv",
}

# names of the core dims handed to the kernels (moved last by apply_ufunc)
J_DIM = "_j"
M_DIM = "_m"
SIDE_DIM = "_side"
R_DIM = "_r"


def split_means(
    cube: xr.DataArray,
    blocks: Sequence[str] | None = None,
    method: str = "this method",
    *,
    known: Checked | None = None,
) -> xr.DataArray:
    """Test mean ``μ̂_j`` of the splits (docs/theory.md §1), over ``(*extra, split, unit)``.

    NaN (non-test) losses are skipped; the reduction is chunk-wise on dask. A
    score cube is split-level already: its scores are returned as they are (the
    splits of ``blocks`` selected; attrs kept, as the reduction of a loss cube keeps
    them, so a result can say which metric it is about and in which direction).

    Parameters
    ----------
    cube : xarray.DataArray
        A cube or contrast cube, or a compact cube (:mod:`cvstats.cube.compact`),
        whose test losses are averaged over ``slot`` instead of ``example``, or a
        score cube (:mod:`cvstats.cube.score`).
    blocks : sequence of str, optional
        Only the splits of these blocks (each must be present; the error names
        the design function that provides a missing one); default every split.
    method : str
        Name of the calling method, for error messages.
    known : Checked, optional
        The cube's validated handle (:class:`cvstats.cube.known.Checked`): the means are
        kept in its cache, shared by whoever holds it (the methods of one ``compare``).
    """
    cache = known.cache if known is not None and known.cube is cube else None
    key = None if blocks is None else tuple(blocks)
    if cache is not None and key in cache:
        return cache[key]
    # every split's means, when known: shared through the handle, or those of a contrast
    # cube, computed with it
    whole = None
    if not is_score(cube) and known is not None and cache is not None:
        whole = cache.get(None)
        if whole is None:
            whole = _known_means(cube, known)
    if whole is None:
        means = _block_means(cube, blocks, method)
    else:
        means = whole if key is None else whole.isel({SPLIT: _positions(cube, blocks, method)})
    if cache is not None:
        cache[key] = means
    return means


def _known_means(cube: xr.DataArray, known: Checked) -> xr.DataArray | None:
    """Return the split means a handle of an in-memory cube known finite carries, or None.

    An in-memory contrast cube that ``compare`` makes from a formula has its
    split means computed while its differences were
    (:class:`cvstats.cube.known.Facts`). A lazy cube's methods stay lazy
    (outside ``compare``, which takes validation's means by
    :func:`share_split_means`).
    """
    if lazy(cube.data):
        return None
    facts = known.facts
    if not facts.finite or facts.means is None or lazy(facts.means.data):
        return None
    return facts.means


def share_split_means(known: Checked) -> xr.DataArray:
    """Compute the mean of every split of a handle's cube once, for the methods that share it.

    The later :func:`split_means` calls given the handle (``compare``'s methods)
    take their blocks from these. A lazy cube's means are computed here, in one
    read of the cube (they are small: one value per split), so that no method
    reads the cube again and the methods' results are in memory — or taken from
    validation, which computed them while it read a lazy cube
    (:class:`cvstats.cube.known.Facts`), without a read.
    """
    facts, cache = known.facts, known.cache
    # validation's means, only for a cube known finite: a contrast's means taken from the
    # models' would not show a difference that overflows
    if facts.finite and facts.means is not None:
        cache[None] = facts.means  # computed by validation, while it read the cube
        return facts.means
    means = split_means(known.cube, known=known)
    if lazy(means.data):
        with warnings.catch_warnings():  # an overflow is a non-finite mean, checked by the caller
            warnings.simplefilter("ignore", RuntimeWarning)
            means = means.compute()
        cache[None] = means
    return means


def _block_means(cube: xr.DataArray, blocks: Sequence[str] | None, method: str) -> xr.DataArray:
    """Return the split means of ``blocks`` (None: every split), one reduction per run."""
    if blocks is None:
        return cube.copy(deep=False) if is_score(cube) else _means(cube)
    keep = _positions(cube, blocks, method)
    if is_score(cube):  # one score per split: the split means themselves
        return cube.isel({SPLIT: keep})
    # the means of each run of consecutive splits, over a slice (a view): an index
    # array would copy the selected losses first
    runs = np.split(keep, np.flatnonzero(np.diff(keep) != 1) + 1)
    parts = [_means(cube.isel({SPLIT: slice(run[0], run[-1] + 1)})) for run in runs]
    return parts[0] if len(parts) == 1 else xr.concat(parts, SPLIT)


def _positions(cube: xr.DataArray, blocks: Sequence[str], method: str) -> np.ndarray:
    """Sorted positions along ``split`` of the splits of ``blocks``."""
    return np.sort(np.concatenate([block_positions(cube, b, method) for b in blocks]))


def _means(cube: xr.DataArray) -> xr.DataArray:
    """Return the test mean of every split of a dense or compact cube."""
    # a compact cube (cvstats.cube.compact) holds the test losses on a `slot` dim, NaN-padded
    over = SLOT if SLOT in cube.dims else EXAMPLE
    # bottleneck's nanmean reads the data once, numpy's copies it: ~20x faster on numpy
    # cubes (xarray leaves bottleneck off by default); scoped, nothing global changes
    with xr.set_options(use_bottleneck=True):
        if isinstance(cube.data, np.ndarray) and cube.get_axis_num(over) > 0:
            means = cube.reduce(_threaded_nanmean, dim=over)  # cvstats.cube.threads
        else:
            means = cube.mean(over, skipna=True)
    return means.drop_vars(EXAMPLE_INDEX, errors="ignore")


def _threaded_nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    """``bottleneck.nanmean`` over ``axis``, the first axis cut over threads when large."""
    parts = leading_parts(values)
    if len(parts) == 1:
        return bn.nanmean(values, axis=axis)
    return np.concatenate(map_parts(lambda p: bn.nanmean(values[p], axis=axis), parts), axis=0)


def block_positions(cube: xr.DataArray | xr.Dataset, block: str, method: str) -> np.ndarray:
    """Integer positions along ``split`` of the splits in ``block``.

    Raises
    ------
    DesignError
        If the cube has no split in that block, naming the design function
        that provides it.
    """
    pos = np.flatnonzero(coord(cube, "block") == block)
    if pos.size == 0:
        raise DesignError(
            f"{method} needs the {block!r} block, which this cube does not have (its blocks: "
            f"{sorted(set(np.asarray(cube['block'].values).tolist()))}); draw the splits with "
            f"{PROVIDERS[block]}."
        )
    return pos


def _take(means: xr.DataArray, index: np.ndarray, dims: tuple[str, ...]) -> xr.DataArray:
    """``means`` indexed on ``split`` by an integer array laid out over ``dims``.

    The new dims take the place of ``split``; the coordinates on ``split`` are
    dropped. In memory by :func:`numpy.take` (the split means are small, and
    xarray's vectorized indexing costs more than the reduction that made them).
    """
    if not isinstance(means.data, np.ndarray):  # dask: lazy, through xarray
        picked = means.isel({SPLIT: xr.DataArray(index, dims=dims)})
        return picked.drop_vars(
            [c for c in picked.coords if SPLIT in picked[c].dims or c == SPLIT]
        )
    axis = means.get_axis_num(SPLIT)
    coords = {
        k: v for k, v in means.coords.variables.items() if k != SPLIT and SPLIT not in v.dims
    }
    return labelled(
        np.take(means.data, index, axis=axis),
        (*means.dims[:axis], *dims, *means.dims[axis + 1 :]),
        coords,
        {k: i for k, i in means.xindexes.items() if k in coords},
        means.name,
        means.attrs,
    )


def main_means(means: xr.DataArray, method: str, *, min_splits: int = 1) -> xr.DataArray:
    """Split means of the main block, with the split dim renamed to the core dim ``_j``."""
    pos = block_positions(means, "main", method)
    if pos.size < min_splits:
        raise DesignError(
            f"{method} needs at least {min_splits} splits in the main block (a sample variance "
            f"over splits), but the cube has {pos.size}; draw more with "
            f"{PROVIDERS['main']} (J >= {min_splits})."
        )
    return _take(means, pos, (J_DIM,))


def _grid(pos: np.ndarray, *keys: np.ndarray) -> np.ndarray:
    """Positions laid out on the grid of ``keys`` plus an inner index (order of appearance).

    ``out[k1, k2, ..., i]`` is the position of the ``i``-th split (in split order)
    whose keys have the sorted codes ``k1, k2, ...``.
    """
    codes = [np.unique(k, return_inverse=True)[1].ravel() for k in keys]
    outer = tuple(int(c.max()) + 1 for c in codes)
    group = np.ravel_multi_index(codes, outer)
    order = np.argsort(group, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(group[order]) != 0])
    inner = np.empty_like(group)
    inner[order] = np.arange(group.size) - np.repeat(starts, np.diff(np.r_[starts, group.size]))
    out = np.full((*outer, int(inner.max()) + 1), -1, dtype=np.intp)
    out[(*codes, inner)] = pos
    if (out < 0).any():  # validate() guarantees complete groups; guard anyway
        raise DesignError("the groups of the cube's splits are incomplete.")
    return out


def half_means(means: xr.DataArray, method: str) -> xr.DataArray:
    """Half-block split means over core dims ``(_m, _side, _j)`` (docs/theory.md §4, method 4)."""
    pos = block_positions(means, "half", method)
    index = _grid(pos, coord(means, "half")[pos], coord(means, "side")[pos])
    return _take(means, index, (M_DIM, SIDE_DIM, J_DIM))


def replicate_means(means: xr.DataArray, method: str) -> xr.DataArray:
    """Replicate-block split means over core dims ``(_r, _j)`` (docs/theory.md §4, method 5)."""
    pos = block_positions(means, "replicate", method)
    index = _grid(pos, coord(means, "replicate")[pos])
    if index.shape[0] < 2:
        raise DesignError(
            f"{method} needs at least 2 bootstrap replicates (a sample variance over "
            f"replicates), but the cube has {index.shape[0]}; draw them with "
            f"{PROVIDERS['replicate']} (R >= 2)."
        )
    return _take(means, index, (R_DIM, J_DIM))


def five_by_two_means(means: xr.DataArray, method: str) -> xr.DataArray:
    """5x2 split means over core dims ``(_m, _side)`` (docs/theory.md §4, method 3).

    ``[..., m, 0]`` is ``μ̃_(m)`` (trained on ``D_m``, tested on ``D_m^c``) and
    ``[..., m, 1]`` is ``μ̃^c_(m)``.
    """
    pos = block_positions(means, "5x2", method)
    index = _grid(pos, coord(means, "half")[pos], coord(means, "side")[pos])[..., 0]
    if index.shape != (5, 2):
        raise DesignError(
            f"{method} needs the five replications of Dietterich's 5x2 design (10 splits), but "
            f"the cube's '5x2' block has {index.shape[0]} replications; draw them with "
            f"{PROVIDERS['5x2']}."
        )
    return _take(means, index, (M_DIM, SIDE_DIM))


@dataclass(frozen=True)
class BlockSizes:
    """Training and test sizes of a block: ``n1`` (``n_train``) and ``n2`` (test count).

    ``n1`` and ``n2`` are the medians over the block's splits (its one size when
    the splits agree). ``equal`` says whether the block has one test size ``n2``
    — for a k-fold main block, up to the rounding of ``n`` into ``K`` folds
    (folds differing by one example at most) — and ``n2_min``, ``n2_max`` give
    the range. ``mean_n1`` and ``mean_n2`` are the means over the block's splits.

    Methods whose formula uses one ``n1`` and one ``n2`` (the Nadeau–Bengio
    corrections, ``ρ0 = n2/n``) read :attr:`correction`: the block's one size;
    for a k-fold main block whose folds differ by more than one example (e.g.
    ``GroupKFold`` on groups of unequal size), the mean sizes, which are exact
    because every repeat partitions the examples (validation checks it): the
    mean test size is ``n/K`` and, with each fold trained on the others, the
    mean training size ``n - n/K``, so ``n2/n1 = 1/(K - 1)`` as for folds of
    one size (Bouckaert & Frank 2004). Other blocks without one size are
    refused unless the caller states the sizes (:func:`check_one_size`). The
    other methods use the sizes for reporting only.
    """

    n1: int
    n2: int
    n_splits: int
    equal: bool
    n2_min: int
    n2_max: int
    block: str
    kfold: bool
    mean_n1: float
    mean_n2: float

    @property
    def correction(self) -> tuple[float, float] | None:
        """``(n1, n2)`` for the Nadeau–Bengio correction, or None when the block has none.

        The one size (the medians) when the splits agree; the mean sizes of a
        k-fold partition whose folds differ (:attr:`partition_means`); None for
        other blocks of several test sizes (the caller must state them).
        """
        if self.equal:
            return float(self.n1), float(self.n2)
        if self.partition_means:
            return self.mean_n1, self.mean_n2
        return None

    @property
    def partition_means(self) -> bool:
        """Whether the correction uses the mean sizes: a k-fold partition of unequal folds."""
        return self.kfold and not self.equal


def block_sizes(
    cube: xr.DataArray, block: str, method: str, *, known: Checked | None = None
) -> BlockSizes:
    """``n1``, ``n2`` (medians), the number of splits and whether ``n2`` is one size.

    The test sizes are read off the NaN pattern of the first element of the
    extra dims (validation guarantees that every element agrees, but for a
    k-fold main block, whose fold sizes may differ between data sets): its
    non-NaN count per split for a dense cube, its non-padding slots
    (``example_index >= 0``) for a compact cube, and the ``n_test`` coordinate
    for a score cube (:mod:`cvstats.cube.score`) or a loss cube that states its
    sizes (which validation checks against the NaN pattern everywhere).

    The splits of a block may differ in test size (a 2-fold split of an odd
    ``n``, groups of unequal size; ``docs/cube-schema.md``): ``equal`` is False
    then (for a k-fold main block, only when folds differ by more than one
    example), and ``n1``, ``n2`` are the medians. With the cube's validated handle
    (``known``), the test counts validation made are read, and the sizes are kept
    in its cache (shared by the methods of one ``compare``).
    """
    cache = known.cache if known is not None and known.cube is cube else None
    key = (BlockSizes, block)  # not a tuple of block names: the split means use those
    if cache is not None and key in cache:
        return cache[key]
    pos = block_positions(cube, block, method)
    n1 = coord(cube, "n_train")[pos]
    # what validation counted: through the handle, or remembered with a lazy cube
    facts = known.facts if cache is not None else recall(cube)
    if is_score(cube) or (N_TEST in cube.coords and EXAMPLE in cube.dims):
        # no NaN pattern, or sizes stated: the test sizes are a coordinate
        n2 = coord(cube, N_TEST)[pos]
    elif facts is not None and facts.first_counts is not None:  # counted by validation
        n2 = facts.first_counts[pos]
    else:
        if SLOT in cube.dims:  # compact cube: the test examples are the non-padding slots
            mask, over = cube[EXAMPLE_INDEX].isel({SPLIT: pos}) >= 0, SLOT
        else:
            mask, over = in_test(cube.isel({SPLIT: pos})), EXAMPLE
        first = mask.isel({d: 0 for d in mask.dims if d not in (SPLIT, over)})
        n2 = np.asarray(first.sum(over).values)
    kfold = block == "main" and bool((coord(cube, "fold")[pos] >= 0).all())
    spread = int(n2.max() - n2.min())
    sizes = BlockSizes(
        n1=int(np.median(n1)),
        n2=int(np.median(n2)),
        n_splits=int(pos.size),
        equal=spread <= (1 if kfold else 0),
        n2_min=int(n2.min()),
        n2_max=int(n2.max()),
        block=block,
        kfold=kfold,
        mean_n1=float(np.mean(n1)),
        mean_n2=float(np.mean(n2)),
    )
    if cache is not None:
        cache[key] = sizes
    return sizes


#: The fix for a method that needs one test size, when the caller can state the sizes.
SIZES_FIX = (
    "Pass `n1=` and `n2=` to state the training and test sizes the correction should use "
    "(e.g. n1={n1}, n2={n2}, the block's medians), or draw splits of one test size."
)


def unequal_sizes_error(sizes: BlockSizes, method: str, fix: str = SIZES_FIX) -> DesignError:
    """Return the error of a method whose formula needs one ``n2``, on a block without one.

    ``fix`` (a sentence) may name ``{n1}`` and ``{n2}`` (the block's medians).
    """
    what = (
        f"its folds test {sizes.n2_min} to {sizes.n2_max} examples, more than the one-example "
        "difference of splitting n into K folds"
        if sizes.kfold
        else f"its splits test {sizes.n2_min} to {sizes.n2_max} examples"
    )
    free = "kfold_t (one repeat)" if sizes.kfold else "resampled_t and bootstrap_t"
    return DesignError(
        f"{method} needs one test size n2 in the {sizes.block!r} block, but {what}: its "
        "formula uses the sizes (the Nadeau–Bengio correction, ρ0 = n2/n and n2/n1, assumes "
        f"one n1 and one n2 for every split). {fix.format(n1=sizes.n1, n2=sizes.n2)} "
        f"Methods whose formula does not use the sizes ({free}) run on the block as it is."
    )


def check_one_size(
    cube: xr.DataArray,
    blocks: Sequence[str],
    method: str,
    n1: int | None,
    n2: int | None,
    known: BlockSizes | None = None,
    *,
    checked: Checked | None = None,
) -> None:
    """Refuse blocks without one test size, unless the caller states ``n1`` and ``n2``.

    For the methods whose formula uses one ``n1`` and one ``n2``; see
    :class:`BlockSizes` for what counts as one size (a k-fold partition of
    unequal folds has exact mean sizes, :attr:`BlockSizes.correction`, and
    passes). ``known``: the sizes of one of the blocks, already read (not read
    again); ``checked``: the cube's validated handle (the other blocks' sizes from
    validation's counts, kept in its cache).

    Raises
    ------
    DesignError
        From :func:`unequal_sizes_error`, for the first block of ``blocks`` whose
        test sizes differ, when ``n1`` or ``n2`` is None.
    """
    if n1 is not None and n2 is not None:
        return
    for block in blocks:
        if known is not None and known.block == block:
            sizes = known
        else:
            sizes = block_sizes(cube, block, method, known=checked)
        if sizes.correction is None:
            raise unequal_sizes_error(sizes, method)


def kfold_layout(cube: xr.DataArray, method: str) -> tuple[int, int]:
    """``(K, repeats)`` of a k-fold main block; error if the main block is not k-fold."""
    pos = block_positions(cube, "main", method)
    fold = coord(cube, "fold")[pos]
    repeat = coord(cube, "repeat")[pos]
    if (fold < 0).any():
        raise DesignError(
            f"{method} needs a k-fold main block (splits with `fold` >= 0), but this cube's "
            "main block holds random splits; draw k-fold splits with cvstats.designs.kfold, "
            "or use resampled_t / corrected_resampled_t for random splits."
        )
    return int(np.unique(fold).size), int(np.unique(repeat).size)
