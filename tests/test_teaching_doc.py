"""docs/teaching.md stays true: its 50-minute plan adds up (rows plus switching time), takes each
lesson's length from the one timing table (scripts/add_navigation.py MINUTES) and names its cuts, the
JupyterLab commands it cites exist in the pinned JupyterLab, and every lesson has the collapsed
instructor-notes section it points to, with the same timing."""

from __future__ import annotations

import copy
import importlib.util
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
# | 4–13 | `01-intuition.ipynb` | 15 | what to show | what is cut |
PLAN_ROW = re.compile(r"^\|\s*(\d+)–(\d+)\s*\|\s*`(\d\d-[a-z0-9-]+\.ipynb)`\s*\|\s*(\d+)\s*\|([^|]*)\|([^|]*)\|\s*$",
                      re.M)
NOTES_MARK = "> **Instructor notes**"
_spec = importlib.util.spec_from_file_location("add_navigation", ROOT / "scripts" / "add_navigation.py")
NAV = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(NAV)


def plan(doc: str = DOC) -> list[tuple[int, int, str, int, str, str]]:
    """(start, end, lesson, full minutes, what to show, what is cut) per row of the 50-minute plan."""
    return [(int(a), int(b), name, int(full), show.strip(), cut.strip())
            for a, b, name, full, show, cut in PLAN_ROW.findall(doc)]


def switch_minutes(doc: str = DOC) -> int:
    m = re.search(r"Switching notebooks costs (\d+) minutes? each time", doc)
    assert m, "the plan must state the minutes a notebook switch costs"
    return int(m.group(1))


def plan_problems(doc: str) -> list[str]:
    """Why the doc's 50-minute plan does not add up (empty when it does)."""
    rows, switch, out = plan(doc), switch_minutes(doc), []
    if not rows:
        return ["no plan table found"]
    if rows[0][0] != 0 or rows[-1][1] != 50:
        out.append(f"the plan runs {rows[0][0]}–{rows[-1][1]}, not 0–50")
    out += [f"{prev[2]} → {nxt[2]}: a gap of {nxt[0] - prev[1]} min, not the {switch} a switch costs"
            for prev, nxt in itertools.pairwise(rows) if nxt[0] - prev[1] != switch]
    for a, b, name, full, show, cut in rows:
        if full != NAV.MINUTES[name[:2]]:
            out.append(f"{name}: Full says {full}, MINUTES says {NAV.MINUTES[name[:2]]}")
        if not 0 < b - a <= NAV.MINUTES[name[:2]]:
            out.append(f"{name}: {b - a} minutes in the plan, more than the whole lesson or none")
        if b - a < NAV.MINUTES[name[:2]] and not cut:
            out.append(f"{name}: shown for {b - a} of {NAV.MINUTES[name[:2]]} minutes with no cut named")
        if not show:
            out.append(f"{name}: nothing to show")
    shown, switching = sum(b - a for a, b, *_ in rows), switch * (len(rows) - 1)
    if f"Shown: {shown} minutes; switching: {switching} minutes." not in doc:
        out.append(f"the doc must say 'Shown: {shown} minutes; switching: {switching} minutes.'")
    return out


def test_plan_adds_up_to_fifty_minutes_with_switching():
    assert plan_problems(DOC) == []


def test_plan_check_fails_on_a_plan_that_does_not_add_up():
    """The check above can fail: a row one minute longer, a Full that is not the lesson's, a cut left out."""
    row = "| 4–13 | `01-intuition.ipynb` | 15 |"
    assert row in DOC
    assert any("gap" in p for p in plan_problems(DOC.replace(row, "| 4–14 | `01-intuition.ipynb` | 15 |")))
    assert any("MINUTES says" in p for p in plan_problems(DOC.replace(row, "| 4–13 | `01-intuition.ipynb` | 9 |")))
    first = plan()[0]
    no_cut = DOC.replace(first[5], " ", 1)
    assert any("no cut named" in p for p in plan_problems(no_cut))


def test_plan_visits_or_names_lessons_00_to_08_once_each():
    planned = [name for _, _, name, *_ in plan()]
    left = re.search(r"Left out of the 50 minutes: ([^\n]+(?:\n[^\n]+)?)", DOC)
    assert left, "the doc must name the lessons the 50-minute plan leaves out"
    cut = re.findall(r"`(\d\d-[a-z0-9-]+\.ipynb)`", left.group(1))
    names = planned + cut
    assert sorted(n[:2] for n in names) == [f"{i:02d}" for i in range(9)]
    if LESSONS:
        assert sorted(names) == [p.name for p in LESSONS if p.name[:2] <= "08"]


