"""``AttentionReport``: the verdict, its message and the numbers measured."""

from __future__ import annotations

from dataclasses import dataclass, field

from .codes import OK_CODES


def fmt(x: float) -> str:
    """A number as the reports print it (4 significant digits)."""
    return f"{x:.4g}"


@dataclass
class AttentionReport:
    """The checker's verdict. ``repr`` (and the notebook view) is the plain-words message.

    diagnosis : one code of ``DIAGNOSES``.   ok : diagnosis is one of the (ok) codes.
    scale : {d_k: measured factor c in softmax(c·q·kᵀ)} (first probe at each d_k).
    measured : what else was measured, by verdict: ``g`` and ``bound`` (qk_norm), ``cap`` (soft_cap),
        ``sink_mass`` and ``sink_logit`` (attention_sink), ``bias`` (position_bias), ``m`` (constant_multiple).
    probes : one dict per probe (sizes, c, row sums, output factor).
    notes : what was and was not checked (mask convention, 2-D only, ...).
    """

    diagnosis: str
    message: str
    scale: dict = field(default_factory=dict)
    probes: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    candidates: tuple = ()
    measured: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.diagnosis in OK_CODES

    def __repr__(self) -> str:
        head = f"✓ {self.diagnosis}" if self.ok else f"✗ {self.diagnosis}"
        lines = [f"{head}: {self.message}"]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        head = f"✓ **{self.diagnosis}**" if self.ok else f"✗ **{self.diagnosis}**"
        text = f"{head}: {self.message}"
        rows = [p for p in self.probes if p.get("c") is not None]
        if rows:
            text += "\n\n| d_k | heads | L | S | measured c | 1/√d_k |\n|---:|---:|---:|---:|---:|---:|\n"
            text += "\n".join(
                f"| {p['d_k']} | {p.get('H') or '-'} | {p['L']} | {p['S']} | {fmt(p['c'])} "
                f"| {fmt(p['d_k'] ** -0.5)} |"
                for p in rows)
        if self.notes:
            text += "\n\n" + "\n".join(f"- {n}" for n in self.notes)
        return text
