"""The site's text and the build a learner runs (issue 22, items 5, 7 and 8).

- `python3 course.py site` installs only what the build needs (requirements-site.txt: the lessons'
  runtime set plus the site builder), lets pip cache the model package, says what it installs
  before pip goes quiet, and does not print JupyterLab's settings path; `course.py setup` (CI) keeps
  installing the developer set.
- The build logs one line per lesson, in lesson order, and says "no sliders" rather than "0 ...".
- On the pages: code folded behind "Show code" (open where the cell is tagged site-show-code),
  the slider hint fitted to touch or keyboard, "Contents" going to the index, and the interview path
  (index box, lesson 06's question list with anchors that exist, its revision-sheet link).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


course = load("course_for_site_text", ROOT / "course.py")
build_site = load("build_site_for_site_text", ROOT / "scripts" / "build_site.py")
FIXTURES = ROOT / "tests" / "fixtures"
LESSON_00 = ROOT / "notebooks" / "00-start-here.ipynb"
LESSON_06 = ROOT / "notebooks" / "06-interview-questions.ipynb"


def pins(path: Path) -> dict[str, str]:
    """{name: version} of a requirements file, following its -r includes."""
    found = {}
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-r "):
            found.update(pins(path.parent / line[3:].strip()))
            continue
        name, _, version = line.partition("==")
        assert version, f"{path.name}: {line!r} is not pinned"
        found[name.lower().replace("_", "-")] = version
    return found


# ---- the requirement sets -------------------------------------------------------------------------


TEST_TOOLS = {"pytest", "playwright", "ruff", "hypothesis", "nbval"}


def test_site_set_is_the_runtime_set_plus_the_builder_and_inside_the_dev_set():
    runtime, site, dev = (pins(ROOT / f) for f in ("requirements.txt", "requirements-site.txt", "requirements-dev.txt"))
    assert runtime.items() <= site.items(), "the site set must install the lessons' runtime pins unchanged"
    assert site.items() <= dev.items(), "every site pin must be in the developer set, at the same version"
    assert not TEST_TOOLS & site.keys(), f"test tools in the site set: {TEST_TOOLS & site.keys()}"
    assert TEST_TOOLS <= dev.keys()
    assert course.KINDS["site"][0] == "requirements-site.txt" and course.KINDS["dev"][0] == "requirements-dev.txt"
    assert all(course.KINDS[k][0] in course.REQ_FILES for k in course.KINDS), "a set-up file the stamp does not watch"


def test_site_set_covers_every_package_build_site_imports():
    """Each third-party module build_site.py imports is pinned in the site set or required by a pinned package."""
    tree = ast.parse((ROOT / "scripts" / "build_site.py").read_text(encoding="utf-8"))
    modules = {(n.module if isinstance(n, ast.ImportFrom) else a.name).split(".")[0]
               for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
               for a in (n.names if isinstance(n, ast.Import) else [n])}
    modules |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
                and n.module.split(".")[0] == "latex2mathml"}
    third_party = {m for m in modules - {"__future__"} if m not in sys.stdlib_module_names}
    assert {"nbformat", "nbclient", "nbconvert", "bs4", "jinja2"} <= third_party, third_party
    site = pins(ROOT / "requirements-site.txt")
    required = set(site)
    for name in site:
        for req in metadata.requires(name) or []:
            if "extra ==" not in req:
                required.add(re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0].lower().replace("_", "-"))
    dists = metadata.packages_distributions()
    for module in third_party:
        names = {d.lower().replace("_", "-") for d in dists.get(module, [module])}
        assert names & required, f"build_site imports {module} ({names}), which the site set does not install"


# ---- what course.py runs ---------------------------------------------------------------------------


@pytest.fixture
def fake_venv(tmp_path, monkeypatch):
    """course.py's set-up against a throwaway .venv: commands are recorded, not run."""
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    calls = []
    for name in course.REQ_FILES:  # the set-up's stamp hashes these
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    monkeypatch.setattr(course, "ROOT", tmp_path)
    monkeypatch.setattr(course, "VENV", venv)
    monkeypatch.setattr(course, "PY", venv / "bin" / "python")
    monkeypatch.setattr(course, "must", lambda *cmd, **kw: calls.append([str(c) for c in cmd]))
    monkeypatch.setattr(course, "pip_check", lambda pip: calls.append(["pip check"]))
    monkeypatch.setattr(course, "silence_news_popup", lambda: calls.append(["news override"]))
    return calls


