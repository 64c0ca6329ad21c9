"""``import cvstats`` loads what every analysis needs, nothing heavier.

scikit-learn (which loads ``scipy.stats``), ``scipy.stats`` itself, statsmodels,
dask and matplotlib are imported where they are used: ~1 s of a notebook's
first cell otherwise. The package root imports its public names on first use
(PEP 562), so ``import cvstats.kernels`` — which runs ``cvstats/__init__.py``
first — loads the numeric layer without xarray or pandas. A subprocess, so
that no other test's imports count.
"""

import subprocess
import sys

import pytest

#: modules a plain ``import cvstats`` must not load
DEFERRED = ("sklearn", "scipy.stats", "statsmodels", "dask", "matplotlib", "xarray", "pandas")

#: modules the numeric layer (``cvstats.kernels``) must not load: it stands alone
DATA_LIBRARIES = ("xarray", "pandas", "dask", "statsmodels", "sklearn", "matplotlib")


def _run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout


def _loaded_after(code: str, modules: tuple[str, ...] = DEFERRED) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {modules!r} if m in sys.modules))"
    return _run(probe).split()


def test_import_cvstats_defers_the_heavy_libraries():
    assert _loaded_after("import cvstats") == []


@pytest.mark.parametrize(
    "code",
    [
        "import cvstats.kernels",
        # the other spellings, and running a kernel
        "import numpy as np\nimport cvstats\nfrom cvstats import kernels\n"
        "from cvstats.kernels import conservative_z, sample_variance\n"
        "assert sample_variance(np.arange(4.0)) == 5 / 3\n"
        "assert cvstats.kernels.ranks.rank_scores(np.eye(3)).shape == (3, 3)",
    ],
)
def test_the_kernels_load_no_data_library(code):
    assert _loaded_after(code, DATA_LIBRARIES) == []


def test_the_data_model_loads_the_data_libraries():
    # the probe can fail: the data model does load xarray and pandas
    assert _loaded_after("import cvstats.cube", DATA_LIBRARIES) == ["xarray", "pandas"]


@pytest.mark.parametrize(
    ("code", "needs"),
    [
        (
            "import cvstats, numpy as np\n"
            "cvstats.kernels.ranks.rank_scores(np.arange(6.0).reshape(2, 3))",
            "scipy.stats",
        ),
        (
            "import cvstats\ncvstats.designs.collect._resolve_scoring('roc_auc', None, None)",
            "sklearn",
        ),
        ("import cvstats\ncvstats.compare", "xarray"),
    ],
)
def test_a_deferred_library_is_loaded_when_used(code, needs):
    # the probe can fail: using the library loads it
    assert needs in _loaded_after(code)


def test_dir_lists_the_public_names_before_they_are_loaded():
    # dir() loads nothing: the names besides the methods, and the methods' once registered
    code = "import cvstats\nnames = dir(cvstats)\nassert 'compare' in names and 'designs' in names"
    assert _loaded_after(code) == []


def test_all_lists_every_method_of_the_registry():
    # `__all__` is the list `from cvstats import *` imports, which loads the API anyway; it
    # adds every registered method's function, so a new method is public by its declaration
    code = (
        "import cvstats\nfrom cvstats.inference.registry import METHODS\n"
        "names = set(cvstats.__all__)\n"
        "assert {s.func.__name__ for s in METHODS.values()} <= names, names\n"
        "assert names <= set(dir(cvstats)), names - set(dir(cvstats))"
    )
    assert "xarray" in _loaded_after(code)


_CUBE = (
    "import numpy as np\n"
    "design = cvstats.designs.resampled(12, 4, J=3, seed=1)\n"
    "losses = np.random.default_rng(2).random((3, 12, 2))\n"
    "cube = cvstats.from_arrays(losses, design=design, models=['p', 'q'])\n"
)


@pytest.mark.parametrize(
    "code",
    [
        # a cube cvstats builds
        "import cvstats\n" + _CUBE,
        # a cube built with plain xarray, xarray imported after cvstats or before
        "import cvstats\nimport xarray as xr\ncube = xr.DataArray([1.0])\n",
        "import xarray as xr\nimport cvstats\ncube = xr.DataArray([1.0])\n",
        # a module of cvstats imported alone
        "import cvstats.kernels\nimport xarray as xr\ncube = xr.DataArray([1.0])\n",
    ],
)
def test_every_cube_has_the_accessor(code):
    out = _run(code + "print(type(cube.cvstats).__name__)")
    assert out.split() == ["CvstatsAccessor"]


def test_an_opened_cube_has_the_accessor(tmp_path):
    import numpy as np

    import cvstats

    design = cvstats.designs.resampled(10, 3, J=2, seed=3)
    path = cvstats.save(
        cvstats.from_arrays(np.arange(40.0).reshape(2, 10, 2), design=design, models=["u", "v"]),
        tmp_path / "cube.nc",
    )
    code = (
        f"import cvstats\ncube = cvstats.open_cube({str(path)!r})\n"
        "print(cube.cvstats.describe().means)"
    )
    assert _run(code).strip() == str(cvstats.describe(cvstats.open_cube(path)).means)
