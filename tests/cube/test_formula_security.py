"""Formulas are data, not code: nothing in a formula is ever executed.

formulaic evaluates the Python inside a formula, and its parser evaluates the
function part of calls on the left-hand side. cvstats checks every name and
Python expression of a formula against a whitelist before formulaic sees it.
Every hostile formula here tries to create a marker file with ``touch``; the
tests assert that a :class:`cvstats.FormulaError` comes back and that the
marker was never created.
"""

import os
import re
import subprocess
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cvstats
from cvstats import CvstatsError, CvstatsTypeError, FormulaError, designs
from cvstats.cli import main
from cvstats.cube.formula import contrast_matrix, contrasts, pairwise, parse_formula

MODELS = ["a", "b", "c"]


@pytest.fixture(scope="module")
def cube():
    design = designs.resampled(12, n_test=3, J=4, seed=0)
    losses = np.random.default_rng(0).random((design.sizes["split"], 12, 3))
    return cvstats.from_arrays(losses, design=design, models=MODELS, name="loss")


@pytest.fixture
def marker(tmp_path):
    """A path that a hostile formula tries to create (quoting-free: no spaces)."""
    return tmp_path / "pwned"


@pytest.fixture
def no_exec(monkeypatch):
    """Record (and block) process creation: a second witness besides the marker.

    The calls are recorded rather than only raised, since an exception raised
    inside formulaic's evaluation would come back wrapped in a FormulaError.
    """
    calls = []

    def refuse(*args, **kwargs):
        calls.append(args)
        raise AssertionError(f"a formula started a process: {args!r}")

    for module, name in [(os, "system"), (os, "popen"), (subprocess, "Popen")]:
        monkeypatch.setattr(module, name, refuse)
    yield calls
    assert calls == [], f"a formula tried to start processes: {calls}"


def hostile_formulas(marker):
    """Formulas that run ``touch <marker>`` if any part of them is evaluated."""
    cmd = f"touch {marker}"
    sys_os = "model.__class__.__init__.__globals__['sys'].modules['os']"
    return [
        # the reported injection: a subscript inside a contrast's argument
        f"loss ~ C(model, contr.treatment(['a','b'][{sys_os}.system('{cmd}')]))",
        # the same, ending in an error formulaic would only report after running it
        f"loss ~ C(model, contr.treatment({sys_os}.system('{cmd}')))",
        f"loss ~ C(model, levels={sys_os}.system('{cmd}'))",
        f"loss ~ {{{sys_os}.system('{cmd}')}}",
        f"loss ~ model + {{{sys_os}.system('{cmd}')}}",
        f"loss ~ C({sys_os}.system('{cmd}'))",
        # builtins reached by name
        f"loss ~ {{__import__('os').system('{cmd}')}}",
        f"loss ~ C(model, contr.treatment(__import__('os').system('{cmd}')))",
        f"loss ~ {{eval(\"__import__('os').system('{cmd}')\")}}",
        f"loss ~ {{exec(\"import os; os.system('{cmd}')\")}}",
        f"loss ~ {{getattr(__import__('os'), 'system')('{cmd}')}}",
        f"loss ~ {{open('{marker}', 'w')}}",
        f"loss ~ C(model, levels=open('{marker}', 'w'))",
        # formulaic's own namespace (numpy is `np` there)
        f"loss ~ {{np.lib.npyio.os.system('{cmd}')}}",
        f"loss ~ C(model, contr.treatment(np.save('{marker}', 1)))",
        f"loss ~ {{np.save('{marker}', 1)}}",
        # formulaic evaluates the function part of a call when it lists a formula's
        # variables: `f(x)(y)` runs `f(x)` before anything is materialized
        f"loss ~ {{getattr(__import__('os'), 'system')('{cmd}')(1)}}",
        f"loss ~ C(model, contr.treatment(getattr(__import__('os'), 'system')('{cmd}')(0)))",
        # the left-hand side: formulaic's parser evaluates the function of calls there
        f"getattr(__import__('os'), 'system')('{cmd}')(1) ~ model",
        f"__import__('os').system('{cmd}') ~ model",
        f"{{__import__('os').system('{cmd}')}} ~ model",
        f"np.save('{marker}', 1)(0) ~ model",
        # lambdas, comprehensions, walrus, f-strings
        f"loss ~ {{(lambda: __import__('os').system('{cmd}'))()}}",
        f"loss ~ C(model, levels=[__import__('os').system('{cmd}') for _ in 'a'])",
        f"loss ~ C(model, levels=(x := __import__('os').system('{cmd}')))",
        f"loss ~ C(model, levels=f\"{{__import__('os').system('{cmd}')}}\")",
        # a coding that is not a contr.<known> attribute
        f"loss ~ C(model, contr.treatment.__init__.__globals__['os'].system('{cmd}'))",
        f"loss ~ C(model, contr.custom(__import__('os').system('{cmd}')))",
        # the CLI's default formula with something appended
        f"loss ~ model + C(model, contr.sum(__import__('os').system('{cmd}')))",
    ]


