#!/usr/bin/env python3
"""How tall is each figure's smallest text where it is shown? Runs lessons as the site build does
(every inline figure and every slider state) and prints, per figure, its smallest text in CSS px
when shown at most WIDTH px wide (font size in pt × dpi / 72, times the shrink factor).

    python scripts/figure_text.py notebooks/03-*.ipynb              # at 1054 px (a projector)
    python scripts/figure_text.py --width 358 --goal 9 notebooks/03-*.ipynb

Exit code 1 when a figure's smallest text is below --goal px.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import build_site  # scripts/build_site.py: run as a script, this file's folder is on sys.path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--width", type=float, default=1054.0, help="CSS px the figure may take (default 1054)")
    parser.add_argument("--goal", type=float, default=14.0, help="smallest text allowed, CSS px (default 14)")
    parser.add_argument("--json", type=Path, help="also write every entry here")
    args = parser.parse_args(argv)
    entries = []
    with tempfile.TemporaryDirectory(prefix="figure-text-") as tmp:
        for path in args.notebooks:
            work = Path(tmp) / path.stem
            build_site.run_lesson_apart(path, work)
            sizes = json.loads((work / "figure_sizes.json").read_text(encoding="utf-8"))
            for found in json.loads((work / "figure_text.json").read_text(encoding="utf-8")):
                print(f"✗ {path.name}: text outside its figure by {found['over_px']} px: {found['text']!r} "
                      f"(figure {found['figure']!r})")
            entries += [{"lesson": path.name, **e} for e in sizes]
    if args.json:
        args.json.write_text(json.dumps(entries, indent=1), encoding="utf-8")
    worst = {}
    for e in entries:
        key = (e["lesson"], e["source"], e["figure"])
        px = build_site.smallest_text_px(e, args.width)
        if key not in worst or px < worst[key][0]:
            worst[key] = (px, e)
    failing = 0
    for (lesson, source, figure), (px, e) in sorted(worst.items()):
        flag = "  " if px >= args.goal else "✗ "
        failing += px < args.goal
        print(f"{flag}{px:5.1f} px  {lesson} {source:6} {e['width_px']:5d} px wide, {e['min_pt']:.1f} pt "
              f"{e['min_text']!r} in {figure!r}")
    print(f"{failing} of {len(worst)} figures have text below {args.goal} px at {args.width:.0f} px")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
