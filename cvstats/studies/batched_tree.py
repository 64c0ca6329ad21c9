"""Decision trees grown for many training subsets of a dataset at once (issue 31).

:func:`regression_tree_predict` grows, with numpy only, the tree of
``DecisionTreeRegressor(min_samples_split, min_samples_leaf)`` (squared-error
criterion, every feature tried, no depth limit) and
:func:`classification_tree_predict` the tree of
``DecisionTreeClassifier(min_samples_split, min_samples_leaf)`` (Gini) for
every training set ``train_idx[s]`` of a dataset ``(X, y)`` (or of each of
``B`` datasets) and returns its predictions (leaf mean, or the leaf's most
frequent class) for every example, or for ``test_idx[s]``. Each feature is
sorted once per dataset; the training entries of the open nodes of all
trees sit in one row per feature (with their feature values and responses),
grouped by (tree, node) — the groups in the same places in every row — and
sorted by the row's feature inside each group. The trees grow level by
level: every (tree, node, feature) finds its best split from cumulative
counts and sums along its row, vectorized over trees, nodes and features;
a stable O(N) partition moves the entries to the children, the entries of
leaves leave the rows, and the examples to predict are routed down the
finished trees at the end (the only Python loops are over depth levels,
features, datasets and the rounds of the tie rule below).

The rules are scikit-learn's (Breiman et al., 1984, ch. 4 and 8;
scikit-learn's ``BestSplitter``, ``Gini``, ``MSE`` and
``DepthFirstTreeBuilder``):

* features are cast to float32 (as scikit-learn does);
* a node is a leaf when it has fewer than ``min_samples_split`` or fewer
  than ``2 min_samples_leaf`` examples, or its impurity is at most the
  float64 machine epsilon (squared error: the variance of ``y``; Gini: the
  node is pure);
* candidate splits lie between consecutive sorted values ``a < b`` with
  ``b > a + 1e-7`` added and compared in float32 (scikit-learn's
  ``FEATURE_THRESHOLD``, a float32: values one float32 step apart in
  ``[1, 2)`` are not a split point), both children
  holding at least ``min_samples_leaf`` examples; the criterion maximized is
  the proxy ``S_L²/n_L + S_R²/n_R`` (sums and counts of ``y`` in the
  children) or ``-n_R G_R - n_L G_L`` with ``G = 1 - Σ_k n_k²/n²`` (class
  counts ``n_k``, computed in scikit-learn's floating-point operations); the
  threshold is ``a/2 + b/2`` and ``x <= threshold`` goes left;
* among equal proxies **within a feature** the smallest threshold wins (the
  first one met in scikit-learn's ascending scan, which keeps a new best only
  when strictly greater).

**Ties between features.** scikit-learn visits the features of each node in
a random order and keeps the first feature reaching the best proxy. The
order comes from one xorshift generator (seeded by
``RandomState(random_state).randint(0, 2**31 - 1)``) and a feature array
that carry over from node to node in depth-first preorder, so while no
feature is constant in a searched node the order at a node is a fixed
function of ``c``, the number of nodes searched before it in preorder
(:func:`_visit_positions`). A level-by-level grower does not know ``c``
while growing: it decides ties with a guess, then puts all nodes in one
table sorted in preorder (where ``c`` is a cumulative count), and regrows
only the subtrees of the outermost ties decided against their ``c`` (with
the right feature at their root), until every tie agrees; a consistent tree
is scikit-learn's (by induction along the preorder). Where a feature is
constant in a searched node (tied feature values, e.g. integer features)
scikit-learn's draws change from then on; the rule above is kept as the
batched tree's own rule, and trees with such a node and a tie are flagged
(``tied[s]``): they may differ from scikit-learn's.

With integer responses (e.g. 0/1 labels) and class counts all sums are exact
and the proxies are scikit-learn's bit for bit: the predictions are equal
(tested). With real-valued responses scikit-learn sums ``y`` in each
feature's order, so the proxies of one partition reached through two
features differ by rounding; a tree with two features' best proxies within a
relative ``1e-10`` (not equal) is flagged and
:func:`regression_tree_predict_exact` refits the flagged trees with
scikit-learn; leaf means equal scikit-learn's to rounding.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from cvstats.errors import ArgumentError
from cvstats.studies._common import FloatArray, IntArray
from cvstats.studies._sklearn_tree import sklearn_tree_predict

__all__ = [
    "TREE_PATHS",
    "choose_tree_path",
    "classification_tree_predict",
    "regression_tree_predict",
    "regression_tree_predict_exact",
]

#: scikit-learn's ``FEATURE_THRESHOLD``, a float32 (``_partitioner.pxd``): its tests
#: ``x[p] <= x[p - 1] + FEATURE_THRESHOLD`` add and compare in float32, so two values
#: one float32 step apart (1.19e-7 in [1, 2)) are a tie there, not a split point.
_FEATURE_THRESHOLD = np.float32(1e-7)
_EPS = float(np.finfo(np.float64).eps)
#: Relative gap under which two features' best proxies count as tied.
_TIE_RTOL = 1e-10
#: Training entries (trees × training-set size) grown in one call: datasets are
#: grown in chunks of at most this many, so memory stays near 0.5 GB and the
#: arrays in cache (docs/benchmarks.md: one dataset at a time at ``n = 2000``,
#: about 25 together at ``n = 200``).
_CHUNK_ENTRIES = 2_000_000


#: Values of the studies' ``tree`` option: ``"batched"`` (this module), ``"sklearn"``
#: (scikit-learn split by split) or ``"auto"`` (:func:`choose_tree_path`).
TREE_PATHS: tuple[str, ...] = ("auto", "batched", "sklearn")


def choose_tree_path(tree: str, n: int, batched_max_n: int) -> str:
    """Resolve a study's ``tree`` option to ``"batched"`` or ``"sklearn"``.

    Parameters
    ----------
    tree : {"auto", "batched", "sklearn"}
        The option; ``"auto"`` takes the batched tree for datasets of at most
        ``batched_max_n`` examples (where it was measured faster, see
        docs/benchmarks.md) and scikit-learn above.
    n : int
        Dataset size of the study.
    batched_max_n : int
        The study's crossover size (0: never batched under ``"auto"``).

    Returns
    -------
    str
        ``"batched"`` or ``"sklearn"``.

    Raises
    ------
    ArgumentError
        If ``tree`` is not one of :data:`TREE_PATHS`.
    """
    if tree not in TREE_PATHS:
        raise ArgumentError(
            f"`tree` must be one of {list(TREE_PATHS)}, got {tree!r}: 'batched' grows "
            "every split's tree at once, 'sklearn' fits scikit-learn split by split."
        )
    if tree == "auto":
        return "batched" if n <= batched_max_n else "sklearn"
    return tree


def _inputs(
    X: FloatArray,
    y: np.ndarray,
    train_idx: IntArray,
    test_idx: IntArray | None,
    min_split: int,
    min_leaf: int,
) -> tuple[FloatArray, np.ndarray, IntArray, IntArray | None, bool]:
    """Check the arguments; return them with a leading dataset axis and whether it was added."""
    X = np.asarray(X, dtype=np.float32).astype(np.float64)  # scikit-learn's float32 features
    y, train_idx = np.asarray(y), np.asarray(train_idx)
    one = X.ndim == 2
    if one:
        X, y, train_idx = X[None], y[None], train_idx[None]
        test_idx = None if test_idx is None else np.asarray(test_idx)[None]
    if X.ndim != 3 or y.shape != X.shape[:2]:
        raise ArgumentError(
            "`X` must have shape (n, p) and `y` shape (n,) (or (B, n, p) and (B, n) for B "
            f"datasets), got {X.shape[int(one) :]} and {y.shape[int(one) :]}."
        )
    B, n = y.shape
    if train_idx.ndim != 3 or train_idx.shape[0] != B or train_idx.size == 0:
        raise ArgumentError(
            "`train_idx` must have shape (S, n1) (or (B, S, n1)) with S, n1 >= 1, "
            f"got {train_idx.shape[int(one) :]}."
        )
    if not np.issubdtype(train_idx.dtype, np.integer):
        raise ArgumentError(f"`train_idx` must hold integers, got dtype {train_idx.dtype}.")
    if train_idx.min() < 0 or train_idx.max() >= n:
        raise ArgumentError(f"`train_idx` must index the {n} examples of `X`.")
    if not np.isfinite(X).all():
        raise ArgumentError(
            "`X` must be finite (no NaN or inf): the batched trees have no "
            "missing-value rule; use scikit-learn's tree for such data."
        )
    if min_split < 2 or min_leaf < 1:
        raise ArgumentError(
            "`min_samples_split` must be >= 2 and `min_samples_leaf` >= 1, "
            f"got {min_split} and {min_leaf}."
        )
    if test_idx is not None:
        test_idx = np.asarray(test_idx)
        if test_idx.ndim != 3 or test_idx.shape[:2] != train_idx.shape[:2]:
            raise ArgumentError(
                f"`test_idx` must have shape (S, n2) (or (B, S, n2)) with the S = "
                f"{train_idx.shape[1]} rows of `train_idx`, got {test_idx.shape[int(one) :]}."
            )
        if test_idx.size and (test_idx.min() < 0 or test_idx.max() >= n):
            raise ArgumentError(f"`test_idx` must index the {n} examples of `X`.")
    return X, y, train_idx, test_idx, one


def regression_tree_predict(
    X: FloatArray,
    y: FloatArray,
    train_idx: IntArray,
    *,
    min_samples_split: int = 10,
    min_samples_leaf: int = 5,
    random_state: int = 0,
    test_idx: IntArray | None = None,
) -> tuple[FloatArray, np.ndarray]:
    """Predictions of the regression trees of many training subsets of one dataset.

    Parameters
    ----------
    X : ndarray, shape (n, p) or (B, n, p)
        Features of the dataset (cast to float32 as scikit-learn does), or
        of ``B`` datasets grown together (then ``y``, ``train_idx``,
        ``test_idx`` and the outputs carry the leading ``B`` axis too).
    y : ndarray, shape (n,)
        Responses.
    train_idx : ndarray of int, shape (S, n1)
        Training set ``s`` is ``(X[train_idx[s]], y[train_idx[s]])`` (distinct indices).
    min_samples_split, min_samples_leaf : int, default 10, 5
        scikit-learn's stopping rules.
    random_state : int, default 0
        The trees' ``random_state`` in scikit-learn: it fixes the order in
        which features are visited, hence which of two equally good features
        splits a node (see the module docstring).
    test_idx : ndarray of int, shape (S, n2), optional
        Predict only the examples ``test_idx[s]`` with tree ``s`` (default:
        every example of the dataset).

    Returns
    -------
    pred : ndarray, shape (S, n) or (S, n2)
        ``pred[s, i]``: prediction of tree ``s`` for example ``i`` (or
        ``test_idx[s, i]``): the mean of ``y`` over the training examples of
        its leaf.
    tied : ndarray of bool, shape (S,)
        Trees that may differ from scikit-learn's beyond rounding: two
        features' best proxies equal to rounding, not exactly (real-valued
        ``y``), or a tie between features in a tree where some feature is
        constant in a searched node (tied feature values; see the module
        docstring).
    """
    X, y, train_idx, test_idx, one = _inputs(
        X, y, train_idx, test_idx, min_samples_split, min_samples_leaf
    )
    y = y.astype(np.float64).ravel()
    if not np.isfinite(y).all():
        raise ArgumentError("`y` must be finite (no NaN or inf).")
    exact = bool(np.all(y == np.round(y)) and np.abs(y).sum() < 2.0**52)
    crit = _Criterion("mse", y, 0, exact, binary=bool(np.isin(y, (0.0, 1.0)).all()))
    pred, tied = _fit_predict(
        X, crit, train_idx, min_samples_split, min_samples_leaf, random_state, test_idx=test_idx
    )
    return (pred[0], tied[0]) if one else (pred, tied)


def classification_tree_predict(
    X: FloatArray,
    y: np.ndarray,
    train_idx: IntArray,
    *,
    min_samples_split: int = 10,
    min_samples_leaf: int = 5,
    random_state: int = 0,
    test_idx: IntArray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Predictions of the Gini classification trees of many training subsets of one dataset.

    The trees of ``DecisionTreeClassifier(criterion="gini", min_samples_split,
    min_samples_leaf, random_state)``: the proxy maximized is scikit-learn's
    ``-n_R G_R - n_L G_L`` with ``G = 1 - Σ_k n_k² / n²`` (Breiman et al.,
    1984, §4.3), computed in the same floating-point operations from exact
    class counts, so the proxies are scikit-learn's bit for bit; a leaf
    predicts its most frequent class (the smallest label among equals).

    Parameters
    ----------
    X : ndarray, shape (n, p) or (B, n, p)
        Features of the dataset (cast to float32 as scikit-learn does), or
        of ``B`` datasets grown together (then ``y``, ``train_idx``,
        ``test_idx`` and the outputs carry the leading ``B`` axis too).
    y : ndarray, shape (n,)
        Class labels (any sortable values).
    train_idx : ndarray of int, shape (S, n1)
        Training set ``s`` is ``(X[train_idx[s]], y[train_idx[s]])`` (distinct indices).
    min_samples_split, min_samples_leaf : int, default 10, 5
        scikit-learn's stopping rules.
    random_state : int, default 0
        The trees' ``random_state`` in scikit-learn (the order in which
        features are visited, see the module docstring).
    test_idx : ndarray of int, shape (S, n2), optional
        Predict only the examples ``test_idx[s]`` with tree ``s`` (default:
        every example of the dataset).

    Returns
    -------
    pred : ndarray, shape (S, n) or (S, n2)
        ``pred[s, i]``: label predicted by tree ``s`` for example ``i`` (or
        ``test_idx[s, i]``).
    tied : ndarray of bool, shape (S,)
        Trees that may differ from scikit-learn's: a tie between features in
        a tree where some feature is constant in a searched node (tied
        feature values, e.g. integer features; see the module docstring).
    """
    X, y, train_idx, test_idx, one = _inputs(
        X, y, train_idx, test_idx, min_samples_split, min_samples_leaf
    )
    labels, codes = np.unique(y, return_inverse=True)
    crit = _Criterion("gini", codes.ravel().astype(np.int64), len(labels), True)
    pred, tied = _fit_predict(
        X, crit, train_idx, min_samples_split, min_samples_leaf, random_state, test_idx=test_idx
    )
    pred = labels[pred.astype(np.int64)]
    return (pred[0], tied[0]) if one else (pred, tied)