def assert_refused(formula, cube, marker, match=None):
    with pytest.raises(FormulaError) as info:
        contrasts(formula, cube)
    message = str(info.value)
    assert repr(formula) in message or formula in message  # quotes the formula
    if match is not None:
        assert re.search(match, message), message
    assert not marker.exists(), f"{formula!r} ran its command"
    return message


# --------------------------------------------------------------------------
# the reported injection and its variants
# --------------------------------------------------------------------------


def test_reported_injection_does_not_run(cube, marker, no_exec):
    formula = (
        "loss ~ C(model, contr.treatment(['a','b'][model.__class__.__init__.__globals__"
        f"['sys'].modules['os'].system('touch {marker}')]))"
    )
    message = assert_refused(formula, cube, marker, match="attribute access `model.__class__`")
    assert "which formulas do not allow" in message
    assert "Write e.g. 'loss ~ model' or 'loss ~ C(model, contr.sum)'" in message


@pytest.mark.parametrize("k", range(len(hostile_formulas("m"))))
def test_hostile_formulas_do_not_run(cube, marker, no_exec, k):
    formula = hostile_formulas(marker)[k]
    for call in (contrasts, contrast_matrix):
        with pytest.raises(FormulaError):
            call(formula, cube)
    with pytest.raises(FormulaError):
        parse_formula(formula)
    with pytest.raises(FormulaError):
        cvstats.compare(formula, cube, methods=["corrected_resampled_t"])
    assert not marker.exists(), f"{formula!r} ran its command"


def test_hostile_formulas_do_not_run_without_monkeypatch(cube, marker):
    # no stand-in for os.system: the marker file is the only witness
    for formula in hostile_formulas(marker):
        with pytest.raises(FormulaError):
            contrasts(formula, cube)
    assert not marker.exists()


# --------------------------------------------------------------------------
# every refused construct, with the part it names
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rhs", "part"),
    [
        ("{model.__class__}", "attribute access `model.__class__`"),
        ("model.__class__", "attribute access `model.__class__`"),
        ("model.values", "attribute access `model.values`"),
        ("np.log(model)", "a call to `np.log`"),
        ("model[0]", r"a subscript `model\[0\]`"),
        ("C(model)[0]", r"a subscript `C\(model\)\[0\]`"),
        ("C(model, contr.treatment(['a', 'b'][0]))", r"a subscript `\['a', 'b'\]\[0\]`"),
        ("{(lambda: 1)()}", "a call to `lambda: 1`"),
        ("C(model, levels=(lambda: ['a'])())", "a call to `lambda: \\['a'\\]`"),
        ("C(model, levels=lambda: 1)", "a lambda `lambda: 1`"),
        ("lambda: 1", "the Python keyword `lambda`"),
        ("{__import__('os')}", "the dunder name `__import__`"),
        ("__import__", "the dunder name `__import__`"),
        ("`__builtins__`", "the dunder name `__builtins__`"),
        ("C(model, levels=__builtins__)", "the dunder name `__builtins__`"),
        ("C(model, __class__=1)", "the dunder keyword `__class__`"),
        ("eval('1')", "a call to `eval`"),
        ("exec('1')", "a call to `exec`"),
        ("getattr(model, 'x')", "a call to `getattr`"),
        ("I(model)", "a call to `I`"),
        ("log(model)", "a call to `log`"),
        ("C(C(model))", r"a nested `C\(...\)` inside `C\(...\)`"),
        ("C(np.asarray(model))", r"a call to `np\(...\)`|a call to `np.asarray`"),
        ("C(model, levels=[x for x in 'ab'])", "a comprehension `\\[x for x in 'ab'\\]`"),
        ("C(model, levels=list(x for x in 'ab'))", "a call to `list`"),
        ("C(model, levels=(y := ['a']))", "an assignment expression"),
        ("C(model, levels=f'{model}')", "an f-string"),
        ("C(model, contr.foo)", "the unknown coding `contr.foo`"),
        ("C(model, contr.treatment.base)", "attribute access `contr.treatment.base`"),
        ("C(model, contr)", "the name `contr` as the coding"),
        ("C(model, contr.treatment(b))", "the name `b` as an argument of `contr.treatment`"),
        ("C(model, contr.treatment(bse='b'))", "does not accept .*unexpected keyword.*bse"),
        ("C(model, _state={})", "does not accept .*unexpected keyword.*_state"),
        ("C(model, contr.sum, contrasts=contr.sum)", "multiple values for argument 'contrasts'"),
        ("C(model, *['a'])", "unpacking `\\*\\['a'\\]`"),
        ("C(model, **{'levels': ['a']})", "unpacking `\\*\\*"),
        ("C(model, levels={'a': 1})", "the Python expression `{'a': 1}`"),
        ("C(model, levels=['a'] + ['b'])", "the Python expression"),
        ("C(model, levels=1 if model else 2)", "the Python expression"),
        ("C(model, 'sum')", "the literal `'sum'` as the coding"),
        ("model:C(model)", "the interaction `model:C\\(model\\)`"),
        ("C(data=model)", "does not pass `model` as the first argument"),
        ("{model(}", None),  # a parse error, reported as such
    ],
)
def test_refused_constructs_name_the_offending_part(cube, marker, rhs, part):
    formula = f"loss ~ {rhs}"
    message = assert_refused(formula, cube, marker)
    if part is not None:
        assert re.search(part, message), message


