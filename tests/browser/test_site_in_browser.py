"""The static course site in Debian's headless Chromium, served on 127.0.0.1 and opened as file://,
with every request to any other host aborted and counted (there must be none).

For every lesson page: no console errors; every slider view walked by keyboard, one key press at a
time, through EVERY state (from file://) and through every value of each slider (served): the
image, its alt text and the moved slider's aria-valuetext and readout change each time, and the
image is the site's file for that state; every slider moved with the
mouse (desktop) and by touch at 390 px; every self-check answered right, wrong and unreadably,
with the verdict and feedback of the live widget (attnlib.widgets) for the same input.

Writes artifacts/site/<lesson>-desktop.png and <lesson>-phone.png.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from site_harness import DESKTOP, PHONE, SNAPSHOT, SNAPSHOT_WHEN_SHOWN, Guarded, SiteServer, snake, state_of, view_data

from attnlib import widgets

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if re.match(r"^\d\d-[a-z0-9-]+\.ipynb$", p.name))
SHOTS = ROOT / "artifacts" / "site"
MODES = ["http", "file"]


@pytest.fixture(scope="session")
def server(site):
    s = SiteServer(site)
    yield s
    s.stop()


def base(mode: str, server, site: Path) -> str:
    return server.url if mode == "http" else site.as_uri() + "/"


def allowed(mode: str, server) -> tuple[str, ...]:
    return (server.url,) if mode == "http" else ("file://",)


def text_of(html: str) -> str:
    return " ".join(BeautifulSoup(html, features="html.parser").get_text().split())


# ---- keyboard, mouse, self-checks (desktop) --------------------------------------------------------


def sweeps(sizes: list[int]) -> list[tuple[int, ...]]:
    """From the first state, each slider in turn up to its last value: every value of every slider."""
    now, path = [0] * len(sizes), [tuple([0] * len(sizes))]
    for k, size in enumerate(sizes):
        for i in range(1, size):
            now[k] = i
            path.append(tuple(now))
    return path


def walk_by_keyboard(page, root, where: str, every_state: bool) -> int:
    """Press Home on each slider, then one arrow key at a time: through every state (a snake path)
    or, with ``every_state`` False, through every value of each slider in turn."""
    data = view_data(root)
    sizes = [len(s["readouts"]) for s in data["spec"]]
    inputs = root.locator("input[type=range]")
    expected = lambda idx: data["urls"][data["images"][state_of(list(idx), sizes)]]  # noqa: E731
    for k in range(len(sizes)):
        inputs.nth(k).focus()
        page.keyboard.press("Home")
    now = root.evaluate(SNAPSHOT)
    assert now["values"] == [0] * len(sizes), f"{where}: Home did not reach the first value"
    now = root.evaluate(SNAPSHOT_WHEN_SHOWN, expected(now["values"]))
    assert now["loaded"], f"{where}: the image of the first state did not load"
    focused, steps = None, 0
    path = snake(sizes) if every_state else sweeps(sizes)
    for target in path[1:]:
        k = next(j for j, (a, b) in enumerate(zip(now["values"], target, strict=True)) if a != b)
        if focused != k:
            inputs.nth(k).focus()
            focused = k
        page.keyboard.press("ArrowRight" if target[k] > now["values"][k] else "ArrowLeft")
        after = root.evaluate(SNAPSHOT_WHEN_SHOWN, expected(target))
        moved = f"{where}: slider {data['spec'][k]['name']} -> index {target[k]} (state {target})"
        assert after["values"] == list(target), f"{moved}: the sliders show {after['values']}"
        assert after["state"] == state_of(list(target), sizes), f"{moved}: data-state is {after['state']}"
        assert after["loaded"] and after["src"] == expected(target), f"{moved}: image {after['src']} not shown"
        assert after["src"] != now["src"], f"{moved}: the image did not change"
        assert after["alt"] != now["alt"], f"{moved}: the alt text did not change"
        assert after["valuetexts"][k] != now["valuetexts"][k], f"{moved}: aria-valuetext did not change"
        assert after["readouts"][k] == after["valuetexts"][k] == data["spec"][k]["readouts"][target[k]] + (
            f" {data['spec'][k]['unit']}" if data["spec"][k]["unit"] else "")
        now, steps = after, steps + 1
    assert steps == len(path) - 1
    if every_state:
        assert steps == len(data["images"]) - 1
    return steps


def move_by_mouse(page, root, where: str) -> None:
    """Click the far end of each slider's track, then drag its thumb back to the start."""
    data = view_data(root)
    inputs = root.locator("input[type=range]")
    for k, s in enumerate(data["spec"]):
        box = inputs.nth(k).bounding_box()
        y = box["y"] + box["height"] / 2
        before = root.evaluate(SNAPSHOT)
        page.mouse.click(box["x"] + box["width"] - 2, y)
        end = root.evaluate(SNAPSHOT)
        assert end["values"][k] == len(s["readouts"]) - 1, f"{where}: a click at the end of {s['name']} missed"
        page.mouse.move(box["x"] + box["width"] - 6, y)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] / 2, y, steps=4)
        page.mouse.move(box["x"] + 1, y, steps=4)
        page.mouse.up()
        start = root.evaluate(SNAPSHOT)
        assert start["values"][k] == 0, f"{where}: dragging {s['name']} to the start left it at {start['values'][k]}"
        if before["values"][k] != len(s["readouts"]) - 1:
            assert end["src"] != before["src"], f"{where}: the click on {s['name']} did not change the image"