class _Flat(NamedTuple):
    """The training entries of the open nodes, one row per feature.

    Entries are grouped by (piece, node), the groups in the same places in
    every row, and row ``f`` is sorted by feature ``f`` inside each group:
    ``grp`` (N,) the group, ``rid`` (p, N) ``piece * n + example`` (example
    in its dataset), ``x`` (p, N) the feature's value, ``y`` (p, N) the
    response (class code).
    """

    grp: IntArray
    rid: IntArray
    x: FloatArray
    y: np.ndarray


@dataclass(frozen=True)
class _Criterion:
    """Splitting criterion: ``"mse"`` (responses ``y``) or ``"gini"`` (class codes ``y < K``).

    ``exact``: every sum of ``y`` is exact (integer responses, class counts),
    so two proxies are equal exactly when scikit-learn's are. ``spaced``: in
    every dataset, each feature's sorted values differ by more than
    ``FEATURE_THRESHOLD`` (continuous features): then any two entries of a
    node are far enough apart to split between, and no feature is constant in
    a node (set by :func:`_fit_predict`). ``binary``: responses 0 or 1 (``y² = y``):
    a child's count and sum, read off its parent's best split, are all its
    squared-error statistics.
    """

    kind: str
    y: np.ndarray
    K: int
    exact: bool
    spaced: bool = False
    binary: bool = False


