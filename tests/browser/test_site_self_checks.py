"""Self-checks in Chromium (issue 22 items 1 and 6, issue 25 item 5).

- the site's course.js reads and grades tests/data/self_check_grading.json exactly as attnlib.widgets
  does (tests/test_self_checks.py runs the same table in Python);
- on every site page with self-checks: nothing of the answer shows before grading; a right answer says
  "Correct." beside a drawn tick, a wrong one "Not quite." beside a drawn cross, in colours whose
  contrast is computed from the page's own styles; screenshots in artifacts/site/selfcheck-*.png;
- in JupyterLab: a lesson opens with its self-check cells' source collapsed, and the checks' text
  (question, options, input, feedback) grows with Presentation Mode like the prose does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lab_harness import open_and_run_all
from site_harness import DESKTOP, PHONE, Guarded

from attnlib import widgets

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TABLE = json.loads((ROOT / "tests" / "data" / "self_check_grading.json").read_text(encoding="utf-8"))
SHOTS = ROOT / "artifacts" / "site"

CONTRAST = """el => {
  // WCAG contrast of an element's text colour on its own background colour (both opaque rgb())
  const rgb = s => s.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
  const lum = c => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const cs = getComputedStyle(el);
  const a = lum(rgb(cs.color)), b = lum(rgb(cs.backgroundColor));
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


def test_site_script_reads_and_grades_the_shared_table(browser, site):
    guard = Guarded(browser, ("file://",), **DESKTOP)
    try:
        page = guard.open((site / "index.html").as_uri())
        page.add_script_tag(path=str(site / "course.js"))
        pattern = widgets.NumericCheck("q", 1).definition()["number_pattern"]
        texts = [t for t, _ in TABLE["parse"]]
        got = page.evaluate("([ts, p]) => ts.map(t => window.courseSite.parseNumber(t, p))", [texts, pattern])
        for text, value, want in zip(texts, got, (w for _, w in TABLE["parse"]), strict=True):
            assert value == want if want is None else value == pytest.approx(want, rel=1e-15), text
        defs = [widgets.numeric_check("q", hint="h", explanation="e", **kw).definition() for kw, _, _ in TABLE["grade"]]
        got = page.evaluate("cases => cases.map(([d, t]) => window.courseSite.grade(d, t))",
                            [[d, t] for d, (_, t, _) in zip(defs, TABLE["grade"], strict=True)])
        want = [v for _, _, v in TABLE["grade"]]
        wrong = [(kw, t, g, v) for (kw, t, v), g in zip(TABLE["grade"], got, strict=True) if g is not v]
        assert wrong == [], wrong
        assert got == want
        assert guard.errors == [] and guard.blocked == []
    finally:
        guard.close()


def _pages_with_checks(site: Path) -> list[Path]:
    return [p for p in sorted(site.glob("[0-9][0-9]-*.html")) if 'class="check ' in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_site_checks_hide_the_answer_and_show_the_verdict(browser, site, device):
    pages = _pages_with_checks(site)
    assert pages
    SHOTS.mkdir(parents=True, exist_ok=True)
    guard = Guarded(browser, ("file://",), **(DESKTOP if device == "desktop" else PHONE))
    try:
        for path in pages:
            page = guard.open(path.as_uri())
            forms = page.locator("form.check")
            numeric_done = choice_done = False
            for j in range(forms.count()):
                form = forms.nth(j)
                d = json.loads(form.locator("script.check-data").text_content())
                shown = form.inner_text()
                for secret in [d.get("hint", ""), d.get("explanation", ""), *d.get("feedback", [])]:
                    assert not secret or secret not in shown, f"{path.name}: check {j + 1} shows {secret!r}"
                if d["kind"] == "numeric" and not numeric_done:
                    assert d["precision"] in shown
                    numeric_done = True
                    live = widgets.NumericCheck.from_definition(d)
                    right = f"{d['answer']:.12g}".replace(".", ",")  # a decimal comma is read as a point
                    if "," not in right:
                        right = f"{d['answer']:.12g}"
                    for text, verdict, word in ((right, "right", "Correct."), (f"{d['answer'] * 3 + 1:.6g}", "wrong",
                                                                              "Not quite.")):
                        assert live.grade(text) is (verdict == "right"), text
                        form.locator("input[type=text]").fill(text)
                        form.locator("button").click()
                        assert form.evaluate("f => f.dataset.verdict") == verdict, f"{path.name}: {text!r}"
                        _check_verdict(form, word, path.name)
                        form.screenshot(path=str(SHOTS / f"selfcheck-{path.stem}-{device}-{verdict}.png"))
                elif d["kind"] == "choice" and not choice_done:
                    choice_done = True
                    for i in (d["correct"], (d["correct"] + 1) % len(d["options"])):
                        form.locator("input[type=radio]").nth(i).check()
                        form.locator("button").click()
                        right = i == d["correct"]
                        assert form.evaluate("f => f.dataset.verdict") == ("right" if right else "wrong")
                        _check_verdict(form, "Correct." if right else "Not quite.", path.name)
                        assert d["feedback"][i] in form.locator(".check-feedback").inner_text()
                        form.screenshot(path=str(SHOTS / f"selfcheck-{path.stem}-{device}-choice-{int(right)}.png"))
            page.close()
        assert guard.errors == [] and guard.blocked == []
    finally:
        guard.close()


def _check_verdict(form, word: str, where: str) -> None:
    box = form.locator(".check-feedback .check-verdict")
    text = box.inner_text()
    assert text.startswith(word) and text.count("Correct.") + text.count("Not quite.") == 1, f"{where}: {text!r}"
    assert not re.search(r"[\u2600-\u27BF\U0001F300-\U0001FAFF]", text), f"{where}: an emoji in {text!r}"
    mark = box.locator("svg.check-mark")
    size = mark.bounding_box()
    assert size and size["width"] >= 12 and size["height"] >= 12, f"{where}: the drawn mark is {size}"
    assert box.evaluate(CONTRAST) >= 4.5, f"{where}: verdict text contrast {box.evaluate(CONTRAST):.2f}"


# ---- JupyterLab: the source starts collapsed; the text follows Presentation Mode ----------------------

CHECKS_NB = {
    "cells": [
        {"cell_type": "code", "execution_count": None, "id": "imports", "metadata": {}, "outputs": [],
         "source": "from attnlib import widgets"},
        {"cell_type": "code", "execution_count": None, "id": "numeric", "metadata": {"jupyter": {"source_hidden": True}},
         "outputs": [], "source": 'widgets.numeric_check("What is √64?", answer=8, hint="h", explanation="e")'},
        {"cell_type": "code", "execution_count": None, "id": "choice", "metadata": {"jupyter": {"source_hidden": True}},
         "outputs": [], "source": 'widgets.choice_check("Pick", ["first option", "second option"], correct=1, '
                                  'feedback=["f0", "f1"])'},
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5,
}

TEXT_SIZES = """() => {
  const px = sel => [...document.querySelectorAll(sel)].map(e => parseFloat(getComputedStyle(e).fontSize));
  return {
    prose: px('.jp-RenderedHTMLCommon p').concat(px('.jp-RenderedMarkdown p')),
    question: px('.attnlib-scales .widget-html-content'),
    options: px('.attnlib-scales .widget-radio-box label'),
    input: px('.attnlib-scales input[type=text]'),
    button: px('.attnlib-scales button'),
  };
}"""


def test_lab_collapses_self_check_source_and_scales_check_text(browser, lab):
    lesson = "notebooks/00-start-here.ipynb"
    nb = json.loads((lab.root / lesson).read_text(encoding="utf-8"))
    hidden = sum(1 for c in nb["cells"] if c["cell_type"] == "code" and "numeric_check(" in "".join(c["source"]))
    assert hidden >= 1
    (lab.root / "checks.ipynb").write_text(json.dumps(CHECKS_NB), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(f"{lab.url}/lab/tree/{lesson}?reset&token={lab.token}")
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
        code_cells = sum(c["cell_type"] == "code" for c in nb["cells"])
        page.wait_for_function("n => document.querySelectorAll('.jp-Notebook .jp-CodeCell :is(.jp-InputArea-editor, "
                               ".jp-InputPlaceholder)').length >= n", arg=code_cells, timeout=30_000)  # all cells drawn
        codes = page.evaluate("() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')].map(c => ({"
                              "placeholder: !!c.querySelector('.jp-InputPlaceholder'), "
                              "text: (c.querySelector('.jp-InputArea-editor, .jp-InputPlaceholder') || "
                              "{textContent: ''}).textContent}))")
        collapsed = [c for c in codes if c["placeholder"]]
        assert len(collapsed) == hidden, f"{lesson}: {len(collapsed)} collapsed code cells, {hidden} self-checks"
        visible = [c["text"] for c in codes]  # editors, and the one-line summaries of collapsed cells
        assert not any("numeric_check(" in t or "answer=" in t for t in visible)
        page.locator(".jp-InputPlaceholder").first.scroll_into_view_if_needed()
        page.screenshot(path=str(ROOT / "artifacts" / "selfcheck-lab-collapsed.png"))

        open_and_run_all(page, lab, "checks.ipynb", 60_000)
        page.wait_for_selector(".attnlib-scales .widget-radio-box label", timeout=30_000)
        normal = page.evaluate(TEXT_SIZES)
        content = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('.jp-Notebook'))"
                                ".getPropertyValue('--jp-content-font-size1'))")
        page.keyboard.press("Escape")
        page.keyboard.press("Control+Shift+C")
        page.locator(".lm-CommandPalette-input").fill("Presentation Mode")
        page.keyboard.press("Enter")
        page.wait_for_function("() => !!document.querySelector('.jp-mod-presentationMode')", timeout=10_000)
        big = page.evaluate(TEXT_SIZES)
        content_big = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('.jp-Notebook'))"
                                    ".getPropertyValue('--jp-content-font-size1'))")
        page.screenshot(path=str(ROOT / "artifacts" / "selfcheck-lab-presentation.png"))
        (ROOT / "artifacts" / "selfcheck_text_px.json").write_text(json.dumps(
            {"content_px": [content, content_big], "normal": normal, "presentation": big}, indent=1), encoding="utf-8")
        assert content_big > content or content_big >= 16, (content, content_big)
        for part in ("question", "options", "input", "button"):
            assert normal[part] and big[part], part
            assert min(big[part]) >= content_big - 0.5, f"{part}: {big[part]} px in Presentation Mode, prose {content_big}"
            assert min(big[part]) > max(normal[part]), f"{part}: {normal[part]} -> {big[part]} px"
        # the live feedback: the verdict word beside the drawn mark, at the content size too
        box = page.locator(".attnlib-scales input[type=text]").first
        box.fill("8,0")  # a decimal comma
        box.press("Enter")
        verdict = page.locator(".attnlib-scales .check-verdict.check-right")
        verdict.wait_for(timeout=15_000)
        assert verdict.inner_text().startswith("Correct.") and verdict.locator("svg.check-mark").count() == 1
        assert float(verdict.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= content_big - 0.5
        page.locator(".attnlib-scales input[type=radio]").first.check()
        page.locator(".attnlib-scales button", has_text="Check").last.click()
        page.locator(".attnlib-scales .check-verdict.check-wrong").wait_for(timeout=15_000)
        page.screenshot(path=str(ROOT / "artifacts" / "selfcheck-lab-feedback.png"))
    finally:
        page.close()
        lab.shutdown_kernels()
