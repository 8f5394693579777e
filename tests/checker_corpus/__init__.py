"""A corpus of attention implementations written from scratch (numpy and torch, never attnlib), each with the
verdict that is true of it by construction under the lead's table of codes (see ``_common.OK_CODES``/``CODES``).
tests/test_checker_corpus.py runs ``attnlib.check_attention`` on every entry.

Families (one module each): numpy_correct, numpy_bugs, masks, modern, torch_impls, layers. Every entry carries a
one-line proof comment at its registration; entries the table leaves ambiguous, or that no checker could tell
from another code, are not included and are listed in their module's docstring.
"""

from __future__ import annotations

from . import layers, masks, modern, numpy_bugs, numpy_correct, torch_impls
from ._common import CODES, LAYOUT_WORDS, OK_CODES, Entry

ENTRIES = [*numpy_correct.ENTRIES, *numpy_bugs.ENTRIES, *masks.ENTRIES, *modern.ENTRIES, *torch_impls.ENTRIES,
           *layers.ENTRIES]

__all__ = ["CODES", "ENTRIES", "LAYOUT_WORDS", "OK_CODES", "Entry"]

assert len({e.name for e in ENTRIES}) == len(ENTRIES), "entry names must be unique"
assert all(e.code in CODES for e in ENTRIES), "every expected code is one of the table's"