def test_refusal_explains_what_formulas_allow(cube, marker):
    message = assert_refused("loss ~ model[0]", cube, marker)
    assert message.startswith("cannot build contrasts from 'loss ~ model[0]': it uses a subscript")
    assert "Formulas are data, not code" in message
    for coding in ["treatment", "sum", "helmert", "poly", "diff"]:
        assert coding in message


def test_subscript_is_a_formula_error_not_a_pandas_error(cube):
    with pytest.raises(FormulaError, match=re.escape("a subscript `model[0]`")) as info:
        contrasts("loss ~ model[0]", cube)
    assert info.value.__cause__ is None


@pytest.mark.parametrize("formula", ["loss ~", "loss ~   ", "loss~"])
def test_empty_right_hand_side(cube, formula):
    with pytest.raises(FormulaError, match=r"right-hand side of .* is empty.*'loss ~ model'"):
        contrasts(formula, cube)


@pytest.mark.parametrize(
    "formula",
    [
        "__import__('os').system('true') ~ model",
        "os.system('true') ~ model",
        "np.log ~ model",
        "{loss} ~ model",
        "loss() ~ model",
        "loss[0] ~ model",
        "__loss__ ~ model",
        "(loss) ~ model",
    ],
)
def test_lhs_must_be_a_name_never_a_syntax_error(formula):
    with pytest.raises(FormulaError, match="must be the name of one loss") as info:
        parse_formula(formula)
    assert repr(formula) in str(info.value)


def test_unknown_names_are_listed(cube):
    with pytest.raises(FormulaError, match=re.escape("uses ['os', 'sys']; the only variable")):
        contrasts("loss ~ model + os + sys", cube)
    with pytest.raises(FormulaError, match=re.escape("uses ['x']")):
        contrasts("loss ~ C(x, contr.sum)", cube)
    with pytest.raises(FormulaError, match=re.escape("uses ['my model']")):
        contrasts("loss ~ C(`my model`)", cube)


