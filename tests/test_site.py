"""The static course site (scripts/build_site.py, `python3 course.py site`): one page per lesson whose
slider views and self-checks work without a kernel, built from the live widgets.

The site is built once per session (the ``site`` fixture in tests/conftest.py); the browser tests
in tests/browser/test_site_in_browser.py drive the same build. Here: its files, its images against
the live ``SliderView`` of a freshly executed lesson, its determinism, and the widget hooks it uses.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import time
from base64 import b64decode
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import nbformat  # noqa: E402
import pytest  # noqa: E402
from bs4 import BeautifulSoup  # noqa: E402

from attnlib import plots, widgets  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def load_build_site():
    """scripts/build_site.py as a module (scripts/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_site = load_build_site()
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if build_site.LESSON.match(p.name))
RASTER = ("image/png", "image/jpeg", "image/gif")
FIXTURE = ROOT / "tests" / "fixtures" / "slider_demo.ipynb"


def page(site: Path, nb_path: Path) -> BeautifulSoup:
    return BeautifulSoup((site / f"{nb_path.stem}.html").read_text(encoding="utf-8"), features="html.parser")


def widget_outputs(nb) -> int:
    return sum(build_site.WIDGET_VIEW in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


def view_data(soup: BeautifulSoup) -> list[dict]:
    return [json.loads(s.string) for s in soup.select(".sv script.sv-data")]


# ---- the widget hooks the site uses (attnlib.widgets) -------------------------------------------


def _view():
    return widgets.slider_view(
        lambda n, t, a: plots.probability_bars([1 / n] * n, title=f"n = {n}, t = {t}, a = {a}"),
        n=widgets.int_slider("keys", 1, 3, 2),
        t=widgets.float_slider("delay", 0.5, 1.5, 1.0, step=0.25, unit="ms"),
        a=widgets.options_slider("α", [0.0, 0.5, 1.0], 0.5),
    )


def test_states_are_every_combination_on_the_grids_last_slider_fastest():
    view = _view()
    states = view.states()
    assert len(states) == 3 * 5 * 3
    assert states[:4] == [{"n": 1, "t": 0.5, "a": 0.0}, {"n": 1, "t": 0.5, "a": 0.5},
                          {"n": 1, "t": 0.5, "a": 1.0}, {"n": 1, "t": 0.75, "a": 0.0}]
    assert states[-1] == {"n": 3, "t": 1.5, "a": 1.0}
    assert len({tuple(s.values()) for s in states}) == len(states)


def test_controls_give_labels_units_readouts_and_the_shown_index():
    view = _view()
    n, t, a = view.controls()
    assert (n["label"], n["unit"], n["values"], n["readouts"], n["index"]) == ("keys", "", [1, 2, 3], ["1", "2", "3"], 1)
    assert (t["label"], t["unit"], t["index"]) == ("delay", "ms", 2)
    assert t["readouts"] == ["0.50", "0.75", "1.00", "1.25", "1.50"]
    assert (a["values"], a["readouts"], a["index"]) == ([0.0, 0.5, 1.0], ["0.0", "0.5", "1.0"], 1)
    view.set(t=1.25)
    assert view.controls()[1]["index"] == 3 and view.values() == {"n": 2, "t": 1.25, "a": 0.5}
    assert view.state == view.states().index({"n": 2, "t": 1.25, "a": 0.5})
    assert [s.values for s in view.sliders.values()] == [c["values"] for c in view.controls()]


def test_off_grid_values_and_other_sliders_are_refused_by_name():
    view = _view()
    with pytest.raises(ValueError, match=r"slider 'delay': value 0.6 is not on its grid"):
        view.set(t=0.6)  # between two grid values: no keypress reaches it
    assert view.values() == {"n": 2, "t": 1.0, "a": 0.5}
    import ipywidgets

    with pytest.raises(TypeError, match="sliders must be Slider objects"):
        widgets.slider_view(lambda x: None, x=ipywidgets.FloatLogSlider())


def test_self_checks_hand_over_a_definition_that_rebuilds_them():
    q = widgets.numeric_check("What is <i>x</i>?", 8, rel_tol=0.01, abs_tol=0.5, hint="h", explanation="e")
    d = q.definition()
    again = widgets.NumericCheck(**{k: d[k] for k in ("question", "answer", "rel_tol", "abs_tol", "hint",
                                                      "explanation")})
    for text in ["8", "8.4", "9", "abc", "1/8", "12.5%"]:
        assert again.check(text) == q.check(text)
        assert again.feedback.value == q.feedback.value
    assert re.fullmatch(d["number_pattern"], " 1/8 ") and not re.fullmatch(d["number_pattern"], "2**3")
    assert q.check("9") is False and q.feedback.value == d["messages"]["wrong"].format(value="9", hint="Hint: h")
    c = widgets.choice_check("Pick", ["a", "b"], correct=1, feedback=["no: a", "yes: b"])
    d = c.definition()
    assert (d["kind"], d["options"], d["correct"], d["feedback"]) == ("choice", ["a", "b"], 1, ["no: a", "yes: b"])
    assert c.check(0) is False and c.feedback.value == d["messages"]["wrong"].format(feedback="no: a")
    assert c.check(1) is True and c.feedback.value == d["messages"]["right"].format(feedback="yes: b")


# ---- the built site -------------------------------------------------------------------------------


def test_one_page_per_lesson_an_index_and_the_shared_files(site):
    names = sorted(p.name for p in site.iterdir() if p.is_file())
    assert names == sorted([f"{p.stem}.html" for p in LESSONS] + ["index.html", "course.css", "course.js"])
    index = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), features="html.parser")
    assert [a["href"] for a in index.select("ol a")] == [f"{p.stem}.html" for p in LESSONS]
    folders = {p.name for p in site.iterdir() if p.is_dir()}
    assert folders <= {f"{p.stem}_files" for p in LESSONS}


