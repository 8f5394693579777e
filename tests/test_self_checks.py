"""Self-checks that do not show their answers and grade like a good teacher (issue 22, items 1 and 6).

- one table of typed inputs -> readings and verdicts (tests/data/self_check_grading.json), run here
  against attnlib.widgets and in tests/browser/test_site_self_checks.py against the site's course.js;
- the verdict is a word, a colour and a drawn shape (no emoji), said once, with enough contrast;
- every lesson's self-check cell starts collapsed in JupyterLab (cell metadata, written and checked by
  scripts/add_navigation.py), states its precision, and its feedback does not repeat the verdict;
- no page of the built site shows a self-check's code, answer, hint or explanation before grading.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from notebook_calls import self_checks

from attnlib import widgets

ROOT = Path(__file__).resolve().parent.parent
TABLE = json.loads((ROOT / "tests" / "data" / "self_check_grading.json").read_text(encoding="utf-8"))
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if re.match(r"^\d\d-[a-z0-9-]+\.ipynb$", p.name))
VERDICT_WORD = re.compile(r"^\s*(right|wrong|correct|incorrect|yes|no|not quite)\b\s*[:.,!—-]", re.IGNORECASE)


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


add_navigation = _script("add_navigation")
build_site = _script("build_site")


# ---- the shared table: reading and grading --------------------------------------------------------


@pytest.mark.parametrize(("text", "want"), TABLE["parse"], ids=[repr(t) for t, _ in TABLE["parse"]])
def test_parse_number_follows_the_table(text, want):
    got = widgets.parse_number(text)
    assert got == want if want is None else got == pytest.approx(want, rel=1e-15)


@pytest.mark.parametrize(("kwargs", "text", "want"), TABLE["grade"],
                         ids=[f"{kw}-{t!r}" for kw, t, _ in TABLE["grade"]])
def test_grading_follows_the_table(kwargs, text, want):
    check = widgets.numeric_check("q", hint="h", explanation="e", **kwargs)
    assert check.grade(text) is want
    assert check.check(text) is want  # the live widget's own path gives the same verdict
    if want is None:
        assert check.feedback.value == check.UNREADABLE


def test_the_table_covers_what_the_issue_names():
    parsed = dict((t, v) for t, v in TABLE["parse"])
    assert parsed["0,6285"] == 0.6285 and parsed["1/8"] == 0.125 and parsed["12.5%"] == 0.125
    assert parsed["1e-3"] == 0.001 and parsed["1,000"] is None  # "1,000": refused, the message says how to type it
    graded = {(json.dumps(kw, sort_keys=True), t): v for kw, t, v in TABLE["grade"]}
    three = json.dumps({"answer": 0.628532, "sig_figs": 3}, sort_keys=True)
    assert graded[(three, "0.629")] and graded[(three, "0,6285")] and graded[(three, "0.63")] is False


def test_precision_is_stated_and_one_precision_only():
    assert widgets.numeric_check("q", 0.628532, sig_figs=3).precision == "Give it to 3 significant figures."
    assert widgets.numeric_check("q", 2.5, decimals=1).precision == "Give it to 1 decimal place."
    assert widgets.numeric_check("q", 7.0, decimals=0).precision == "Give it as a whole number."
    assert "exact" in widgets.numeric_check("q", 8).precision
    assert "5 %" in widgets.numeric_check("q", 16, rel_tol=0.05).precision
    with pytest.raises(ValueError, match="one precision"):
        widgets.numeric_check("q", 1.0, rel_tol=0.01, sig_figs=2)
    with pytest.raises(ValueError, match="sig_figs must be a whole number"):
        widgets.numeric_check("q", 1.0, sig_figs=0)
    with pytest.raises(ValueError, match="decimals must be"):
        widgets.numeric_check("q", 1.0, decimals=-1)
    with pytest.raises(TypeError, match="answer must be a number"):
        widgets.numeric_check("q", "eight")


def test_a_rebuilt_check_grades_the_same():
    for kw in ({"answer": 0.628532, "sig_figs": 3}, {"answer": 8}, {"answer": 16, "rel_tol": 0.05},
               {"answer": 12345.6, "decimals": 0}):
        q = widgets.numeric_check("q", hint="h", explanation="e", **kw)
        again = widgets.NumericCheck.from_definition(json.loads(json.dumps(q.definition())))
        assert (again.low, again.high, again.precision) == (q.low, q.high, q.precision)


# ---- the verdict: one word, colour, a drawn shape; contrast ----------------------------------------


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_right_and_wrong_differ_by_word_colour_and_shape_and_say_the_verdict_once():
    q = widgets.numeric_check("q", 8, hint="The square root.", explanation="√64 = 8.")
    q.check("8")
    right = q.feedback.value
    q.check("9")
    wrong = q.feedback.value
    c = widgets.choice_check("Pick", ["a", "b"], correct=1, feedback=["Not a.", "B it is."])
    c.check(1)
    assert c.feedback.value.count("Correct.") == 1 and "B it is." in c.feedback.value
    for html in (right, wrong, c.feedback.value):
        text = BeautifulSoup(html, "html.parser").get_text(" ", strip=True)
        assert not re.search(r"[\u2600-\u27BF\U0001F300-\U0001FAFF]", html), html  # no emoji (✅ ❌)
        assert text.count("Correct.") + text.count("Not quite.") == 1, text
        assert "<svg" in html and 'aria-hidden="true"' in html
    assert BeautifulSoup(right, "html.parser").get_text(" ", strip=True) == "Correct. √64 = 8."
    assert "Not quite." in wrong and "Hint: The square root." in wrong and "√64" not in wrong
    shape = lambda html: BeautifulSoup(html, "html.parser").find("svg").find_all(["path", "circle", "rect"])  # noqa: E731
    assert [str(s) for s in shape(right)] != [str(s) for s in shape(wrong)]  # a tick, a cross
    style = lambda html: dict(kv.split(":", 1) for kv in  # noqa: E731
                              BeautifulSoup(html, "html.parser").find(class_="check-verdict")["style"].split(";"))
    for html in (right, wrong):
        s = style(html)
        assert _contrast(s["color"], s["background"]) >= 7.0, s  # text on its tint: AAA
        fill = BeautifulSoup(html, "html.parser").find("svg").find(["circle", "rect"])["fill"]
        assert _contrast(fill, s["background"]) >= 3.0 and _contrast("#FFFFFF", fill) >= 4.5  # the shape shows
    assert style(right)["background"] != style(wrong)["background"]


def test_the_contrast_check_can_fail():
    assert _contrast("#009E73", "#FFFFFF") < 4.5  # Okabe-Ito green as text on white would not pass
    assert _contrast("#000000", "#FFFFFF") == pytest.approx(21)


# ---- the lessons ------------------------------------------------------------------------------------


def test_every_lesson_self_check_cell_is_collapsed_in_jupyterlab():
    found = 0
    for path in LESSONS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if add_navigation.is_self_check(cell):
                found += 1
                assert cell["metadata"].get("jupyter", {}).get("source_hidden") is True, (path.name, cell["id"])
        assert add_navigation.unhidden_checks(nb) == [], path.name
    assert found >= 30  # 34 self-checks when this was written


def test_add_navigation_writes_and_checks_the_hidden_source(tmp_path):
    path = LESSONS[0]
    nb = json.loads(path.read_text(encoding="utf-8"))
    ids = [c["id"] for c in nb["cells"] if add_navigation.is_self_check(c)]
    assert ids
    bare = copy.deepcopy(nb)
    for cell in bare["cells"]:
        cell["metadata"].get("jupyter", {}).pop("source_hidden", None)
    assert add_navigation.unhidden_checks(bare) == ids  # the check finds a cell without it
    rewritten = add_navigation.with_hidden_checks(bare["cells"])
    assert add_navigation.unhidden_checks({"cells": rewritten}) == []
    assert all(c["metadata"]["jupyter"]["source_hidden"] is True for c in rewritten if add_navigation.is_self_check(c))
    assert not any(c["metadata"].get("jupyter") for c in rewritten if not add_navigation.is_self_check(c)
                   and not c["metadata"].get("jupyter"))
    # --check exits 1 on a lesson whose self-check lost its metadata
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / path.name).write_text(add_navigation.dump(bare), encoding="utf-8")
    original = add_navigation.NOTEBOOKS
    add_navigation.NOTEBOOKS = folder
    try:
        assert add_navigation.main(["--check"]) == 1
        assert add_navigation.main([]) == 0 and add_navigation.main(["--check"]) == 0
    finally:
        add_navigation.NOTEBOOKS = original


def test_self_check_cells_hold_only_the_check():
    for path in LESSONS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if add_navigation.is_self_check(cell):
                lines = [ln for ln in "".join(cell["source"]).splitlines() if ln.strip()]
                assert lines[0] == "# NBVAL_IGNORE_OUTPUT" and lines[1].startswith("widgets."), (path.name, cell["id"])
                assert len(re.findall(r"\b(?:numeric|choice)_check\(", "".join(cell["source"]))) == 1


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_lesson_checks_state_their_precision_and_do_not_repeat_the_verdict(path):
    for kind, kw in self_checks(path.name):
        if kind == "numeric_check":
            assert "rel_tol" not in kw and "abs_tol" not in kw, (path.name, kw["question"])  # one rule: stated
            assert not re.search(r"significant figures|decimals|decimal places", kw["question"], re.IGNORECASE), \
                (path.name, kw["question"])  # the widget states it, once
            check = widgets.numeric_check(**kw)
            assert check.grade(repr(kw["answer"])) is True
            texts = [kw.get("explanation", ""), kw.get("hint", "")]
        else:
            texts = list(kw.get("feedback") or [])
        for text in texts:
            assert not VERDICT_WORD.match(text), (path.name, text)


def test_the_same_number_is_graded_the_same_in_lessons_03_and_06():
    weight = math.exp(2) / (math.exp(2) + math.exp(1) + math.exp(0.5))
    found = [kw for name in ("03-worked-example.ipynb", "06-interview-questions.ipynb")
             for kind, kw in self_checks(name) if kind == "numeric_check" and "[2, 1, 0.5]" in kw["question"]]
    assert len(found) == 2
    for kw in found:
        check = widgets.numeric_check(**kw)
        assert abs(kw["answer"] - weight) < 1e-6
        assert [check.grade(t) for t in ("0.629", "0.6285", "0,629", "0.63", "0.628")] == [True, True, True, False,
                                                                                           False]


# ---- the site ---------------------------------------------------------------------------------------


def _visible_text(soup) -> str:
    soup = copy.copy(soup)
    for tag in soup.find_all(["script", "style", "template"]):
        tag.decompose()
    return " ".join(soup.get_text(" ").split())


def test_check_markup_shows_no_answer_before_grading():
    q = widgets.numeric_check("What is √64?", 8, hint="The square root of sixty-four.", explanation="It is eight.")
    c = widgets.choice_check("Pick", ["a", "b"], correct=1, feedback=["Wrong letter here.", "Yes letter b."])
    for n, d in enumerate((q.definition(), c.definition()), start=1):
        soup = BeautifulSoup(build_site.check_markup(n, d), "html.parser")
        text = _visible_text(soup)
        assert "Self-check." in text and "answer=" not in text
        for secret in [d.get("hint", ""), d.get("explanation", ""), *d.get("feedback", [])]:
            if secret:
                assert secret not in text, secret
    assert "Give the exact value" in _visible_text(BeautifulSoup(build_site.check_markup(1, q.definition()),
                                                                 "html.parser"))


def test_no_site_page_shows_a_self_check_answer(site):
    pages = sorted(site.glob("[0-9][0-9]-*.html"))
    assert pages
    forms = 0
    for page in pages:
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        text = _visible_text(soup)
        assert "answer=" not in text, page.name
        for code in soup.select(".jp-InputArea-editor"):
            assert not re.search(r"\b(numeric|choice)_check\(", code.get_text()), page.name  # the source is not rendered
        for form in soup.select("form.check"):
            forms += 1
            d = json.loads(form.select_one("script.check-data").string)
            shown = _visible_text(form)
            assert form.select_one(".check-feedback").get_text(strip=True) == "", page.name  # nothing graded yet
            for secret in [d.get("hint", ""), d.get("explanation", ""), *d.get("feedback", [])]:
                if secret:
                    assert secret not in shown, (page.name, secret)
            if d["kind"] == "numeric":
                assert d["precision"] in shown, page.name
    assert forms >= 1
