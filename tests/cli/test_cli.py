import numpy as np

import cvstats
from cvstats.cli import describe, main


def test_demo_runs_and_saves(tmp_path, capsys):
    out = tmp_path / "demo.nc"
    assert main(["demo", "--J", "3", "--M", "2", "--R", "2", "--quiet", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    cube = cvstats.open_cube(out)
    assert cube.attrs["design"] == "nadeau_bengio"
    assert cube.sizes["model"] == 3
    assert cube.sizes["split"] == 3 * (1 + 2 * 2) + 2 * 3 + 10
    assert "design 'nadeau_bengio', n = 569" in text
    for block, count in [("main", 3), ("half", 12), ("replicate", 6), ("5x2", 10)]:
        assert f"{block:<10} {count:>5} splits" in text
    # the printed mean loss per model is the main-block mean of split means
    main_block = cube.isel(split=(cube.block == "main").values)
    tree = float(main_block.sel(model="tree").mean("example").mean("split"))
    assert f"tree         {tree:.4f}" in text
    assert f"saved to {out}" in text


def test_describe_averages_split_means_and_extra_dims():
    d = cvstats.designs.kfold(6, 2, seed=0)
    # fold sizes equal: losses 1 on fold 0, 3 on fold 1 -> mean of split means 2
    losses = np.where(d.fold.values[:, None, None] == 0, 1.0, 3.0) * np.ones((2, 6, 1))
    cube = cvstats.from_arrays(losses, design=d, models=["m"])
    text = describe(cube)
    assert "main           2 splits   n_train = 3   n_test = 3" in text
    assert "m            2.0000" in text