def test_site_setup_installs_the_site_set_caches_the_model_and_says_so_first(fake_venv, capsys):
    course.setup("site")
    out = capsys.readouterr().out
    installs = [c for c in fake_venv if "install" in c]
    assert installs[0][-2:] == ["-r", "requirements-site.txt"], installs[0]
    model = [c for c in installs if c[-1] == course.MODEL_PACKAGE]
    assert len(model) == 1 and "--no-deps" in model[0] and "--no-cache-dir" not in model[0], model
    assert ["news override"] not in fake_venv, "the site build never starts JupyterLab: no settings override"
    said = out.splitlines()
    assert any("requirements-site.txt" in line and "minute" in line for line in said), out
    assert not any("overrides.json" in line or "settings" in line for line in said), out
    # a second set-up with the same files installs nothing; a developer set-up does (and covers the site's)
    fake_venv.clear()
    course.setup("site")
    assert fake_venv == []
    course.setup("dev")
    assert ["-r", "requirements-dev.txt"] == [c for c in fake_venv if "install" in c][0][-2:]
    assert ["news override"] in fake_venv
    fake_venv.clear()
    course.setup("site")
    course.setup("lab")
    assert fake_venv == [], "a finished developer set-up covers the site and lab set-ups"


def test_lab_setup_after_a_site_setup_still_silences_the_news_popup(fake_venv):
    course.setup("site")
    fake_venv.clear()
    course.setup("lab")
    assert ["news override"] in fake_venv and [c for c in fake_venv if "install" in c][0][-1] == "requirements.txt"


def test_commands_use_the_right_set(monkeypatch):
    kinds = []
    monkeypatch.setattr(course, "setup", lambda kind="dev": kinds.append(kind))
    monkeypatch.setattr(course, "run", lambda *cmd, **kw: 0)
    monkeypatch.setattr(course, "must", lambda *cmd, **kw: None)
    course.site([])
    course.setup_command([])
    course.lab([])
    assert kinds == ["site", "dev", "lab"]


def test_setup_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="kind: expected one of"):
        course.setup("everything")


def test_silence_news_popup_uses_postbuilds_code_and_prints_nothing(tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(course, "PY", Path(sys.executable))
    prefix = tmp_path / "prefix"
    text = (ROOT / "binder" / "postBuild").read_text().replace("Path(sys.prefix)", f"Path({str(prefix)!r})")
    fake_root = tmp_path / "root"
    (fake_root / "binder").mkdir(parents=True)
    (fake_root / "binder" / "postBuild").write_text(text)
    monkeypatch.setattr(course, "ROOT", fake_root)
    course.silence_news_popup()
    assert (prefix / "share" / "jupyter" / "lab" / "settings" / "overrides.json").exists()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


# ---- the build's log -------------------------------------------------------------------------------


def test_lesson_line_says_no_sliders_and_counts_the_rest():
    assert build_site.lesson_line("00-x.ipynb", {}, 3.2) == "00-x.ipynb: ran in 3 s; no sliders, no self-checks"
    records = {"a": {"kind": "sliders", "images": ["p"] * 36}, "b": {"kind": "numeric"}, "c": {"kind": "choice"}}
    line = build_site.lesson_line("01-y.ipynb", records, 12.0)
    assert line == "01-y.ipynb: ran in 12 s; 1 slider view (36 pictures drawn), 2 self-checks"
    assert "0 slider" not in build_site.lesson_line("z", {"b": {"kind": "numeric"}}, 1)


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    """Two fixtures built side by side: the slider demo (slow: 36 pictures) first, a notebook without widgets
    (fast) second, and a small lesson with navigation, a tagged cell and a plain one."""
    work = tmp_path_factory.mktemp("site-text")
    nb = nbformat.v4.new_notebook()
    nav = nbformat.v4.new_markdown_cell("[← 00 · Start](00-start-here.ipynb) | [Contents](00-start-here.ipynb)")
    nav.metadata["tags"] = ["navigation"]
    shown = nbformat.v4.new_code_cell("def attention(x):\n    return x\n\n\nprint(attention(41) + 1)")
    shown.metadata["tags"] = [build_site.SHOW_CODE_TAG]
    folded = nbformat.v4.new_code_cell("y = 2\nassert y == 2\nprint('y is', y)")
    nb.cells = [nbformat.v4.new_markdown_cell("# 01 · Fold demo\n\n[Start](00-start-here.ipynb)"), nav, shown, folded,
                nbformat.v4.new_code_cell("")]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i}"
    demo = work / "01-fold-demo.ipynb"
    nbformat.write(nb, demo)
    nbformat.write(nbformat.v4.new_notebook(), work / "00-start-here.ipynb")  # linked to, not built
    log = []
    out = work / "site"
    build_site.build([FIXTURES / "slider_demo.ipynb", FIXTURES / "one_seed_claim.ipynb", demo], out, jobs=2,
                     log=log.append)
    return out, log


