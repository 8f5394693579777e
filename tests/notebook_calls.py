"""The self-check calls written in a lesson's code cells, read without running the notebook."""

import ast
import json
from pathlib import Path

from IPython.core.inputtransformer2 import TransformerManager

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
_POSITIONAL = {"numeric_check": ["question", "answer"], "choice_check": ["question", "options"]}


def self_checks(name: str) -> list[tuple[str, dict]]:
    """(kind, literal arguments) of every numeric_check / choice_check call in notebooks/``name``.

    Positional arguments appear under their parameter names, so the dict can be passed back
    to the widget (``widgets.numeric_check(**kwargs)``).
    Cells go through IPython's transformer first, so a %magic line does not stop the parse.
    """
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    found = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        for node in ast.walk(ast.parse(TransformerManager().transform_cell("".join(cell["source"])))):
            kind = getattr(node.func, "attr", None) if isinstance(node, ast.Call) else None
            if kind in _POSITIONAL:
                kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
                kwargs.update(zip(_POSITIONAL[kind], map(ast.literal_eval, node.args), strict=False))
                found.append((kind, kwargs))
    return found


def checks_by_kind(name: str) -> tuple[list[dict], list[dict]]:
    """(numeric_check arguments, choice_check arguments) of notebooks/``name``'s self-checks, in order."""
    checks = self_checks(name)
    return ([kw for kind, kw in checks if kind == "numeric_check"],
            [kw for kind, kw in checks if kind == "choice_check"])
