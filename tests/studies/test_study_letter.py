"""Nadeau & Bengio problem 3 (letter recognition): data, batched 1-NN, tree, runner, CLI."""

import matplotlib
import numpy as np
import pytest
import xarray as xr

matplotlib.use("Agg")

from cvstats.errors import ArgumentError  # noqa: E402
from cvstats.studies import compute_batch  # noqa: E402
from cvstats.studies.cli import main  # noqa: E402
from cvstats.studies.letter import (  # noqa: E402
    GROUPS,
    SIMULATIONS,
    add_monte_carlo_truth,
    group_sq_distances,
    letter_distances,
    letter_problem,
    load_letter,
    monte_carlo_truth,
    nn_losses,
    run_letter,
)

SIZES = {"J": 4, "M": 3, "R": 2, "J_rep": 2}


def test_shipped_data():
    X, y = load_letter()
    assert X.shape == (20_000, 16) and y.shape == (20_000,)
    assert X.min() == 0 and X.max() == 15 and set(np.unique(y)) == set(range(26))
    assert sorted(i for g in GROUPS for i in g) == list(range(16))
    assert list(SIMULATIONS.values()) == [1, 5, 10, 17.25, 25, 2048]


def test_distances_match_definition():
    X, _ = load_letter()
    a, b = X[:7].astype(float), X[7:12].astype(float)
    s = group_sq_distances(a, b)
    diff2 = (a[:, None, :] - b[None, :, :]) ** 2
    for k, g in enumerate(GROUPS):
        np.testing.assert_array_equal(s[k], diff2[..., list(g)].sum(-1))
    w = 17.25
    direct = sum(
        wt * diff2[..., list(g)].sum(-1) for g, wt in zip(GROUPS, (w, 1, 1 / w), strict=True)
    )
    np.testing.assert_allclose(letter_distances(a, b, w), direct, rtol=1e-12)


@pytest.mark.parametrize("w", [1.0, 5.0, 2048.0])
def test_batched_nn_equals_sklearn(w):
    from sklearn.neighbors import KNeighborsClassifier

    problem = letter_problem(w, learners="nn")
    rng = np.random.default_rng(3)
    data = problem.generate(rng)[None]
    perms = np.stack([rng.permutation(problem.n) for _ in range(4)])
    te, tr = perms[:, :60], perms[:, 60:]
    losses = nn_losses(data, te[None], tr[None], w)[0]
    scale = np.ones(16)
    for g, weight in zip(GROUPS, (w, 1.0, 1.0 / w), strict=True):
        scale[list(g)] = np.sqrt(weight)
    Xs, y = data[0, :, :16] * scale, data[0, :, 16]
    for s in range(4):
        train = np.sort(tr[s])  # ties go to the smallest dataset position
        knn = KNeighborsClassifier(n_neighbors=1, algorithm="brute").fit(Xs[train], y[train])
        np.testing.assert_array_equal(losses[s], knn.predict(Xs[te[s]]) != y[te[s]])
    # the tie rule does not depend on the order of the training indices
    shuffled = np.stack([rng.permutation(t) for t in tr])
    np.testing.assert_array_equal(nn_losses(data, te[None], shuffled[None], w)[0], losses)


def test_compute_batch_nn_only_and_both():
    nn = compute_batch(letter_problem(1, learners="nn", n=60), 0, [0, 1], **SIZES)
    assert list(nn["quantity"].values) == ["B"]
    both = compute_batch(letter_problem(1, n=60), 0, [0, 1], **SIZES)
    assert list(both["quantity"].values) == ["A", "B", "A-B"]
    # same datasets and splits: the 1-NN split means coincide
    xr.testing.assert_equal(both["main"].sel(quantity=["B"]), nn["main"])
    np.testing.assert_allclose(
        both["main"].sel(quantity="A-B"),
        both["main"].sel(quantity="A") - both["main"].sel(quantity="B"),
    )
    assert ((nn["main"] >= 0) & (nn["main"] <= 1)).all()


def test_monte_carlo_truth_and_run(tmp_path):
    problem = letter_problem(5, learners="nn", n=60)
    truth = monte_carlo_truth(problem, 30, train_sets=3)
    est, se = truth["B"]
    assert 0.3 < est < 1 and se >= 0
    ds = run_letter(5, 3, tmp_path, learners="nn", n=60, truth_sets=2, **SIZES)
    assert ds.sizes["dataset"] == 3 and ds["truth"].dims == ("config", "quantity")
    again = add_monte_carlo_truth(ds.drop_vars(["truth", "truth_se"]), problem, train_sets=2)
    xr.testing.assert_identical(again["truth"], ds["truth"])


def test_problem_arguments():
    assert letter_problem(simulation=4).w == 17.25
    assert letter_problem(2048, learners="tree").models == ("A",)
    assert letter_problem(1, learners="nn").tag == "nb-letter-sim1-nn"
    for kwargs in ({"w": 3.0}, {}, {"w": 1, "learners": "svm"}, {"simulation": 9}):
        with pytest.raises(ArgumentError):
            letter_problem(**kwargs)


def test_cli_letter(tmp_path, capsys):
    code = main(
        ["study", "nb-letter", "--w", "1", "--learners", "nn", "--datasets", "3",
         "--out", str(tmp_path), "--J", "5", "--M", "5", "--R", "3", "--truth-sets", "2",
         "--quiet"]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "corrected_resampled_t" in out and "w = 1" in out
    assert (tmp_path / "nb-letter-sim1-nn-power.png").exists()
    assert (tmp_path / "nb-letter-sim1-nn-rates.nc").exists()


def test_batched_tree_path():
    # both paths of learner A on the same datasets and splits: 1-NN identical, the
    # tree's split means close (the batched tree's tie rule may change a few trees)
    runs = {
        tree: compute_batch(letter_problem(10, n=80, tree=tree), 1, [0, 1], **SIZES)
        for tree in ("batched", "sklearn")
    }
    a, b = runs["batched"]["main"], runs["sklearn"]["main"]
    xr.testing.assert_equal(a.sel(quantity="B"), b.sel(quantity="B"))
    assert float(abs(a.sel(quantity="A") - b.sel(quantity="A")).mean()) < 0.02
    assert letter_problem(1, tree="batched").params()["tree"] == "batched"
    assert "tree" not in letter_problem(1, tree="sklearn").params()
    assert "tree" not in letter_problem(1, tree="batched", learners="nn").params()
    with pytest.raises(ArgumentError, match="`tree` must be one of"):
        letter_problem(1, tree="gpu")
