"""The all-pairs matrix across datasets (issue 28, point 3): counts, differences, adjusted p.

Every cell is checked against an independent computation: counts by loops over
the datasets, :func:`scipy.stats.wilcoxon` and statsmodels' ``multipletests``
for the Wilcoxon p-values, scikit-posthocs' Nemenyi p-values (recorded) and the
critical difference of :func:`cvstats.friedman_test`.
"""

from __future__ import annotations

from itertools import combinations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import scipy.stats  # noqa: E402
from statsmodels.stats.multitest import multipletests  # noqa: E402

import cvstats  # noqa: E402
from cvstats import ArgumentError  # noqa: E402

#: Error rates of 5 learners on 15 datasets (lower is better).
ERRORS = pd.DataFrame(
    [
        [0.363, 0.369, 0.376, 0.323, 0.42],
        [0.347, 0.276, 0.291, 0.294, 0.378],
        [0.349, 0.298, 0.36, 0.302, 0.436],
        [0.096, 0.177, 0.179, 0.117, 0.199],
        [0.328, 0.325, 0.333, 0.319, 0.357],
        [0.413, 0.409, 0.436, 0.432, 0.48],
        [0.233, 0.259, 0.317, 0.235, 0.282],
        [0.109, 0.133, 0.226, 0.144, 0.252],
        [0.388, 0.415, 0.401, 0.397, 0.495],
        [0.298, 0.305, 0.388, 0.299, 0.404],
        [0.186, 0.185, 0.157, 0.154, 0.236],
        [0.305, 0.351, 0.33, 0.28, 0.404],
        [0.445, 0.408, 0.443, 0.427, 0.509],
        [0.14, 0.208, 0.216, 0.17, 0.258],
        [0.37, 0.345, 0.375, 0.362, 0.428],
    ],
    columns=["rf", "svm", "knn", "gbm", "nb"],
)
#: scikit-posthocs 0.17.1: sp.posthoc_nemenyi_friedman(ERRORS.to_numpy()), upper triangle
#: in row order (rf-svm, rf-knn, rf-gbm, rf-nb, svm-knn, ...).
SKPH_NEMENYI = [
    0.9993713705192838,
    0.10866186906921804,
    0.990658760351757,
    2.1688002397546313e-05,
    0.18188672021530772,
    0.9581111729982351,
    6.556685795355843e-05,
    0.031829497227632175,
    0.14177776274460618,
    2.0225959980191277e-06,
]


def cell(res, field, a, b):
    """The ``[a, b]`` cell of one matrix of a PairwiseMatrix."""
    return getattr(res, field).sel(model_a=a, model_b=b).item()


def test_wilcoxon_matrix_by_hand():
    rope = 0.01
    res = cvstats.pairwise_matrix(ERRORS, rope=rope, greater_is_better=False)
    models = list(ERRORS.columns)
    pairs = list(combinations(models, 2))
    raw = []
    for a, b in pairs:
        x, y = ERRORS[a].to_numpy(), ERRORS[b].to_numpy()
        wins = sum(int(xi < yi - rope) for xi, yi in zip(x, y, strict=True))  # lower error
        losses = sum(int(xi > yi + rope) for xi, yi in zip(x, y, strict=True))
        got = {k: cell(res, k, a, b) for k in ("wins", "ties", "losses", "mean_difference")}
        assert (got["wins"], got["ties"], got["losses"]) == (wins, 15 - wins - losses, losses)
        assert (cell(res, "wins", b, a), cell(res, "losses", b, a)) == (losses, wins)
        assert got["mean_difference"] == pytest.approx(np.mean(x - y), abs=1e-15)
        assert cell(res, "mean_difference", b, a) == pytest.approx(-np.mean(x - y), abs=1e-15)
        sp = scipy.stats.wilcoxon(x - y)
        assert cell(res, "pvalue", a, b) == pytest.approx(sp.pvalue, rel=1e-12)
        assert min(cell(res, "statistic", a, b), cell(res, "statistic", b, a)) == sp.statistic
        raw.append(sp.pvalue)
    reject, adjusted, _, _ = multipletests(raw, 0.05, "holm")
    frame = res.to_frame()
    assert list(zip(frame["model_a"], frame["model_b"], strict=True)) == pairs
    np.testing.assert_allclose(frame["pvalue_adjusted"], adjusted, rtol=1e-12)
    assert frame["reject"].tolist() == reject.tolist() and reject.any() and not reject.all()
    # the diagonal compares nothing; the p-values are symmetric
    assert np.isnan(np.diag(res.pvalue.values)).all() and not np.diag(res.reject.values).any()
    np.testing.assert_array_equal(res.pvalue_adjusted.values, res.pvalue_adjusted.values.T)
    assert res.wins.dims == ("model_a", "model_b") and res.models == models


