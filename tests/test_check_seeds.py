"""scripts/check_seeds.py: a claim that holds for one seed only is caught, named by its cell."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "one_seed_claim.ipynb"


def load():
    spec = importlib.util.spec_from_file_location("check_seeds", ROOT / "scripts" / "check_seeds.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_seeds = load()


def test_the_shipped_seed_passes_and_another_fails_at_its_cell():
    passed, msg, _ = check_seeds.run_with_seed(FIXTURE, 1)
    assert passed and msg == "ok"
    passed, msg, _ = check_seeds.run_with_seed(FIXTURE, 2)
    assert not passed
    assert msg.startswith("cell 3: AssertionError: one seed only"), msg


def test_every_lesson_but_00_has_exactly_one_seed_line():
    lessons = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    without = [p.name[:2] for p in lessons if check_seeds.lesson_seed(p) is None]
    assert without == ["00"]


def test_two_seed_lines_are_refused(tmp_path):
    text = FIXTURE.read_text(encoding="utf-8").replace("SEED = 1\\n", "SEED = 1\\nSEED = 2\\n")
    path = tmp_path / "two.ipynb"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="2 `SEED = n` lines"):
        check_seeds.lesson_seed(path)


def test_fresh_seeds_are_distinct_and_avoid_the_lessons_own():
    seeds = check_seeds.draw_seeds(50, avoid={1, 2, 3})
    assert len(set(seeds)) == 50 and not {1, 2, 3} & set(seeds)


def test_bad_arguments_name_the_argument(capsys):
    with pytest.raises(SystemExit):
        check_seeds.main(["--seeds", "0"])
    assert "--seeds must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="--lessons: no lesson numbered 42"):
        check_seeds.main(["--lessons", "42"])


def test_a_child_that_dies_before_any_cell_is_run_once_more(monkeypatch):
    """A kernel that fails to start is not a failed claim: one retry, and the message says so."""
    import subprocess
    from types import SimpleNamespace

    calls = []

    def fake_run(cmd, **kw):
        calls.append(cmd)
        if len(calls) == 1:
            return SimpleNamespace(returncode=1, stdout="", stderr="Traceback\nRuntimeError: Kernel didn't respond\n")
        return SimpleNamespace(returncode=0, stdout='[true, "ok", 1.0]\n', stderr="")

    monkeypatch.setattr(subprocess, "run", fake_run)
    passed, msg, _ = check_seeds.run_apart(FIXTURE, 2)
    assert passed and len(calls) == 2
    assert "second try" in msg and "Kernel didn't respond" in msg
    calls.clear()
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: SimpleNamespace(returncode=1, stdout="", stderr="boom"))
    passed, msg, _ = check_seeds.run_apart(FIXTURE, 2)
    assert not passed and msg == "the run itself failed twice (exit 1: boom)"
