"""Shared widget wiring: slider views redraw, self-checks grade numbers without evaluating them."""

import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from attnlib import plots, widgets  # noqa: E402


def test_parse_number_accepts_plain_forms_and_rejects_code():
    assert widgets.parse_number("0.25") == 0.25
    assert widgets.parse_number(" 1/8 ") == 0.125
    assert widgets.parse_number("2e-3") == 0.002
    assert widgets.parse_number("12.5%") == 0.125
    assert widgets.parse_number("-3") == -3
    for bad in ["", "abc", "1/0", "__import__('os')", "2**3", "sqrt(64)", "1/2/3"]:
        assert widgets.parse_number(bad) is None, bad


def test_numeric_check_grades_with_tolerance():
    q = widgets.numeric_check("What is sqrt(64)?", 8, rel_tol=0.01, hint="square root")
    assert q.check("8") is True and "Right" in q.feedback.value
    assert q.check("8.05") is True
    assert q.check("9") is False and "square root" in q.feedback.value
    assert q.check("eight") is None


def test_choice_check_feedback_per_option():
    q = widgets.choice_check("Pick", ["a", "b"], correct=1, feedback=["no: a", "yes: b"])
    assert q.check() is None
    assert q.check(0) is False and "no: a" in q.feedback.value
    assert q.check(1) is True and "yes: b" in q.feedback.value
    with pytest.raises(ValueError, match="correct must index options"):
        widgets.choice_check("Pick", ["a"], correct=3)


def test_slider_view_redraws_at_extremes_without_warnings():
    calls = []

    def draw(n):
        calls.append(n)
        return plots.probability_bars([1 / n] * n, title=f"n = {n}")

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        view = widgets.slider_view(draw, n=widgets.int_slider("keys", 1, 6, 3))
        s = view.sliders["n"]
        s.value = s.max
        s.value = s.min
    assert calls == [3, 6, 1]
    assert view.last_figure.axes[0].get_title() == "n = 1"
    view.sliders["n"].value = 6  # a state seen before is shown from the cache, not drawn again
    assert calls == [3, 6, 1]
    assert view.last_figure.axes[0].get_title() == "n = 6"
    png, _ = view.render({"n": 6})
    assert png.startswith(b"\x89PNG")
    assert plt.get_fignums() == []  # figures are closed after display


def test_neighbours_are_one_step_away_and_stay_in_range():
    view = widgets.slider_view(lambda a, b: plots.probability_bars([0.5, 0.5], title=f"{a} {b}"),
                               a=widgets.options_slider("a", [16, 64, 256], 16),
                               b=widgets.float_slider("b", 0.5, 2.0, 2.0, step=0.5))
    assert view.neighbours() == [{"a": 64, "b": 2.0}, {"a": 16, "b": 1.5}]  # 16 has no left, 2.0 no right
    view.sliders["a"].value = 64
    assert {"a": 256, "b": 2.0} in view.neighbours() and {"a": 16, "b": 2.0} in view.neighbours()


def test_prefetch_renders_neighbours_inside_an_event_loop():
    import asyncio
    import threading

    drawn = []

    def draw(n):
        drawn.append(n)
        return plots.probability_bars([1 / n] * n, title=f"n = {n}")

    async def main():
        view = widgets.slider_view(draw, n=widgets.int_slider("keys", 1, 6, 3))
        for _ in range(200):  # the loop is idle: both neighbours get rendered (allow 10 s on a busy machine)
            await asyncio.sleep(0.05)
            if len(drawn) == 3:
                break
        return view

    # a thread of its own: other tests (Playwright's sync API) may leave a loop running in this one
    result = []
    worker = threading.Thread(target=lambda: result.append(asyncio.run(main())))
    worker.start()
    worker.join(timeout=30)
    view = result[0]
    assert drawn == [3, 4, 2]
    view.sliders["n"].value = 4  # a prefetched state: shown without drawing again
    assert drawn == [3, 4, 2] and view.last_figure.axes[0].get_title() == "n = 4"
