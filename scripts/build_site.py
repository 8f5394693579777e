#!/usr/bin/env python3
"""Build the static course site: every lesson as a web page whose sliders and self-checks work
in the browser alone (no kernel, no network).

    python scripts/build_site.py                          # every notebooks/NN-*.ipynb -> build/site
    python scripts/build_site.py --out DIR NB.ipynb ...   # chosen notebooks, another folder
    python scripts/build_site.py --jobs 1                 # lessons one at a time (default: 2 at once)

Each lesson is executed afresh (nbclient). After its last cell, one more cell runs in the same
kernel: it finds each widget the lesson displayed by its model id, renders EVERY state of every
slider view with ``SliderView.render`` (the PNG the live view shows) and reads every self-check's
definition. The page then gets, in place of each widget:

- a slider view: one ``<input type=range>`` per slider (mouse, touch and keyboard), its readout,
  and the figure, swapped among PNGs stored in ``NN-name_files/`` under the hash of their bytes (an
  image two lessons share is stored once) by the live view's own module, attnlib/frameslider.js,
  inlined unchanged into the page (``view_module``) with ``staticModel`` standing in for the kernel;
- a self-check: a form graded in JavaScript from the same definition (answer, tolerances,
  options, per-option feedback, messages) the live widget grades with.

Figures are files beside the pages, maths is MathML (converted here: no MathJax), and nothing is
fetched from another host, so the folder works from ``file://`` (a zip handed to a class) and from
any static host. Two builds of the same lessons give the same files.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import inspect
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from base64 import b64decode
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
from bs4 import BeautifulSoup
from jinja2 import DictLoader
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor

try:
    from latex2mathml.converter import convert as latex_to_mathml
except ImportError:  # maths then stays as readable TeX source
    latex_to_mathml = None

ROOT = Path(__file__).resolve().parent.parent
LESSON = re.compile(r"^\d\d-[a-z0-9-]+\.ipynb$")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NBVAL_MARK = "# NBVAL_IGNORE_OUTPUT"  # for nbval only: not shown on the pages
SITE_CSS, SITE_JS = "course.css", "course.js"
# The slider view's front end and look, shared with the live view (attnlib.widgets.SliderView's _esm and _css)
FRAMESLIDER_JS, FRAMESLIDER_CSS = ROOT / "attnlib" / "frameslider.js", ROOT / "attnlib" / "frameslider.css"
TITLE = "Why divide by √d_k?"
SHOW_CODE_TAG = "site-show-code"  # cell tag: on the site this code cell starts unfolded (the code is the lesson)
INTERVIEW_LESSON = "06-interview-questions"  # the index's "Preparing for an interview?" link
NOTES_TAG = "instructor-notes"  # scripts/add_navigation.py: the notes' heading and notes cells
CONTENTS_LESSON = "00-start-here.ipynb"  # the navigation cells' "Contents" link: the index page on the site

# The lab template without anything fetched from the network: no require.js, no widget
# manager, no MathJax, no mermaid.js (every one of those would come from a CDN).
OFFLINE_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""

# Added to the lab template's styles (in course.css, after frameslider.css): the site's look, and a phone layout.
EXTRA_CSS = """
/* ---- course site ---- */
body { margin: 0; }
.site-bar { display: flex; gap: 1em; align-items: baseline; flex-wrap: wrap; padding: 0.5em 1em;
  background: #f2f7fb; border-bottom: 1px solid #d6e4f0; font: 15px/1.4 system-ui, sans-serif; }
.site-bar a { color: #0058a3; }
.site-bar .site-name { font-weight: 600; }
main.jp-Notebook { max-width: 1100px; margin: 0 auto; }
math[display="block"] { margin: 0.8em 0; font-size: 1.15em; overflow-x: auto; overflow-y: hidden; }
.tex-source { font-family: monospace; background: #f6f6f6; }
.jp-OutputArea-output img, .jp-RenderedMarkdown img { max-width: 100%; height: auto; }
.jp-RenderedHTMLCommon table { display: block; overflow-x: auto; max-width: 100%; }
.jp-OutputArea-output picture, .sv picture { display: block; }
.zoomable { cursor: zoom-in; }
.zoomed { overflow-x: auto; }
.zoomed > img { max-width: none !important; width: auto !important; cursor: zoom-out; }
.zoom-hint { color: #555; font: 13px/1.4 system-ui, sans-serif; margin: 0.2em 0 0; }
.zoom-hint .zh-tap { display: none; }
@media (max-width: 640px), (pointer: coarse) {
  .zoom-hint .zh-tap { display: inline; }
  .zoom-hint .zh-click { display: none; }
}
.sv-hint { color: #555; font: 13px/1.4 system-ui, sans-serif; margin: 0.2em 0 0; }
/* the slider hint names what this device has: a touch screen (coarse pointer) or a mouse and keyboard */
.sv-hint .on-touch { display: none; }
@media (pointer: coarse) {
  .sv-hint .on-touch { display: inline; }
  .sv-hint .on-keys { display: none; }
}
/* code folded behind "Show code" (a <details> per code cell); its outputs stay in view */
details.code-fold > summary { cursor: pointer; width: max-content; max-width: 100%; margin: 0.15em 0;
  padding: 0.2em 0.6em; border: 1px solid #c4d3e0; border-radius: 3px; background: #f2f7fb; color: #0058a3;
  font: 14px/1.4 system-ui, sans-serif; }
details.code-fold > summary:focus-visible { outline: 3px solid #E69F00; outline-offset: 2px; }
details.code-fold > summary .fold-lines { color: #555; }
details.code-fold:not([open]) > summary .fold-hide, details.code-fold[open] > summary .fold-show { display: none; }
@media print { details.code-fold > summary { display: none; } }
/* instructor notes: folded under "For instructors", like the collapsed heading in JupyterLab */
details.instructor-notes { margin: 1em 0 0.5em; }
details.instructor-notes > summary { cursor: pointer; width: max-content; max-width: 100%; font-weight: 600; }
details.instructor-notes > summary:focus-visible { outline: 3px solid #E69F00; outline-offset: 2px; }
.check { border-left: 4px solid #009E73; padding: 0.4em 0.8em; margin: 0.3em 0; max-width: 46em;
  font: 15px/1.5 system-ui, sans-serif; }
.check fieldset { border: 0; padding: 0; margin: 0; }
.check legend, .check .check-question { padding: 0; margin: 0 0 0.4em; }
.check .check-option { display: flex; gap: 0.5em; align-items: baseline; padding: 0.25em 0; }
.check .check-answer { display: flex; gap: 0.5em; flex-wrap: wrap; align-items: center; }
.check input[type=text] { font: inherit; padding: 0.3em 0.5em; width: 16em; max-width: 100%; }
.check button { font: inherit; padding: 0.3em 1.2em; margin-top: 0.3em; border: 0; border-radius: 3px;
  background: #0072B2; color: #fff; cursor: pointer; }
.check button:focus-visible, .sv input:focus-visible { outline: 3px solid #E69F00; outline-offset: 2px; }
.check-feedback { min-height: 1.5em; margin: 0.4em 0 0; }
.check .check-precision { color: #333; }
@media (max-width: 640px) {
  .jp-InputPrompt, .jp-OutputPrompt { display: none; }
  .jp-Cell { padding: 4px 6px; }
  .jp-RenderedHTMLCommon { padding-right: 0; font-size: 16px; }
  .jp-RenderedHTMLCommon h1 { font-size: 1.6em; }
  .jp-InputArea-editor, .jp-OutputArea-output pre { overflow-x: auto; }
  .jp-OutputArea-child .jp-OutputArea-output { overflow-x: auto; }
  .check input[type=text] { width: 100%; }
}
"""

# Accessibility and maths layout (issue 22, items 3-4): contrast of at least 4.5:1 for code colours and
# prompts on their backgrounds, links underlined in prose, boxes that scroll sideways (code, printed
# output, tables, display maths) reachable by keyboard with a visible focus ring and a shadow at an
# edge that hides more, and printed numbers never wrapped mid-number. Appended after EXTRA_CSS.
A11Y_CSS = """
/* ---- accessibility: contrast, links, sideways-scrolling boxes ---- */
:root {
  --jp-mirror-editor-keyword-color: #006e00;   /* 5.96:1 on the code background #f5f5f5 */
  --jp-mirror-editor-builtin-color: #006e00;
  --jp-mirror-editor-number-color: #006e00;
  --jp-mirror-editor-comment-color: #336666;   /* 5.96:1 */
  --jp-mirror-editor-operator-color: #7d3cc8;  /* 5.75:1 */
  --jp-mirror-editor-meta-color: #7d3cc8;
  --jp-mirror-editor-error-color: #c80000;     /* 5.57:1 */
  --jp-mirror-editor-bracket-color: #555;
  --jp-mirror-editor-quote-color: #006e00;
  --jp-mirror-editor-atom-color: #3a3ad0;
  --jp-mirror-editor-variable-3-color: #006e4a;
  --jp-cell-inprompt-font-color: #1f6aa8;      /* 5.70:1 on white */
  --jp-cell-outprompt-font-color: #a04a2f;     /* 5.97:1 */
  --jp-cell-prompt-not-active-font-color: #616161;
  --jp-cell-prompt-not-active-opacity: 1;
}
.jp-RenderedHTMLCommon a:link, .jp-RenderedHTMLCommon a:visited, .site-bar a {
  text-decoration: underline; text-underline-offset: 0.15em; }
.jp-RenderedHTMLCommon a:hover { text-decoration-thickness: 2px; }
/* a box that scrolls sideways: a shadow shows at each edge that has more to see (the white covers move
   with the content, the shadows stay at the edges) */
.scroll-x, .jp-InputArea-editor, .jp-OutputArea-output.jp-RenderedText {
  --scroll-bg: #fff;
  overflow-x: auto; overflow-y: hidden; max-width: 100%;
  background:
    linear-gradient(to right, var(--scroll-bg) 30%, rgba(255, 255, 255, 0)) left center / 2.5em 100% no-repeat local,
    linear-gradient(to left, var(--scroll-bg) 30%, rgba(255, 255, 255, 0)) right center / 2.5em 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgba(0, 0, 0, 0.28), rgba(0, 0, 0, 0))
      left center / 0.9em 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgba(0, 0, 0, 0.28), rgba(0, 0, 0, 0))
      right center / 0.9em 100% no-repeat scroll,
    var(--scroll-bg);
}
.jp-InputArea-editor { --scroll-bg: var(--jp-cell-editor-background, #f5f5f5); }
.jp-InputArea-editor .highlight { background: transparent; }
.jp-InputArea-editor .highlight pre, .jp-OutputArea-output pre {
  white-space: pre; word-break: normal; overflow-wrap: normal; overflow: visible; }
/* a long identifier or link in prose breaks where it must rather than push the text past a phone's edge */
.jp-RenderedHTMLCommon :not(pre) > code, .jp-RenderedHTMLCommon a { overflow-wrap: anywhere; }
.scroll-x { display: block; margin: 0.8em 0; }
.scroll-x > table { display: table; margin: 0; }
/* rows see-through, so the edge shadows show through them; a number stays on one line */
.jp-RenderedHTMLCommon .scroll-x > table tbody tr:nth-child(odd) { background: transparent; }
.jp-RenderedHTMLCommon .scroll-x > table tbody tr:nth-child(even) { background: rgba(0, 0, 0, 0.04); }
.jp-RenderedHTMLCommon .scroll-x > table tbody tr:hover { background: rgba(3, 169, 244, 0.08); }
.scroll-x > table td { white-space: nowrap; }
.math-scroll { padding: 0.1em 0; }
math[display="inline"] { font-size: 1.12em; }  /* the browsers' maths font runs small beside the prose */
.math-scroll > math[display="block"] { margin: 0; overflow: visible; display: block math; }
/* the ring inside the box: an ancestor that clips overflow cannot hide its sides */
[tabindex="0"]:focus-visible, .scroll-x:focus-visible { outline: 3px solid #0058a3; outline-offset: -3px; }
/* JupyterLab's narrow layout makes code and outputs table rows, which cannot scroll (their table clips
   them): blocks instead, so a long line scrolls inside its own box */
@media only screen and (max-width: 760px) {
  .jp-InputArea, .jp-OutputArea-child { display: block; }
  .jp-InputArea-editor, .jp-InputPrompt, .jp-OutputPrompt,
  .jp-OutputArea-child .jp-OutputArea-output { display: block; }
  /* a markdown cell as a table cell grows to its widest equation or table and is then clipped */
  .jp-InputArea > .jp-RenderedHTMLCommon { display: block; min-width: 0; }
  /* as blocks they take the width left beside their margins (JupyterLab's width: 100% pushed them 10-18 px
     past the clipping edge, hiding the end of the line and the scroll shadow) */
  .jp-InputArea > .jp-RenderedHTMLCommon, .jp-OutputArea-child .jp-OutputArea-output, .jp-InputArea-editor {
    width: auto; box-sizing: border-box; }
}
@media (max-width: 640px) { .jp-InputPrompt, .jp-OutputPrompt { display: none; } }  /* as EXTRA_CSS: no prompts */
"""

# Reads each check's definition from the page; no library, no network. (Slider views: ``view_module``.)
SITE_SCRIPT = r"""'use strict';
(function () {
  // ---- self-checks: graded from the definitions the live widgets use ----
  function formatG4(x) {
    // Python's format(x, '.4g'), ties to even included
    if (!isFinite(x)) return isNaN(x) ? 'nan' : (x < 0 ? '-inf' : 'inf');
    if (x === 0) return (Object.is(x, -0) ? '-0' : '0');
    const sign = x < 0 ? '-' : '';
    const a = Math.abs(x);
    let [mant, exp] = a.toExponential(3).split('e');
    const exact = a.toPrecision(100).replace('.', '').replace(/^0+/, '');
    if (/^\d{4}50*$/.test(exact) && Number(exact[3]) % 2 === 0) {  // an exact tie: round half to even
      const down = Number(exact.slice(0, 4)) / 1000;
      mant = down.toFixed(3);
      exp = String(Number(a.toExponential(4).split('e')[1]));
    }
    let e = Number(exp);
    if (e >= -4 && e < 4) {
      let s = (Number(mant) * Math.pow(10, e)).toFixed(Math.max(0, 3 - e));
      if (s.indexOf('.') >= 0) s = s.replace(/0+$/, '').replace(/\.$/, '');
      return sign + s;
    }
    let m = mant.indexOf('.') >= 0 ? mant.replace(/0+$/, '').replace(/\.$/, '') : mant;
    return sign + m + 'e' + (e < 0 ? '-' : '+') + String(Math.abs(e)).padStart(2, '0');
  }
  const fill = (template, values) => template.replace(/\{(\w+)\}/g, (_, k) => values[k]);

  function pointDecimals(s) {
    // attnlib.widgets._point_decimals: one comma is a decimal comma, thousands groups are dropped, '1,000' is refused
    if (s.indexOf(',') < 0) return s;
    if (/^[-+]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?$/.test(s)) {
      if (s.indexOf('.') < 0 && /^[-+]?[1-9]\d{0,2},\d{3}$/.test(s)) return null;
      return s.replace(/,/g, '');
    }
    if (s.split(',').length === 2 && s.indexOf('.') < 0) return s.replace(',', '.');
    return null;
  }

  function parseNumber(text, pattern) {
    // attnlib.widgets.parse_number: '0.25', '0,25', '1e-3', '1/8', '12.5%', '\u22123'; nothing is evaluated
    let s = String(text).trim().replace(/\u2212/g, '-');
    const percent = s.endsWith('%');
    if (percent) s = s.slice(0, -1).trimEnd();
    s = pointDecimals(s);
    if (s === null) return null;
    const m = new RegExp(pattern).exec(s);
    if (!m) return null;
    let value = Number(m[1]);
    if (m[6] !== undefined) {
      const den = Number(m[6]);
      if (den === 0) return null;
      value = value / den;
    }
    return percent ? value / 100 : value;
  }

  function setUpCheck(form) {
    const def = JSON.parse(form.querySelector('script.check-data').textContent);
    const feedback = form.querySelector('.check-feedback');
    const say = (html, verdict) => { feedback.innerHTML = html; form.dataset.verdict = verdict; };
    function grade() {
      if (def.kind === 'numeric') {
        const value = parseNumber(form.querySelector('input[type=text]').value, def.number_pattern);
        if (value === null) return say(def.messages.unreadable, 'unreadable');
        const ok = def.low <= value && value <= def.high;  // the range attnlib.widgets.accepted_range gives
        if (ok) say(fill(def.messages.right, { explanation: def.explanation }), 'right');
        else say(fill(def.messages.wrong,
                      { value: formatG4(value), hint: def.hint ? 'Hint: ' + def.hint : '' }), 'wrong');
      } else {
        const chosen = form.querySelector('input[type=radio]:checked');
        if (!chosen) return say(def.messages.unchosen, 'unchosen');
        const i = Number(chosen.value);
        const ok = i === def.correct;
        say(fill(ok ? def.messages.right : def.messages.wrong, { feedback: def.feedback[i] }), ok ? 'right' : 'wrong');
      }
    }
    form.addEventListener('submit', event => { event.preventDefault(); grade(); });
    const box = form.querySelector('input[type=text]');
    if (box) box.addEventListener('change', grade);  // like the live box: Enter or leaving it grades
    form.classList.add('check-ready');
  }

  // ---- a figure shown smaller than its pixels can be tapped (clicked) to see it full size; its hint says so ----
  function zoomable(img) {
    const box = img.parentElement;
    const holder = img.closest('figure, .jp-OutputArea-output');
    const hint = holder ? holder.querySelector('.zoom-hint') : null;
    function fit() {
      const can = box.classList.contains('zoomed') || img.naturalWidth > img.clientWidth + 1;
      img.classList.toggle('zoomable', can && !box.classList.contains('zoomed'));
      if (hint) hint.hidden = !can;
    }
    img.addEventListener('click', () => {
      if (img.naturalWidth > img.clientWidth + 1 || box.classList.contains('zoomed')) box.classList.toggle('zoomed');
      fit();
    });
    img.addEventListener('load', fit);
    window.addEventListener('resize', fit);
    if (img.complete) fit();
  }

  window.courseSite = { formatG4: formatG4, parseNumber: parseNumber,
    grade: (def, text) => {
      const v = parseNumber(text, def.number_pattern);
      return v === null ? null : def.low <= v && v <= def.high;
    } };
  document.querySelectorAll('.jp-OutputArea-output img, .sv figure img').forEach(zoomable);
  document.querySelectorAll('form.check').forEach(setUpCheck);
})();
"""

# Appended to frameslider.js in a page's one module script: every slider view runs the module with its data.
# render() reuses the markup inside the element it is given (``el.querySelector(".sv")``), so it gets the element
# that holds the .sv (each view's output box holds only that view).
VIEW_BOOT = """
// ---- course site (scripts/build_site.py): run every slider view on this page with its data ----
document.querySelectorAll(".sv").forEach(sv => {
  render({ model: staticModel(JSON.parse(sv.querySelector("script.sv-data").textContent)), el: sv.parentElement });
});
"""


def view_module() -> str:
    """The page's ``<script type="module">``: attnlib/frameslider.js, unchanged, then ``VIEW_BOOT``.

    Inline, because Chromium refuses module scripts from file:// (origin null), and the site must work from
    a folder (benchmarks/prototypes/frameslider/README.md measured both ways; the inline one was simpler)."""
    text = FRAMESLIDER_JS.read_text(encoding="utf-8") + VIEW_BOOT
    if re.search(r"</script|<!--", text, re.I):
        raise SystemExit(f"{FRAMESLIDER_JS} holds '</script' or '<!--': it cannot be inlined into a page as it is")
    return f'<script type="module">{text}</script>'


INDEX_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>{title} — lessons</title>
<link rel="icon" href="data:,">
<style>
  body {{ font-family: system-ui, sans-serif; max-width: 46em; margin: 2em auto; padding: 0 1em;
         font-size: 18px; line-height: 1.5; color: #111; }}
  li {{ margin: 0.5em 0; }}
  a {{ color: #0058a3; }}
  .what {{ color: #444; font-size: 0.85em; }}
  .note {{ color: #444; font-size: 0.9em; }}
  .interview {{ border-left: 6px solid #E69F00; background: #fff6e0; padding: 0.7em 1em; margin: 1.2em 0; }}
  .interview p {{ margin: 0.3em 0; }}
  .interview .go {{ font-size: 1.15em; font-weight: 700; }}
</style>
</head>
<body>
<main>
<h1>{title} — lessons</h1>
<p>The course's lessons as web pages. Everything works in this browser alone, with no Python and no
network connection: move the sliders (mouse, touch or arrow keys) and answer the self-checks. To run
and change the code, open the notebooks in JupyterLab (<code>python3 course.py lab</code>).</p>
{interview}<ol>
{items}
</ol>
<p class="note">Built by <code>python3 course.py site</code> (<code>scripts/build_site.py</code>).</p>
</main>
</body>
</html>
"""


# ---------------------------------------------------------------------------------------------
# Maths and HTML
# ---------------------------------------------------------------------------------------------


def tex_to_html(tex: str, display: bool) -> str:
    """MathML for a TeX fragment; the escaped TeX source if it cannot be converted."""
    if latex_to_mathml is not None:
        try:
            mathml = latex_to_mathml(tex, display="block" if display else "inline")
        except Exception:  # noqa: BLE001  (any converter failure falls back to the TeX source)
            mathml = None
        if mathml:
            # alignment markers of aligned/align environments carry no meaning in plain MathML
            return mathml.replace("<mi>&</mi>", "").replace("<mo>&</mo>", "")
    source = html.escape(f"$${tex}$$" if display else f"${tex}$", quote=False)
    return f'<span class="tex-source">{source}</span>'


class MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer, with maths turned into MathML instead of left for MathJax."""

    def block_math(self, body: str) -> str:
        return tex_to_html(body, display=True)

    def inline_math(self, body: str) -> str:
        return tex_to_html(body, display=False)

    def latex_environment(self, name: str, body: str) -> str:
        return tex_to_html(f"\\begin{{{name}}}{body}\\end{{{name}}}", display=True)

    def block_html(self, html: str) -> str:
        """Raw HTML as written. nbconvert re-parses a block to embed its images, which closes a tag the
        block leaves open: `<details><summary>Solution</summary>` then markdown would fold nothing."""
        if "<img" not in html.lower():
            return html
        return super().block_html(html)


class StaticWidgets(Preprocessor):
    """Put the static markup of each widget (``resources["widgets"]``: model id -> HTML) in its place,
    and drop the test-runner marker line from the code readers see."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and cell.source.startswith(NBVAL_MARK):
            cell.source = cell.source[len(NBVAL_MARK):].lstrip("\n")
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is not None:
                markup = resources.get("widgets", {}).get(view["model_id"])
                if markup is None:
                    raise SystemExit(f"no static version of widget {view['model_id']} (cell {index})")
                output["data"] = {"text/html": markup}
                if markup.startswith(CHECK_FORM):  # a self-check's code holds its answer: only the form is shown
                    cell.metadata.setdefault("transient", {})["remove_source"] = True
        return cell, resources


class OfflineHTMLExporter(HTMLExporter):
    """The lab HTML export with MathML maths, static widgets and no external scripts."""

    def __init__(self, **kw):
        super().__init__(
            template_name="lab", template_file="offline.html.j2", embed_images=True,
            extra_loaders=[DictLoader({"offline.html.j2": OFFLINE_TEMPLATE})], **kw,
        )
        self.register_preprocessor(StaticWidgets(), enabled=True)

    def markdown2html(self, context, source):
        cell = context.get("cell", {})
        renderer = MathMLRenderer(
            escape=False, attachments=cell.get("attachments", {}), embed_images=True,
            path=context.get("resources", {}).get("metadata", {}).get("path", ""),
            anchor_link_text=self.anchor_link_text, exclude_anchor_links=self.exclude_anchor_links,
        )
        return MarkdownWithMath(renderer=renderer).render(source)


# nbconvert marks markdown2html as a context filter; keep that on the override.
OfflineHTMLExporter.markdown2html.jinja_pass_arg = HTMLExporter.markdown2html.jinja_pass_arg


def lesson_title(nb) -> str:
    """The first '# ' heading of the notebook (skipping generated navigation cells)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "navigation" not in cell.metadata.get("tags", []):
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return "Untitled"


def external_resources(page: str) -> list[str]:
    """URLs of scripts, stylesheets, frames, images or module imports a page would fetch from another host."""
    soup = BeautifulSoup(page, features="html.parser")
    urls = [tag.get("src", "") for tag in soup.find_all(["script", "iframe", "img", "source", "video", "audio"])]
    urls += [tag.get("href", "") for tag in soup.find_all("link")]
    urls += re.findall(r"""import\(\s*["']([^"']+)["']""", page)
    urls += re.findall(r"""url\(\s*["']?([^"')]+)""", page)
    return [u for u in urls if re.match(r"^(https?:)?//", u.strip())]


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's header."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    return struct.unpack(">II", png[16:24])


# ---------------------------------------------------------------------------------------------
# Executing a lesson and rendering its widgets' states (the part that runs in the lesson's kernel)
# ---------------------------------------------------------------------------------------------


def text_outside(fig, drawn: list, tol_px: float = 1.0) -> list[dict]:
    """The texts of ``fig``'s last draw that reach more than ``tol_px`` pixels beyond its canvas.

    ``drawn`` : [(Text, renderer)] as drawn. Returns [{"figure", "text", "over_px"}], where
    "figure" is the figure's suptitle or first title (to find it in its lesson).
    """
    found = []
    for text, renderer in drawn:
        width, height = getattr(renderer, "width", fig.bbox.width), getattr(renderer, "height", fig.bbox.height)
        box = text.get_window_extent(renderer)
        over = max(-box.x0, -box.y0, box.x1 - width, box.y1 - height)
        if over > tol_px:
            found.append({"figure": figure_name(fig),
                          "text": " ".join(text.get_text().split())[:90], "over_px": round(float(over), 1)})
    return found


def text_over_other_axes(fig, drawn: list, tol_px: float = 1.0) -> list[dict]:
    """The texts of ``fig``'s last draw that run over another panel: a text that belongs to one axes (tick and
    axis labels, titles, its texts) reaching more than ``tol_px`` pixels into the frame of another axes (pairs
    whose frames overlap, such as twins and insets, are left alone), or overlapping a text of another axes or of
    the figure (suptitle, figure texts and legends). A slider state's text wider than its reference state's does
    this (SliderView draws every state at the reference's layout). Same form as ``text_outside``."""
    renderer = drawn[0][1] if drawn else None
    if renderer is None or len(fig.axes) < 2:
        return []
    owner = {id(t): -1 for t in (*fig.texts, *(t for lg in fig.legends for t in lg.get_texts()),
                                 *(getattr(fig, n, None) for n in ("_suptitle", "_supxlabel", "_supylabel")))}
    for i, ax in enumerate(fig.axes):
        for text in (*ax.xaxis.get_ticklabels(which="both"), *ax.yaxis.get_ticklabels(which="both"),
                     ax.xaxis.label, ax.yaxis.label, ax.title, ax._left_title, ax._right_title, *ax.texts):
            owner[id(text)] = i
    frames = [ax.get_window_extent(renderer) for ax in fig.axes]
    boxes = [(text, owner[id(text)], text.get_window_extent(renderer)) for text, _ in drawn if id(text) in owner]

    def over(a, b):
        return min(min(a.x1, b.x1) - max(a.x0, b.x0), min(a.y1, b.y1) - max(a.y0, b.y0))

    found = []
    for k, (text, i, box) in enumerate(boxes):
        hits = [over(box, f) for j, f in enumerate(frames) if i >= 0 and j != i and not frames[i].overlaps(f)]
        hits += [over(box, b) for _, j, b in boxes[k + 1:] if j != i]
        if hits and max(hits) > tol_px:
            found.append({"figure": figure_name(fig), "text": " ".join(text.get_text().split())[:90],
                          "over_px": round(float(max(hits)), 1), "where": "over another panel"})
    return found


def figure_name(fig) -> str:
    """The figure's suptitle or first title (to find it in its lesson)."""
    sup = getattr(fig, "_suptitle", None)
    names = [sup.get_text()] if sup is not None else []
    names += [ax.get_title() for ax in fig.axes if ax.get_title()]
    return " ".join((names or [f"a figure with {len(fig.axes)} axes"])[0].split())[:90]


def text_size(fig, drawn: list, source: str) -> dict | None:
    """The smallest text of ``fig``'s last draw: {"figure", "source", "width_px", "dpi", "min_pt",
    "min_text"}. Shown ``w`` CSS px wide, that text is ``smallest_text_px(entry, w)`` px tall
    (font size in points × dpi / 72, times the shrink factor w / width_px when w < width_px)."""
    texts = [(float(t.get_fontsize()), " ".join(t.get_text().split())[:60]) for t, _ in drawn]
    if not texts:
        return None
    size, text = min(texts)
    return {"figure": figure_name(fig), "source": source, "width_px": int(round(fig.bbox.width)),
            "dpi": float(fig.dpi), "min_pt": size, "min_text": text}


def smallest_text_px(entry: dict, shown_width: float) -> float:
    """CSS px of an entry's smallest text when its image is shown at most ``shown_width`` px wide."""
    return entry["min_pt"] * entry["dpi"] / 72 * min(1.0, shown_width / entry["width_px"])


# Figures on a phone. The content column of a lesson page at a 390 px viewport (Chromium, measured by
# tests/browser/test_site_on_a_phone.py) is PHONE_SHOWN_PX wide at most; a figure whose smallest text would show below
# PHONE_GOAL_PX there gets a second rendering laid out for a phone (``phone_layout``), served to screens up to
# PHONE_MEDIA wide by a <picture> source.
PHONE_SHOWN_PX = 328.0
PHONE_GOAL_PX = 9.0
PHONE_MEDIA = "(max-width: 600px)"
PHONE_MAX_IN, PHONE_MIN_IN = 5.5, 3.0  # width of a phone rendering (inches)
PHONE_MAX_ROW_IN, PHONE_MIN_ROW_IN = 2.9, 1.9  # height of each stacked panel's plot area (inches)


def figure_text(fig) -> str:
    """What a figure shows, in words: its suptitle, then each panel's title and axis labels (a colour
    bar by its label). A panel with no title is named by its labels alone: no empty "Panel 1: "."""
    parts = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text().strip():
        parts.append(" ".join(suptitle.get_text().split()))
    shown = [ax for ax in fig.axes if ax.get_visible()]
    bars = [ax for ax in shown if hasattr(ax, "_colorbar")]
    panels = [ax for ax in shown if ax not in bars and (ax.get_title() or ax.get_xlabel() or ax.get_ylabel())]
    for i, ax in enumerate(panels, start=1):
        title = " ".join(ax.get_title().split())
        labels = "; ".join(f"{a}: {' '.join(t.split())}" for a, t in (("x", ax.get_xlabel()), ("y", ax.get_ylabel()))
                           if t.strip())
        name = f"Panel {i}" if len(panels) > 1 else "Plot"
        if title:
            parts.append(f"{name}: {title}" + (f" ({labels})" if labels else ""))
        elif labels:
            parts.append(f"{name} ({labels})")
    for ax in bars:
        label = " ".join((ax.get_ylabel() or ax.get_xlabel()).split())
        if label:
            parts.append(f"Colour scale: {label}")
    return ". ".join(parts)


def phone_width_in(entry: dict) -> float | None:
    """How wide (inches) a phone rendering of the figure measured by ``entry`` (``text_size``) must be for
    its smallest text to reach PHONE_GOAL_PX when shown PHONE_SHOWN_PX wide; None if it reaches it as it is."""
    if smallest_text_px(entry, PHONE_SHOWN_PX) >= PHONE_GOAL_PX:
        return None
    # shown PHONE_SHOWN_PX wide, a figure w inches wide shows a pt-point text at pt * PHONE_SHOWN_PX / (72 w) px
    width = entry["min_pt"] * PHONE_SHOWN_PX / (72 * (PHONE_GOAL_PX + 0.15))
    return max(PHONE_MIN_IN, min(PHONE_MAX_IN, width))


def phone_layout(fig, width_in: float):
    """Lay ``fig`` out for a phone, in place: ``width_in`` inches wide, its panels (axes that are not
    colour bars; twins stay together) stacked in one column in reading order, tick labels that shared
    axes hid shown again, constrained layout. Returns a function that puts ``fig`` back exactly as it
    was, or None (``fig`` untouched) when it has a panel outside any grid (placed by hand)."""
    import math
    import textwrap

    from matplotlib.gridspec import GridSpec
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    panels = [ax for ax in fig.axes if not hasattr(ax, "_colorbar")]
    if not panels or any(ax.get_subplotspec() is None for ax in panels):
        return None
    w0, h0 = (float(v) for v in fig.get_size_inches())
    groups = {}  # one cell per grid position (twin axes share theirs)
    for ax in panels:
        ss = ax.get_subplotspec()
        key = (id(ss.get_gridspec()), ss.rowspan.start, ss.rowspan.stop, ss.colspan.start, ss.colspan.stop)
        groups.setdefault(key, []).append(ax)
    where = {id(g[0]): (-round(g[0].get_position(original=True).y1, 3), round(g[0].get_position(original=True).x0, 3))
             for g in groups.values()}
    order = sorted(groups.values(), key=lambda g: where[id(g[0])])
    top = min(v[0] for v in where.values())
    if any(not any(ax.get_title() for ax in g) for g in order if where[id(g[0])][0] != top):
        # rows under a titled first row (a row per measure, a column per setting): keep each column together
        order = sorted(groups.values(), key=lambda g: where[id(g[0])][::-1])
    heights = []
    for group in order:
        ss = group[0].get_subplotspec()
        rows = ss.get_gridspec().get_geometry()[0]
        slot = h0 * (ss.rowspan.stop - ss.rowspan.start) / rows
        box = max(ax.get_position(original=True).height for ax in group) * h0
        # the plot itself between PHONE_MIN_ROW_IN and PHONE_MAX_ROW_IN tall, plus the room its text took before
        heights.append(min(PHONE_MAX_ROW_IN, max(PHONE_MIN_ROW_IN, box)) + max(0.0, slot - box))
    suptitle = getattr(fig, "_suptitle", None)
    extra = 0.3 * len(fig.legends)
    if suptitle is not None:  # its lines once wrapped to the phone width (about 0.55 em a character)
        lines = sum(1 + int(len(line) * suptitle.get_fontsize() * 0.55 / 72 // (width_in - 0.3))
                    for line in suptitle.get_text().splitlines() or [""])
        extra += 0.1 + lines * suptitle.get_fontsize() * 1.3 / 72
    wrapped = [t for t in [suptitle, *(t for ax in fig.axes for t in (ax.title, ax._left_title, ax._right_title,
                                                                      ax.xaxis.label))] if t is not None]
    legends = [ax.get_legend() for g in order for ax in g if ax.get_legend() is not None]
    # a legend of several columns becomes one column: each further row is about 1.5 em tall
    extra += sum((len(lg.get_texts()) - -(-len(lg.get_texts()) // lg._ncols)) * lg.prop.get_size_in_points() * 1.5 / 72
                 for lg in legends if lg._ncols > 1)
    saved = {
        "size": (w0, h0), "dpi": fig.dpi, "engine": fig._layout_engine, "canvas": fig.canvas,
        "axes": [(ax, ax.get_subplotspec(), ax.get_position(original=True).frozen(), ax.get_position().frozen(),
                  ax.get_in_layout(), dict(ax.xaxis._major_tick_kw), dict(ax.xaxis._minor_tick_kw),
                  dict(ax.yaxis._major_tick_kw), dict(ax.yaxis._minor_tick_kw)) for ax in fig.axes],
        "texts": [(t, t.get_position(), t.get_in_layout()) for t in (getattr(fig, n, None) for n in
                  ("_suptitle", "_supxlabel", "_supylabel")) if t is not None],
        "legends": [(lg, dict(lg.__dict__)) for lg in [*fig.legends, *legends]],
        "wrap": [(t, t.get_wrap()) for t in wrapped],
    }
    for t in wrapped:  # titles and x labels longer than the phone figure wrap at its edges
        t.set_wrap(True)
    fig.set_size_inches(width_in, sum(heights) + extra, forward=False)
    if width_in * fig.dpi < PHONE_SHOWN_PX:  # at least as many pixels as it is shown wide (so it is never enlarged)
        fig.set_dpi(math.ceil(PHONE_SHOWN_PX / width_in))
    grid = GridSpec(len(order), 1, figure=fig, height_ratios=heights)
    for row, group in enumerate(order):
        for ax in group:
            ax.set_subplotspec(grid[row, 0])
            ax.set_in_layout(True)
            shared_x = len(ax.get_shared_x_axes().get_siblings(ax)) > 1
            shared_y = len(ax.get_shared_y_axes().get_siblings(ax)) > 1
            if shared_x and not ax.xaxis._major_tick_kw.get("label1On", True):
                ax.tick_params(axis="x", which="both", labelbottom=True)
            if shared_y and not ax.yaxis._major_tick_kw.get("label1On", True):
                ax.tick_params(axis="y", which="both", labelleft=True)
    for ax in fig.axes:
        if hasattr(ax, "_colorbar"):
            ax.set_in_layout(True)
    for lg in [*fig.legends, *legends]:  # legends packed again: fewer columns, long labels broken
        texts = lg.get_texts()
        chars = int((width_in - 1.0) * 72 / (lg.prop.get_size_in_points() * 0.6))
        labels = [textwrap.fill(t.get_text(), chars) if len(t.get_text()) > chars > 10 else t.get_text() for t in texts]
        # a figure legend at most 2 columns; an axes legend anchored by hand 1 (it moves below); others as they are
        ncols = min(lg._ncols, 2) if lg in fig.legends else 1 if lg._bbox_to_anchor is not None else lg._ncols
        if ncols != lg._ncols or labels != [t.get_text() for t in texts]:
            colors = [t.get_color() for t in texts]
            lg._ncols = ncols
            lg._init_legend_box(lg.legend_handles, labels)
            lg._set_loc(lg._loc)  # places the new box (as Legend.__init__ does after packing it)
            for t, color in zip(lg.get_texts(), colors, strict=True):
                t.set_color(color)
    for t, _, _ in saved["texts"]:
        t.set_in_layout(True)
    # an axes legend anchored by hand (often below its axes: constrained layout cannot place that on a narrow
    # figure) goes to the bottom of the phone figure, in a strip constrained layout leaves free
    below = [lg for lg in legends if lg._bbox_to_anchor is not None]
    strip = sum(0.4 + sum(t.get_text().count("\n") + 1 for t in lg.get_texts())
                * lg.prop.get_size_in_points() * 1.45 / 72 for lg in below)
    if below:
        fig.set_size_inches(width_in, fig.get_size_inches()[1] + strip, forward=False)
        bottom = 0.0
        for lg in below:
            lg.set_loc("lower center")
            lg.set_bbox_to_anchor((0.5, bottom), transform=fig.transFigure)
            lg.set_in_layout(False)
            bottom += (0.4 + sum(t.get_text().count("\n") + 1 for t in lg.get_texts())
                       * lg.prop.get_size_in_points() * 1.45 / 72) / fig.get_size_inches()[1]
    free = strip / fig.get_size_inches()[1]
    fig._layout_engine = ConstrainedLayoutEngine(rect=(0, free, 1, 1 - free))

    def restore():
        fig._layout_engine = saved["engine"]
        fig.set_dpi(saved["dpi"])
        fig.set_size_inches(*saved["size"], forward=False)
        for ax, ss, original, active, in_layout, xmaj, xmin, ymaj, ymin in saved["axes"]:
            if ss is not None:
                ax.set_subplotspec(ss)
            ax._set_position(original, which="original")
            ax._set_position(active, which="active")
            ax.set_in_layout(in_layout)
            for axis, major, minor in ((ax.xaxis, xmaj, xmin), (ax.yaxis, ymaj, ymin)):
                if axis._major_tick_kw != major or axis._minor_tick_kw != minor:
                    axis._major_tick_kw, axis._minor_tick_kw = major, minor
                    axis.reset_ticks()
        for t, xy, in_layout in saved["texts"]:
            t.set_position(xy)
            t.set_in_layout(in_layout)
        for lg, state in saved["legends"]:
            lg.__dict__.clear()
            lg.__dict__.update(state)
        for t, wrap in saved["wrap"]:
            t.set_wrap(wrap)
        fig.set_canvas(saved["canvas"])

    return restore


def watch_figure_text(record: list, sizes: list | None = None, phones: list | None = None,
                      phone_dir: str | None = None):
    """Record, for every figure a lesson shows (inline output or a slider state's PNG), the texts
    that fall outside its canvas (``text_outside``), into ``record``. Runs INSIDE the lesson's kernel,
    before its first cell; returns a function that removes the watch.

    A figure is checked where its final pixels are made: the inline backend's ``print_figure``
    (unless it crops to a tight bounding box) and the slider views' PNG encoder, so a draw that a
    slider view discards (to move its axes and draw again) is not counted.

    With ``phones`` (a list) and ``phone_dir``: right after each shown PNG is made, the same Figure is
    described in words (``figure_text``, for alt texts) and, if its smallest text would be below
    PHONE_GOAL_PX at PHONE_SHOWN_PX, laid out for a phone (``phone_layout``), rendered to
    ``phone_dir``/<sha256>.png (checked for text outside its canvas too; its size entry gets
    "variant": "phone") and put back. ``phones`` gets {"wide": sha256 of the shown PNG, "phone": sha256 of the
    phone PNG or None, "alt": the words}, once per distinct shown PNG.
    """
    import hashlib
    import math
    import pathlib
    import pickle
    import time
    import warnings

    import matplotlib.text as mtext
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from attnlib import widgets

    drawn = {}  # id(Figure) -> [(Text, renderer)] of that Figure's last draw
    described = set()  # sha256 of the shown PNGs already in ``phones``
    originals = (Figure.draw, mtext.Text.draw, FigureCanvasBase.print_figure, widgets._encode)

    def figure_draw(self, renderer):
        drawn[id(self)] = []
        return originals[0](self, renderer)

    def text_draw(self, renderer):
        result = originals[1](self, renderer)
        fig = self.get_figure(root=True)
        if fig is not None and self.get_visible() and self.get_text().strip():
            drawn.setdefault(id(fig), []).append((self, renderer))
        return result

    def note_size(fig, texts, source, **extra):
        entry = text_size(fig, texts, source)
        if entry is not None:
            entry.update(extra)
            if sizes is not None:
                sizes.append(entry)
        return entry

    def phone_version(fig, entry, png, source):
        """The phone rendering of ``fig`` (just shown as ``png``), noted in ``phones``."""
        if phones is None or png is None:
            return
        wide = hashlib.sha256(png).hexdigest()
        if wide in described:
            return
        described.add(wide)
        found = {"wide": wide, "phone": None, "alt": figure_text(fig)}
        phones.append(found)
        width = phone_width_in(entry) if entry is not None else None
        started = time.process_time()
        if width is not None and source == "slider":
            # a slider view draws its next states on this same figure: lay out a copy, so nothing a
            # restore might miss reaches the wide pictures (they must stay byte-identical to the live view's)
            try:
                fig = pickle.loads(pickle.dumps(fig))
            except Exception:  # noqa: BLE001 - an unpicklable artist: lay out the figure itself and restore it
                pass
        restore = phone_layout(fig, width) if width is not None else None
        if restore is None:
            return
        try:
            try:
                for _ in range(4):  # text that takes more room than phone_layout guessed: a taller figure, again
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        canvas = FigureCanvasAgg(fig)
                        canvas.draw()
                    collapsed = any("collapsed" in str(w.message) for w in caught)
                    w, h = fig.get_size_inches()
                    boxes = {tuple(round(v, 4) for v in ax.get_position().bounds) for ax in fig.axes
                             if not hasattr(ax, "_colorbar")}
                    short = sum(max(0.0, PHONE_MIN_ROW_IN - box[3] * h) for box in boxes)
                    now = text_size(fig, drawn.get(id(fig), []), source)
                    narrower = phone_width_in(now) if now is not None else None  # text smaller than before
                    if narrower is not None and narrower < w - 0.01 and not collapsed and short < 0.05:
                        fig.set_size_inches(narrower, h, forward=False)
                        if narrower * fig.dpi < PHONE_SHOWN_PX:
                            fig.set_dpi(math.ceil(PHONE_SHOWN_PX / narrower))
                        continue
                    if not collapsed and short < 0.05:
                        break
                    fig.set_size_inches(w, h * 1.35 if collapsed else h + short * 1.25, forward=False)
                    for ax in fig.axes:  # constrained layout starts again from the grid, not from a failed try
                        if ax.get_subplotspec() is not None:
                            ax._set_position(ax.get_subplotspec().get_position(fig))
            except BaseException:  # drawing failed: this picture is described again next time
                described.discard(wide)
                phones.remove(found)
                raise
            small = originals[3](canvas)  # the slider views' 256-colour PNG: a third of the bytes
            texts = drawn.pop(id(fig), [])
            cut = text_outside(fig, texts)
            if cut:  # a layout this re-lay-out cannot fit (e.g. an axes legend anchored outside its axes): none
                found["phone_failed"] = [f"{f['text']!r} {f['over_px']} px outside" for f in cut[:3]]
                return
            found["phone"] = hashlib.sha256(small).hexdigest()
            note_size(fig, texts, source, variant="phone", png=found["phone"], wide=wide,
                      cpu_s=round(time.process_time() - started, 4))
            path = pathlib.Path(phone_dir) / f"{found['phone']}.png"
            if not path.exists():
                path.write_bytes(small)
        finally:
            restore()
            found["cpu_s"] = round(time.process_time() - started, 4)  # what the phone rendering cost (benchmarks)

    def print_figure(self, *args, **kwargs):
        result = originals[2](self, *args, **kwargs)
        fig = self.figure
        texts = drawn.pop(id(fig), [])
        if kwargs.get("bbox_inches") != "tight":
            record.extend(text_outside(fig, texts))
        if kwargs.get("dpi") in (None, "figure", fig.dpi):  # what the inline backend shows
            target = args[0] if args else kwargs.get("filename")
            png = target.getvalue() if kwargs.get("format") == "png" and hasattr(target, "getvalue") else None
            entry = note_size(fig, texts, "inline", **({"png": hashlib.sha256(png).hexdigest()} if png else {}))
            phone_version(fig, entry, png, "inline")
        return result

    def encode(canvas):
        fig = canvas.figure
        texts = drawn.pop(id(fig), [])
        record.extend(text_outside(fig, texts) + text_over_other_axes(fig, texts))
        png = originals[3](canvas)
        entry = note_size(fig, texts, "slider", png=hashlib.sha256(png).hexdigest())
        phone_version(fig, entry, png, "slider")
        return png

    Figure.draw, mtext.Text.draw, FigureCanvasBase.print_figure, widgets._encode = (
        figure_draw, text_draw, print_figure, encode)

    def unwatch():
        Figure.draw, mtext.Text.draw, FigureCanvasBase.print_figure, widgets._encode = originals

    return unwatch


def harvest(out_dir: str, model_ids: list[str], frames_dir: str | None = None) -> None:
    """Runs INSIDE the lesson's kernel, after its last cell (sent as source by ``run_lesson``).

    For each displayed widget (found by model id): a slider view's controls and, for each of its
    states, the PNG ``SliderView.render`` gives (written to out_dir as <sha256>.png) and an alt
    text; a self-check's definition. Writes out_dir/widgets.json. With ``frames_dir``, each state's
    PNG also goes into that frame store under ``attnlib.frames.frame_key`` (what a live kernel looks up).
    """
    import hashlib
    import json
    import pathlib

    import matplotlib.pyplot as plt
    from ipywidgets.widgets.widget import _instances

    from attnlib.widgets import ChoiceCheck, NumericCheck, SliderView

    store = None
    if frames_dir is not None:
        from attnlib.frames import FrameStore, frame_key, view_fingerprint

        store = FrameStore(frames_dir)
    out = pathlib.Path(out_dir)
    records = {}
    for model_id in model_ids:
        widget = _instances.get(model_id)
        if isinstance(widget, SliderView):
            controls = widget.controls()
            draw = widget.draw
            drawn = []

            def keep(_draw=draw, _drawn=drawn, **values):
                fig = _draw(**values)
                _drawn.append(fig)
                return fig

            images, alts = [], []
            # keys from the view as the lesson made it (before ``keep`` stands in for its draw)
            base = view_fingerprint(widget) if store is not None else None
            keys = [frame_key(widget, values, base) for values in widget.states()] if base is not None else []
            widget.draw = keep  # only to read each figure's titles; render() makes the same PNG as live
            try:
                for i, values in enumerate(widget.states()):
                    drawn.clear()
                    png = widget.render(values)
                    if keys and keys[i] is not None:
                        store.put(keys[i], png)
                    fig = drawn[-1] if drawn else draw(**values)  # a state render() had kept already
                    digest = hashlib.sha256(png).hexdigest()
                    path = out / f"{digest}.png"
                    if not path.exists():
                        path.write_bytes(png)
                    images.append(digest)
                    shown = ", ".join(f"{c['label']} = {c['readouts'][c['values'].index(values[c['name']])]}"
                                      + (f" {c['unit']}" if c["unit"] else "") for c in controls)
                    alts.append(f"Figure for {shown}. {figure_text(fig)}")
                    plt.close(fig)
            finally:
                widget.draw = draw
            records[model_id] = {"kind": "sliders", "controls": controls, "images": images, "alts": alts}
        elif isinstance(widget, (NumericCheck, ChoiceCheck)):
            records[model_id] = widget.definition()
        else:
            records[model_id] = {"kind": "unknown", "type": type(widget).__name__}
    (out / "widgets.json").write_text(json.dumps(records, default=float), encoding="utf-8")
    (out / "figure_text.json").write_text(json.dumps(globals().get("_FIGURE_TEXT_OUTSIDE", [])), encoding="utf-8")
    (out / "figure_sizes.json").write_text(json.dumps(globals().get("_FIGURE_TEXT_SIZES", [])), encoding="utf-8")
    (out / "figure_phones.json").write_text(json.dumps(globals().get("_FIGURE_PHONES", [])), encoding="utf-8")


def run_lesson_apart(path: Path, work: Path, frames: Path | None = None) -> tuple:
    """``run_lesson`` in a child process (one event loop and one kernel client per process: lessons
    can run side by side without sharing asyncio or zmq state); returns the same.

    Its kernel runs with no frame store (ATTNLIB_FRAMES=off): every picture is drawn, so each is checked
    for text outside its figure and gets its phone rendering; ``frames`` is filled by ``harvest``."""
    done = subprocess.run([sys.executable, __file__, "--execute-one", str(path), str(work),
                           *([str(frames)] if frames is not None else [])],
                          capture_output=True, text=True, env={**os.environ, "ATTNLIB_FRAMES": "off"})
    if done.returncode:
        raise SystemExit(f"{path.name}: executing it for the site failed:\n{done.stderr[-3000:]}")
    nb = nbformat.read(work / "executed.ipynb", as_version=4)
    return nb, json.loads((work / "widgets.json").read_text(encoding="utf-8"))


def widget_ids(nb) -> list[str]:
    return [o["data"][WIDGET_VIEW]["model_id"] for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if WIDGET_VIEW in o.get("data", {})]


def poll_in_slices(kc, slice_s: float = 1.0) -> None:
    """Make the kernel client's shell and iopub reads wait in slices of ``slice_s`` seconds.

    With jupyter_client 8.10 / pyzmq 27.3 the asyncio socket now and then misses the wake-up for a
    message that has already arrived: the read returns it only when its poll times out (nbclient
    waits for a cell's reply with the whole cell timeout, for iopub without one), so a finished
    cell looked hung for 300-900 s (seen about once in 20 runs of lesson 08's live check). A
    timeout sliced into short polls finds such a message within ``slice_s``; a real timeout
    still raises ``queue.Empty`` at its deadline.
    """
    from queue import Empty
    from time import monotonic

    for channel in (kc.shell_channel, kc.iopub_channel):
        async def sliced(timeout=None, _get=channel.get_msg):
            deadline = None if timeout is None else monotonic() + timeout
            while True:
                left = slice_s if deadline is None else max(0.0, min(slice_s, deadline - monotonic()))
                try:
                    return await _get(timeout=left)
                except Empty:
                    if deadline is not None and monotonic() >= deadline:
                        raise
        channel.get_msg = sliced


def run_lesson(path: Path, work: Path, timeout: int = 900, frames: Path | None = None):
    """Execute a lesson, then render its widgets' states in the same kernel.

    Returns (executed notebook, {model id: record}); the PNGs are written to ``work`` (and, with
    ``frames``, put into that frame store).
    """
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell())  # the harvest cell, written once the model ids are known
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}, record_timing=False)
    work.mkdir(parents=True, exist_ok=True)
    with client.setup_kernel():
        poll_in_slices(client.kc)
        info = client.wait_for_reply(client.kc.kernel_info())
        nb.metadata["language_info"] = info["content"]["language_info"]
        constants = "".join(f"{name} = {globals()[name]!r}\n" for name in (
            "PHONE_SHOWN_PX", "PHONE_GOAL_PX", "PHONE_MAX_IN", "PHONE_MIN_IN", "PHONE_MAX_ROW_IN", "PHONE_MIN_ROW_IN"))
        watch = (constants + "".join(inspect.getsource(f) for f in (
                     figure_name, text_outside, text_over_other_axes, text_size, smallest_text_px, figure_text,
                     phone_width_in, phone_layout, watch_figure_text))
                 + "\n_FIGURE_TEXT_OUTSIDE, _FIGURE_TEXT_SIZES, _FIGURE_PHONES = [], [], []\n"
                 f"_unwatch_figure_text = watch_figure_text(_FIGURE_TEXT_OUTSIDE, _FIGURE_TEXT_SIZES, _FIGURE_PHONES, "
                 f"{str(work)!r})\n")
        reply = client.wait_for_reply(client.kc.execute(watch, silent=True, store_history=False))
        if reply["content"]["status"] != "ok":
            raise SystemExit(f"{path.name}: the figure-text watch failed: {reply['content'].get('evalue')}")
        for index, cell in enumerate(nb.cells[:-1]):
            client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
        ids = widget_ids(nb)
        store = str(frames) if frames is not None else None
        nb.cells[-1].source = inspect.getsource(harvest) + f"\nharvest({str(work)!r}, {ids!r}, {store!r})\n"
        client.execute_cell(nb.cells[-1], len(nb.cells) - 1)
    nb.cells.pop()
    nb.metadata.pop("widgets", None)
    records = json.loads((work / "widgets.json").read_text(encoding="utf-8"))
    unknown = [r["type"] for r in records.values() if r["kind"] == "unknown"]
    if unknown:
        raise SystemExit(f"{path.name}: no static version for widgets of type {unknown}")
    return nb, records


# ---------------------------------------------------------------------------------------------
# Writing the pages
# ---------------------------------------------------------------------------------------------


class Files:
    """Content-addressed images: each distinct PNG is written once, in the folder of the first
    lesson that shows it; returns the path pages use (relative to the site root)."""

    def __init__(self, out: Path):
        self.out, self.where = out, {}

    def add(self, png: bytes, folder: str) -> str:
        digest = hashlib.sha256(png).hexdigest()
        if digest not in self.where:
            name = f"{digest[:20]}.png"
            (self.out / folder).mkdir(exist_ok=True)
            (self.out / folder / name).write_bytes(png)
            self.where[digest] = f"{folder}/{name}"
        return self.where[digest]


# What moves a slider, said for the device (course.css shows one of the two): on a touch screen, dragging or
# tapping along it; with a keyboard, the arrow keys, Home/End and Page Up/Page Down of a focused range input.
SLIDER_HINT = ('<span class="on-touch">Drag a slider or tap along it to change the picture.</span>'
               '<span class="on-keys">Drag a slider, or focus it (Tab) and use the arrow keys; Home and End jump to '
               'the ends, Page Up and Page Down take bigger steps.</span>')


def phone_renderings(work: Path) -> dict:
    """{sha256 of a shown PNG: {"alt": what it shows in words, "phone": path of its phone PNG or None}} for a
    lesson executed into ``work`` (``watch_figure_text``); {} if it was run without the watch."""
    found = work / "figure_phones.json"
    if not found.exists():
        return {}
    return {e["wide"]: {"alt": e["alt"], "phone": work / f"{e['phone']}.png" if e["phone"] else None}
            for e in json.loads(found.read_text(encoding="utf-8"))}


ZOOM_HINT = ('<span class="zh-tap">Tap</span><span class="zh-click">Click</span> the figure to enlarge it '
             '(again to shrink it).')


def picture_markup(wide_url: str, phone_url: str | None, size: tuple, phone_size: tuple | None, img_attrs: str) -> str:
    """<picture>: the phone rendering for screens up to PHONE_MEDIA wide, else the figure as shown on a large screen."""
    source = (f'<source media="{PHONE_MEDIA}" srcset="{phone_url}" width="{phone_size[0]}" height="{phone_size[1]}">'
              if phone_url else "")
    return f'<picture>{source}<img src="{wide_url}" {img_attrs} width="{size[0]}" height="{size[1]}"></picture>'


def slider_markup(n: int, record: dict, work: Path, files: Files, folder: str) -> str:
    """A slider view: range inputs, readouts, the figure (with its phone renderings), and its data in the names
    attnlib/frameslider.js reads from its model (spec, state, urls, images, phones, media, alts)."""
    controls = record["controls"]
    described = phone_renderings(work)
    urls, url_index, images, phones = [], {}, [], []

    def index_of(png: bytes) -> int:
        url = files.add(png, folder)
        if url not in url_index:
            url_index[url] = len(urls)
            urls.append(url)
        return url_index[url]

    for digest in record["images"]:
        images.append(index_of((work / f"{digest}.png").read_bytes()))
        phone = described.get(digest, {}).get("phone")
        phones.append(index_of(phone.read_bytes()) if phone else images[-1])
    sizes = [len(c["values"]) for c in controls]
    state = 0
    for c, size in zip(controls, sizes, strict=True):
        state = state * size + c["index"]
    width, height = png_size((work / f"{record['images'][state]}.png").read_bytes())
    phone = described.get(record["images"][state], {}).get("phone")  # a view with phone renderings has a <source>
    phone_size = png_size(phone.read_bytes()) if phone else (width, height)
    rows = []
    for c in controls:
        ident = f"sv{n}-{c['name']}"
        shown = c["readouts"][c["index"]] + (f" {c['unit']}" if c["unit"] else "")
        label = c["label"] + (f" ({c['unit']})" if c["unit"] else "")
        rows.append(
            f'<div class="sv-row"><label for="{ident}">{html.escape(label)}</label>'
            f'<input type="range" id="{ident}" min="0" max="{len(c["values"]) - 1}" step="1" value="{c["index"]}" '
            f'aria-valuetext="{html.escape(shown)}"><output for="{ident}" aria-hidden="true">{html.escape(shown)}'
            f"</output></div>")
    data = {"spec": [{"name": c["name"], "label": c["label"], "unit": c["unit"], "readouts": c["readouts"]}
                     for c in controls],
            "state": state, "urls": urls, "images": images, "alts": record["alts"]}
    if phones != images:
        data.update(phones=phones, media=PHONE_MEDIA)
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    count = 1
    for size in sizes:
        count *= size
    alt = html.escape(record["alts"][state])
    picture = picture_markup(urls[images[state]], urls[phones[state]] if phones != images else None, (width, height),
                             phone_size, f'alt="{alt}"')
    return (f'<div class="sv" id="sv{n}" data-states="{count}">{"".join(rows)}'
            f'<figure>{picture}'
            f'<figcaption class="zoom-hint" hidden>{ZOOM_HINT}</figcaption></figure>'
            f'<p class="sv-error" role="alert" hidden></p>'
            f'<p class="sv-hint">{SLIDER_HINT} All {count} pictures were drawn ahead, so no Python is needed.</p>'
            f'<script type="application/json" class="sv-data">{payload}</script></div>')


CHECK_FORM = '<form class="check '  # how every self-check's markup starts (StaticWidgets finds them by it)


def check_markup(n: int, definition: dict) -> str:
    """A self-check as a form; course.js grades it from the same definition the live widget uses.

    The answer, hint and explanation are only in the form's JSON data (never in visible text) until
    the reader's answer is graded."""
    payload = json.dumps(definition, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    question = f"<b>Self-check.</b> {definition['question']}"  # HTML, as in the live widget
    data = f'<script type="application/json" class="check-data">{payload}</script>'
    feedback = '<div class="check-feedback" role="status" aria-live="polite"></div>'
    if definition["kind"] == "numeric":
        precision = html.escape(definition.get("precision", ""))
        placeholder = html.escape(definition.get("placeholder", "a number, e.g. 0.25 or 1/8"))
        return (f'{CHECK_FORM}check-numeric" id="check{n}" novalidate>'
                f'<p class="check-question" id="check{n}-q">{question} '
                f'<i class="check-precision">{precision}</i></p>'
                f'<div class="check-answer"><label for="check{n}-answer">answer:</label>'
                f'<input type="text" id="check{n}-answer" aria-describedby="check{n}-q" autocomplete="off" '
                f'autocapitalize="off" spellcheck="false" placeholder="{placeholder}">'
                f'<button type="submit">Check</button></div>{feedback}{data}</form>')
    options = "".join(
        f'<label class="check-option"><input type="radio" name="check{n}" value="{i}"> '
        f"<span>{html.escape(text)}</span></label>" for i, text in enumerate(definition["options"]))
    return (f'{CHECK_FORM}check-choice" id="check{n}" novalidate><fieldset>'
            f'<legend class="check-question">{question}</legend>{options}</fieldset>'
            f'<button type="submit">Check</button>{feedback}{data}</form>')


def widget_markup(records: dict, work: Path, files: Files, folder: str) -> dict:
    """{model id: static HTML}, numbered in the order the widgets appear."""
    out = {}
    for n, (model_id, record) in enumerate(records.items(), start=1):
        if record["kind"] == "sliders":
            out[model_id] = slider_markup(n, record, work, files, folder)
        else:
            out[model_id] = check_markup(n, record)
    return out


def math_text(node) -> str:
    """Plain text of a MathML (or any) element: d_k, √(d_k), a/b, x^2 rather than the glued "dk"."""
    if isinstance(node, str):
        return str(node)
    parts = [math_text(c) for c in node.children]
    name = getattr(node, "name", "")
    if name == "msub" and len(parts) == 2:
        return f"{parts[0]}_{parts[1]}"
    if name == "msup" and len(parts) == 2:
        return f"{parts[0]}^{parts[1]}"
    if name == "msubsup" and len(parts) == 3:
        return f"{parts[0]}_{parts[1]}^{parts[2]}"
    if name == "mfrac" and len(parts) == 2:
        return f"{parts[0]}/{parts[1]}"
    if name == "msqrt":
        inner = "".join(parts)
        return f"√{inner}" if len(inner) <= 1 or re.fullmatch(r"\w_\w+", inner) else f"√({inner})"
    return "".join(parts)


def introducing_sentence(img, limit: int = 220) -> str:
    """The words just before a figure's code cell: the last sentences (at most ``limit`` characters) of the last
    paragraph of the nearest markdown cell above it, outside instructor notes and folded solutions."""
    cell = img.find_parent(class_="jp-Cell")
    markdown = cell.find_previous(class_="jp-MarkdownCell") if cell is not None else None
    if markdown is None:
        return ""
    paragraphs = [p for p in markdown.select("p, li")
                  if not p.find_parent(["blockquote", "details"]) and p.get_text(strip=True)]
    if not paragraphs:
        return ""
    text = " ".join(math_text(paragraphs[-1]).split())
    sentences = re.split(r"(?<=[.!?:])\s+(?=[A-Z0-9(“\"'])", text)
    kept = []
    for sentence in reversed(sentences):
        if kept and len(" ".join([sentence, *kept])) > limit:
            break
        kept.insert(0, sentence)
    said = " ".join(kept)
    if len(said) > limit:
        said = said[:limit].rsplit(" ", 1)[0] + "…"
    return said


def figure_alt(shows: str, intro: str, title: str) -> str:
    """An alt text from what a figure shows (``figure_text``) and the sentence that introduces it."""
    parts = [shows.rstrip(". ")] if shows.strip() else []
    if intro:
        parts.append(f"In the lesson: {intro}")
    return ". ".join(parts) if parts else f"A figure without a title or axis labels, in “{title}”"


def finish_page(page: str, title: str, lesson_names: set[str], files: Files | None = None,
                folder: str = "", described: dict | None = None) -> tuple[str, str]:
    """(page, its styles): lesson links point at pages, figures become files with alt text, the
    page's styles move to the shared course.css and course.js is loaded at the end (after ``view_module``
    on a page with slider views).

    ``described`` (``phone_renderings``): per shown PNG's sha256, what it shows in words (its alt text, with the
    sentence that introduces it) and its phone rendering (a <picture> source for small screens)."""
    soup = BeautifulSoup(page, features="html.parser")
    for a in soup.select(".celltag_navigation a[href]"):  # generated navigation: "Contents" is the index on the site
        if a["href"] == CONTENTS_LESSON and a.get_text(strip=True) == "Contents":
            a["href"] = "index.html"
    fold_code(soup)
    fold_notes(soup)
    keyboard_scroll_boxes(soup)
    for a in soup.find_all("a", href=True):
        target, _, anchor = a["href"].partition("#")
        if target in lesson_names:
            a["href"] = target[: -len(".ipynb")] + ".html" + (f"#{anchor}" if anchor else "")
    figures = [img for img in soup.select(".jp-OutputArea-output img, .jp-RenderedMarkdown img")
               if not img.find_parent(class_="sv")]
    for img in figures:
        src = img.get("src", "")
        png = b64decode(src.split(",", 1)[1]) if src.startswith("data:image/png;base64,") else None
        found = (described or {}).get(hashlib.sha256(png).hexdigest(), {}) if png else {}
        if not img.get("alt") or img["alt"].startswith("No description"):
            img["alt"] = figure_alt(found.get("alt", ""), introducing_sentence(img), title)
        if files is not None and png is not None:
            img["src"] = files.add(png, folder)
            img["width"], img["height"] = (str(v) for v in png_size(png))
            img["loading"] = "lazy"
            img["decoding"] = "async"
            picture = img.wrap(soup.new_tag("picture"))
            if found.get("phone"):
                phone = found["phone"].read_bytes()
                width, height = png_size(phone)
                attrs = {"media": PHONE_MEDIA, "srcset": files.add(phone, folder),
                         "width": str(width), "height": str(height)}
                picture.insert(0, soup.new_tag("source", attrs=attrs))
            hint = BeautifulSoup(f'<p class="zoom-hint" hidden>{ZOOM_HINT}</p>', features="html.parser")
            picture.insert_after(hint)
    styles = []
    head = soup.head
    if head is not None:
        for style in head.find_all("style"):
            styles.append(style.string or "")
            style.decompose()
        head.append(soup.new_tag("link", rel="stylesheet", href=SITE_CSS))
        head.append(soup.new_tag("link", rel="icon", href="data:,"))  # no request for /favicon.ico
    body = soup.body
    if body is not None:
        bar = BeautifulSoup(
            f'<nav class="site-bar" aria-label="course"><a class="site-name" href="index.html">{html.escape(TITLE)}</a>'
            f"<span>{html.escape(title)}</span></nav>", features="html.parser")
        body.insert(0, bar)
        if soup.select(".sv"):  # parsed, so the module's text stays as it is (a string set here would be escaped)
            body.append(BeautifulSoup(view_module(), features="html.parser"))
        body.append(soup.new_tag("script", src=SITE_JS))
    return str(soup), "\n".join(styles)


def keyboard_scroll_boxes(soup) -> None:
    """Every box that may scroll sideways on a narrow screen gets the keyboard focus (tabindex 0),
    a role and a name, so it can be scrolled with the arrow keys: a code cell's source, a printed
    output, a table (wrapped in a scrolling box, so it stays a table) and a display equation
    (wrapped likewise). The exporter's tabindex on whole input wrappers and on outputs that do not
    scroll (figures, widgets) is removed: they are not scroll boxes, and each was a tab stop with no name."""
    for wrapper in soup.select("div.jp-Cell-inputWrapper[tabindex]"):
        del wrapper["tabindex"]
    for n, editor in enumerate(soup.select("div.jp-InputArea-editor"), start=1):
        editor["tabindex"], editor["role"], editor["aria-label"] = "0", "group", f"Code {n}"
    for output in soup.select("div.jp-OutputArea-output[tabindex]"):
        if "jp-RenderedText" not in output.get("class", []):
            del output["tabindex"]
    for n, output in enumerate(soup.select("div.jp-OutputArea-output.jp-RenderedText"), start=1):
        output["tabindex"], output["role"], output["aria-label"] = "0", "group", f"Printed output {n}"
    for n, table in enumerate(soup.select(".jp-RenderedHTMLCommon table"), start=1):
        if "scroll-x" not in (table.parent.get("class") or []):
            table.wrap(soup.new_tag("div", attrs={"class": "scroll-x", "tabindex": "0", "role": "group",
                                                  "aria-label": f"Table {n}"}))
    for n, math in enumerate(soup.select('math[display="block"]'), start=1):
        if "math-scroll" not in (math.parent.get("class") or []):
            math.wrap(soup.new_tag("span", attrs={"class": "scroll-x math-scroll", "tabindex": "0", "role": "group",
                                                  "aria-label": f"Equation {n}"}))


def interview_box(lesson_names: set[str]) -> str:
    """The index's "Preparing for an interview? Start here" box, when the interview lesson is in the course."""
    if f"{INTERVIEW_LESSON}.ipynb" not in lesson_names:
        return ""
    page = f"{INTERVIEW_LESSON}.html"
    return (f'<section class="interview" aria-labelledby="interview-go"><p class="go"><a id="interview-go" '
            f'href="{page}#questions">Preparing for an interview? Start here</a></p>'
            "<p>The questions an interviewer asks about the √d_k, each with a short model answer and a computation "
            f'you can quote numbers from; or go straight to the <a href="{page}#revision-sheet">one-page revision '
            "sheet</a>.</p></section>\n")


def fold_code(soup) -> None:
    """Put each code cell's source in a ``<details>`` whose summary reads "Show code (N lines)": folded,
    except in cells tagged ``SHOW_CODE_TAG``, where the code is what the lesson teaches. Outputs stay
    outside it, in view. A native disclosure: Tab reaches it, Enter or Space opens it, and screen
    readers announce it as expanded or collapsed; no JavaScript."""
    for cell in soup.select("div.jp-CodeCell"):
        wrapper = cell.find("div", class_="jp-Cell-inputWrapper", recursive=False)
        if wrapper is None or wrapper.find_parent("details") is not None:
            continue
        editor = wrapper.find(class_="jp-InputArea-editor")
        source = editor.get_text() if editor is not None else ""
        lines = len(source.strip("\n").splitlines())
        if not source.strip():
            continue
        fold = soup.new_tag("details", attrs={"class": "code-fold"})
        if f"celltag_{SHOW_CODE_TAG}" in cell.get("class", []):
            fold["open"] = ""
        summary = BeautifulSoup(
            '<summary><span class="fold-show">Show code</span><span class="fold-hide">Hide code</span> '
            f'<span class="fold-lines">({lines} line{"s" if lines != 1 else ""})</span></summary>',
            features="html.parser")
        wrapper.wrap(fold)
        fold.insert(0, summary)


def fold_notes(soup) -> None:
    """The lesson's instructor notes (cells tagged ``instructor-notes``: the heading, then the notes) folded as the
    collapsed heading is in JupyterLab: the notes' text goes into a ``<details class="instructor-notes">`` whose
    summary reads "For instructors" (a learner sees one line, a teacher opens it); the heading cell is dropped
    (the summary says it). A native disclosure: Tab reaches it, Enter or Space opens it; no JavaScript."""
    for tagged in soup.select(f".celltag_{NOTES_TAG}"):  # the lab template tags a markdown cell's rendered output
        if tagged.find(["h1", "h2", "h3", "h4", "h5", "h6"]) is not None and tagged.find("blockquote") is None:
            cell = tagged.find_parent(class_="jp-Cell")
            (cell or tagged).decompose()
            continue
        fold = soup.new_tag("details", attrs={"class": "instructor-notes"})
        summary = soup.new_tag("summary")
        summary.string = "For instructors"
        fold.append(summary)
        for child in list(tagged.children):
            fold.append(child.extract())
        tagged.append(fold)


def lesson_line(name: str, records: dict, seconds: float) -> str:
    """The build's line for one lesson: its run time, its sliders (or "no sliders") and self-checks."""
    views = [r for r in records.values() if r["kind"] == "sliders"]
    checks = len(records) - len(views)
    states = sum(len(r["images"]) for r in views)
    sliders = (f"{len(views)} slider view{'s' if len(views) != 1 else ''} ({states} pictures drawn)" if views
               else "no sliders")
    return (f"{name}: ran in {seconds:.0f} s; {sliders}, "
            f"{checks or 'no'} self-check{'s' if checks != 1 else ''}")


def build(paths: list[Path], out: Path, jobs: int = 2, log=print, text_outside_found: list | None = None,
          text_sizes_found: list | None = None, frames: Path | None = None) -> list[Path]:
    """Build the site for ``paths`` into ``out`` (replaced); returns the written pages (index last).

    With ``frames`` (a folder), every slider state rendered is also put into that frame store
    (``attnlib.frames``), where a live kernel running the same lesson finds it.

    Every figure the lessons show (static or a slider state) is checked for text outside its canvas
    (``watch_figure_text``); each finding is logged and, when ``text_outside_found`` is a list,
    appended to it as {"lesson", "figure", "text", "over_px"}. When ``text_sizes_found`` is a list,
    each shown figure's smallest text (``text_size``) is appended to it with its "lesson"."""
    if not paths:
        raise ValueError("paths: no lessons to build")
    # links to any lesson beside the built ones point at its page (a partial build writes the same pages)
    names = {p.name for p in paths} | {p.name for d in {p.parent for p in paths} for p in d.glob("*.ipynb")
                                       if LESSON.match(p.name)}
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".site-", dir=out.parent))
    staging.chmod(0o755)  # readable by a web server, like the folders inside it
    try:
        with tempfile.TemporaryDirectory(prefix="site-render-") as tmp:

            def one(path: Path):
                start = time.perf_counter()
                nb, records = run_lesson_apart(path, Path(tmp) / path.stem, frames)
                return nb, records, time.perf_counter() - start

            workers = max(1, jobs)
            log(f"Building {len(paths)} lesson page{'s' if len(paths) != 1 else ''} into {out}: each lesson runs "
                f"afresh and every slider picture is drawn ahead ({workers} lesson{'s' if workers != 1 else ''} "
                "at a time; a lesson takes from about 20 s to a few minutes); one line per lesson, in lesson order.")
            results = []
            with ThreadPoolExecutor(max_workers=workers) as pool:
                # map() yields in the order of `paths`: each line is logged as soon as its lesson and all
                # the ones before it are done, so the lines come in lesson order
                done = zip(paths, pool.map(one, paths), strict=True)
                for k, (path, (nb, records, seconds)) in enumerate(done, start=1):
                    log(f"[{k}/{len(paths)}] {lesson_line(path.name, records, seconds)}")
                    for found in json.loads((Path(tmp) / path.stem / "figure_text.json").read_text(encoding="utf-8")):
                        log(f"{path.name}: text outside its figure by {found['over_px']} px: {found['text']!r} "
                            f"(figure {found['figure']!r})")
                        if text_outside_found is not None:
                            text_outside_found.append({"lesson": path.name, **found})
                    if text_sizes_found is not None:
                        sizes = json.loads((Path(tmp) / path.stem / "figure_sizes.json").read_text(encoding="utf-8"))
                        text_sizes_found.extend({"lesson": path.name, **entry} for entry in sizes)
                    results.append((nb, records))

            exporter = OfflineHTMLExporter()
            files = Files(staging)
            written, items, styles = [], [], None
            for path, (nb, records) in zip(paths, results, strict=True):
                title = lesson_title(nb)
                folder = f"{path.stem}_files"
                resources = {"metadata": {"name": title, "path": str(path.parent)},
                             "widgets": widget_markup(records, Path(tmp) / path.stem, files, folder)}
                page, _ = exporter.from_notebook_node(nb, resources=resources)
                page, page_styles = finish_page(page, title, names, files, folder,
                                                described=phone_renderings(Path(tmp) / path.stem))
                if styles is None:
                    styles = page_styles
                elif page_styles != styles:
                    raise SystemExit(f"{path.name}: its styles differ from the other pages' (one course.css)")
                fetched = external_resources(page)
                if fetched:
                    raise SystemExit(f"{path.name}: the page would fetch {fetched}; the site must work offline")
                target = staging / f"{path.stem}.html"
                target.write_text(page, encoding="utf-8")
                written.append(out / target.name)
                views = sum(r["kind"] == "sliders" for r in records.values())
                checks = len(records) - views
                what = ", ".join(f"{k} {w}{'s' if k != 1 else ''}" for k, w in
                                 ((views, "interactive figure"), (checks, "self-check")) if k)
                items.append(f'<li><a href="{target.name}">{html.escape(title)}</a>'
                             + (f' <span class="what">({what})</span>' if what else "") + "</li>")
            view_css = FRAMESLIDER_CSS.read_text(encoding="utf-8")
            (staging / SITE_CSS).write_text(styles + "\n" + view_css + EXTRA_CSS + A11Y_CSS, encoding="utf-8")
            (staging / SITE_JS).write_text(SITE_SCRIPT, encoding="utf-8")
            (staging / "index.html").write_text(INDEX_PAGE.format(title=html.escape(TITLE), items="\n".join(items),
                                                                  interview=interview_box(names)), encoding="utf-8")
            written.append(out / "index.html")
        if out.exists():
            if not (out / "index.html").exists() and any(out.iterdir()):
                raise SystemExit(f"{out} exists and is not a built site (no index.html): not replacing it")
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return written


def site_size(out: Path) -> int:
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


def main(argv: list[str]) -> int:
    if argv[:1] == ["--execute-one"]:  # the child process of run_lesson_apart
        path, work = Path(argv[1]), Path(argv[2])
        nb, _ = run_lesson(path, work, frames=Path(argv[3]) if len(argv) > 3 else None)
        nbformat.write(nb, work / "executed.ipynb")
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/NN-*.ipynb")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site", help="default: build/site")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="lessons executed at once (default: 2, or 1 on a one-core machine)")
    parser.add_argument("--frames", type=Path, default=None, metavar="DIR",
                        help="also put every slider picture into this frame store (attnlib.frames), where live "
                             "kernels find it: e.g. build/frames, then ATTNLIB_FRAMES=build/frames jupyter lab")
    args = parser.parse_args(argv)
    if args.frames is not None and args.frames.exists() and not args.frames.is_dir():
        parser.error(f"--frames: {args.frames} is not a folder")
    paths = args.notebooks or sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if LESSON.match(p.name))
    if not paths:
        print("no lessons found in notebooks/ (expected notebooks/NN-name.ipynb)")
        return 1
    if latex_to_mathml is None:
        print("note: latex2mathml is not installed, so maths stays as TeX source in the pages")
    start = time.perf_counter()
    frames = args.frames.resolve() if args.frames is not None else None
    pages = build(paths, args.out, jobs=args.jobs, log=lambda line: print(line, flush=True),  # lines as they come
                  frames=frames)
    print(f"wrote {len(pages) - 1} lesson page(s), {pages[-1]} and their images "
          f"({site_size(args.out) / 1e6:.1f} MB) in {time.perf_counter() - start:.0f} s")
    print(f"open {args.out / 'index.html'} in a browser, or copy the folder to any static host")
    if frames is not None:
        from attnlib.frames import FrameStore

        store = FrameStore(frames)
        print(f"frame store {frames}: {len(store.keys())} frames, {store.size_bytes() / 1e6:.1f} MB "
              f"(ATTNLIB_FRAMES={frames} makes live kernels read it)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
