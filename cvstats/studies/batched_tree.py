"""Regression trees grown for many training subsets of one dataset at once (issue 31).

:func:`regression_tree_predict` grows, with numpy only, the tree of
``DecisionTreeRegressor(min_samples_split, min_samples_leaf)`` (squared-error
criterion, every feature tried, no depth limit) for every training set
``train_idx[s]`` of one dataset ``(X, y)`` and returns its prediction (leaf
mean) for every example of the dataset. Each feature is sorted once; per
feature, the training examples of the open nodes of all trees sit in one flat
array grouped by (tree, node) and sorted by the feature inside each group.
The trees grow level by level: every (tree, node, feature) finds its best
split from cumulative counts and sums along that array, vectorized over trees
and nodes; the examples of leaves leave the arrays, and every example is
routed down the finished trees at the end (the only Python loops are over
depth levels, features and the rounds of the tie fixed point below).

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
a random order and keeps the first feature reaching the best proxy. The
order comes from one xorshift generator (seeded by
``RandomState(random_state).randint(0, 2**31 - 1)``) and a feature array
that carry over from node to node in depth-first preorder, so the order at a
node is a fixed function of ``c``, the number of nodes searched before it in
preorder (:func:`_visit_positions`, for features never constant in a node).
A level-by-level grower does not know ``c`` while growing, so the trees are
grown again until consistent (a fixed point): each round decides the ties with
the preorder ranks of the previous round's tree and stops for the trees where
every tie agrees with its node's actual rank. The first inconsistent node in
preorder is fixed by each round, and a consistent tree is scikit-learn's (by
induction along the preorder).

With integer responses (e.g. 0/1 labels) all sums are exact and the proxies
are scikit-learn's bit for bit: the predictions are equal (tested). With
real-valued responses scikit-learn sums ``y`` in each feature's order, so the
proxies of one partition reached through two features differ by rounding; a
tree with two features' best proxies within a relative ``1e-10`` (not equal)
is flagged (``tied[s]``) and :func:`regression_tree_predict_exact` refits it
with scikit-learn; leaf means equal scikit-learn's to rounding.
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
    random_state: int = 0,
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
    random_state : int, default 0
        The trees' ``random_state`` in scikit-learn: it fixes the order in
        which features are visited, hence which of two equally good features
        splits a node (see the module docstring).

    Returns
    -------
    pred : ndarray, shape (S, n)
        ``pred[s, i]``: prediction of tree ``s`` for example ``i`` (the mean
        of ``y`` over the training examples of its leaf).
    tied : ndarray of bool, shape (S,)
        Trees with two features' best proxies equal to rounding, not exactly
        (real-valued ``y`` only, see the module docstring): only there may
        ``pred`` differ from scikit-learn's beyond rounding.
    """
    X = np.asarray(X, dtype=np.float32).astype(np.float64)
    y = np.asarray(y, dtype=np.float64)
    train_idx = np.asarray(train_idx)
    _check(X, y, train_idx, min_samples_split, min_samples_leaf)
    n, p = X.shape
    S = train_idx.shape[0]
    member = np.zeros((S, n), dtype=bool)
    member[np.arange(S)[:, None], train_idx] = True
    order = np.argsort(X, axis=0, kind="stable")  # (n, p): each feature sorted once
    data = (X, y, order)
    pos = _visit_positions(p, n + 1, random_state)
    pred = np.zeros((S, n))
    tied = np.ones(S, dtype=bool)
    todo = np.arange(S)
    guess: list[tuple[IntArray, IntArray]] | None = None
    for _ in range(_MAX_ROUNDS):
        pr, flag, levels = _grow(
            data, member[todo], min_samples_split, min_samples_leaf, pos, guess
        )
        ranks = _preorder_ranks(levels)
        bad = np.zeros(len(todo), dtype=bool)
        for lev, c in zip(levels, ranks, strict=True):
            tie = lev["tie"]
            want = _choose(lev["top"], pos[np.minimum(c, len(pos) - 1)])
            bad |= (tie & (want != lev["feat"])).any(axis=1)
        ok = ~bad
        pred[todo[ok]] = pr[ok]
        tied[todo[ok]] = flag[ok]
        if not bad.any():
            break
        guess = [(lev["path"][bad], c[bad]) for lev, c in zip(levels, ranks, strict=True)]
        todo = todo[bad]
    return pred, tied


#: Rounds of the tie fixed point before the remaining trees are left flagged.
_MAX_ROUNDS = 30
#: Deepest level whose node paths fit the int64 keys of the fixed point.
_MAX_DEPTH = 40