def test_site_budget_in_total(site):
    """1.8 MB per lesson page on average: for the first ten pages that was 15 MB of pictures for every
    screen plus the phone renderings (~3 MB), which only screens up to PHONE_MEDIA wide fetch (no page's
    first load grows by them). A new lesson brings its own 1.8 MB, no more."""
    total = build_site.site_size(site)
    budget = 1.8e6 * len(LESSONS)
    assert total <= budget, (f"the site is {total / 1e6:.1f} MB (budget {budget / 1e6:.1f} MB: 1.8 MB for each of "
                             f"{len(LESSONS)} lesson pages, phone renderings included)")


@pytest.mark.parametrize("nb_path", LESSONS, ids=lambda p: p.stem)
def test_every_widget_is_static_and_every_figure_a_file(site, nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    soup = page(site, nb_path)
    assert len(soup.select(".sv")) + len(soup.select("form.check")) == widget_outputs(nb)
    assert "needs a running kernel" not in soup.get_text() and "SliderView(" not in soup.get_text()
    assert "NBVAL_IGNORE_OUTPUT" not in soup.get_text()
    raster = sum(any(m in o.get("data", {}) for m in RASTER) for c in nb.cells for o in c.get("outputs", []))
    figures = soup.select(".jp-OutputArea-output > picture > img")  # a <picture>: its phone rendering as a <source>
    assert len(figures) == raster
    for img in soup.select("img"):
        assert (site / img["src"]).is_file(), img["src"]
        assert img.get("alt") and not img["alt"].startswith("No description")
        assert img.get("width") and img.get("height")
    for data in view_data(soup):
        assert all((site / f).is_file() for f in data["urls"])
        states = 1
        for s in data["spec"]:
            states *= len(s["readouts"])
        assert len(data["images"]) == len(data["alts"]) == states
        assert len(set(data["alts"])) == states, "each state's alt text names its slider values"


@pytest.mark.parametrize("nb_path", LESSONS, ids=lambda p: p.stem)
def test_page_needs_no_network(site, nb_path):
    text = (site / f"{nb_path.stem}.html").read_text(encoding="utf-8")
    assert build_site.external_resources(text) == []
    soup = BeautifulSoup(text, features="html.parser")
    assert [s["src"] for s in soup.find_all("script", src=True)] == ["course.js"]
    assert [link["href"] for link in soup.find_all("link", href=True) if "stylesheet" in link.get("rel", [])] == [
        "course.css"]
    assert not re.search(r"mathjax|require\.js|cdn\.jsdelivr|unpkg\.com|cdnjs", text, re.I)
    assert build_site.external_resources((site / "course.css").read_text(encoding="utf-8")) == []
    assert "http" not in (site / "course.js").read_text(encoding="utf-8")


@pytest.mark.parametrize("nb_path", LESSONS, ids=lambda p: p.stem)
def test_maths_is_mathml(site, nb_path):
    if build_site.latex_to_mathml is None:
        pytest.fail("latex2mathml is missing (it is in requirements-dev.txt)")
    soup = page(site, nb_path)
    assert soup.select(".tex-source") == [], "every formula must convert to MathML"
    nb = nbformat.read(nb_path, as_version=4)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    if re.search(r"\$[^$\s][^$]*\$", markdown):
        assert soup.find_all("math"), f"{nb_path.name} has TeX but its page has no MathML"


@pytest.mark.parametrize("nb_path", LESSONS, ids=lambda p: p.stem)
def test_slider_views_run_the_live_views_module_unchanged(site, nb_path):
    """A page with slider views has one module script: attnlib/frameslider.js as it is, then VIEW_BOOT, which
    hands each view's data to render() with the element holding its .sv (render finds the markup in it)."""
    soup = page(site, nb_path)
    views, modules = soup.select(".sv"), soup.find_all("script", type="module")
    if not views:
        assert modules == []
        return
    assert [m.string for m in modules] == [build_site.FRAMESLIDER_JS.read_text(encoding="utf-8") + build_site.VIEW_BOOT]
    module = modules[0].string
    for n, view in enumerate(views, start=1):
        assert view.parent.select(".sv") == [view], f"view {n}: render(el) would find another view's markup"
        assert view.select(".sv-row input[type=range]") and view.select_one("figure img") is not None
        assert view.select_one(".sv-error[hidden]") is not None, f"view {n}: the module's error line is missing"
        data = json.loads(view.select_one("script.sv-data").string)
        for name in data:  # every name in the data is one the module reads from its model
            assert f'model.get("{name}")' in module, f"view {n}: frameslider.js does not read {name!r}"
        assert set(data) <= {"spec", "state", "urls", "images", "phones", "media", "alts"}
        sizes = [len(s["readouts"]) for s in data["spec"]]
        shown = 0
        for i, size in zip((int(i["value"]) for i in view.select("input[type=range]")), sizes, strict=True):
            shown = shown * size + i
        assert data["state"] == shown, f"view {n}: the data's state is not the one the inputs show"
        img = view.select_one("figure img")
        assert img["src"] == data["urls"][data["images"][shown]] and img["alt"] == data["alts"][shown]


def test_the_views_look_comes_from_frameslider_css_once(site):
    css = (site / "course.css").read_text(encoding="utf-8")
    view_css = build_site.FRAMESLIDER_CSS.read_text(encoding="utf-8")
    assert view_css in css
    rules = re.findall(r"^\s*(\.sv[^{,]*\{)", view_css, re.M)  # ".sv {", ".sv-row input[type=range] {", ...
    assert len(rules) >= 8
    for rule in rules:
        assert css.count(rule) == view_css.count(rule), f"{rule!r} is also defined outside frameslider.css"
    script = (site / "course.js").read_text(encoding="utf-8")
    assert "sv-data" not in script and "setUpView" not in script, "course.js must not swap slider pictures itself"


def test_a_module_that_cannot_be_inlined_stops_the_build(tmp_path, monkeypatch):
    bad = tmp_path / "frameslider.js"
    bad.write_text('export function render() { return "</script>"; }\n', encoding="utf-8")
    monkeypatch.setattr(build_site, "FRAMESLIDER_JS", bad)
    with pytest.raises(SystemExit, match="cannot be inlined"):
        build_site.view_module()


def test_images_are_content_addressed_and_stored_once(site):
    seen = {}
    for png in site.rglob("*.png"):
        data = png.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        assert png.stem == digest[:20], f"{png} is not named by its content"
        assert digest not in seen, f"{png} and {seen.get(digest)} hold the same bytes"
        seen[digest] = png
    # lessons 03 and 05 show the temperature view on the same logits: 05 uses 03's files
    pages = {p.stem[:2]: p for p in LESSONS}
    if "03" in pages and "05" in pages:
        files = {f for d in view_data(page(site, pages["05"])) for f in d["urls"]}
        shared = {f for f in files if f.startswith(f"{pages['03'].stem}_files/")}
        assert len(shared) >= 32, f"lesson 05 reuses {len(shared)} of lesson 03's slider images"


def test_lesson_links_point_at_pages(site):
    names = {p.name for p in LESSONS}
    for nb_path in LESSONS:
        for a in page(site, nb_path).find_all("a", href=True):
            target = a["href"].partition("#")[0]
            assert target not in names, f"{nb_path.name} links to the notebook {target}, not its page"
            if target.endswith(".html"):
                assert (site / target).is_file(), target


# ---- the images are the live view's, state for state ---------------------------------------------

# Cells run after the lesson, in its kernel. The live view (attnlib/frameslider.js in JupyterLab) shows the
# frame sent with the view (``first``, for ``first_state``) and asks the kernel for the others with
# {type: "want", now: [states]}; the kernel's main loop answers with {type: "frame", state} and the PNG, drawing
# only while no cell runs. Here the comm's ``send`` is recorded and one "want" per view goes straight to the
# view's handler; short cells then collect what was sent until every state came (the kernel is idle between
# them), so what is compared is the bytes the kernel sends to the browser.
LIVE_PICK = """
import hashlib as _h, json as _j, random as _r
from ipywidgets.widgets.widget import _instances as _inst
_views = [_inst[_m] for _m in {ids!r} if type(_inst[_m]).__name__ == "SliderView"]
_picks, _sent = [], []
for _view in _views:
    _n = len(_view.states())
    _picks.append(sorted(set([0, _n - 1] + _r.Random(0).sample(range(_n), min(4, _n)))))
print(_j.dumps(_picks))
"""
LIVE_ASK = """
def _recorder(_v):
    _sent.append([])
    def _record(content, buffers=None, _into=_sent[-1]):
        _into.append((content, [bytes(b) for b in buffers or []]))
    return _record
for _view, _states in zip(_views, _picks):
    _view.send = _recorder(_view)  # the comm's send, recorded
    _view._on_msg(_view, {"type": "want", "now": _states, "ahead": []}, [])
"""
LIVE_COLLECT = """
_got = []
for _view, _states, _out in zip(_views, _picks, _sent):
    _got.append({"first": [_view.first_state, _h.sha256(_view.first).hexdigest()]})
    for _content, _buffers in list(_out):
        _got[-1][_content["state"]] = (_h.sha256(_buffers[0]).hexdigest() if _content["type"] == "frame"
                                       else _content["type"] + ": " + _content.get("text", ""))
print(_j.dumps({"done": all(len(g) == len(s) + 1 for g, s in zip(_got, _picks)), "views": _got}))
"""


def lessons_with_views() -> list[Path]:
    """Lessons whose committed outputs show a SliderView."""
    def shows_a_view(path):
        nb = nbformat.read(path, as_version=4)
        return any(str(o.get("data", {}).get("text/plain", "")).startswith("SliderView(")
                   for c in nb.cells for o in c.get("outputs", []))
    return [p for p in LESSONS if shows_a_view(p)]


def live_pngs(nb_path: Path) -> list[dict]:
    """Run the lesson in a fresh kernel, then ask each view for sampled states (first, last and four at
    random) as its front end would; per view, {state index: sha256 of the PNG the kernel sends (or the
    error it sends), "first": [first_state, sha256 of the frame sent with the view]}. (The build never runs
    here: this is the live widget, on its own.)"""
    from nbclient import NotebookClient

    nb = nbformat.read(nb_path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(nb_path.parent)}})
    printed = []
    process = client.process_message

    def record(msg, cell, cell_index):
        content = msg["content"]
        if msg["msg_type"] == "stream" and content.get("name") == "stdout":
            printed.append(content["text"])
        return process(msg, cell, cell_index)

    client.process_message = record

    def run(source: str):
        printed.clear()
        cell = nbformat.v4.new_code_cell(source)
        nb.cells.append(cell)
        client.execute_cell(cell, len(nb.cells) - 1)
        return json.loads("".join(printed) or "null")

    with client.setup_kernel():
        build_site.poll_in_slices(client.kc)
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        run(LIVE_PICK.format(ids=build_site.widget_ids(nb)))
        run(LIVE_ASK)
        deadline = time.monotonic() + 600
        while not (found := run(LIVE_COLLECT))["done"] and time.monotonic() < deadline:
            time.sleep(0.5)  # idle: the kernel's main loop draws
    assert found["done"], f"{nb_path.name}: the views did not send every frame asked for within 600 s: {found}"
    return found["views"]


