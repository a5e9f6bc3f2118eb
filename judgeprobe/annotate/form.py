"""The self-contained annotation form: one HTML file, no network, that saves a CSV.

The pairs are embedded as JSON; answers are kept in the browser's local storage as the
annotator goes and downloaded as ``pair_id,annotator,label`` (label ``1``, ``2`` or ``Tie``,
in the order shown), the format ``annotate import`` reads.
"""

from __future__ import annotations

from importlib import resources

import orjson


def render_form(rows: list[dict[str, str]], digest: str) -> str:
    """The form for ``rows`` (pair_id, document, summary_1, summary_2).

    ``digest`` names the sample, so answers to another sample are never mixed into this one's
    storage.
    """
    template = resources.files(__package__).joinpath("form.html").read_text(encoding="utf-8")
    shown = [{k: r[k] for k in ("pair_id", "document", "summary_1", "summary_2")} for r in rows]
    # Inside <script>, "</" could end the element early; JSON allows "<\/" for it.
    data = orjson.dumps(shown).decode().replace("</", "<\\/")
    return template.replace("__DIGEST__", digest).replace("__PAIRS__", data)
