"""Speed benchmarks of cvstats, each timed as a ratio against a baseline run in the same process.

Run them all with ``python -m benchmarks`` (``--quick`` for a smoke run) from
the repository root; see ``docs/benchmarks.md``.
"""
