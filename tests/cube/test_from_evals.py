"""`from_evals`: a table of answers of fixed models read into a cube, bad tables refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cvstats
from cvstats import ArgumentError, CubeError, CvstatsTypeError


def answers(n_questions=9, models=("gpt", "claude"), generations=3, seed=1):
    """One row per (question, model, generation): 0/1 correctness, passages of 3 questions."""
    rng = np.random.default_rng(seed)
    rows = [
        {
            "qid": f"q{q}",
            "system": m,
            "gen": g,
            "passage": f"p{q // 3}",
            "correct": int(rng.random() < 0.7),
        }
        for q in range(n_questions)
        for m in models
        for g in range(generations)
    ]
    return pd.DataFrame(rows)


def read(table, **kw):
    args = {
        "question": "qid",
        "model": "system",
        "score": "correct",
        "generation": "gen",
        "cluster": "passage",
        "greater_is_better": True,
        **kw,
    }
    return cvstats.from_evals(table, **args)


def test_the_cube_holds_each_answer_and_validates():
    table = answers()
    cube = read(table)
    cvstats.validate(cube)
    assert cube.dims == ("split", "example", "model")
    assert cube.sizes == {"split": 3, "example": 9, "model": 2}
    assert cube.name == "minus_correct" and cube.attrs["design"] == "fixed_models"
    assert cube.attrs["eval_score"] == "correct" and cube.attrs["eval_greater_is_better"] == 1
    for row in table.sample(10, random_state=0).itertuples():
        value = cube.sel(split=row.gen, example=row.qid, model=row.system).item()
        assert value == -row.correct
    assert cube["group"].values.tolist() == [f"p{q // 3}" for q in range(9)]
    assert not np.signbit(cube.values[cube.values == 0]).any()  # +0.0, not -0.0


def test_the_cube_has_no_training_set_and_only_its_design_may(tmp_path):
    cube = read(answers(n_questions=7))
    assert (cube["n_train"].values == 0).all() and cube.attrs["n"] == 7  # no placeholders
    path = str(tmp_path / "evals.nc")
    cvstats.save(cube, path)
    back = cvstats.open_cube(path)
    cvstats.validate(back)
    assert (back["n_train"].values == 0).all() and back.attrs["n"] == 7
    cvstats.validate(cvstats.cube.scores_from_losses(cube))
    other = cube.assign_attrs(design="user")
    with pytest.raises(CubeError, match=r"n_train = 0 < 1 \(0 only for fixed models' answers"):
        cvstats.validate(other)


def test_a_loss_is_kept_as_it_is_and_rows_in_any_order_give_the_same_cube():
    table = answers()
    table["error"] = 1.5 - table["correct"]
    cube = read(table, score="error", greater_is_better=False)
    shuffled = read(table.sample(frac=1, random_state=3), score="error", greater_is_better=False)
    assert cube.name == "error"
    xr_sorted = shuffled.sel(example=cube.example, model=cube.model)
    np.testing.assert_array_equal(xr_sorted.values, cube.values)
    assert (cube.values > 0).all()


def test_without_generations_or_clusters():
    table = answers(generations=1).drop(columns=["gen", "passage"])
    cube = read(table, generation=None, cluster=None)
    assert cube.sizes["split"] == 1 and "group" not in cube.coords


def test_string_generation_labels_are_sorted_into_the_generation_coordinate():
    table = answers(generations=2)
    table["gen"] = table["gen"].map({0: "seed-b", 1: "seed-a"})
    cube = read(table)
    assert cube["generation"].values.tolist() == ["seed-a", "seed-b"]
    assert cube["split"].values.tolist() == [0, 1]


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        (
            lambda t: t.iloc[1:],
            CubeError,
            r"generations of unequal count.*has 2 answer\(s\) but .* has 3",
        ),
        (
            lambda t: t[~((t.system == "gpt") & (t.qid == "q4"))],
            CubeError,
            r"model 'gpt' has no answer to question 'q4'",
        ),
        (lambda t: pd.concat([t, t.iloc[[5]]]), CubeError, r"rows repeat a key.*drop the dup"),
        (
            lambda t: t.assign(correct=t.correct.where(t.index != 7)),
            CubeError,
            r"column 'correct' \(`score`\) has 1 missing value\(s\) \(first at row 7\)",
        ),
        (
            lambda t: t.assign(passage=t.passage.where(t.index != 2)),
            CubeError,
            r"column 'passage' \(`cluster`\) has 1 missing",
        ),
        (
            lambda t: t.assign(passage=np.where(t.index == 0, "p9", t.passage)),
            CubeError,
            r"question 'q0' is in 2 clusters",
        ),
        (
            lambda t: t.assign(correct=t.correct.astype(float).where(t.index != 3, np.inf)),
            CubeError,
            r"1 infinite value",
        ),
        (
            lambda t: t.assign(correct=t.correct.map({0: "no", 1: "yes"})),
            CubeError,
            r"must hold numbers, got dtype (object|str); map the grades",
        ),
        (
            lambda t: t.assign(gen=np.where(t.index == 0, 7, t.gen)),
            CubeError,
            r"has the generations .* but .* has .*relabel the generations",
        ),
    ],
)
def test_bad_tables_are_refused_naming_the_problem(change, error, match):
    with pytest.raises(error, match=match):
        read(change(answers()))


def test_repeated_answers_without_a_generation_column_ask_for_it():
    with pytest.raises(CubeError, match=r"pass `generation=` the column"):
        read(answers(), generation=None)


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"question": "id"}, ArgumentError, r"`question` = 'id' is not a column.*'qid'"),
        ({"cluster": "qid"}, ArgumentError, r"must differ: one column per role"),
        ({"score": 3}, CvstatsTypeError, r"`score` must be a column name \(str\), got 3"),
        ({"greater_is_better": "yes"}, CvstatsTypeError, r"`greater_is_better` must be True"),
    ],
)
def test_bad_arguments_are_refused(kw, error, match):
    with pytest.raises(error, match=match):
        read(answers(), **kw)


def test_a_table_must_be_a_dataframe():
    with pytest.raises(CvstatsTypeError, match=r"`table` must be a pandas.DataFrame, got dict"):
        cvstats.from_evals({"a": [1]}, question="a", model="b", score="c", greater_is_better=True)


def test_the_table_is_left_as_it_was():
    table = answers()
    before = table.copy(deep=True)
    read(table)
    pd.testing.assert_frame_equal(table, before)


def test_bool_scores_and_numeric_model_names_are_read():
    table = answers(models=(1, 2), generations=1)
    table["correct"] = table["correct"].astype(bool)
    cube = read(table, generation=None)
    assert cube["model"].values.tolist() == ["1", "2"]
    assert set(np.unique(cube.values)) <= {-1.0, 0.0}
