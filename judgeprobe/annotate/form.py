"""The self-contained annotation form: one HTML file, no network, that saves a CSV.

The pairs are embedded as JSON; answers are kept in the browser's local storage as the
annotator goes and downloaded as ``pair_id,annotator,label`` (label ``1``, ``2`` or ``Tie``,
in the order shown), the format ``annotate import`` reads.
"""

from __future__ import annotations

from judgeprobe.render.templating import page


def render_form(rows: list[dict[str, str]], digest: str) -> str:
    """The form for ``rows`` (pair_id, document, summary_1, summary_2).

    ``digest`` names the sample, so answers to another sample are never mixed into this one's
    storage.
    """
    shown = [{k: r[k] for k in ("pair_id", "document", "summary_1", "summary_2")} for r in rows]
    # |tojson writes <, >, & and ' as \u escapes: no text can end the <script> holding it.
    return page("annotate_form.html.j2", pairs=shown, digest=digest)