def answer_checks(page, where: str) -> int:
    """Every self-check: right, wrong and unreadable answers; verdict and text as the live widget's."""
    forms = page.locator("form.check")
    answered = 0
    for j in range(forms.count()):
        form = forms.nth(j)
        d = json.loads(form.locator("script.check-data").text_content())
        form.scroll_into_view_if_needed()
        if d["kind"] == "numeric":
            live = widgets.NumericCheck.from_definition(d)
            cases = [(f"{d['answer']:.12g}", True), (f"{d['answer'] * 3 + 1:.12g}", False), ("two", None)]
            if d["answer"] != 0:
                cases.append((f"{d['answer'] * 100:.12g}%", True))
            for text, verdict in cases:
                form.locator("input[type=text]").fill(text)
                if verdict is False:
                    form.locator("input[type=text]").press("Enter")  # Enter grades, like the live box
                else:
                    form.locator("button").click()
                assert live.check(text) is verdict
                shown = form.evaluate("f => [f.dataset.verdict, f.querySelector('.check-feedback').innerHTML]")
                want = {True: "right", False: "wrong", None: "unreadable"}[verdict]
                assert shown[0] == want, f"{where}: check {j + 1} answered {text!r} said {shown[0]}, not {want}"
                assert text_of(shown[1]) == text_of(live.feedback.value), f"{where}: check {j + 1}, {text!r}"
                answered += 1
        else:
            live = widgets.ChoiceCheck.from_definition(d)
            form.locator("button").click()
            assert form.evaluate("f => f.dataset.verdict") == "unchosen"
            for i in range(len(d["options"])):
                form.locator("input[type=radio]").nth(i).check()
                form.locator("button").click()
                verdict = live.check(i)
                shown = form.evaluate("f => [f.dataset.verdict, f.querySelector('.check-feedback').innerHTML]")
                assert shown[0] == ("right" if verdict else "wrong"), f"{where}: check {j + 1}, option {i}"
                assert text_of(shown[1]) == text_of(live.feedback.value), f"{where}: check {j + 1}, option {i}"
                answered += 1
    return answered


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_lesson_page_on_a_desktop(browser, server, site, lesson, mode):
    guard = Guarded(browser, allowed(mode, server), **DESKTOP)
    where = f"{lesson.stem} ({mode})"
    try:
        page = guard.open(base(mode, server, site) + f"{lesson.stem}.html")
        views = page.locator(".sv")
        if mode == "file":
            SHOTS.mkdir(parents=True, exist_ok=True)
            (views.first if views.count() else page.locator("h1").first).scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / f"{lesson.stem}-desktop.png"))
        for v in range(views.count()):
            root = views.nth(v)
            root.scroll_into_view_if_needed()
            # every state as file:// (the zip a class gets); every value of each slider when served
            walk_by_keyboard(page, root, f"{where} view {v + 1}", every_state=mode == "file")
            move_by_mouse(page, root, f"{where} view {v + 1}")
        answer_checks(page, where)
        page.close()
        assert guard.errors == [], f"{where}: {guard.errors}"
        assert guard.blocked == [], f"{where}: requests to other hosts were made (and aborted): {guard.blocked}"
    finally:
        guard.close()


# ---- touch at phone size ---------------------------------------------------------------------------