@pytest.fixture(scope="module")
def live(site):
    """live_pngs for every lesson with a slider view."""
    return {p: live_pngs(p) for p in lessons_with_views()}


@pytest.mark.parametrize("nb_path", lessons_with_views(), ids=lambda p: p.stem)
def test_exported_images_are_what_the_live_view_shows(site, live, nb_path):
    views = view_data(page(site, nb_path))
    assert len(live[nb_path]) == len(views) > 0
    for n, (got, data) in enumerate(zip(live[nb_path], views, strict=True), start=1):
        first_state, first = got.pop("first")  # the frame sent with the view: the page shows it first
        assert first_state == data["state"], f"view {n}: the page starts at another state than the live view"
        assert len(got) >= min(3, len(data["images"]))
        for state, digest in [(first_state, first), *got.items()]:
            file = site / data["urls"][data["images"][int(state)]]
            assert hashlib.sha256(file.read_bytes()).hexdigest() == digest, f"view {n}, state {state}: {file.name}"


# ---- determinism and the command -----------------------------------------------------------------


def test_two_builds_give_the_same_files(site, tmp_path):
    """A second build of the first two lessons (the cheap ones) writes byte-identical pages, images
    and shared files to the session's full build."""
    some = LESSONS[:2]
    again = tmp_path / "site"
    build_site.build(some, again, jobs=2, log=lambda _: None)
    compared = 0
    for path in sorted(again.rglob("*")):
        rel = path.relative_to(again)
        if path.is_dir() or rel.name == "index.html":
            continue
        assert (site / rel).read_bytes() == path.read_bytes(), f"{rel} differs between two builds"
        compared += 1
    assert compared >= 4


