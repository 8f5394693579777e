"""How many code characters fit on one editor line in JupyterLab's Presentation Mode, and which lesson
code cells still scroll sideways there.

    python benchmarks/bench_code_width.py                       # 1280x720, every lesson in notebooks/
    python benchmarks/bench_code_width.py --lessons 01 03 05 --width 1280 --height 720 --json
    python benchmarks/bench_code_width.py --notebooks DIR       # the lessons in DIR instead (a before/after)

Starts JupyterLab (tests/browser/lab_harness.py) and headless Debian Chromium, opens each notebook,
turns on View → Appearance → Presentation Mode, hides the left side panel (Ctrl+B, as docs/teaching.md
asks) and measures, without running any cell:

* on a probe notebook of one-line cells of 90–120 characters: the longest line whose editor does not
  scroll sideways (scroll width ≤ client width), with line numbers off and on;
* per lesson: the code cells whose editor scrolls sideways, and the longest code line.

This is the measurement behind ``line-length`` in notebooks/ruff.toml. Skipped (exit 0) without
chromium or playwright.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))

PROBE_LENGTHS = range(90, 121)

# JupyterLab renders a cell's editor only once it comes into view: scroll to each and wait for it.
EDITORS = """async () => {
  const rows = [];
  for (const cell of document.querySelectorAll('.jp-Notebook .jp-CodeCell')) {
    cell.scrollIntoView();
    if (cell.querySelector('.jp-InputPlaceholder')) {  // input hidden (source_hidden): no editor shown
      rows.push({hidden: true, scrolls: false, longest: 0});
      continue;
    }
    let s = null;
    for (let i = 0; i < 100 && !(s = cell.querySelector('.cm-scroller')); i++) {
      await new Promise(r => setTimeout(r, 50));
    }
    if (!s) throw new Error('a code cell never rendered its editor');
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const lines = [...cell.querySelectorAll('.cm-line')].map(l => l.textContent.length);
    rows.push({scrolls: s.scrollWidth > s.clientWidth, longest: Math.max(0, ...lines)});
  }
  return rows;
}"""

STATE = """() => {
  const line = document.querySelector('.jp-Notebook .jp-CodeCell .cm-line');
  const left = document.querySelector('#jp-left-stack');
  const s = document.querySelector('.jp-Notebook .jp-CodeCell .cm-scroller');
  return {font: getComputedStyle(line).font, leftPanelPx: left ? left.offsetWidth : 0,
          editorPx: s.clientWidth};
}"""


def probe_notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    # "# 104 xxxx…x|": each line says its own length
    nb.cells = [nbformat.v4.new_code_cell(f"# {n} " + "x" * (n - 4 - len(str(n))) + "|") for n in PROBE_LENGTHS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))


def presentation(page, on: bool) -> None:
    """View → Appearance → Presentation Mode, like a person would; then hide the left panel if shown."""
    page.locator(".lm-MenuBar-item", has_text="View").click()
    page.locator(".lm-Menu-item", has_text="Appearance").hover()
    page.locator('.lm-Menu-item[data-command="application:toggle-presentation-mode"]').click()
    page.wait_for_timeout(500)
    if on and page.evaluate("() => (document.querySelector('#jp-left-stack')?.offsetWidth || 0) > 0"):
        page.locator(".jp-Notebook").first.click()
        page.keyboard.press("Escape")
        page.keyboard.press("Control+b")
        page.wait_for_timeout(500)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lessons", nargs="+", default=[], help="lesson numbers, e.g. 01 03 (default: all)")
    parser.add_argument("--notebooks", type=Path, default=None, help="take the lessons from this folder")
    parser.add_argument("--width", type=int, default=1280, help="viewport width in CSS px (default 1280)")
    parser.add_argument("--height", type=int, default=720, help="viewport height in CSS px (default 720)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON on the last line")
    args, _ = parser.parse_known_args(argv)  # run_all.py forwards --repeats/--warmup: not used here
    from lab_harness import CHROMIUM_FLAGS, browser_missing, start_lab

    if browser_missing("code_width", args.json):
        return 0
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_code_width") as tmp:
        lab = start_lab(Path(tmp))
        try:
            nb_dir = lab.root / "notebooks"
            if args.notebooks is not None:
                for f in sorted(args.notebooks.glob("[0-9][0-9]-*.ipynb")):
                    shutil.copy(f, nb_dir / f.name)
            probe_notebook(nb_dir / "zz-probe.ipynb")
            lessons = sorted(p.name for p in nb_dir.glob("[0-9][0-9]-*.ipynb")
                             if not args.lessons or p.name[:2] in args.lessons)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_FLAGS)
                page = browser.new_page(viewport={"width": args.width, "height": args.height})
                for name in ["zz-probe.ipynb", *lessons]:
                    page.goto(f"{lab.url}/lab/tree/notebooks/{name}?reset&token={lab.token}")
                    page.wait_for_selector(".jp-Notebook .jp-CodeCell .cm-line", timeout=60_000)
                    page.wait_for_timeout(1000)
                    presentation(page, True)
                    state = page.evaluate(STATE)
                    editors = page.evaluate(EDITORS)
                    if name == "zz-probe.ipynb":
                        fits = max((e["longest"] for e in editors if not e["scrolls"]), default=0)
                        page.keyboard.press("Escape")
                        page.keyboard.press("Shift+L")  # line numbers on, every cell
                        page.wait_for_timeout(500)
                        fits_ln = max((e["longest"] for e in page.evaluate(EDITORS) if not e["scrolls"]), default=0)
                        page.keyboard.press("Shift+L")
                        print(f"{state['font']}, editor {state['editorPx']} px, left panel {state['leftPanelPx']} px: "
                              f"{fits} characters fit ({fits_ln} with line numbers)", flush=True)
                        rows.append({"benchmark": "code_width", "figure": f"characters per code line at "
                                     f"{args.width}x{args.height}, Presentation Mode, left panel hidden",
                                     "value": fits, "with_line_numbers": fits_ln, "font": state["font"],
                                     "editor_px": state["editorPx"], "met": None})
                    else:
                        hidden = sum(bool(e.get("hidden")) for e in editors)
                        scrolling = [e for e in editors if e["scrolls"]]
                        longest = max((e["longest"] for e in editors), default=0)
                        print(f"{name:40s} {len(scrolling):3d} of {len(editors):3d} code cells scroll sideways; "
                              f"longest line {longest} ({hidden} with input hidden)", flush=True)
                        rows.append({"benchmark": "code_width", "figure": f"{name[:-6]}: code cells that scroll",
                                     "value": len(scrolling), "cells": len(editors), "hidden": hidden,
                                     "longest_line": longest,
                                     "met": None})
                    presentation(page, False)
                    lab.shutdown_kernels()
                browser.close()
        finally:
            lab.stop()
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