# --------------------------------------------------------------------------
# what stays valid
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rhs", "n"),
    [
        ("model", 3),
        ("`model`", 3),
        ("{model}", 3),
        ("0 + model", 3),
        ("model - 1", 3),
        ("-1 + model", 3),
        ("1", 1),
        ("C(model)", 3),
        ("C(`model`)", 3),
        ("C(model, contr.treatment)", 3),
        ("C(model, contr.treatment('b'))", 3),
        ("C(model, contr.treatment(base='c'))", 3),
        ("C(model, contr.sum)", 3),
        ("C(model, contr.helmert)", 3),
        ("C(model, contr.helmert(scale=True))", 3),
        ("C(model, contr.poly)", 3),
        ("C(model, contr.poly(scores=[1, 2, 4.5]))", 3),
        ("C(model, contr.diff)", 3),
        ("C(model, contr.diff(backward=False))", 3),
        ("C(model, contr.SAS)", 3),
        ("C(model, contr.custom([[1, 0], [0, 1], [-1, -1]]))", 3),
        ("C(model, contr.custom([[1, 0], [0, 1], [-1, -1]], names=('x', 'y')))", 3),
        ("C(model, [[1, 0], [0, 1], [-1, -1]])", 3),
        ("C(model, contrasts=contr.sum)", 3),
        ("C(model, levels=['c', 'b', 'a'])", 3),
        ("C(model, contr.sum, levels=('b', 'a', 'c'))", 3),
        ("0 + C(model, levels=['c', 'b', 'a'])", 3),
    ],
)
def test_valid_formulas_still_work(cube, rhs, n):
    W = contrast_matrix(f"loss ~ {rhs}", cube)
    assert W.shape == (n, 3)
    assert np.isfinite(W.values).all()


def test_backticked_loss_name_is_a_name(cube):
    ds = cube.rename("my loss").to_dataset()
    assert parse_formula("`my loss` ~ model") == ("my loss", "1 + model")
    assert contrasts("`my loss` ~ model", ds).name == "my loss"


# --------------------------------------------------------------------------
# pairwise: `models` is a sequence of names
# --------------------------------------------------------------------------


def test_pairwise_refuses_a_bare_str(cube):
    msg = "`models` must be a sequence of model names, got the str 'ab'; write models=['a', 'b']"
    with pytest.raises(CvstatsTypeError, match=re.escape(msg)):
        pairwise(cube, models="ab")
    with pytest.raises(CvstatsTypeError, match="got the bytes b'ab'"):
        pairwise(cube, models=b"ab")
    with pytest.raises(CvstatsTypeError, match="got int 3"):
        pairwise(cube, models=3)
    assert pairwise(cube, models=("a", "b")).contrast.values.tolist() == ["a - b"]


# --------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------


def run_cli(argv, capsys):
    """Run ``cvstats`` and return ``(exit status, message)``, however the error surfaces."""
    try:
        status = main(argv)
    except CvstatsError as e:  # main lets cvstats errors propagate
        return 1, str(e)
    except SystemExit as e:  # or it reports them and exits
        return (e.code if isinstance(e.code, int) else 1), capsys.readouterr().err
    return status, capsys.readouterr().err


@pytest.fixture
def saved(cube, tmp_path):
    """The cube saved to a netCDF file (before `no_exec`: a backend may ask `uname -p`)."""
    path = tmp_path / "cube.nc"
    cvstats.save(cube, path)
    return path


def test_cli_table_refuses_injection(saved, tmp_path, capsys, no_exec):
    path = saved
    marker = tmp_path / "pwned"
    formula = (
        "loss ~ C(model, contr.treatment(['a','b'][model.__class__.__init__.__globals__"
        f"['sys'].modules['os'].system('touch {marker}')]))"
    )
    status, message = run_cli(["table", str(path), "--formula", formula], capsys)
    assert status != 0
    assert "attribute access `model.__class__`" in message
    assert not marker.exists()
    status, message = run_cli(
        ["table", str(path), "--formula", f"__import__('os').system('touch {marker}') ~ model"],
        capsys,
    )
    assert status != 0
    assert "must be the name of one loss" in message
    assert not marker.exists()


def test_cli_table_default_formula_still_works(cube, tmp_path, capsys):
    path = tmp_path / "cube.nc"
    cvstats.save(cube, path)
    assert main(["table", str(path), "--methods", "corrected_resampled_t"]) == 0
    assert "b − a" in capsys.readouterr().out


# --------------------------------------------------------------------------
# fuzzing: random and grammar-mixed formulas never execute anything
# --------------------------------------------------------------------------

WORDS = [
    "loss", "model", "C", "contr", "contr.sum", "contr.treatment", "os", "sys", "np",
    "__import__", "__class__", "eval", "exec", "getattr", "lambda", "open", "levels",
    "system", "x", "0", "1", "2", "'a'", "'b'", '"c"',
]  # fmt: skip
PUNCT = list("().,[]'\"~+-*:/={}`%| ")

