"""Figures on a phone (issue 22, items 2 and 3's alt texts), on the site the ``site`` fixture builds.

Every figure the lessons show (inline or a slider state) whose smallest text would be below
PHONE_GOAL_PX (9 CSS px) at PHONE_SHOWN_PX (the content width at a 390 px viewport, measured in
Chromium by tests/browser/test_site_on_a_phone.py) has a phone rendering whose smallest text reaches it;
pages serve those renderings through <picture> sources whose files exist; every static figure's
alt text says what it shows (never "Figure N of …", never an empty "Panel 1: ").
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent


def load_build_site():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_site = load_build_site()
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if build_site.LESSON.match(p.name))


def pages(site: Path) -> dict[str, BeautifulSoup]:
    return {p.stem: BeautifulSoup((site / f"{p.stem}.html").read_text(encoding="utf-8"), features="html.parser")
            for p in LESSONS}


@pytest.fixture(scope="module")
def entries(site) -> list[dict]:
    report = site.parent / "figure_text_sizes.json"
    if not report.exists():
        pytest.skip("site from SITE_PREBUILT: the figure-size report is written only by a build in this session")
    return json.loads(report.read_text(encoding="utf-8"))


def needs_phone(entry: dict) -> bool:
    return build_site.smallest_text_px(entry, build_site.PHONE_SHOWN_PX) < build_site.PHONE_GOAL_PX


def test_every_figure_too_small_on_a_phone_has_a_phone_rendering_that_is_not(entries):
    shown = [e for e in entries if e.get("variant") != "phone"]
    phones = {e["wide"]: e for e in entries if e.get("variant") == "phone"}
    assert shown, "no figure sizes were recorded"
    assert phones, "no phone renderings were made"
    missing, small = [], []
    for e in shown:
        if not needs_phone(e):
            continue
        phone = phones.get(e.get("png"))
        if phone is None:
            missing.append(f"{e['lesson']}: {e['figure']!r} ({e['source']}, {e['width_px']} px wide)")
            continue
        px = build_site.smallest_text_px(phone, build_site.PHONE_SHOWN_PX)
        if px < build_site.PHONE_GOAL_PX:
            small.append(f"{e['lesson']}: {phone['figure']!r}: {phone['min_text']!r} is {px:.2f} px")
    assert missing == [], "figures with no phone rendering:\n" + "\n".join(missing)
    assert small == [], f"phone text below {build_site.PHONE_GOAL_PX} px at {build_site.PHONE_SHOWN_PX} px:\n" + \
        "\n".join(small)
    for e in phones.values():  # each phone rendering fits the goal however it was chosen
        assert build_site.smallest_text_px(e, build_site.PHONE_SHOWN_PX) >= build_site.PHONE_GOAL_PX, e


def test_pages_serve_the_phone_renderings_through_picture_sources(site, entries):
    phone_of = {e["wide"][:20]: e["png"][:20] for e in entries if e.get("variant") == "phone"}
    needing = {e["png"][:20] for e in entries if e.get("variant") != "phone" and needs_phone(e) and e.get("png")}
    served = 0
    for stem, soup in pages(site).items():
        for source in soup.select("picture source"):
            assert source["media"] == build_site.PHONE_MEDIA
            assert (site / source["srcset"]).is_file(), f"{stem}: {source['srcset']} is missing"
            assert source.get("width") and source.get("height")
        for img in soup.select(".jp-OutputArea-output img"):
            name = Path(img["src"]).stem
            if name in needing:
                source = img.find_parent("picture").find("source")
                assert source is not None, f"{stem}: {img['src']} needs a phone rendering on the page"
                assert Path(source["srcset"]).stem == phone_of[name]
                served += 1
        for data in (json.loads(s.string) for s in soup.select(".sv script.sv-data")):
            wide = [Path(data["urls"][i]).stem for i in data["images"]]
            if not any(w in needing for w in wide):
                continue
            assert len(data["phones"]) == len(data["images"]) and data["media"] == build_site.PHONE_MEDIA
            for w, i in zip(wide, data["phones"], strict=True):
                assert (site / data["urls"][i]).is_file()
                if w in needing:
                    assert Path(data["urls"][i]).stem == phone_of[w], f"{stem}: slider state {w} has no phone picture"
                    served += 1
    assert served > 0


def test_phone_pngs_are_the_files_pages_name(site, entries):
    for e in entries:
        if e.get("variant") == "phone":
            found = list(site.rglob(f"{e['png'][:20]}.png"))
            if found:  # (a phone rendering of a state no page shows, e.g. drawn ahead in the live lesson, is not kept)
                assert hashlib.sha256(found[0].read_bytes()).hexdigest() == e["png"]


def test_static_figures_have_alt_texts_from_what_they_show(site):
    bare, empty = [], []
    count = 0
    for stem, soup in pages(site).items():
        for img in soup.select("img"):
            alt = img.get("alt", "")
            count += 1
            if re.search(r"Figure \d+ of", alt) or not alt.strip():
                bare.append(f"{stem}: {alt!r}")
            if re.search(r"Panel \d+: *(\.|\(|$)", alt) or "Plot: ." in alt:
                empty.append(f"{stem}: {alt!r}")
        for img in soup.select(".jp-OutputArea-output img"):
            # a static figure's alt names a panel title, axis or suptitle, and the lesson's words before it
            assert len(img["alt"]) > 40, f"{stem}: {img['alt']!r}"
    assert count > 0
    assert bare == [], "images without a descriptive alt text:\n" + "\n".join(bare)
    assert empty == [], "alt texts with an empty panel title:\n" + "\n".join(empty)


def test_figure_text_names_panels_by_title_or_labels_never_an_empty_title():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2)
    a.set_title("peaked row")
    a.set_xlabel("key")
    b.set_ylabel("entropy (nats)")
    im = b.imshow([[0, 1]])
    fig.colorbar(im, ax=b, label="weight")
    text = build_site.figure_text(fig)
    plt.close(fig)
    assert text == "Panel 1: peaked row (x: key). Panel 2 (y: entropy (nats)). Colour scale: weight"


def test_phone_layout_stacks_panels_and_puts_the_figure_back_exactly():
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5), sharey=True, layout="constrained")
    for i, ax in enumerate(axes):
        ax.plot([0, 1], [0, i])
        ax.set_title(f"panel {i}")
    fig.suptitle("a long figure title that would run past the edges of a phone-wide figure unless it wraps")
    axes[1].plot([0, 1], [1, 0])
    axes[1].legend(["a", "b"], ncols=2, loc="lower right")

    def png():
        out = io.BytesIO()
        fig.savefig(out, format="png", dpi=50)
        return out.getvalue()

    before = png()
    restore = build_site.phone_layout(fig, 5.0)
    fig.canvas.draw()
    boxes = [ax.get_position() for ax in axes]
    assert tuple(fig.get_size_inches())[0] == 5.0
    assert boxes[0].y0 > boxes[1].y1 > boxes[1].y0 > boxes[2].y1, "panels stacked top to bottom in reading order"
    assert all(ax.yaxis._major_tick_kw.get("label1On", True) for ax in axes), "shared y tick labels shown again"
    assert axes[1].get_legend()._ncols == 2
    restore()
    assert png() == before, "the figure is put back exactly"
    plt.close(fig)
    # a legend anchored by hand moves to a strip at the bottom, then back (constrained layout around such a
    # legend does not give the same pixels twice in a row, so its state is compared instead of a PNG)
    fig, ax = plt.subplots(figsize=(10, 4), layout="constrained")
    ax.plot([0, 1], [0, 1], label="a line with a label far too long for one line of a phone-wide figure's legend")
    legend = ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2))
    state = dict(legend.__dict__)
    restore = build_site.phone_layout(fig, 5.0)
    fig.canvas.draw()
    assert len(legend.get_texts()[0].get_text().splitlines()) > 1, "a long legend label is broken"
    assert legend.get_window_extent().y1 < ax.get_window_extent().y0, "the legend sits below its axes"
    assert legend.get_window_extent().y0 >= 0, "and inside the figure"
    restore()
    assert legend.__dict__ == state
    plt.close(fig)


def test_finish_page_gives_static_figures_words_and_a_phone_source(tmp_path):
    from base64 import b64decode, b64encode

    png = b64decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEklEQVR4nGNgYGD4z8DAwMDAAAAMAAFzhAmkAAAAAElFTkSuQmCC")
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (1, 4), "white").save(out, format="png")  # a narrower, taller picture
    phone = tmp_path / "phone.png"
    phone.write_bytes(out.getvalue())
    (tmp_path / "site").mkdir()
    page = ('<html><head></head><body><main>'
            '<div class="jp-Cell jp-MarkdownCell"><div class="jp-RenderedMarkdown"><p>Earlier words.</p>'
            '<p>Each row is a softmax over <math><msqrt><msub><mi>d</mi><mi>k</mi></msub></msqrt></math> keys. '
            'The figure below shows the rows side by side.</p><blockquote><p>Instructor notes: not this.</p>'
            '</blockquote></div></div>'
            '<div class="jp-Cell jp-CodeCell"><div class="jp-OutputArea-output">'
            f'<img alt="No description has been provided for this image" src="data:image/png;base64,'
            f'{b64encode(png).decode()}"/></div></div></main></body></html>')
    import hashlib

    described = {hashlib.sha256(png).hexdigest(): {"alt": "Plot: softmax rows (x: key)", "phone": phone}}
    done, _ = build_site.finish_page(page, "T", set(), build_site.Files(tmp_path / "site"), "t_files",
                                     described=described)
    soup = BeautifulSoup(done, features="html.parser")
    img = soup.select_one(".jp-OutputArea-output picture > img")
    assert img["alt"] == ("Plot: softmax rows (x: key). In the lesson: Each row is a softmax over √d_k keys. "
                          "The figure below shows the rows side by side.")
    source = img.parent.find("source")
    assert source["media"] == build_site.PHONE_MEDIA and source["srcset"].startswith("t_files/")
    assert (tmp_path / "site" / source["srcset"]).read_bytes() == phone.read_bytes()
    assert (source["width"], source["height"]) == ("1", "4") and source["srcset"] != img["src"]
    assert soup.select_one(".jp-OutputArea-output .zoom-hint").has_attr("hidden")
