"""docs/teaching.md stays true: its 50-minute plan is contiguous and names the real lessons,
the JupyterLab commands it cites exist in the pinned JupyterLab, and every lesson has the
instructor-notes cell it points to."""

from __future__ import annotations

import itertools
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
LESSON = re.compile(r"^\d\d-[a-z0-9-]+\.ipynb$")
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if LESSON.match(p.name))
PLAN_ROW = re.compile(r"^\|\s*(\d+)–(\d+)\s*\|\s*`(\d\d-[a-z0-9-]+\.ipynb)`", re.M)
NOTES_MARK = "> **Instructor notes**"


def plan() -> list[tuple[int, int, str]]:
    return [(int(a), int(b), name) for a, b, name in PLAN_ROW.findall(DOC)]


def test_plan_covers_fifty_minutes_without_gaps():
    rows = plan()
    assert rows, "no plan table found"
    assert rows[0][0] == 0 and rows[-1][1] == 50
    assert all(prev[1] == nxt[0] for prev, nxt in itertools.pairwise(rows))
    assert all(a < b for a, b, _ in rows)


def test_plan_visits_lessons_00_to_08_once_each():
    names = [name for *_, name in plan()]
    assert sorted(n[:2] for n in names) == [f"{i:02d}" for i in range(9)]


def test_plan_names_the_lessons_that_exist():
    if not LESSONS:
        pytest.skip("no lessons in notebooks/ yet")
    assert sorted(name for *_, name in plan()) == [p.name for p in LESSONS if p.name[:2] <= "08"]


def test_every_lesson_has_the_instructor_notes_the_doc_points_to():
    if not LESSONS:
        pytest.skip("no lessons in notebooks/ yet")
    assert NOTES_MARK in DOC
    missing = []
    for path in LESSONS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        if not any(c["cell_type"] == "markdown" and "".join(c["source"]).startswith(NOTES_MARK) for c in cells):
            missing.append(path.name)
    assert missing == [], f"lessons without a cell starting {NOTES_MARK!r}: {missing}"


def test_cited_jupyterlab_commands_exist():
    commands = set(re.findall(r"`([a-z]+:[a-z-]+)`", DOC))
    assert "application:toggle-presentation-mode" in commands
    static = Path(sys.prefix) / "share" / "jupyter" / "lab" / "static"
    bundle = "".join(p.read_text(encoding="utf-8", errors="replace") for p in static.glob("*.js"))
    assert [c for c in commands if c not in bundle] == []


def test_site_command_is_the_one_course_py_offers():
    assert "python3 course.py site" in DOC
    assert '"site": site' in (ROOT / "course.py").read_text(encoding="utf-8")


def _presentation_menu_path() -> list[str]:
    """The menu labels above application:toggle-presentation-mode in the pinned JupyterLab's settings schema."""
    schemas = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    menus = json.loads((schemas / "@jupyterlab" / "application-extension" / "commands.json").read_text())

    def find(items, path):
        for item in items:
            if item.get("command") == "application:toggle-presentation-mode":
                return path
            sub = item.get("submenu")
            if sub and (found := find(sub.get("items", []), [*path, sub.get("label", "")])):
                return found
        return None

    for menu in menus["jupyter.lab.menus"]["main"]:
        if (found := find(menu.get("items", []), [menu["id"]])):
            return found
    raise AssertionError("application:toggle-presentation-mode is in no menu of the pinned JupyterLab")


def test_presentation_mode_menu_path_is_the_pinned_jupyterlabs():
    assert _presentation_menu_path() == ["jp-mainmenu-view", "Appearance"]
    texts = {"docs/teaching.md": DOC, "README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    texts |= {f"notebooks/{p.name}": p.read_text(encoding="utf-8") for p in LESSONS}
    wrong, cited = [], 0
    for name, text in texts.items():
        for m in re.finditer(r"((?:\*\*)?[A-Z][a-z]+(?:\*\*)? → )+(?:\*\*)?Presentation Mode", text):
            cited += 1
            if m.group(0).replace("**", "") != "View → Appearance → Presentation Mode":
                wrong.append((name, m.group(0)))
    assert cited >= 3 and wrong == []


def test_self_paced_estimate_adds_up():
    """The self-paced sizing: the Run All CPU column's sum and the busy cores it gives at the stated press rate."""
    cpu = [float(x) for x in re.findall(r"^\| \d\d [a-z -]+ \| [\d.]+ s \| ([\d.]+) s \| \d+ MB \|$", DOC, re.M)]
    assert len(cpu) == 9 and f"the sum of the column above: {sum(cpu):.1f} s" in DOC and sum(cpu) <= 45
    rate = re.search(r"presses a slider\s+(\d\.\d)–(\d\.\d) times a minute", DOC)
    assert rate, "the doc must state the slider-press rate behind its busy-core estimate"
    cores = [50 * (45 + float(r) * 50 * 1.0) / 3000 for r in rate.groups()]  # 50 learners, 50 minutes, 1 CPU-s a press
    assert [round(c) for c in cores] == [2, 3] and "2–3 busy cores" in DOC