def _visit_positions(p: int, count: int, random_state: int) -> IntArray:
    """``pos[c, f]``: rank of feature ``f`` in scikit-learn's visiting order at split node ``c``.

    ``BestSplitter.node_split`` draws ``f_j = rand_int(0, f_i)`` for
    ``f_i = p, ..., 1`` from one xorshift state seeded by
    ``RandomState(random_state).randint(0, 2**31 - 1)``, visits
    ``features[f_j]`` and swaps it to position ``f_i - 1`` of a feature array
    kept from node to node; ``c`` counts the nodes searched before, in
    depth-first (preorder) order. No feature is ever constant in a node here
    (continuous features), which keeps the draws this simple.
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
    return pos


def _choose(top: np.ndarray, pos: IntArray) -> IntArray:
    """Feature visited first among the best (``top`` mask ``(..., p)``), visiting ranks ``pos``."""
    return np.argmin(np.where(top, pos, top.shape[-1]), axis=-1)


def _grow(
    data: tuple[FloatArray, FloatArray, IntArray],
    member: np.ndarray,
    min_split: int,
    min_leaf: int,
    pos: IntArray,
    guess: list[tuple[IntArray, IntArray]] | None,
) -> tuple[FloatArray, np.ndarray, list[dict[str, np.ndarray]]]:
    """Grow the trees of the training masks ``member`` (S, n) level by level.

    Per feature, the training examples of the open nodes are kept in one flat
    array grouped by (tree, node), sorted by the feature inside each group;
    examples of leaves leave the arrays. Exact ties between features are
    decided by the visiting order of the node's preorder rank taken from
    ``guess`` (per level: node paths and ranks of a previous growth; rank 0
    for nodes not found). Returns the predictions of every example, the trees
    flagged (near-ties, too deep) and per level the node paths (heap
    numbering), searched/split masks, ties, chosen features and best-feature
    masks.
    """
    X, y, order = data
    S, n = member.shape
    p = X.shape[1]
    # flat (tree, example) entries of every feature, grouped by tree, sorted by the feature
    ex = []
    grp = []
    for f in range(p):
        r, i = np.nonzero(member[:, order[:, f]])
        ex.append(order[i, f])
        grp.append(r.astype(np.int64))
    path = np.ones((S, 1), dtype=np.int64)
    flag = np.zeros(S, dtype=bool)
    levels: list[dict[str, np.ndarray]] = []
    # integer responses: every sum is exact, the proxies are scikit-learn's bit for bit
    exact_sums = bool(np.all(y == np.round(y)) and np.abs(y).sum() < 2.0**52)
    m = 1
    depth = 0
    while m > 0:
        G = S * m
        y0 = y[ex[0]]
        cnt = np.bincount(grp[0], minlength=G).astype(np.float64)
        tot = np.bincount(grp[0], weights=y0, minlength=G)
        sq = np.bincount(grp[0], weights=y0 * y0, minlength=G)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = tot / cnt
            impurity = sq / cnt - mean * mean
        att = (cnt >= min_split) & (cnt >= 2 * min_leaf) & (impurity > _EPS)
        best = np.full((G, p), -np.inf)
        thr = np.zeros((G, p))
        for f in range(p):
            best[:, f], thr[:, f] = _best_split_of_feature(
                grp[f], X[ex[f], f], y[ex[f]], tot, cnt, G, min_leaf
            )
        top = best.max(axis=1)
        split = att & np.isfinite(top)
        is_top = best == top[:, None]
        tie = split & (is_top.sum(axis=1) > 1)
        if not exact_sums:
            # scikit-learn sums y in each feature's order: the proxies of one
            # partition reached through two features may differ by rounding
            near = best >= (top - _TIE_RTOL * np.abs(top))[:, None]
            flag |= (split & (near.sum(axis=1) > is_top.sum(axis=1))).reshape(S, m).any(axis=1)
        c = np.zeros((S, m), dtype=np.int64) if guess is None or depth >= len(guess) else (
            _lookup(path, *guess[depth], depth)
        )  # fmt: skip
        feat = np.where(
            tie, _choose(is_top, pos[np.minimum(c.ravel(), len(pos) - 1)]), np.argmax(best, axis=1)
        )
        split2 = split.reshape(S, m)
        rank = np.cumsum(split2, axis=1) - 1
        m_next = 2 * int(split2.sum(axis=1).max()) if split2.any() else 0
        levels.append({
            "path": path, "att": att.reshape(S, m), "split": split2,
            "tie": tie.reshape(S, m), "feat": feat.reshape(S, m), "top": is_top.reshape(S, m, p),
            "mean": mean, "thr": thr[np.arange(G), feat], "rank": rank.ravel(), "m": np.array(m),
        })  # fmt: skip
        for f in range(p):
            g = grp[f]
            keep = split[g]
            e, g = ex[f][keep], g[keep]
            right = X[e, feat[g]] > levels[-1]["thr"][g]
            new = (g // m) * m_next + 2 * rank.ravel()[g] + right
            o = np.argsort(new, kind="stable")
            ex[f], grp[f] = e[o], new[o]
        nxt = np.zeros((S, m_next), dtype=np.int64)
        sr, sj = np.nonzero(split2)
        nxt[sr, 2 * rank[sr, sj]] = 2 * path[sr, sj]
        nxt[sr, 2 * rank[sr, sj] + 1] = 2 * path[sr, sj] + 1
        path = nxt
        m = m_next
        depth += 1
        if depth > _MAX_DEPTH:
            flag |= split2.any(axis=1)
            break
    return _route(X, levels, S), flag, levels


def _route(X: FloatArray, levels: list[dict[str, np.ndarray]], S: int) -> FloatArray:
    """Leaf mean of every example of ``X`` in each of the ``S`` trees of ``levels``."""
    n = X.shape[0]
    pred = np.zeros((S, n))
    s, i = (a.ravel() for a in np.meshgrid(np.arange(S), np.arange(n), indexing="ij"))
    node = np.zeros(S * n, dtype=np.int64)
    for lev in levels:
        m = int(lev["m"])
        g = s * m + node
        pred[s, i] = lev["mean"][g]
        go = lev["split"].ravel()[g]
        s, i, g = s[go], i[go], g[go]
        right = X[i, lev["feat"].ravel()[g]] > lev["thr"][g]
        node = 2 * lev["rank"][g] + right
    return pred


def _lookup(path: IntArray, old_path: IntArray, old_rank: IntArray, depth: int) -> IntArray:
    """Ranks of the nodes ``path`` (S, m) found in a previous growth's level (0 if absent)."""
    S = path.shape[0]
    span = np.int64(1) << depth
    rows = np.arange(S, dtype=np.int64)[:, None]
    valid = old_path > 0
    okey = (rows * span + old_path - span)[valid]  # ascending: rows, then left to right
    orank = old_rank[valid]
    nkey = rows * span + path - span
    at = np.minimum(np.searchsorted(okey, nkey), max(len(okey) - 1, 0))
    if len(okey) == 0:
        return np.zeros(path.shape, dtype=np.int64)
    return np.where((okey[at] == nkey) & (path > 0), orank[at], 0)


