"""Every lesson in a real JupyterLab in headless Chromium: Run All is clean, every slider view
(attnlib/frameslider.js, `.sv.sv-live`) renders, and every slider, moved with the keyboard (an arrow
key, End, Home) and with the pointer (a click on its track), changes its readout and shows a new frame.

Writes artifacts/<lesson>.png (the lesson after Run All, 1280x720), artifacts/<lesson>-slider<N>.png
(each slider view after the keypress) and artifacts/browser_timings.json (keypress-to-new-frame ms, as
the view's data-shown-ms, and whether the browser held the frame or asked the kernel; no timing is asserted).
Also runs on tests/fixtures/slider_demo.ipynb, which checks this harness itself: there every one of the
view's 36 states is visited with the keyboard and must be shown.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest
from lab_harness import RANGE, SLIDER_STATE, click_and_time, open_and_run_all, press_and_time

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
LESSON = re.compile(r"^\d\d-[a-z0-9-]+\.ipynb$")
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if LESSON.match(p.name))
TARGETS = [f"notebooks/{p.name}" for p in LESSONS] + ["fixtures/slider_demo.ipynb"]
RUN_TIMEOUT_MS = 120_000
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
VIEW_MIME = "application/vnd.jupyter.widget-view+json"


def views_in_file(path: Path) -> tuple[int, int]:
    """(widget views, slider views) among the notebook's committed outputs."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    outs = [o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", [])]
    text = ["".join(d.get("text/plain", "")) for d in outs if VIEW_MIME in d]
    return len(text), sum(t.startswith("SliderView(") for t in text)


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: Path(t).stem)
def test_lesson_runs_and_its_sliders_respond(browser, lab, timings, target):
    stem = Path(target).stem
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    console_errors = []
    page.on("console", lambda m: console_errors.append(m.text[:500]) if m.type == "error" else None)
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

        expected_views, expected_sliders = views_in_file(lab.root / target)
        page.wait_for_function(f"() => document.querySelectorAll('.jp-OutputArea-output .jupyter-widgets')"
                               f".length >= {expected_views}", timeout=30_000)
        broken = page.get_by_text(re.compile("Error displaying widget|Loading widget")).count()
        assert broken == 0, f"{target}: {broken} widget(s) failed to render"
        # A view whose module throws shows no error text in JupyterLab: count the views that finished rendering.
        try:
            page.wait_for_function(f"() => document.querySelectorAll('.jp-Notebook .sv-live.sv-ready').length"
                                   f" === {expected_sliders}", timeout=30_000)
        except Exception:  # playwright's TimeoutError: say what it means
            ready = page.locator(".jp-Notebook .sv-live.sv-ready").count()
            pytest.fail(f"{target}: {ready} of {expected_sliders} slider views rendered; browser console errors: "
                        f"{console_errors}", pytrace=False)
        page.screenshot(path=str(ARTIFACTS / f"{stem}.png"))

        moves = [move_slider(page, i, target, stem) for i in range(page.locator(RANGE).count())]
        assert (len(moves) > 0) == (expected_sliders > 0), f"{target}: {expected_sliders} views, {len(moves)} sliders"
        presses = [t for m in moves for t in m["presses"]]
        timings[target] = {
            "run_all_s": round(run_all_s, 2),
            "sliders": moves,
            "median_keypress_to_image_ms": round(statistics.median(m["ms"] for m in moves), 1) if moves else None,
            "held_presses": sum(p["how"] == "held" for p in presses), "kernel_presses": sum(p["how"] == "kernel"
                                                                                          for p in presses),
        }
        if target.startswith("fixtures/"):
            assert len(moves) == 2, "the fixture has one view with two sliders"
            visit_every_state(page, target)
        assert console_errors == [], f"{target}: browser console errors: {console_errors}"
    finally:
        page.close()
        lab.shutdown_kernels()


def check_shown(page, index: int, target: str, what: str, before: dict | None = None) -> dict:
    """Slider ``index``'s view after a move: readout, screen-reader text, frame decoded, no error; return its state."""
    now = page.evaluate(SLIDER_STATE, [index])
    where = f"{target}: slider {index} '{now['label']}' after {what}"
    assert now["error"] == "", f"{where}: the view shows an error: {now['error']}"
    assert now["busy"] is None, f"{where}: still waiting for its frame (aria-busy)"
    assert now["natural"][0] > 0 and now["natural"][1] > 0, f"{where}: its figure is not a decoded image"
    assert now["valuetext"] == now["readout"] != "", f"{where}: aria-valuetext {now['valuetext']!r} vs readout " \
                                                     f"{now['readout']!r}"
    assert now["readout"].split()[0] in now["alt"], f"{where}: alt text {now['alt']!r} lacks {now['readout']!r}"
    if before is not None:
        assert now["readout"] != before["readout"], f"{where}: readout stayed {before['readout']!r}"
        assert now["state"] != before["state"] and now["src"] != before["src"], f"{where}: the same frame is shown"
        assert now["alt"] != before["alt"], f"{where}: alt text stayed {before['alt']!r}"
    return now