def test_build_logs_one_line_per_lesson_in_order_with_no_sliders(small_site):
    _, log = small_site
    assert log[0].startswith("Building 3 lesson pages") and "in lesson order" in log[0], log[0]
    lines = [line for line in log if re.match(r"\[\d/3\] ", line)]
    assert [line.split(":")[0] for line in lines] == [
        "[1/3] slider_demo.ipynb", "[2/3] one_seed_claim.ipynb", "[3/3] 01-fold-demo.ipynb"], log
    assert "1 slider view (36 pictures drawn), 1 self-check" in lines[0]
    assert lines[1].endswith("no sliders, no self-checks") and "0 slider" not in " ".join(log)


# ---- the pages -------------------------------------------------------------------------------------


def soup_of(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), features="html.parser")


def test_code_is_folded_except_tagged_cells_and_outputs_stay_outside(small_site):
    out, _ = small_site
    soup = soup_of(out / "01-fold-demo.html")
    cells = soup.select("div.jp-CodeCell")
    folds = [c.find("details", class_="code-fold") for c in cells]
    assert folds[0] is not None and folds[0].has_attr("open"), "the tagged cell starts unfolded"
    assert folds[1] is not None and not folds[1].has_attr("open"), "an untagged cell starts folded"
    assert folds[2] is None, "an empty cell gets no fold"
    for cell, fold in zip(cells[:2], folds[:2], strict=True):
        assert fold.find(class_="jp-InputArea-editor") is not None, "the code is inside the fold"
        outputs = cell.select(".jp-OutputArea-output")
        assert outputs and not any(o.find_parent("details") for o in outputs), "outputs stay in view"
        summary = fold.find("summary")
        assert fold.contents[0] is summary and "Show code" in summary.get_text()
    assert "(3 lines)" in folds[1].find("summary").get_text() and "(5 lines)" in folds[0].find("summary").get_text()
    css = (out / build_site.SITE_CSS).read_text(encoding="utf-8")
    assert "details.code-fold:not([open]) > summary .fold-hide" in css


def test_contents_goes_to_the_index_and_other_lesson_links_stay(small_site):
    out, _ = small_site
    soup = soup_of(out / "01-fold-demo.html")
    nav = {a.get_text(strip=True): a["href"] for a in soup.select(".celltag_navigation a")}
    assert nav == {"← 00 · Start": "00-start-here.html", "Contents": "index.html"}
    assert [a["href"] for a in soup.select(".jp-RenderedMarkdown a") if a.get_text() == "Start"] == ["00-start-here.html"]


def test_slider_hint_fits_the_device(small_site):
    out, _ = small_site
    hint = soup_of(out / "slider_demo.html").select_one(".sv .sv-hint")
    touch, keys = hint.select_one(".on-touch").get_text(), hint.select_one(".on-keys").get_text()
    assert "tap" in touch and "arrow keys" not in touch
    assert all(k in keys for k in ("arrow keys", "Home", "End", "Page Up", "Page Down"))
    css = (out / build_site.SITE_CSS).read_text(encoding="utf-8")
    coarse = re.search(r"@media \(pointer: coarse\) \{(.*?)\n\}", css, re.S)
    assert coarse and ".sv-hint .on-keys { display: none; }" in coarse.group(1)
    assert ".sv-hint .on-touch { display: none; }" in css.replace(coarse.group(0), "")


