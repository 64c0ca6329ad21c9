"""Sphinx configuration of the cvstats documentation."""

project = "cvstats"
author = "cvstats developers"
copyright = "2026, cvstats developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autodoc_typehints = "none"
autosummary_generate = False
html_theme = "alabaster"
suppress_warnings = ["myst.header"]
nitpicky = False