def press(page, index: int, key: str, target: str) -> dict:
    """Press ``key`` on slider ``index``; fail with what was seen if no new frame comes within 15 s."""
    try:
        shown = press_and_time(page, index, key)
    except Exception as exc:  # playwright's TimeoutError: say what it means
        now = page.evaluate(SLIDER_STATE, [index])
        pytest.fail(f"{target}: slider {index} '{now['label']}' (now {now['readout']!r}, error {now['error']!r}) "
                    f"after {key}: no new frame shown within 15 s ({type(exc).__name__})", pytrace=False)
    assert shown is not None, f"{target}: slider {index}: {key} did not move it"
    assert shown["ms"] is not None and shown["ms"] >= 0, f"{target}: slider {index}: no data-shown-ms: {shown}"
    assert shown["how"] in ("held", "kernel"), shown
    return shown


def move_slider(page, index: int, target: str, stem: str) -> dict:
    """An arrow key, End and Home, then a click on the track, on slider ``index``; each shows a new frame."""
    page.locator(RANGE).nth(index).scroll_into_view_if_needed()
    start = page.evaluate(SLIDER_STATE, [index])
    assert start["label"].strip() and start["label_for"] == start["label"], \
        f"{target}: slider {index} has no label tied to its input: {start['label']!r} / {start['label_for']!r}"
    assert start["max"] > start["min"] == 0, f"{target}: slider {index} has one value only"
    check_shown(page, index, target, "Run All")
    key = "ArrowLeft" if start["value"] >= start["max"] else "ArrowRight"
    first = press(page, index, key, target)
    after = check_shown(page, index, target, key, start)
    assert after["value"] == start["value"] + (1 if key == "ArrowRight" else -1)
    page.locator(f'[data-test-view="{index}"]').screenshot(path=str(ARTIFACTS / f"{stem}-slider{index}.png"))
    presses = [{"key": key, **first}]
    ends = [("End", after["max"]), ("Home", 0)]
    for key, value in ends if after["value"] < after["max"] else ends[::-1]:  # each end, from away from it
        before = page.evaluate(SLIDER_STATE, [index])
        presses.append({"key": key, **press(page, index, key, target)})
        now = check_shown(page, index, target, key, before)
        assert now["value"] == value, f"{target}: slider {index} at {now['value']} after {key}, not {value}"
    before = page.evaluate(SLIDER_STATE, [index])
    clicked = click_and_time(page, index, 0.75)  # a pointer (or a tap) on the track, three quarters along
    assert clicked is not None, f"{target}: slider {index}: a click on its track did not move it"
    now = check_shown(page, index, target, "a click on its track", before)
    assert abs(now["value"] - 0.75 * now["max"]) <= max(1.0, 0.1 * now["max"]), \
        f"{target}: slider {index}: a click 3/4 along set {now['value']} of 0..{now['max']}"
    presses.append({"key": "click 0.75", **clicked})
    return {"label": start["label"], "key": presses[0]["key"], "readout": [start["readout"], after["readout"]],
            "ms": presses[0]["ms"], "how": presses[0]["how"], "presses": presses}


def visit_every_state(page, target: str) -> None:
    """Every state of the fixture's view, with the keyboard (Home, ArrowRight, PageUp): each one shown, once."""
    seen = {}
    for outer in range(page.evaluate(SLIDER_STATE, [0])["max"] + 1):
        if outer == 0:
            press_and_time(page, 0, "Home")
        else:
            press(page, 0, "ArrowRight", target)
        press_and_time(page, 1, "Home")
        for inner in range(page.evaluate(SLIDER_STATE, [1])["max"] + 1):
            if inner:
                press(page, 1, "ArrowRight" if inner % 2 else "PageUp", target)
            now = check_shown(page, 1, target, f"state ({outer}, {inner})")
            assert (now["value"], page.evaluate(SLIDER_STATE, [0])["value"]) == (inner, outer)
            seen[now["state"]] = now["alt"]
    n = (page.evaluate(SLIDER_STATE, [0])["max"] + 1) * (page.evaluate(SLIDER_STATE, [1])["max"] + 1)
    assert sorted(map(int, seen)) == list(range(n)), f"{target}: states shown {sorted(seen)}"
    assert len(set(seen.values())) == n, f"{target}: {n} states but {len(set(seen.values()))} different alt texts"
