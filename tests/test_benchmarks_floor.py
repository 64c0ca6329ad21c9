"""The floor benchmark (issue 16) runs and its results are equal; no timing is asserted.

``python -m benchmarks --quick -k floor`` times every method and ``compare``
against one pass over the cube and checks, inside the benchmark, that each
method alone equals its result in ``compare``, that the lazy ``compare``
equals the in-memory one, and that ``compare`` equals the results recorded in
``benchmarks/floor_reference.json`` (all to 1e-12); any difference raises and
the run exits non-zero. Ratios are printed, never asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_floor_benchmark_quick_runs_and_results_are_equal(tmp_path: Path) -> None:
    rows_file = tmp_path / "rows.json"
    out = subprocess.run(
        [sys.executable, "-W", "error", "-m", "benchmarks", "--quick", "-k", "floor"]
        + ["--json", str(rows_file)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    rows = {row["name"]: row for row in json.loads(rows_file.read_text())}
    expected = {
        "floor_validate",
        "floor_pairwise",
        "floor_validate_contrast",
        "floor_corrected_resampled_t",
        "floor_conservative_z",
        "floor_bootstrap_t",
        "floor_corrected_bootstrap_t",
        "floor_resampled_t",
        "floor_dietterich_5x2cv",
        "floor_combined_5x2cv_f",
        "floor_compare",
        "floor_lazy_compare",
    }
    assert expected <= set(rows)
    # the quick case is recorded: its compare was checked against the reference
    assert all(row["reference_checked"] for row in rows.values())
    assert all(row["ratio"] > 0 for row in rows.values())
    # the ratio table is printed, one line per row
    for name in rows:
        assert name in out.stdout
    assert "ratio" in out.stdout