def test_total_and_ninety_minute_figures_follow_minutes():
    total = sum(NAV.MINUTES[f"{i:02d}"] for i in range(9))
    assert f"Lessons 00–08 in full take {total} minutes" in DOC
    ninety = 50 + switch_minutes() + NAV.MINUTES["05"]
    assert f"add lesson 05 in full after lesson 04 ({NAV.MINUTES['05']} minutes and one more switch): {ninety}" in DOC
    assert f"which leaves {90 - ninety} for questions" in DOC
    assert f"(`09-check-your-attention.ipynb`, {NAV.MINUTES['09']} minutes)" in DOC
    assert f"(`10-todays-models.ipynb`, {NAV.MINUTES['10']} minutes) is outside the 50-minute plan" in DOC


def test_lessons_notes_and_timings_agree_with_minutes():
    """Every lesson: notes in their own collapsed section at the end, *Timing:* and 'What you need' = MINUTES."""
    if not LESSONS:
        pytest.skip("no lessons in notebooks/ yet")
    problems = [p for path in LESSONS for p in NAV.notes_problems(json.loads(path.read_text(encoding="utf-8")), path.name)]
    assert problems == []


def test_notes_check_fails_when_notes_are_visible_or_timings_disagree():
    nb = json.loads((ROOT / "notebooks" / "01-intuition.ipynb").read_text(encoding="utf-8"))
    assert NAV.notes_problems(nb, "01-intuition.ipynb") == []
    unfolded = copy.deepcopy(nb)
    del unfolded["cells"][-2]["metadata"][NAV.COLLAPSED]
    assert any("lacks" in p for p in NAV.notes_problems(unfolded, "01-intuition.ipynb"))
    inside = copy.deepcopy(nb)  # notes back above the summary, the way they were
    inside["cells"].insert(3, inside["cells"].pop())
    assert NAV.notes_problems(inside, "01-intuition.ipynb")
    retimed = copy.deepcopy(nb)
    retimed["cells"][-1]["source"] = "".join(retimed["cells"][-1]["source"]).replace("15 minutes", "7 minutes")
    assert any("*Timing:* 15 minutes" in p for p in NAV.notes_problems(retimed, "01-intuition.ipynb"))


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
    """The self-paced sizing: the kernel CPU columns' sums and the busy cores they give at the stated press rate."""
    rows = re.findall(r"^\| \d\d [a-z' -]+ \| [\d.]+ s \| ([\d.]+) s \| ([\d.]+) s \| [\d–]+ MB \|$", DOC, re.M)
    assert len(rows) == 11, "one row per lesson 00-10"
    store, none = (sum(float(r[i]) for r in rows) for i in (0, 1))
    said = re.search(r"the sum of the column above: ([\d.]+) s\s+with the store, ([\d.]+) s without", DOC)
    assert said and [float(x) for x in said.groups()] == [round(store, 1), round(none, 1)]
    rate = re.search(r"presses a slider\s+(\d\.\d)–(\d\.\d) times a minute", DOC)
    per_press = re.search(r"([\d.]+) CPU-seconds per slider\s+press with the store \(([\d.]+) s without\)", DOC)
    assert rate and per_press, "the doc must state the press rate and CPU per press behind its busy-core estimate"
    r_low, r_high = (float(r) for r in rate.groups())
    with_store, without = (float(x) for x in per_press.groups())

    def cores(run_all, per, r):  # 50 learners, a 50-minute session
        return 50 * (run_all + per * r * 50) / 3000

    assert round(cores(store, with_store, r_low)) == round(cores(store, with_store, r_high)) == 1
    assert "≈ 1 busy core on average with the store" in DOC
    low, high = cores(none, without, r_low), cores(none, without, r_high)
    assert f"≈ {low:.1f}–{high:.1f} cores without" in DOC, (low, high)


def test_add_navigation_puts_the_notes_last_and_folds_them():
    """Rewriting the links keeps the notes after the bottom links and restores a lost fold."""
    nb = json.loads((ROOT / "notebooks" / "01-intuition.ipynb").read_text(encoding="utf-8"))
    moved = copy.deepcopy(nb)
    head, notes = moved["cells"][-2:]
    del head["metadata"][NAV.COLLAPSED]
    moved["cells"] = [*moved["cells"][:3], head, notes, *moved["cells"][3:-2]]  # notes near the top, unfolded
    assert NAV.notes_problems(moved, "01-intuition.ipynb")
    text = "<!-- generated by scripts/add_navigation.py; do not edit -->\nlinks"
    fixed = NAV.with_navigation(moved, text)
    assert [c["id"] for c in fixed["cells"][-3:]] == ["nav-bottom", head["id"], notes["id"]]
    assert NAV.notes_problems(fixed, "01-intuition.ipynb") == []
