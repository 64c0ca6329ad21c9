"""Regression trees grown for many training subsets of one dataset at once (issue 31).

:func:`regression_tree_predict` grows, with numpy only, the tree of
``DecisionTreeRegressor(min_samples_split, min_samples_leaf)`` (squared-error
criterion, every feature tried, no depth limit) for every training set
``train_idx[s]`` of one dataset ``(X, y)`` and returns its prediction (leaf
mean) for every example of the dataset. Each feature is sorted once; the
trees are grown level by level: at each level every (tree, node, feature)
finds its best split from masked cumulative counts and sums along the
node-grouped sorted order, vectorized over trees and nodes (the only Python
loops are over depth levels and features).

The rules are scikit-learn's (Breiman et al., 1984, ch. 8; scikit-learn's
``BestSplitter`` and ``DepthFirstTreeBuilder``):

* features are cast to float32 (as scikit-learn does);
* a node is a leaf when it has fewer than ``min_samples_split`` or fewer
  than ``2 min_samples_leaf`` examples, or its impurity (variance of ``y``)
  is at most the float64 machine epsilon;
* candidate splits lie between consecutive sorted values ``a < b`` with
  ``b > a + 1e-7`` (scikit-learn's ``FEATURE_THRESHOLD``), both children
  holding at least ``min_samples_leaf`` examples; the criterion maximized is
  the proxy ``S_L²/n_L + S_R²/n_R`` (sums and counts of ``y`` in the
  children); the threshold is ``a/2 + b/2`` and ``x <= threshold`` goes left;
* among equal proxies **within a feature** the smallest threshold wins (the
  first one met in scikit-learn's ascending scan, which keeps a new best only
  when strictly greater).

**Ties between features.** scikit-learn visits the features of each node in
a random order drawn from a generator that carries over from node to node in
depth-first order, and keeps the first feature reaching the best proxy. A
level-by-level grower cannot know a node's depth-first rank, so here the
lowest feature index wins and the tree is *flagged* (``tied[s]``) whenever a
split was decided by a tie between features (proxies equal to a relative
``1e-10``, since scikit-learn's own sums differ by rounding from feature to
feature); the caller refits the
flagged trees with scikit-learn (:func:`regression_tree_predict_exact`).
Without ties the predictions equal scikit-learn's exactly when ``y`` takes
integer values (all sums are then exact in floating point; tested); for
real-valued ``y`` the sums are accumulated in another order than
scikit-learn's, so a split could differ only when two candidate proxies agree
to rounding error.
"""

from __future__ import annotations

import numpy as np

from cvstats.errors import ArgumentError
from cvstats.studies._common import FloatArray, IntArray

__all__ = ["regression_tree_predict", "regression_tree_predict_exact"]

_FEATURE_THRESHOLD = 1e-7
_EPS = float(np.finfo(np.float64).eps)
#: Relative gap under which two features' best proxies count as tied.
_TIE_RTOL = 1e-10


def _check(
    X: FloatArray, y: FloatArray, train_idx: IntArray, min_split: int, min_leaf: int
) -> None:
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ArgumentError(
            f"`X` must have shape (n, p) and `y` shape (n,), got {X.shape} and {y.shape}."
        )
    if train_idx.ndim != 2 or train_idx.size == 0:
        raise ArgumentError(
            f"`train_idx` must have shape (S, n1) with S, n1 >= 1, got {train_idx.shape}."
        )
    if train_idx.min() < 0 or train_idx.max() >= len(y):
        raise ArgumentError(f"`train_idx` must index the {len(y)} examples of `X`.")
    if min_split < 2 or min_leaf < 1:
        raise ArgumentError(
            "`min_samples_split` must be >= 2 and `min_samples_leaf` >= 1, "
            f"got {min_split} and {min_leaf}."
        )


