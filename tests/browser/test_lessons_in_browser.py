"""Every lesson in a real JupyterLab in headless Chromium: Run All is clean and every slider,
moved with the keyboard, changes its readout and redraws its figure.

Writes artifacts/<lesson>.png (the lesson after Run All, 1280x720), artifacts/<lesson>-slider<N>.png
(each slider view after the keypress) and artifacts/browser_timings.json (keypress-to-new-image ms).
Also runs on tests/fixtures/slider_demo.ipynb, which checks this harness itself.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest
from lab_harness import ARM_TIMER, open_and_run_all

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
LESSON = re.compile(r"^\d\d-[a-z0-9-]+\.ipynb$")
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if LESSON.match(p.name))
TARGETS = [f"notebooks/{p.name}" for p in LESSONS] + ["fixtures/slider_demo.ipynb"]
RUN_TIMEOUT_MS = 120_000
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'

def widget_views_in_file(path: Path) -> int:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return sum("application/vnd.jupyter.widget-view+json" in o.get("data", {})
               for c in nb["cells"] for o in c.get("outputs", []))


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: Path(t).stem)
def test_lesson_runs_and_its_sliders_respond(browser, lab, timings, target):
    stem = Path(target).stem
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        try:
            run_all_s = open_and_run_all(page, lab, target, RUN_TIMEOUT_MS)
        except Exception as exc:  # playwright's TimeoutError
            page.screenshot(path=str(ARTIFACTS / f"{stem}-timeout.png"))
            pytest.fail(f"{target}: Run All did not finish within {RUN_TIMEOUT_MS // 1000} s "
                        f"({type(exc).__name__}); see artifacts/{stem}-timeout.png", pytrace=False)

        # textContent, not innerText: cells scrolled out of view are not laid out (content-visibility).
        texts = page.evaluate(f"() => [...document.querySelectorAll('{STDERR}')].map(e => e.textContent)")
        errors = [t.strip()[-800:] for t in texts]
        assert errors == [], f"{target}: error or warning output after Run All:\n" + "\n---\n".join(errors)
        prompts = page.evaluate("() => [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]"
                                ".map(e => e.textContent)")
        not_run = [i for i, p in enumerate(prompts) if not re.search(r"\[\d+\]", p)]
        assert not_run == [], f"{target}: code cells {not_run} did not run"

        expected_views = widget_views_in_file(lab.root / target)
        page.wait_for_function(f"() => document.querySelectorAll('.jp-OutputArea-output .jupyter-widgets')"
                               f".length >= {expected_views}", timeout=30_000)
        broken = page.get_by_text(re.compile("Error displaying widget|Loading widget")).count()
        assert broken == 0, f"{target}: {broken} widget(s) failed to render"
        page.screenshot(path=str(ARTIFACTS / f"{stem}.png"))

        sliders = page.locator(".widget-slider")
        moves = []
        for i in range(sliders.count()):
            moves.append(move_slider(page, sliders.nth(i), i, target, stem))
        timings[target] = {
            "run_all_s": round(run_all_s, 2),
            "sliders": moves,
            "median_keypress_to_image_ms": round(statistics.median(m["ms"] for m in moves), 1) if moves else None,
        }
        if target.startswith("fixtures/"):
            assert len(moves) == 2, "the fixture has one view with two sliders"
    finally:
        page.close()
        lab.shutdown_kernels()


def move_slider(page, slider, index: int, target: str, stem: str) -> dict:
    """Press an arrow key on slider `index`; check readout and figure change; return the timing."""
    slider.scroll_into_view_if_needed()
    label = (slider.locator(".widget-label").text_content() or "").strip()  # textContent: visible or not
    assert label, f"{target}: slider {index} has no label"
    old_src_len = page.evaluate(ARM_TIMER, [index])
    assert old_src_len > 100, f"{target}: slider {index} drives no figure"
    handle = slider.locator(".noUi-handle")
    now, top = float(handle.get_attribute("aria-valuenow")), float(handle.get_attribute("aria-valuemax"))
    key = "ArrowLeft" if now >= top else "ArrowRight"
    before = slider.locator(".widget-readout").text_content()
    handle.focus()
    page.keyboard.press(key)
    try:
        page.wait_for_function("() => window.__t1 !== null && window.__t0 !== null", timeout=15_000, polling="raf")
    except Exception as exc:  # playwright's TimeoutError: say what it means
        after = slider.locator(".widget-readout").text_content()
        pytest.fail(f"{target}: slider '{label}' ({before!r} -> {after!r} after {key}): its figure was not "
                    f"redrawn with a new image within 15 s ({type(exc).__name__})", pytrace=False)
    ms = page.evaluate("() => window.__t1 - window.__t0")
    after = slider.locator(".widget-readout").text_content()
    assert after != before, f"{target}: slider '{label}' readout stayed {before!r} after {key}"
    page.locator(f'[data-test-view="{index}"]').screenshot(path=str(ARTIFACTS / f"{stem}-slider{index}.png"))
    return {"label": label, "key": key, "readout": [before, after], "ms": round(ms, 1)}
