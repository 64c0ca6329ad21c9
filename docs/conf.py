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


# ``{cvstats-registry} methods`` / ``{cvstats-registry} order``: the method tables, rendered
# from the methods' declarations (cvstats.inference.registry.method_table), so that a new
# method appears in them by its declaration alone (docs/architecture.md, the recipe).
def _registry_markdown(kind: str) -> str:
    from cvstats.inference.registry import METHODS, method_table

    if kind == "functions":  # the API reference of every method's public function
        names = dict.fromkeys(spec.func.__name__ for spec in METHODS.values())
        return "\n".join(
            ["```{eval-rst}", *(f".. autofunction:: cvstats.{n}" for n in names), "```"]
        )

    def cell(value: object) -> str:
        return str(value).replace("|", "\\|")

    frame = method_table(kind)
    if kind == "order":
        rows = [
            f"| {r.rank} | `{r.method}` | {r.target} | {cell(r.why)} |" for r in frame.itertuples()
        ]
        head = "| rank | method | target | why |\n|---|---|---|---|"
    else:
        rows = [
            f"| `{r.function}` | `{r.method}`"
            + (f" (`variant={r.variant!r}`)" if r.variant else "")
            + f" | {cell(r.design)} | {cell(r.fits)} | {cell(r.estimand)} / {r.target} | "
            f"{cell(r.reference)} | {cell(r.direction)} | {cell(r.source)} |"
            for r in frame.itertuples()
        ]
        head = (
            "| function | method | design | fits | estimand / `target` | reference | "
            "political ratio and direction | source |\n|---|---|---|---|---|---|---|---|"
        )
    return "\n".join([head, *rows])


def setup(app):  # noqa: D103 - Sphinx's hook
    from docutils import nodes
    from docutils.parsers.rst import Directive
    from docutils.statemachine import StringList

    class RegistryTable(Directive):
        required_arguments = 1

        def run(self):
            container = nodes.container()
            text = _registry_markdown(self.arguments[0])
            self.state.nested_parse(StringList(text.splitlines()), self.content_offset, container)
            return container.children

    app.add_directive("cvstats-registry", RegistryTable)