def _fit_predict(
    X: FloatArray, crit: _Criterion, train_idx: IntArray, *rules: int, test_idx: IntArray | None
) -> tuple[FloatArray, np.ndarray]:
    """:func:`_fit_predict_chunk` on chunks of at most ``_CHUNK_ENTRIES`` training entries.

    ``rules``: its ``min_split, min_leaf, random_state``.
    """
    B, n, _ = X.shape
    step = max(1, _CHUNK_ENTRIES // max(1, train_idx.shape[1] * train_idx.shape[2]))
    outs = [
        _fit_predict_chunk(
            X[b : b + step],
            dataclasses.replace(crit, y=crit.y[b * n : (b + step) * n]),
            train_idx[b : b + step],
            *rules,
            None if test_idx is None else test_idx[b : b + step],
        )
        for b in range(0, B, step)
    ]
    if len(outs) == 1:
        return outs[0]
    return np.concatenate([o[0] for o in outs]), np.concatenate([o[1] for o in outs])


def _fit_predict_chunk(
    X: FloatArray,
    crit: _Criterion,
    train_idx: IntArray,
    min_split: int,
    min_leaf: int,
    random_state: int,
    test_idx: IntArray | None,
) -> tuple[FloatArray, np.ndarray]:
    """Grow the trees, regrow the subtrees of inconsistent ties until none is left.

    ``X`` (B, n, p), ``train_idx`` (B, S, n1), ``test_idx`` (B, S, n2) or
    None: ``B`` datasets grown together (tree ``b * S + s``, example
    ``b * n + i``). Returns the leaf value of every example (or of
    ``test_idx[b, s]``) in every tree, (B, S, ·), and the trees flagged (B, S).
    """
    B, n, p = X.shape
    S1 = train_idx.shape[1]
    S, N = B * S1, B * n  # trees and examples of all datasets: example b * n + i
    order = np.argsort(X, axis=1, kind="stable")  # (B, n, p): each feature sorted once
    glob = order + (np.arange(B) * n)[:, None, None]
    rank = np.empty((N, p), dtype=np.int64)  # position of each example in its feature's order
    for f in range(p):
        rank[glob[:, :, f].ravel(), f] = np.arange(N)
    x_sorted = np.take_along_axis(X, order, axis=1)
    x32 = x_sorted.astype(np.float32)  # scikit-learn's test in float32 (_FEATURE_THRESHOLD)
    crit = dataclasses.replace(
        crit,
        y=_compact_y(crit),
        spaced=bool(np.all(x32[:, 1:] > x32[:, :-1] + _FEATURE_THRESHOLD)),
    )
    # per dataset and feature, the sorted values (float32) and examples
    x_sorted = np.ascontiguousarray(x_sorted.transpose(0, 2, 1), dtype=np.float32)
    order_t = np.ascontiguousarray(order.transpose(0, 2, 1))
    id_type = np.int32 if S * n < 2**31 else np.int64
    X = X.reshape(N, p)
    pos = _visit_positions(p, n + 1, random_state)
    ctx = (X, n, crit, min_split, min_leaf, pos)
    trees = np.arange(S)
    # the training entries of every tree, per feature in its order: flat arrays by tree
    parts: list[list[np.ndarray]] = [[] for _ in range(4)]
    for b in range(B):
        member = np.zeros((S1, n), dtype=bool)
        member[np.arange(S1)[:, None], train_idx[b]] = True
        if (np.count_nonzero(member, axis=1) < train_idx.shape[2]).any():
            raise ArgumentError(
                "`train_idx` must hold distinct indices in each row (a training set "
                "without repeats); sample with replace=False."
            )
        # every tree holds n1 entries in every feature's order: the rows line up by tree
        g = np.repeat(np.arange(b * S1, (b + 1) * S1), train_idx.shape[2])
        i = [np.flatnonzero(member[:, order_t[b, f]]) - (g - b * S1) * n for f in range(p)]
        loc = np.stack([order_t[b, f][i_f] for f, i_f in enumerate(i)])
        x = np.stack([x_sorted[b, f][i_f] for f, i_f in enumerate(i)])
        rid = (g * n + loc).astype(id_type)
        for part, v in zip(parts, (g, rid, x, crit.y[b * n + loc]), strict=True):
            part.append(v)
    flat = _Flat(*(np.concatenate(v, axis=-1) for v in parts))
    # the leaf of each training example (tree, example i): an id, -1 elsewhere; ``row[id]``
    # is its row in the current table
    leaf_id = np.full((S, n), -1, dtype=np.int64)
    tab, (lt, le, lr) = _grow(
        ctx, flat, S, np.ones(S, np.int64), np.zeros(S, np.int64), trees, None, None, S1
    )
    leaf_id[lt, le] = lr
    row = np.arange(len(tab["tree"]))
    unresolved = np.zeros(S, dtype=bool)
    for round_ in range(_MAX_ROUNDS + 1):
        tab, new_row = _in_preorder(tab)
        row = np.where(row >= 0, new_row[row], -1)
        c = _preorder_counts(tab)
        want = _choose(tab["top"], pos[np.minimum(c, len(pos) - 1)])
        wrong = tab["tie"] & (want != tab["feat"])
        if not wrong.any():
            break
        if round_ == _MAX_ROUNDS:
            unresolved[tab["tree"][wrong]] = True
            break
        # the subtrees of the outermost wrong ties are regrown with the right feature
        idx = np.arange(len(c))
        reach = np.maximum.accumulate(np.where(wrong, _subtree_end(tab), -1))
        before = np.concatenate([[-1], reach[:-1]])
        roots = np.flatnonzero(wrong & (before <= idx))
        gone = reach > idx
        rt = tab["tree"][roots]
        # the regrown subtree holding each row (subtrees are row ranges from their root)
        piece_of = np.where(gone, np.cumsum(np.isin(idx, roots)) - 1, -1)
        regrown = np.unique(rt)  # only these trees' training examples can move
        t, i = np.nonzero(leaf_id[regrown] >= 0)
        t = regrown[t]
        at = piece_of[row[leaf_id[t, i]]]
        inside = at >= 0
        piece, e = at[inside], (t // S1 * n + i)[inside]
        o = np.argsort(piece[:, None] * N + rank[e], axis=0).T  # (p, entries)
        po, eo = piece[o], e[o]
        x = X[eo, np.arange(p)[:, None]].astype(np.float32)
        flat = _Flat(po[0], (po * n + eo % n).astype(id_type), x, crit.y[eo])
        keys = _node_keys(tab["tree"], tab["path"])
        o = np.argsort(keys)
        guess = (keys[o], c[o])
        new, (lt, le, lr) = _grow(
            ctx, flat, len(roots), tab["path"][roots], tab["depth"][roots], rt, want[roots],
            guess, S1,
        )  # fmt: skip
        kept = np.cumsum(~gone) - 1
        row = np.where((row >= 0) & ~gone[np.maximum(row, 0)], kept[np.maximum(row, 0)], -1)
        leaf_id[lt, le] = len(row) + lr
        row = np.concatenate([row, kept[-1] + 1 + np.arange(len(new["tree"]))])
        tab = {k: np.concatenate([v[~gone], new[k]]) for k, v in tab.items()}
    # (every round starts by sorting, and the loop ends before changing the table)
    at_idx = np.broadcast_to(np.arange(n), (B, S1, n)) if test_idx is None else test_idx
    at_idx = at_idx + (np.arange(B) * n)[:, None, None]
    t = np.repeat(trees, at_idx.shape[2])
    known = leaf_id[t, at_idx.ravel() % n]
    known[known >= 0] = row[known[known >= 0]]
    leaf = _leaves(tab, X, t, at_idx.ravel(), known)
    pred = tab["value"][leaf].reshape(at_idx.shape)
    flag = unresolved
    for name in ("near", "deep"):
        flag |= np.bincount(tab["tree"], weights=tab[name], minlength=S) > 0
    some_tie = np.bincount(tab["tree"], weights=tab["tie"], minlength=S) > 0
    some_const = np.bincount(tab["tree"], weights=tab["const"], minlength=S) > 0
    return pred, (flag | (some_tie & some_const)).reshape(B, S1)


def _compact_y(crit: _Criterion) -> np.ndarray:
    """Return the responses in a compact type: the grower's time goes to moving rows.

    Integer responses (``crit.exact``) are kept as integers and class codes as
    uint8 (both summed in int64: exact, and faster than float sums); the
    :class:`_Flat` rows also hold int32 ids and float32 feature values
    (compared and halved in float64 by :func:`_best_splits`).
    """
    y = crit.y
    if crit.kind == "gini":
        return y.astype(np.uint8 if crit.K <= 256 else np.int64)
    if crit.exact:
        return y.astype(np.int32 if y.size == 0 or np.abs(y).max() < 2**31 else np.int64)
    return y


#: Rounds of subtree regrowth before the trees with a wrong tie left are flagged.
_MAX_ROUNDS = 60
#: Deepest level of a node: heap paths and preorder keys fit int64 (longer branches flagged).
_MAX_DEPTH = 40
_SHIFT = 42  # node key: tree << _SHIFT | heap path (paths < 2**41)


def _node_keys(tree: IntArray, path: IntArray) -> IntArray:
    return (tree.astype(np.int64) << _SHIFT) | path


def _in_preorder(tab: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], IntArray]:
    """Sort the node table by tree, then depth-first preorder (left child first).

    Returns the sorted table and each old row's new row.
    """
    if tab["tree"].max() < 2**15:  # tree, padded path and depth in one int64 key
        o = np.argsort((_preorder_keys(tab) << 6) | tab["depth"])
    else:
        o = np.lexsort((tab["depth"], _padded(tab), tab["tree"]))
    new_row = np.empty(len(o), dtype=np.int64)
    new_row[o] = np.arange(len(o))
    return {k: v[o] for k, v in tab.items()}, new_row


def _padded(tab: dict[str, np.ndarray]) -> IntArray:
    """Heap path shifted to depth ``_MAX_DEPTH``: a subtree is one range of these keys."""
    return tab["path"] << (_MAX_DEPTH - tab["depth"])


def _preorder_counts(tab: dict[str, np.ndarray]) -> IntArray:
    """``c``: searched nodes before each node of its tree in preorder (table in preorder)."""
    att = tab["att"].astype(np.int64)
    before = np.cumsum(att) - att
    first = _group_first(tab["tree"])
    return before - before[first]


def _preorder_keys(tab: dict[str, np.ndarray]) -> IntArray:
    """Tree and padded path in one int64, ascending in the preorder table."""
    return (tab["tree"] << _SHIFT) | _padded(tab)


def _subtree_end(tab: dict[str, np.ndarray]) -> IntArray:
    """Index one past each node's subtree in the preorder table."""
    key = _preorder_keys(tab)
    upper = key + (np.int64(1) << (_MAX_DEPTH - tab["depth"]))
    return np.searchsorted(key, upper, side="left")


def _leaves(
    tab: dict[str, np.ndarray], X: FloatArray, t: IntArray, i: IntArray, known: IntArray
) -> IntArray:
    """Index in the preorder table of the leaf reached by example ``i[k]`` in tree ``t[k]``.

    ``known[k]``: the leaf's row for a training example, -1 for the others;
    these are routed down: in preorder a split node's left child
    is the next row and its right child the row past the left child's
    subtree. A leaf leads to itself, so the routing needs no test per step;
    finished examples leave every few steps.
    """
    out = known.copy()
    end = _subtree_end(tab)
    split = tab["split"]
    at = np.arange(len(end))
    to = np.stack([np.where(split, at + 1, at), np.where(split, np.append(end[1:], 0), at)], 1)
    to = to.ravel()  # to[2 node + goes right]: next row
    thr = np.where(split, tab["thr"], np.inf)
    column = np.where(split, tab["feat"] * X.shape[0], 0)  # feature's offset in X.T
    xt = np.ascontiguousarray(X.T).ravel()
    k = np.flatnonzero(known < 0)
    node = np.flatnonzero(_group_first(tab["tree"]) == at)[t[k]]  # roots
    q = i[k]
    while len(k):
        for _ in range(4):
            node = to[2 * node + (xt[column[node] + q] > thr[node])]
        go = split[node]
        out[k[~go]] = node[~go]
        k, node, q = k[go], node[go], q[go]
    return out


@functools.lru_cache(maxsize=8)
def _visit_positions(p: int, count: int, random_state: int) -> IntArray:
    """``pos[c, f]``: rank of feature ``f`` in scikit-learn's visiting order at split node ``c``.

    ``BestSplitter.node_split`` draws ``f_j = rand_int(0, f_i)`` for
    ``f_i = p, ..., 1`` from one xorshift state seeded by
    ``RandomState(random_state).randint(0, 2**31 - 1)``, visits
    ``features[f_j]`` and swaps it to position ``f_i - 1`` of a feature array
    kept from node to node; ``c`` counts the nodes searched before, in
    depth-first (preorder) order. This holds while no feature is constant in
    a searched node (continuous features): a constant feature changes the
    draws from then on (scikit-learn's ``n_known_constants`` and
    ``n_found_constants``), and :func:`_fit_predict` flags such trees where
    they have a tie. Cached (the array is read-only).
    """
    state = int(np.random.RandomState(random_state).randint(0, 2147483647))
    features = list(range(p))
    pos = np.empty((count, p), dtype=np.int64)
    mask = 0xFFFFFFFF
    for c in range(count):
        for k, f_i in enumerate(range(p, 0, -1)):
            if state == 0:
                state = 1
            state ^= (state << 13) & mask
            state ^= state >> 17
            state ^= (state << 5) & mask
            f_j = (state % 2147483648) % f_i
            pos[c, features[f_j]] = k
            features[f_i - 1], features[f_j] = features[f_j], features[f_i - 1]
    pos.setflags(write=False)
    return pos


def _choose(top: np.ndarray, pos: IntArray) -> IntArray:
    """Feature visited first among the best (``top`` mask ``(..., p)``), visiting ranks ``pos``."""
    return np.argmin(np.where(top, pos, top.shape[-1]), axis=-1)


def _grow(
    ctx: tuple[FloatArray, int, _Criterion, int, int, IntArray],
    flat: _Flat,
    P: int,
    root_path: IntArray,
    root_depth: IntArray,
    piece_tree: IntArray,
    forced: IntArray | None,
    guess: tuple[IntArray, IntArray] | None,
    S1: int,
) -> tuple[dict[str, np.ndarray], tuple[IntArray, IntArray, IntArray]]:
    """Grow subtrees ("pieces") level by level; return their nodes as a flat table.

    Piece ``j`` of ``P`` holds training examples at node ``root_path[j]`` (heap
    numbering, depth ``root_depth[j]``) of tree ``piece_tree[j]``;
    ``forced[j]`` is the feature its root takes if tied (``S1`` trees per
    dataset). ``flat``: the training entries grouped by piece, per feature
    sorted by the feature inside each group (:class:`_Flat`); the grower keeps
    them so per (piece, node) and level, and only the entries of searched
    nodes (the others leave when their node is made). Other ties between
    features are decided by the visiting order at a guessed preorder count
    (``guess``: node keys and counts of the previous table, 0 where absent);
    the caller checks them. The table's columns: tree, path, depth, searched
    (``att``), split, tie, chosen feature, best-feature mask (``top``),
    threshold, leaf value, and the flags near (near-tie), const (a feature
    constant in a searched node) and deep (split stopped at ``_MAX_DEPTH``).
    Also returns, for every training example, its tree, the example's index
    in its dataset and the table row of its leaf.
    """
    X, n, crit, min_split, min_leaf, pos = ctx
    grp, rid, xs, ys = flat
    xt = np.ascontiguousarray(X.T).ravel()
    # X.T's flat index of an entry's value of feature f is rid + f * len(X) + shift[piece]
    shift = piece_tree // S1 * n - np.arange(P) * n
    cols: dict[str, list[np.ndarray]] = {}
    leaves: dict[str, list[np.ndarray]] = {}

    def leave(tree: IntArray, rid0: IntArray, row: IntArray) -> None:
        """Record training entries (rid ``piece * n + i``) whose leaf is table row ``row``."""
        for name, v in (("l_tree", tree), ("l_ex", rid0 % n), ("l_row", row)):
            leaves.setdefault(name, []).append(v)

    att, value, stats = _node_stats(crit, grp, ys[0], P, min_split, min_leaf)
    out = ~att[grp]  # roots that are leaves
    if out.any():
        leave(piece_tree[grp[out]], rid[0][out], grp[out])
        grp, rid, xs, ys = grp[~out], rid[:, ~out], xs[:, ~out], ys[:, ~out]
    # the groups present, ascending (their entries are contiguous, the same in every row)
    gid = grp[np.flatnonzero(np.append(True, grp[1:] != grp[:-1]))] if len(grp) else grp
    size = np.bincount(grp, minlength=P)[gid]
    # this level's nodes (groups): their piece and heap path; searched or not
    piece, paths = np.arange(P), root_path.astype(np.int64)
    G = P
    level = 0
    row0 = 0  # table row of this level's first node
    while G > 0:
        best, const, found = _best_splits(crit, gid, size, ys, xs, stats, G, min_leaf)
        top = best.max(axis=1)
        depth = root_depth[piece] + level
        can = att & np.isfinite(top)
        split = can & (depth < _MAX_DEPTH)
        is_top = best == top[:, None]
        tie = split & (is_top.sum(axis=1) > 1)
        near = np.zeros(G, dtype=bool)
        if not crit.exact:
            # scikit-learn sums y in each feature's order: the proxies of one
            # partition reached through two features may differ by rounding
            close = best >= (top - _TIE_RTOL * np.abs(top))[:, None]
            near = split & (close.sum(axis=1) > is_top.sum(axis=1))
        c = np.zeros(G, dtype=np.int64)
        if guess is not None:
            keys = _node_keys(piece_tree[piece], paths)
            at = np.minimum(np.searchsorted(guess[0], keys), len(guess[0]) - 1)
            c = np.where(guess[0][at] == keys, guess[1][at], 0)
        feat = np.where(
            tie, _choose(is_top, pos[np.minimum(c, len(pos) - 1)]), np.argmax(best, axis=1)
        )
        if level == 0 and forced is not None:
            feat = np.where(tie, forced, feat)
        thr_f, left = _split_points(found, feat, G)
        ends = ~split[gid]  # searched nodes that stay leaves: their entries leave
        if ends.any():
            lg = np.repeat(gid[ends], size[ends])
            leave(piece_tree[piece[lg]], rid[0][np.repeat(ends, size)], row0 + lg)
        for name, v in (
            ("tree", piece_tree[piece]), ("path", paths), ("depth", depth), ("att", att),
            ("split", split), ("tie", tie), ("feat", feat), ("top", is_top), ("thr", thr_f),
            ("value", value), ("near", near), ("const", att & const.any(axis=1)),
            ("deep", can & ~split),
        ):  # fmt: skip
            cols.setdefault(name, []).append(v)
        sp = np.flatnonzero(split)
        if len(sp) == 0:
            break
        G_next = 2 * len(sp)  # the children of the split nodes, in their order
        child = np.full(G, G_next)  # left child (G_next: none)
        child[sp] = 2 * np.arange(len(sp))
        # which way each entry goes (feature 0's row; entries of leaves: never right)
        col = feat[gid] * len(X) + shift[piece[gid]]
        gr0 = xt[rid[0] + np.repeat(col, size)] > np.repeat(
            np.where(ends, np.inf, thr_f[gid]), size
        )
        goes_right = np.zeros(P * n, dtype=bool)  # by rid
        goes_right[rid[0]] = gr0
        c0 = np.repeat(child[gid], size) + gr0  # next-level group (G_next: none)
        if left is None:
            att, value, stats = _node_stats(crit, c0, ys[0], G_next + 1, min_split, min_leaf)
        else:  # 0/1 responses: the children's counts and sums are the split's
            nl, sl = left[:, sp]
            sums = np.zeros((2, G_next + 1))
            sums[:, child[sp]] = nl, sl
            sums[:, child[sp] + 1] = stats[0][sp] - nl, stats[1][sp] - sl
            att, value, stats = _mse_stats(sums[0], sums[1], sums[1], min_split, min_leaf)
        att[G_next] = True  # (entries of leaves are recorded above)
        out = ~att[c0]  # entries of children that are leaves leave now
        if out.any():
            pg = np.repeat(gid, size)[out]
            leave(piece_tree[piece[pg]], rid[0][out], row0 + G + c0[out])
        sizes = np.bincount(c0, minlength=G_next + 1)[:G_next]
        att, value = att[:G_next], value[:G_next]
        stats = tuple(v[:G_next] for v in stats)
        (gid, size), (rid, xs, ys) = _partition(
            gid, size, (rid, xs, ys), split, child, (goes_right, gr0), att, sizes
        )
        piece, paths = np.repeat(piece[sp], 2), (2 * paths[sp, None] + (0, 1)).ravel()
        row0 += G
        G = G_next
        level += 1
    done = {k: np.concatenate(v) for k, v in leaves.items()}
    table = {k: np.concatenate(v) for k, v in cols.items()}
    return table, (done["l_tree"], done["l_ex"], done["l_row"])


def _node_stats(
    crit: _Criterion, g: IntArray, yv: np.ndarray, G: int, min_split: int, min_leaf: int
) -> tuple[np.ndarray, FloatArray, tuple[FloatArray, ...]]:
    """Return the searched mask, leaf value and sums the proxies need, per (tree, node) group.

    ``g``: group of each entry (any order), ``yv``: its response. A node is
    searched (not a leaf) when it holds at least ``min_split`` and
    ``2 min_leaf`` examples and its impurity exceeds the float64 epsilon
    (squared error: ``E[y²] - E[y]²``; Gini: the node is not pure).
    """
    if crit.kind == "gini":
        T = np.bincount(g * crit.K + yv, minlength=G * crit.K).reshape(G, crit.K)
        cnt = T.sum(axis=1)
        impure = T.max(axis=1) < cnt
        value = np.argmax(T, axis=1).astype(np.float64)
        stats: tuple[np.ndarray, ...] = (cnt.astype(np.float64), T, (T * T).sum(axis=1))
    else:
        y0 = yv.astype(np.float64)
        cntf = np.bincount(g, minlength=G).astype(np.float64)
        tot = np.bincount(g, weights=y0, minlength=G)
        return _mse_stats(
            cntf, tot, np.bincount(g, weights=y0 * y0, minlength=G), min_split, min_leaf
        )
    att = (cnt >= min_split) & (cnt >= 2 * min_leaf) & impure
    return att, value, stats


def _mse_stats(
    cnt: FloatArray, tot: FloatArray, sq: FloatArray, min_split: int, min_leaf: int
) -> tuple[np.ndarray, FloatArray, tuple[FloatArray, ...]]:
    """:func:`_node_stats` of the squared error from the counts, sums and sums of squares."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = tot / cnt
        impure = sq / cnt - value * value > _EPS
    att = (cnt >= min_split) & (cnt >= 2 * min_leaf) & impure
    return att, value, (cnt, tot)


def _partition(
    gid: IntArray,
    size: IntArray,
    arrays: tuple[np.ndarray, ...],
    split: np.ndarray,
    child: IntArray,
    goes: tuple[np.ndarray, np.ndarray],
    att: np.ndarray,
    sizes: IntArray,
) -> tuple[tuple[IntArray, IntArray], tuple[np.ndarray, ...]]:
    """Move the entries of split groups to their children's groups, stably, in O(N).

    ``gid``, ``size``: the groups present, ascending, and their entry counts
    (the entries of a group are contiguous, in the same place in every row);
    ``arrays``: ``(p, N)`` rows of the entries' ids (``rid``, first), feature
    values and responses; ``split[g]``: group ``g`` is split, ``child[g]``:
    its left child's group in the next level (the right one is
    ``child[g] + 1``); ``goes = (goes_right, gr0)``: ``goes_right[rid]``,
    the entry goes right (never in a group not split), and the same for the
    first row's entries; ``att``, ``sizes``: the children that are searched and
    their entry counts. Only the entries of searched children stay; they keep
    their parent's order, left child before right child. An entry's new
    position is its child's start plus its rank there (the entries before it
    in its group going the same way); the other entries are moved past the
    kept ones. Returns the new groups (``gid``, ``size``) and rows.
    """
    p, N = arrays[0].shape
    goes_right, gr0 = goes
    st = np.cumsum(size) - size
    # two destination segments per group (left, right child); a group not split: one
    # dropped segment of its size
    sp = split[gid]
    left = np.where(sp, child[gid], 0)
    seg_size = np.stack([np.where(sp, sizes[left], size), np.where(sp, sizes[left + 1], 0)], 1)
    kept = np.stack([sp & att[left], sp & att[left + 1]], 1).ravel()
    seg_size = seg_size.ravel()
    ks, ds = np.where(kept, seg_size, 0), np.where(kept, 0, seg_size)
    n_new, n_drop = int(ks.sum()), int(ds.sum())
    row = np.arange(p)[:, None]
    start = np.where(
        kept,
        row * n_new + (np.cumsum(ks) - ks),
        p * n_new + row * n_drop + (np.cumsum(ds) - ds),
    )  # (p, 2 * groups)
    gr = np.empty((p, N), dtype=bool)
    gr[0] = gr0
    gr[1:] = goes_right[arrays[0][1:]]
    right_upto = gr.astype(np.int64)
    np.cumsum(right_upto, axis=1, out=right_upto)  # right-goers up to each entry
    before = right_upto[:, st] - gr[:, st]  # right-goers before each group
    to = np.repeat(start[:, 0::2] + before - st, size, axis=1)  # going left
    to += np.arange(N)
    to -= right_upto
    right = np.repeat(start[:, 1::2] - before - 1, size, axis=1)
    right += right_upto
    np.copyto(to, right, where=gr)
    moved = []
    for a in arrays:
        buf = np.empty(p * N, dtype=a.dtype)
        buf[to.ravel()] = a.ravel()
        moved.append(buf[: p * n_new].reshape(p, n_new))
    new_groups = np.stack([left, left + 1], 1).ravel()[kept]
    return (new_groups, ks[kept]), tuple(moved)


def _group_first(g: IntArray) -> IntArray:
    """Index of the first entry of each entry's group (``g`` grouped, contiguous)."""
    st = np.flatnonzero(np.append(True, g[1:] != g[:-1]))
    return np.repeat(st, np.diff(np.append(st, len(g))))