def test_unknown_widget_outputs_stop_the_build():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output(
        "display_data", data={build_site.WIDGET_VIEW: {"model_id": "abc", "version_major": 2}})])])
    with pytest.raises(SystemExit, match="no static version of widget abc"):
        build_site.StaticWidgets().preprocess(nb, {"widgets": {}})


def test_pngs_header_size():
    png = b64decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEklEQVR4nGNgYGD4z8DAwMDAAAAMAAFzhAmkAAAAAElFTkSuQmCC")
    assert build_site.png_size(png) == (2, 3)
    with pytest.raises(ValueError, match="not a PNG"):
        build_site.png_size(b"GIF89a" + bytes(30))


def test_course_py_offers_site_and_export_as_its_alias():
    text = (ROOT / "course.py").read_text(encoding="utf-8")
    assert '"site": site' in text and '"export": site' in text
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_site.py"), "--help"],
                          capture_output=True, text=True, check=True)
    assert "build/site" in done.stdout


def test_the_fixture_builds_with_units_and_the_index_counts_widgets(tmp_path):
    """The small fixture notebook: a two-slider view (36 states) and a self-check."""
    out = tmp_path / "site"
    build_site.build([FIXTURE], out, jobs=1, log=lambda _: None)
    soup = BeautifulSoup((out / "slider_demo.html").read_text(encoding="utf-8"), features="html.parser")
    (data,) = view_data(soup)
    assert [len(s["readouts"]) for s in data["spec"]] == [9, 4]
    assert len(data["images"]) == 36 and len(set(data["images"])) == 36
    assert [i["aria-valuetext"] for i in soup.select(".sv input[type=range]")] == ["2", "1.00"]
    assert len(soup.select("form.check-numeric")) == 1
    assert "(1 interactive figure, 1 self-check)" in (out / "index.html").read_text(encoding="utf-8")