def test_other_adjustments_are_statsmodels():
    res = cvstats.pairwise_matrix(ERRORS, adjust="bonferroni", greater_is_better=False)
    raw = res.to_frame()["pvalue"].to_numpy()
    expected = multipletests(raw, 0.05, "bonferroni")[1]
    np.testing.assert_allclose(res.to_frame()["pvalue_adjusted"], expected, rtol=1e-12)
    assert "Bonferroni-adjusted" in str(res.verdict())


def test_nemenyi_matches_scikit_posthocs_and_the_critical_difference():
    res = cvstats.pairwise_matrix(ERRORS, test="nemenyi", greater_is_better=False)
    frame = res.to_frame()
    np.testing.assert_allclose(frame["pvalue"], SKPH_NEMENYI, rtol=1e-9)
    np.testing.assert_array_equal(frame["pvalue_adjusted"], frame["pvalue"])
    # rejected exactly where the average ranks differ by at least Demšar's CD
    nemenyi = cvstats.friedman_test(ERRORS, greater_is_better=False).nemenyi()
    assert frame["reject"].tolist() == nemenyi["significant"].tolist()
    # z of the average ranks, positive when the row ranks better (a lower rank)
    k, N = 5, 15
    ranks = ERRORS.rank(axis=1).mean()
    z = (ranks["nb"] - ranks["rf"]) / np.sqrt(k * (k + 1) / (6 * N))
    assert cell(res, "statistic", "rf", "nb") == pytest.approx(z)
    assert cell(res, "statistic", "nb", "rf") == pytest.approx(-z)
    assert "rf better than nb" in str(res.verdict()) and "Nemenyi p" in str(res.verdict())


def test_ties_within_the_rope_and_the_direction():
    scores = pd.DataFrame({"a": [0.80, 0.85, 0.90, 0.70], "b": [0.79, 0.80, 0.95, 0.70]})
    exact = cvstats.pairwise_matrix(scores, greater_is_better=True)
    assert (cell(exact, "wins", "a", "b"), cell(exact, "ties", "a", "b")) == (2, 1)
    wide = cvstats.pairwise_matrix(scores, greater_is_better=True, rope=0.02)
    assert [cell(wide, f, "a", "b") for f in ("wins", "ties", "losses")] == [1, 2, 1]
    losses = cvstats.pairwise_matrix(scores, greater_is_better=False, rope=0.02)
    assert [cell(losses, f, "a", "b") for f in ("wins", "ties", "losses")] == [1, 2, 1]
    assert cell(losses, "wins", "a", "b") == 1 and cell(losses, "mean_difference", "a", "b") > 0


def test_verdict_names_the_learner_ahead():
    res = cvstats.pairwise_matrix(ERRORS, greater_is_better=False)
    lines = str(res.verdict()).splitlines()
    assert len(lines) == 10
    assert any(
        line.startswith("rf better than nb (rf: 15 wins, 0 ties, 0 losses") for line in lines
    )
    one = cvstats.pairwise_matrix(ERRORS.iloc[:6], rope=0.01, greater_is_better=False)
    assert "rf: 4 wins, 1 tie, 1 loss;" in str(one.verdict())
    assert any(line.startswith("rf vs svm: no evidence of a difference") for line in lines)


def test_heatmap():
    res = cvstats.pairwise_matrix(ERRORS, greater_is_better=False, rope=0.01)
    ax = res.plot()
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 20  # every off-diagonal cell
    assert any(t.startswith("15/0/0\np = ") and t.endswith("*") for t in texts)
    image = ax.images[0].get_array()
    assert image[0, 4] > 0 and image[4, 0] < 0  # rf's lower errors: a positive advantage
    assert "Holm-adjusted" in ax.get_title()
    plt.close("all")


def test_bad_options():
    with pytest.raises(ArgumentError, match=r"`test` must be one of \['wilcoxon', 'nemenyi'\]"):
        cvstats.pairwise_matrix(ERRORS, test="tukey", greater_is_better=False)
    with pytest.raises(ArgumentError, match="Nemenyi's p-values are already adjusted"):
        cvstats.pairwise_matrix(ERRORS, test="nemenyi", adjust="holm", greater_is_better=False)
    with pytest.raises(ArgumentError, match="`correction` 'shaffer' is not valid"):
        cvstats.pairwise_matrix(ERRORS, adjust="shaffer", greater_is_better=False)
    with pytest.raises(ArgumentError, match=r"`rope` must be finite and >= 0, got -0\.1"):
        cvstats.pairwise_matrix(ERRORS, rope=-0.1, greater_is_better=False)
    with pytest.raises(ArgumentError, match="`rope` must be a number"):
        cvstats.pairwise_matrix(ERRORS, rope="0.1", greater_is_better=False)
    with pytest.raises(ArgumentError, match="pairwise_matrix: `greater_is_better` is required"):
        cvstats.pairwise_matrix(ERRORS)