def _same_class_rank(g: IntArray, codes: np.ndarray, K: int) -> IntArray:
    """Count the earlier entries of the same group with the same class, per entry and row.

    ``g`` (N,): groups, ascending; ``codes`` (p, N): class codes. A stable
    sort of each row by class (a radix sort for small ``K``) keeps each
    class's entries in group order, so (class, group) runs are contiguous
    there.
    """
    small = codes.astype(np.uint8 if K <= 256 else np.int64, copy=False)
    p, N = small.shape
    o = np.argsort(small, axis=1, kind="stable")
    gs = g[o]
    o += np.arange(p)[:, None] * N  # flat positions
    o = o.ravel()
    cs = small.ravel()[o]
    brk = np.ones(p * N, dtype=bool)  # a (class, group) run starts (and every row)
    brk[1:] = (gs.ravel()[1:] != gs.ravel()[:-1]) | (cs[1:] != cs[:-1])
    brk[::N] = True
    starts = np.flatnonzero(brk)
    r = np.empty(p * N, dtype=np.int64)
    r[o] = np.arange(p * N) - np.repeat(starts, np.diff(np.append(starts, p * N)))
    return r.reshape(p, N)


def _best_splits(
    crit: _Criterion,
    gid: IntArray,
    size: IntArray,
    yv: np.ndarray,
    x: FloatArray,
    stats: tuple[FloatArray, ...],
    n_groups: int,
    min_leaf: int,
) -> tuple[FloatArray, np.ndarray, _Found | None]:
    """Best proxy and constancy of every feature for every (tree, node) group.

    ``gid``, ``size``: the groups present, ascending, and their entry counts
    (a group's entries are contiguous, in the same place in every row);
    ``x`` (p, N): row ``f`` holds the feature-``f`` values, sorted
    inside each group, ``yv`` (p, N) the responses (class codes) in that
    order; ``stats``: :func:`_node_stats`'s sums. Returns, shape
    ``(n_groups, p)``, the best proxy (``-inf`` without a valid split) and
    whether the feature is constant in the group (scikit-learn's test
    ``max <= min + 1e-7``), and what :func:`_split_points` needs to place
    the split of the chosen feature (None without entries).
    """
    p, N = x.shape
    best = np.full((n_groups, p), -np.inf)
    const = np.zeros((n_groups, p), dtype=bool)
    if N == 0:
        return best, const, None
    idx = np.arange(N)
    st = np.cumsum(size) - size

    def per_entry(v: np.ndarray) -> np.ndarray:
        """Repeat a value per group (last axis) over the group's entries."""
        return np.repeat(v, size, axis=-1)

    nl = (idx - per_entry(st) + 1).astype(np.float64)
    nr = per_entry(stats[0][gid]) - nl
    # a split after entry i: both children large enough (so i is not its group's last
    # entry) and the next value larger by more than FEATURE_THRESHOLD (always so when
    # the feature's values are spaced, see _Criterion)
    valid = (nl >= min_leaf) & (nr >= min_leaf)
    if not crit.spaced:
        valid = np.broadcast_to(valid, (p, N)).copy()
        valid[:, :-1] &= x[:, 1:] > x[:, :-1] + _FEATURE_THRESHOLD  # float32, as sklearn

    def left_sums(v: np.ndarray) -> np.ndarray:
        # cast, then sum in place (np.cumsum with a dtype is several times slower);
        # integer sums (exact, as scikit-learn's float ones then) are the fastest
        c = v.astype(np.float64 if v.dtype.kind == "f" else np.int64)
        np.cumsum(c, axis=1, out=c)
        before = np.zeros((p, len(st)), dtype=c.dtype)
        before[:, 1:] = c[:, st[1:] - 1]
        c -= per_entry(before)
        return c

    # the proxies in place (large temporaries cost more than the arithmetic), in
    # scikit-learn's floating-point operations and order
    with np.errstate(divide="ignore", invalid="ignore"):
        if crit.kind == "gini":
            # Σ_k L_k² grows by 2 L_{y} + 1 per entry; Σ_k (T_k - L_k)² = ΣT² - 2 Σ T_k L_k + ΣL²
            _, T, sqT = stats
            rank = _same_class_rank(
                np.repeat(np.arange(len(st), dtype=np.int32), size), yv, crit.K
            )
            rank *= 2
            rank += 1
            sq_l = left_sums(rank)
            tl = left_sums(T.ravel()[per_entry(gid * crit.K) + yv])
            tl *= 2
            tl = per_entry(sqT[gid]) - tl
            tl += sq_l  # Σ_k R_k² (integers: exact)
            proxy = tl.astype(np.float64)
            # Gini.children_impurity and proxy_impurity_improvement: -n_R G_R - n_L G_L
            proxy /= nr * nr
            np.subtract(1.0, proxy, out=proxy)
            proxy *= -nr
            gini_l = sq_l / (nl * nl)
            np.subtract(1.0, gini_l, out=gini_l)
            gini_l *= nl
            proxy -= gini_l
        else:
            s_left = left_sums(yv).astype(np.float64, copy=False)
            s_right = per_entry(stats[1][gid]) - s_left
            proxy = s_left * s_left
            proxy /= nl
            s_right *= s_right
            s_right /= nr
            proxy += s_right  # S_L²/n_L + S_R²/n_R
    np.copyto(proxy, -np.inf, where=~valid)
    best[gid] = np.maximum.reduceat(proxy, st, axis=1).T
    if not crit.spaced:
        last = np.append(st[1:], N) - 1
        const[gid] = (x[:, last] <= x[:, st] + _FEATURE_THRESHOLD).T  # float32, as sklearn
    return best, const, _Found(proxy, x, s_left if crit.binary else None, gid, size)