# ---- pieces of the page conversion ---------------------------------------------------------------


@pytest.mark.parametrize("nb_path", LESSONS, ids=lambda p: p.stem)
def test_no_cell_shows_a_figure_twice(nb_path):
    # a bare `fig` after pyplot made it can be shown by its repr and again by the inline backend
    for cell in nbformat.read(nb_path, as_version=4).cells:
        images = [o for o in cell.get("outputs", []) if any(m in o.get("data", {}) for m in RASTER)]
        assert len(images) <= 1, f"{nb_path.name}: a cell shows {len(images)} figures: {cell.source[-120:]!r}"


def test_tex_falls_back_to_escaped_source_without_the_converter(monkeypatch):
    monkeypatch.setattr(build_site, "latex_to_mathml", None)
    assert build_site.tex_to_html("a<b", display=False) == '<span class="tex-source">$a&lt;b$</span>'
    assert build_site.tex_to_html("x", display=True) == '<span class="tex-source">$$x$$</span>'


def test_lesson_links_point_at_pages_and_figures_become_files_with_alt_text(tmp_path):
    png = b64decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEklEQVR4nGNgYGD4z8DAwMDAAAAMAAFzhAmkAAAAAElFTkSuQmCC")
    src = "data:image/png;base64," + __import__("base64").b64encode(png).decode()
    html = ('<html><head><style>p{}</style></head><body><a href="01-next.ipynb#top">next</a>'
            '<a href="https://x.org/a.ipynb">ext</a><div class="jp-OutputArea-output">'
            f'<img alt="No description has been provided for this image" src="{src}"/></div></body></html>')
    done, styles = build_site.finish_page(html, "T", {"01-next.ipynb"}, build_site.Files(tmp_path), "t_files")
    soup = BeautifulSoup(done, features="html.parser")
    assert [a["href"] for a in soup.find_all("a")][-2:] == ["01-next.html#top", "https://x.org/a.ipynb"]
    img = soup.select_one(".jp-OutputArea-output img")
    assert img["alt"] == "A figure without a title or axis labels, in “T”"  # no words known for it
    assert (img["width"], img["height"]) == ("2", "3") and img.parent.name == "picture"
    assert (tmp_path / img["src"]).read_bytes() == png and img["src"].startswith("t_files/")
    assert styles == "p{}" and soup.find("style") is None
    assert soup.find("link", rel="stylesheet")["href"] == "course.css"
    assert soup.find_all("script")[-1]["src"] == "course.js"


