"""Prompt wordings: a built-in protocol's instructions said in other words (docs/protocols.md).

Wording 0 is the protocol as it always was, its templates byte for byte (so its judgment keys,
digests and golden files do not move). Wording k ≥ 1 replaces each instruction template NAME
by its k-th paraphrase, the packaged file ``NAME_wk`` (``baseline_v1_w2``, ``pbp_lock_v3_w1``):
the same instructions, the same output format, reply schema and placeholders, other words.
What the judge is shown stays as it is under every wording: the materials block (the document
and the two summaries, ``materials_v1``) and the data headers of PBP's later stages
("Locked notes:", "Scores:"); a wording changes how the judge is asked, never what it judges.

A wording is a protocol object like any other (``worded``): its templates differ, so its
``repr`` and template hash, and with them its judgment and request keys, differ from every
other wording's.
"""

from __future__ import annotations

from dataclasses import replace

from judgeprobe.prompts import has_template
from judgeprobe.protocols.baseline import Baseline
from judgeprobe.protocols.pbp import PBP
from judgeprobe.protocols.scot import SCoT

SHARED = frozenset({"materials_v1"})
"""Templates that show what is judged, not how: the same under every wording."""

Builtin = Baseline | SCoT | PBP
"""A protocol that ships paraphrases of its prompts."""


def paraphrase(name: str, wording: int) -> str:
    """The template of ``wording`` for the template ``name`` (wording 0 and shared: ``name``)."""
    return name if wording == 0 or name in SHARED else f"{name}_w{wording}"


def shipped(templates: tuple[str, ...]) -> int:
    """How many wordings a protocol with these templates ships: the original and its paraphrases.

    Wording k counts when every instruction template has its k-th paraphrase; a protocol with
    no packaged template (``own``) ships its original only.
    """
    if not templates:
        return 1
    k = 1
    while all(has_template(paraphrase(t, k)) for t in templates):
        k += 1
    return k


def worded(protocol: Builtin, wording: int) -> Builtin:
    """``protocol`` under ``wording``: its instruction templates replaced by their paraphrases."""
    if wording >= shipped(protocol.templates):
        raise ValueError(f"{protocol.name} ships no wording {wording}")
    return replace(protocol, templates=tuple(paraphrase(t, wording) for t in protocol.templates))


BUILTIN: dict[str, type[Builtin]] = {"baseline": Baseline, "scot": SCoT, "pbp": PBP}
"""The protocols that ship paraphrases, by name."""


def wordings_of(protocol: str) -> int:
    """How many wordings the built-in ``protocol`` ships (the original counted; 1 for others)."""
    return shipped(BUILTIN[protocol]().templates) if protocol in BUILTIN else 1