def test_index_has_the_interview_box_only_with_lesson_06(small_site):
    out, _ = small_site
    assert "Preparing for an interview" not in (out / "index.html").read_text(encoding="utf-8")
    box = BeautifulSoup(build_site.interview_box({"00-start-here.ipynb", "06-interview-questions.ipynb"}),
                        features="html.parser")
    links = {a.get_text(): a["href"] for a in box.find_all("a")}
    assert links["Preparing for an interview? Start here"] == "06-interview-questions.html#questions"
    assert links["one-page revision sheet"] == "06-interview-questions.html#revision-sheet"
    page = build_site.INDEX_PAGE.format(title="t", items="", interview=box)
    assert page.index("Preparing for an interview") < page.index("<ol>"), "the box comes before the lesson list"


# ---- the lessons' text -----------------------------------------------------------------------------


def markdown(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]


def test_lesson_06_question_list_links_every_question_and_the_revision_sheet():
    """The list at the top links each question's heading cell by its cell id (``#cell-id=…``: JupyterLab finds
    the cell in the notebook model even before it is rendered; on the site nbconvert gives the cell's div that
    id); each heading keeps an explicit anchor (``<a id="q3">``) for links from elsewhere."""
    nb = nbformat.read(LESSON_06, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "markdown"]
    text = "\n".join(c.source for c in cells)
    questions = re.findall(r'^## <a id="(q\d+)"></a>Q(\d+)\. ', text, re.M)
    assert [q for q, _ in questions] == [f"q{n}" for _, n in questions] and len(questions) == 14
    assert not re.search(r"^## Q\d+\.", text, re.M), "a question heading without its anchor"
    listing = next(i for i, c in enumerate(cells) if '<a id="questions"></a>' in c.source)
    assert listing <= 2, "the question list must be at the top of the lesson"
    by_id = {c.id: c.source for c in nb.cells}
    linked = re.findall(r"\]\(#cell-id=([\w-]+)\)", cells[listing].source)
    firsts = [by_id[i].split("\n", 1)[0] for i in linked]
    assert [m.group(1) for f in firsts if (m := re.match(r'## <a id="(q\d+)"></a>', f))] == [q for q, _ in questions]
    assert any(f.startswith('## <a id="revision-sheet"></a>') for f in firsts), "no link to the revision sheet"
    assert len(linked) == 17, linked


def test_lesson_06_anchors_resolve_on_the_page():
    """Lesson 06's markdown through the site's exporter and finish_page (no kernel): every #link has a target."""
    nb = nbformat.read(LESSON_06, as_version=4)
    nb.cells = [c for c in nb.cells if c.cell_type == "markdown"]
    page, _ = build_site.OfflineHTMLExporter().from_notebook_node(nb, resources={"widgets": {}})
    page, _ = build_site.finish_page(page, "06", {LESSON_06.name})
    soup = BeautifulSoup(page, features="html.parser")
    targets = [a["href"][1:] for a in soup.find_all("a", href=True) if a["href"].startswith("#")]
    assert len([t for t in targets if t.startswith("cell-id=")]) == 17
    for target in targets:
        assert soup.find(id=target) is not None, f"#{target} has no element with that id on the page"
    for anchor in ("questions", "revision-sheet", "q3"):  # the index's links and links from elsewhere
        assert soup.find(id=anchor) is not None


def test_lesson_06_q3_leads_with_a_one_sentence_answer():
    (q3,) = [c for c in markdown(LESSON_06) if re.search(r"Q3\. Why √d_k, and not d_k\?", c)]
    lead = q3.split("**Model answer.**", 1)[1].split("\n\n", 1)[0]
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", lead.strip()) if s]
    assert len(sentences) == 1 and len(lead.split()) <= 50, lead
    assert "√d_k" in lead and "d_k" in lead


def test_lesson_00_names_the_python_course_py_needs_and_says_where_run_all_applies():
    text = "\n".join(markdown(LESSON_00))
    assert "3.10+" not in text
    needed = re.search(r"sys\.version_info < \(3, (\d+)\)", (ROOT / "course.py").read_text())
    assert needed and f"Python 3.{needed.group(1)} or newer" in text
    run_all = text.index("Run All Cells")
    assert "In JupyterLab" in text[max(0, run_all - 120):run_all]
    assert "course site" in text[run_all:run_all + 300]
    assert "06-interview-questions.ipynb#questions" in text and "Preparing for an interview?" in text