def touch_each_slider(page, root, where: str) -> int:
    """Tap each slider's track at the place of every value (at most 16 spread over a long slider),
    from the far end inwards: value, image, alt and aria-valuetext follow every tap."""
    data = view_data(root)
    inputs = root.locator("input[type=range]")
    taps = 0
    for k, s in enumerate(data["spec"]):
        n = len(s["readouts"])
        targets = list(range(n)) if n <= 16 else sorted({round(i * (n - 1) / 15) for i in range(16)})
        targets = targets[::-1]  # the first tap moves away from the value the page starts with
        inputs.nth(k).scroll_into_view_if_needed()
        box = inputs.nth(k).bounding_box()
        thumb = 16  # Chromium's range thumb, in CSS px; the value maps onto the track inside it
        for i in targets:
            now = root.evaluate(SNAPSHOT)
            if now["values"][k] == i:
                continue
            # let the frame that showed the last picture finish (its load handler may show the enlarge
            # hint), then tap where the slider is now
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            box = inputs.nth(k).bounding_box()
            x = box["x"] + thumb / 2 + (box["width"] - thumb) * i / (n - 1)
            page.touchscreen.tap(x, box["y"] + box["height"] / 2)
            after = root.evaluate(SNAPSHOT)
            moved = f"{where}: tap on {s['name']} at index {i}"
            assert abs(after["values"][k] - i) <= (0 if n <= 16 else 1), f"{moved} gave {after['values'][k]}"
            want = data["urls"][data["images"][state_of(after["values"], [len(c["readouts"]) for c in
                                                                            data["spec"]])]]
            after = root.evaluate(SNAPSHOT_WHEN_SHOWN, want)
            assert after["loaded"] and after["src"] == want, f"{moved}: its image was not shown"
            if after["values"][k] != now["values"][k]:
                assert after["src"] != now["src"] and after["alt"] != now["alt"], f"{moved}: image/alt unchanged"
                assert after["valuetexts"][k] != now["valuetexts"][k], f"{moved}: aria-valuetext unchanged"
                taps += 1
    return taps


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_lesson_page_on_a_phone(browser, server, site, lesson, mode):
    guard = Guarded(browser, allowed(mode, server), **PHONE)
    where = f"{lesson.stem} ({mode}, 390 px, touch)"
    try:
        page = guard.open(base(mode, server, site) + f"{lesson.stem}.html")
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{where}: the page is {overflow} px wider than the screen"
        views = page.locator(".sv")
        if mode == "file":
            SHOTS.mkdir(parents=True, exist_ok=True)
            (views.first if views.count() else page.locator("h1").first).scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / f"{lesson.stem}-phone.png"))
        for v in range(views.count()):
            root = views.nth(v)
            width = root.evaluate("r => r.querySelector('figure img').getBoundingClientRect().right")
            assert width <= 390, f"{where}: view {v + 1}'s figure does not fit the screen"
            assert touch_each_slider(page, root, f"{where} view {v + 1}") > 0
        page.close()
        assert guard.errors == [], f"{where}: {guard.errors}"
        assert guard.blocked == [], f"{where}: requests to other hosts were made (and aborted): {guard.blocked}"
    finally:
        guard.close()


# ---- the page's number parsing and formatting against attnlib's ------------------------------------


def test_page_script_parses_and_formats_numbers_as_python_does(browser, site):
    guard = Guarded(browser, ("file://",), **DESKTOP)
    try:
        page = guard.open((site / "index.html").as_uri())
        page.add_script_tag(path=str(site / "course.js"))
        pattern = widgets.NumericCheck("q", 1).definition()["number_pattern"]
        texts = ["0.25", " 1/8 ", "2e-3", "12.5%", "-3", "1,024", ".5", "3.", "+7e+2", "1/0", "", "abc", "2**3",
                 "1/2/3", "sqrt(64)", "5 %", "1e400", "0.1/0.3", "-1/-4"]
        got = page.evaluate("([ts, p]) => ts.map(t => window.courseSite.parseNumber(t, p))", [texts, pattern])
        want = [widgets.parse_number(t) for t in texts]
        # Python divides a fraction exactly (Fraction), the page in floating point: the last bit may differ
        assert got == [w if w is None else pytest.approx(w, rel=1e-15) for w in want]
        numbers = [8.0, 1024.0, 0.2887, 1 / 3, 2 / 3, 0.0625, 1e-5, 123456.0, 99999.0, 0.00012345, 9.9995,
                   1.0625, 1.0635, 2.5e-7, 12345678.9, -0.1051, 0.0, 1.5, 16.0, 33.03, 17.07, 1e22]
        got = page.evaluate("ns => ns.map(n => window.courseSite.formatG4(n))", numbers)
        assert got == [format(x, ".4g") for x in numbers]
        assert guard.errors == [] and guard.blocked == []
    finally:
        guard.close()
