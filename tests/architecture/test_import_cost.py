"""``import cvstats`` loads what every analysis needs, nothing heavier.

scikit-learn (which loads ``scipy.stats``), ``scipy.stats`` itself, statsmodels,
dask and matplotlib are imported where they are used: ~1 s of a notebook's
first cell otherwise. A subprocess, so that no other test's imports count.
"""

import subprocess
import sys

import pytest

#: modules a plain ``import cvstats`` must not load
DEFERRED = ("sklearn", "scipy.stats", "statsmodels", "dask", "matplotlib")


def _loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {DEFERRED!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return out.split()


def test_import_cvstats_defers_the_heavy_libraries():
    assert _loaded_after("import cvstats") == []


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
    ],
)
def test_a_deferred_library_is_loaded_when_used(code, needs):
    # the probe can fail: using the library loads it
    assert needs in _loaded_after(code)