VALID = [
    "model", "C(model)", "C(model, contr.sum)", "C(model, contr.treatment('b'))",
    "C(model, contr.helmert)", "C(model, levels=['a', 'b', 'c'])", "0", "1", "-1",
    "C(model, contr.poly(scores=[1, 2, 3]))",
]  # fmt: skip


def hostile_fragments(marker):
    cmd = f"touch {marker}"
    return [
        f"__import__('os').system('{cmd}')",
        f"model.__class__.__init__.__globals__['sys'].modules['os'].system('{cmd}')",
        f"getattr(__import__('os'), 'system')('{cmd}')",
        f"(lambda: __import__('os').system('{cmd}'))()",
        f"eval(\"__import__('os').system('{cmd}')\")",
        f"np.lib.npyio.os.system('{cmd}')",
        f"[__import__('os').system('{cmd}') for _ in 'a']",
        f"(y := __import__('os').system('{cmd}'))",
        f"open('{marker}', 'w')",
    ]


def grammar_formula(draw, marker):
    """A formula mixing valid terms with hostile fragments in the places Python goes."""
    hostile = hostile_fragments(marker)
    frag = st.sampled_from(hostile)
    term = st.one_of(
        st.sampled_from(VALID),
        frag.map(lambda h: "{" + h + "}"),
        frag.map(lambda h: f"C(model, contr.treatment({h}))"),
        frag.map(lambda h: f"C(model, levels={h})"),
        frag.map(lambda h: f"C(model, contr.treatment(['a', 'b'][{h}]))"),
        frag.map(lambda h: f"C({h})"),
        frag,
    )
    terms = draw(st.lists(term, min_size=0, max_size=3))
    ops = draw(st.lists(st.sampled_from([" + ", " - ", ":", " * "]), min_size=3, max_size=3))
    rhs = terms[0] if terms else ""
    for op, t in zip(ops, terms[1:], strict=False):
        rhs += op + t
    lhs = draw(st.one_of(st.just("loss"), frag, frag.map(lambda h: f"{h}(1)")))
    return f"{lhs} ~ {rhs}"


@st.composite
def formulas(draw, marker):
    if draw(st.booleans()):
        return grammar_formula(draw, marker)
    tokens = st.one_of(st.sampled_from(WORDS), st.sampled_from(PUNCT))
    return "".join(draw(st.lists(tokens, max_size=25)))


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fuzz_never_executes_and_only_raises_cvstats_errors(cube, tmp_path, no_exec, data):
    # tmp_path and no_exec are shared by the examples: the marker must never appear
    marker = tmp_path / "fuzz-pwned"
    formula = data.draw(formulas(marker), label="formula")
    try:
        contrast_matrix(formula, cube)
    except CvstatsError:  # FormulaError, or CvstatsTypeError...: anything else fails the test
        pass
    assert not marker.exists(), f"{formula!r} ran its command"
    assert no_exec == [], f"{formula!r} tried to start a process"


# --------------------------------------------------------------------------
# bounded work: a formula cannot ask formulaic for unbounded time or memory
# --------------------------------------------------------------------------


def refused_quickly(formula, cube, match):
    """Assert a FormulaError matching ``match`` within a fraction of a second."""
    start = time.perf_counter()
    with pytest.raises(FormulaError, match=match) as info:
        contrasts(formula, cube)
    assert time.perf_counter() - start < 1, formula[:80]  # milliseconds, on an idle machine
    assert len(str(info.value)) < 1200  # the message does not quote a huge formula whole
    return str(info.value)


@pytest.mark.parametrize("power", ["25", "40000000", "9" * 60])
def test_exponent_is_bounded(cube, power):
    # (a + b) ** N expands to 2 ** N products before the interactions are refused: 25
    # took minutes, 40000000 never returned
    formula = f"loss ~ (model + C(model, contr.helmert)) ** {power}"
    message = refused_quickly(formula, cube, "MAX_EXPONENT")
    assert "above 10" in message
    # a single term to a huge power: formulaic multiplies it N times
    refused_quickly(f"loss ~ C(model) ^ {power}", cube, "MAX_EXPONENT")