def test_external_resources_are_detected():
    html = ('<script src="https://cdn.example/x.js"></script><link href="//fonts.example/f.css">'
            '<script type="module">import("https://cdn.example/m.mjs")</script><img src="data:image/png;base64,AA">'
            '<style>body { background: url("https://img.example/b.png") }</style><img src="a_files/x.png">')
    assert build_site.external_resources(html) == [
        "https://cdn.example/x.js", "//fonts.example/f.css", "https://cdn.example/m.mjs", "https://img.example/b.png"]


def test_pages_workflow_publishes_what_course_py_site_builds():
    flow = (ROOT / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s*run: python3 course\.py site\s*$", flow, re.M)
    assert re.search(r"uses: actions/upload-pages-artifact@v\d+\s+with:\s+path: build/site\s*$", flow, re.M)
    assert re.search(r"uses: actions/deploy-pages@v\d+", flow)
    assert build_site.ROOT / "build" / "site" == ROOT / "build" / "site"
    assert 'default=ROOT / "build" / "site"' in (ROOT / "scripts" / "build_site.py").read_text(encoding="utf-8")


# ---- no figure text outside its canvas (every static figure and every slider state) -------------


def test_no_figure_text_outside_its_canvas(site):
    """The site build watches every figure the lessons show (inline outputs and every slider state's
    PNG) for text that reaches past the canvas, where a reader would see it cut off."""
    report = site.parent / "figure_text_outside.json"
    if not report.exists():
        pytest.skip("site from SITE_PREBUILT: the figure-text report is written only by a build in this session")
    found = json.loads(report.read_text(encoding="utf-8"))
    assert found == [], "\n".join(f"{f['lesson']}: {f['text']!r} {f['over_px']} px {f.get('where', 'outside')} "
                                  f"({f['figure']!r})" for f in found)


def test_the_figure_text_watch_catches_a_slider_state_whose_labels_run_into_the_next_panel():
    """A slider view draws every state at its reference state's layout: a state with wider tick labels than the
    reference's runs them into the panel beside (the rule in CONTRIBUTING.md); the site build reports it."""
    import matplotlib.pyplot as plt

    def draw(scale):
        fig, (left, right) = plt.subplots(1, 2, figsize=(6, 3), layout="constrained")
        left.plot([0, 1], [0, 1])
        right.plot([0, 1], [0, scale])
        right.set_ylim(0, scale)
        return fig

    record = []
    unwatch = build_site.watch_figure_text(record)
    try:
        view = widgets.slider_view(draw, store=None, scale=widgets.options_slider("scale", [1, 10**5], 1))
        assert record == []  # the reference state: constrained layout made room for its labels
        view.render({"scale": 10**5})  # "100000" where the reference had "1.0"
        wide = [f for f in record if f.get("where") == "over another panel"]
        assert wide and all(f["text"].isdigit() for f in wide), record
        record.clear()
        laid_out = widgets.slider_view(draw, store=None, reference={"scale": 10**5},
                                       scale=widgets.options_slider("scale", [1, 10**5], 1))
        laid_out.render({"scale": 10**5})
        assert record == []  # the same state, laid out for the widest labels: it fits
        stacked = plt.figure(figsize=(4, 4))  # text over text: a long x label of the top panel over the lower title
        top, low = stacked.subplots(2, 1)
        top.set_xlabel("an x label\nof three\nlines", labelpad=0)
        low.set_title("the lower panel's title")
        stacked.subplots_adjust(hspace=0.3)
        widgets._png(stacked)
        assert {f["text"] for f in record} >= {"an x label of three lines"}, record
    finally:
        unwatch()
        plt.close("all")


def test_the_figure_text_watch_catches_a_cut_title_and_passes_a_whole_one():
    import io

    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    record = []
    unwatch = build_site.watch_figure_text(record)
    try:
        whole, cut = Figure(figsize=(4, 3)), Figure(figsize=(4, 3))
        whole.add_subplot().set_title("fits on the canvas")
        cut.add_subplot().set_title("a title placed above the top edge", y=1.25)
        for fig in (whole, cut):
            fig.canvas.print_figure(io.BytesIO(), format="png")
        assert [f["text"] for f in record] == ["a title placed above the top edge"]
        assert record[0]["over_px"] > 10
        record.clear()
        cut_view = plt.figure(figsize=(4, 3))
        cut_view.add_subplot().set_xlabel("an x label pushed below the bottom edge", labelpad=120)
        widgets._png(cut_view)  # the slider views' PNG path
        plt.close(cut_view)
        assert [f["text"] for f in record] == ["an x label pushed below the bottom edge"]
    finally:
        unwatch()
    record.clear()
    cut.canvas.print_figure(io.BytesIO(), format="png")
    assert record == [], "unwatch restores matplotlib and attnlib.widgets"