class _Found(NamedTuple):
    """A level's proxies and feature values ``(p, N)`` and groups, from :func:`_best_splits`.

    ``s_left``: with 0/1 responses, the left sums of ``y`` at every position.
    """

    proxy: FloatArray
    x: FloatArray
    s_left: FloatArray | None
    gid: IntArray
    size: IntArray


def _split_points(
    found: _Found | None, feat: IntArray, n_groups: int
) -> tuple[FloatArray, FloatArray | None]:
    """Threshold of each group's split on its chosen feature ``feat[g]``.

    The split is after the first position of the best proxy in the feature's
    row (the smallest threshold among equal proxies, as scikit-learn's scan
    keeps a new best only when strictly greater); the threshold is the
    midpoint ``a/2 + b/2`` of the values around it in float64. Only the
    chosen feature's row is searched. Also returns, with 0/1 responses, the
    left child's count and sum of ``y`` (shape ``(2, n_groups)``, else None).
    Groups without a valid split get a threshold that is never used.
    """
    thr = np.zeros(n_groups)
    if found is None:
        return thr, None
    gid, size = found.gid, found.size
    N = found.proxy.shape[1]
    st = np.cumsum(size) - size
    row = feat[gid] * N  # offset of each group's chosen row
    chosen = found.proxy.ravel()[np.repeat(row, size) + np.arange(N)]
    top = np.repeat(np.maximum.reduceat(chosen, st), size)
    hits = np.flatnonzero(chosen == top)
    at = hits[np.searchsorted(hits, st)]  # the first (a group without a split: its start)
    x = found.x.ravel()
    a = x[row + at].astype(np.float64)
    b = x[row + np.minimum(at + 1, N - 1)].astype(np.float64)
    thr[gid] = a / 2.0 + b / 2.0
    if found.s_left is None:
        return thr, None
    left = np.zeros((2, n_groups))
    left[0, gid] = at - st + 1
    left[1, gid] = found.s_left.ravel()[row + at]
    return thr, left