def regression_tree_predict(
    X: FloatArray,
    y: FloatArray,
    train_idx: IntArray,
    *,
    min_samples_split: int = 10,
    min_samples_leaf: int = 5,
) -> tuple[FloatArray, np.ndarray]:
    """Predictions of the regression trees of many training subsets of one dataset.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        Features of the dataset (cast to float32 as scikit-learn does).
    y : ndarray, shape (n,)
        Responses.
    train_idx : ndarray of int, shape (S, n1)
        Training set ``s`` is ``(X[train_idx[s]], y[train_idx[s]])`` (distinct indices).
    min_samples_split, min_samples_leaf : int, default 10, 5
        scikit-learn's stopping rules.

    Returns
    -------
    pred : ndarray, shape (S, n)
        ``pred[s, i]``: prediction of tree ``s`` for example ``i`` (the mean
        of ``y`` over the training examples of its leaf).
    tied : ndarray of bool, shape (S,)
        Trees with a split decided by an exact tie between features (see the
        module docstring): only there may ``pred`` differ from scikit-learn's.
    """
    X = np.asarray(X, dtype=np.float32).astype(np.float64)
    y = np.asarray(y, dtype=np.float64)
    train_idx = np.asarray(train_idx)
    _check(X, y, train_idx, min_samples_split, min_samples_leaf)
    n, p = X.shape
    S = train_idx.shape[0]
    rows = np.arange(S)[:, None]
    member = np.zeros((S, n), dtype=bool)
    member[rows, train_idx] = True
    order = np.argsort(X, axis=0, kind="stable")  # (n, p): each feature sorted once
    xs = np.take_along_axis(X, order, axis=0)  # (n, p)
    y_sorted = y[order]  # (n, p)
    # node[s, i]: node (numbered within the current level) of example i in tree s; -1 once done
    node = np.zeros((S, n), dtype=np.int64)
    pred = np.zeros((S, n))
    tied = np.zeros(S, dtype=bool)
    m = 1  # largest number of nodes of a tree at this level
    while m > 0:
        key = np.where(node >= 0, rows * m + node, -1)  # (tree, node) of every example
        tkey = np.where(member, key, -1).ravel()
        ok = tkey >= 0
        cnt = np.bincount(tkey[ok], minlength=S * m).astype(np.float64)
        yk = np.broadcast_to(y, (S, n)).ravel()[ok]
        tot = np.bincount(tkey[ok], weights=yk, minlength=S * m)
        sq = np.bincount(tkey[ok], weights=yk * yk, minlength=S * m)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = tot / cnt
            impurity = sq / cnt - mean * mean
        done = key >= 0
        pred[done] = mean[key[done]]  # leaf value if the node stays a leaf
        can_split = (cnt >= min_samples_split) & (cnt >= 2 * min_samples_leaf) & (impurity > _EPS)
        best = np.full((S * m, p), -np.inf)
        thr = np.zeros((S * m, p))
        for f in range(p):
            best[:, f], thr[:, f] = _best_split_of_feature(
                tkey.reshape(S, n)[:, order[:, f]], xs[:, f], y_sorted[:, f], tot, cnt,
                S * m, min_samples_leaf,
            )  # fmt: skip
        top = best.max(axis=1)
        split = can_split & np.isfinite(top)
        feat = np.argmax(best, axis=1)  # lowest feature index among ties
        # near-ties count too: scikit-learn sums y in each feature's order, so the
        # proxies of one partition reached through two features differ by rounding
        n_top = (best >= (top - _TIE_RTOL * np.abs(top))[:, None]).sum(axis=1)
        tied |= ((n_top > 1) & split).reshape(S, m).any(axis=1)
        # children: left 2r, right 2r+1 where r is the rank of the split node in its tree
        split2 = split.reshape(S, m)
        rank = np.cumsum(split2, axis=1) - 1
        m_next = 2 * int(split2.sum(axis=1).max()) if split2.any() else 0
        safe = np.where(done, key, 0)
        go = done & split[safe]
        f_of = feat[safe]
        right = X[np.arange(n)[None, :], f_of] > thr[safe, f_of]
        new = np.where(go, 2 * rank.ravel()[safe] + right, -1)
        node = new
        m = m_next
    return pred, tied


def _best_split_of_feature(
    key_sorted: IntArray,
    xf: FloatArray,
    yf: FloatArray,
    tot: FloatArray,
    cnt: FloatArray,
    n_groups: int,
    min_leaf: int,
) -> tuple[FloatArray, FloatArray]:
    """Best proxy and threshold of one feature for every (tree, node) group.

    ``key_sorted`` (S, n): group of each example in the feature's sorted order
    (-1 outside any training node); ``xf``, ``yf`` (n,): the sorted feature and
    the responses in that order.
    """
    S, n = key_sorted.shape
    # group the examples by node, keeping the feature order inside each group
    perm = np.argsort(np.where(key_sorted >= 0, key_sorted, n_groups), axis=1, kind="stable")
    k = np.take_along_axis(key_sorted, perm, axis=1).ravel()
    keep = k >= 0
    k = k[keep]
    pos = perm.ravel()[keep]
    x, yv = xf[pos], yf[pos]
    c_y = np.cumsum(yv)
    idx = np.arange(len(k))
    start = np.ones(len(k), dtype=bool)
    start[1:] = k[1:] != k[:-1]
    first = np.maximum.accumulate(np.where(start, idx, 0))
    base = np.where(first > 0, c_y[first - 1], 0.0)
    n_left = (idx - first + 1).astype(np.float64)
    s_left = c_y - base
    n_right = cnt[k] - n_left
    s_right = tot[k] - s_left
    nxt = np.minimum(idx + 1, len(k) - 1)
    valid = (
        (nxt > idx)
        & (k[nxt] == k)
        & (xf[pos[nxt]] > x + _FEATURE_THRESHOLD)
        & (n_left >= min_leaf)
        & (n_right >= min_leaf)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        proxy = np.where(valid, s_left * s_left / n_left + s_right * s_right / n_right, -np.inf)
    best = np.full(n_groups, -np.inf)
    np.maximum.at(best, k, proxy)
    hit = valid & (proxy == best[k])
    at = np.full(n_groups, len(k))
    np.minimum.at(at, k[hit], idx[hit])  # first (smallest threshold) among equal proxies
    thr = np.zeros(n_groups)
    found = at < len(k)
    a = at[found]
    thr[found] = x[a] / 2.0 + xf[pos[a + 1]] / 2.0
    return best, thr


def regression_tree_predict_exact(
    X: FloatArray,
    y: FloatArray,
    train_idx: IntArray,
    *,
    min_samples_split: int = 10,
    min_samples_leaf: int = 5,
    random_state: int = 0,
) -> FloatArray:
    """:func:`regression_tree_predict` with the tied trees refitted by scikit-learn.

    Equal to ``DecisionTreeRegressor(min_samples_split=..., min_samples_leaf=...,
    random_state=random_state).fit(X[tr], y[tr]).predict(X)`` for every
    training set ``tr`` (see the module docstring for the exactness
    conditions). Returns ``pred`` of shape ``(S, n)``.
    """
    from sklearn.tree import DecisionTreeRegressor

    pred, tied = regression_tree_predict(
        X, y, train_idx, min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf
    )
    for s in np.flatnonzero(tied):
        tree = DecisionTreeRegressor(
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            random_state=random_state,
        ).fit(X[train_idx[s]], y[train_idx[s]])
        pred[s] = tree.predict(X)
    return pred