def _preorder_ranks(levels: list[dict[str, np.ndarray]]) -> list[IntArray]:
    """Count the searched nodes before each node in depth-first preorder, per level."""
    below: list[IntArray] = [np.zeros(0, dtype=np.int64)] * len(levels)
    nxt: IntArray | None = None
    for L in range(len(levels) - 1, -1, -1):
        lev = levels[L]
        a = lev["att"].astype(np.int64)
        if nxt is not None and nxt.shape[1] > 0:
            rank = np.cumsum(lev["split"], axis=1) - 1
            r = np.where(lev["split"], rank, 0)
            kids = np.take_along_axis(nxt, 2 * r, 1) + np.take_along_axis(nxt, 2 * r + 1, 1)
            a = a + np.where(lev["split"], kids, 0)
        below[L] = a
        nxt = a
    ranks = [np.zeros_like(levels[0]["att"], dtype=np.int64)]
    for L in range(len(levels) - 1):
        lev, c = levels[L], ranks[L]
        m_next = levels[L + 1]["att"].shape[1]
        cn = np.zeros((c.shape[0], m_next), dtype=np.int64)
        sr, sj = np.nonzero(lev["split"])
        rank = np.cumsum(lev["split"], axis=1) - 1
        left = 2 * rank[sr, sj]
        base = c[sr, sj] + lev["att"][sr, sj]
        cn[sr, left] = base
        cn[sr, left + 1] = base + below[L + 1][sr, left]
        ranks.append(cn)
    return ranks


def _best_split_of_feature(
    k: IntArray,
    x: FloatArray,
    yv: FloatArray,
    tot: FloatArray,
    cnt: FloatArray,
    n_groups: int,
    min_leaf: int,
) -> tuple[FloatArray, FloatArray]:
    """Best proxy and threshold of one feature for every (tree, node) group.

    ``k``: group of each entry, ascending, entries of a group sorted by the
    feature; ``x``, ``yv``: the feature and the responses of the entries.
    """
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
        & (x[nxt] > x + _FEATURE_THRESHOLD)
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
    thr[found] = x[a] / 2.0 + x[a + 1] / 2.0
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
        X,
        y,
        train_idx,
        min_samples_split=min_samples_split,
        min_samples_leaf=min_samples_leaf,
        random_state=random_state,
    )
    for s in np.flatnonzero(tied):
        tree = DecisionTreeRegressor(
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            random_state=random_state,
        ).fit(X[train_idx[s]], y[train_idx[s]])
        pred[s] = tree.predict(X)
    return pred