def test_products_of_terms_are_bounded(cube):
    four = "(model + C(model) + C(model, contr.sum) + C(model, contr.helmert))"
    message = refused_quickly(f"loss ~ {four} ** 6", cube, "MAX_TERMS")
    assert "up to 4096 terms" in message
    refused_quickly(f"loss ~ {four} * {four} * {four} * {four} * {four}", cube, "MAX_TERMS")
    # a sum of thousands of terms (formulaic's work grows as their square)
    message = refused_quickly("loss ~ " + " + ".join(["model"] * 1500), cube, "MAX_TERMS")
    assert "one per coding" in message
    # small powers stay what formulaic makes of them
    assert contrasts("loss ~ model ** 3", cube).sizes["contrast"] == 3


def test_formula_length_is_bounded(cube):
    from cvstats.cube.formula import MAX_FORMULA_LENGTH

    levels = ", ".join(f"'level{i}'" for i in range(MAX_FORMULA_LENGTH // 8))
    formula = f"loss ~ C(model, levels=[{levels}])"
    assert len(formula) > MAX_FORMULA_LENGTH
    message = refused_quickly(formula, cube, f"longer than {MAX_FORMULA_LENGTH} characters")
    assert f"({len(formula)} characters)" in message
    # within the bound: a coding matrix of 3 models with long weights is read
    weight = "0." + "1" * 1500
    rows = f"[{weight}, 0], [0, {weight}], [0, 0]"
    formula = f"loss ~ C(model, contr.custom([{rows}]))"
    assert 3000 < len(formula) <= MAX_FORMULA_LENGTH
    assert contrasts(formula, cube).sizes["contrast"] == 3


def test_literal_values_are_bounded(cube):
    from cvstats.cube.formula import MAX_FORMULA_LENGTH, MAX_LITERAL_VALUES

    row = ", ".join(["0"] * (MAX_LITERAL_VALUES // 3 + 1))
    formula = f"loss ~ C(model, contr.custom([[{row}], [{row}], [{row}]]))"
    assert len(formula) < MAX_FORMULA_LENGTH  # refused for its values, not its length
    refused_quickly(formula, cube, f"more than {MAX_LITERAL_VALUES} values")


@pytest.mark.parametrize(
    "rhs",
    [
        "C(model, [['x', 'y'], ['z', 'w'], ['u', 'v']])",
        "C(model, contrasts=[[1, 0], [0, 'one'], [0, 0]])",
        "C(model, contr.custom([['p', 1], [0, 1], [0, 0]]))",
        "C(model, contr.poly(scores=['low', 'mid', 'high']))",
    ],
)
def test_coding_of_non_numbers_is_a_formula_error(cube, marker, rhs):
    # used to be pandas' "could not convert string to float" from the model matrix
    assert_refused(f"loss ~ {rhs}", cube, marker, match="are numbers|holds numbers")


def test_cli_refuses_blow_ups_in_one_line(cube, tmp_path, capsys):
    path = tmp_path / "cube.nc"
    cvstats.save(cube, path)
    for formula, part in [
        ("loss ~ (model + C(model, contr.helmert)) ** 30000000", "MAX_EXPONENT"),
        ("loss ~ C(model, [['q', 'r'], ['s', 't'], ['v', 'w']])", "coding matrix"),
    ]:
        start = time.perf_counter()
        status, message = run_cli(["table", str(path), "--formula", formula], capsys)
        assert time.perf_counter() - start < 5  # reading the cube included
        assert status != 0 and part in message
        assert "Traceback" not in message


def test_failures_inside_formulaic_keep_their_reason(cube, monkeypatch):
    import cvstats.cube.formula as formula_module

    def fail(*args, **kwargs):
        raise LookupError()  # no message at all

    monkeypatch.setattr(formula_module, "Formula", fail)
    with pytest.raises(FormulaError, match="cannot parse the formula 'loss ~ model': LookupError"):
        contrasts("loss ~ model", cube)


@pytest.mark.parametrize("signal", [KeyboardInterrupt, SystemExit])
def test_interrupts_inside_formulaic_go_through(cube, monkeypatch, signal):
    import cvstats.cube.formula as formula_module

    def interrupted(*args, **kwargs):
        raise signal()

    monkeypatch.setattr(formula_module, "Formula", interrupted)
    with pytest.raises(signal):
        contrasts("loss ~ model", cube)
    monkeypatch.undo()
    monkeypatch.setattr(formula_module, "tokenize", interrupted)
    with pytest.raises(signal):
        contrasts("loss ~ model", cube)