def regression_tree_predict_exact(
    X: FloatArray,
    y: FloatArray,
    train_idx: IntArray,
    *,
    min_samples_split: int = 10,
    min_samples_leaf: int = 5,
    random_state: int = 0,
    test_idx: IntArray | None = None,
) -> FloatArray:
    """:func:`regression_tree_predict` with the flagged trees refitted by scikit-learn.

    Equal to ``DecisionTreeRegressor(min_samples_split=..., min_samples_leaf=...,
    random_state=random_state).fit(X[tr], y[tr]).predict(X)`` (or
    ``.predict(X[te])`` for ``te = test_idx[s]``) for every training set
    ``tr = train_idx[s]`` (see the module docstring for the exactness
    conditions); with a dataset axis, dataset by dataset. Returns ``pred``
    of shape ``(S, n)`` or ``(S, n2)`` (with a leading ``B`` for ``B``
    datasets).
    """
    from sklearn.tree import DecisionTreeRegressor

    pred, tied = regression_tree_predict(
        X,
        y,
        train_idx,
        min_samples_split=min_samples_split,
        min_samples_leaf=min_samples_leaf,
        random_state=random_state,
        test_idx=test_idx,
    )
    # with a dataset axis throughout (views: the refits write into ``pred``)
    one = tied.ndim == 1
    X, y, train_idx, pred_b, tied_b = (
        np.asarray(a)[None] if one else np.asarray(a) for a in (X, y, train_idx, pred, tied)
    )
    test_b = (
        None if test_idx is None else np.asarray(test_idx)[None] if one else np.asarray(test_idx)
    )
    tree = DecisionTreeRegressor(
        min_samples_split=min_samples_split,
        min_samples_leaf=min_samples_leaf,
        random_state=random_state,
    )
    for b in np.flatnonzero(tied_b.any(axis=1)):  # datasets with flagged trees
        s = tied_b[b]
        every = np.broadcast_to(np.arange(X.shape[1]), (int(s.sum()), X.shape[1]))
        test = every if test_b is None else test_b[b, s]
        pred_b[b, s] = sklearn_tree_predict(tree, X[b], y[b], train_idx[b, s], test)
    return pred
