"""Build the bundled Q&A set (``bundled:qa``: ``data/qa/items.jsonl``) from ``questions.toml``.

Run ``python -m judgeprobe.candidates.qa`` to rewrite it (``--check`` only compares).

Each question over a paragraph of the bundled corpus has a correct answer written by hand; the
wrong answer is its copy changed in one fact by the sensitivity controls' own rules
(``text.degrade``, the question's ``kind``), and checked by their ``verify``. The context is the
paragraph and the question; gold ``preferred`` names the correct answer, on side 1 for the even
questions and side 2 for the odd ones. No model is involved, so the build is exact.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import orjson

from judgeprobe.core.corpus import load_documents
from judgeprobe.text.degrade import degrade, verify

HERE = Path(__file__).resolve().parent.parent / "data" / "qa"
SOURCE, ITEMS = HERE / "questions.toml", HERE / "items.jsonl"


def context(passage: str, question: str) -> str:
    """What the judge reads before the two answers: the passage, then the question."""
    return (
        f"Read the passage and answer the question.\n\nPassage:\n{passage}\n\nQuestion: {question}"
    )


def build() -> bytes:
    """The items file's bytes, built from ``questions.toml`` and the bundled corpus."""
    docs = {d.id: d for d in load_documents("bundled:corpus")}
    rows = []
    for i, q in enumerate(tomllib.loads(SOURCE.read_text("utf-8"))["questions"]):
        doc = docs[q["document"]]
        passage = doc.text.split("\n\n")[q["paragraph"]].strip()
        item_id = f"qa-{i:02d}"
        asked = context(passage, q["question"])
        wrong = degrade(q["kind"], asked, q["answer"], item_id)
        if wrong is None or verify(q["kind"], asked, wrong.original, wrong.degraded):
            raise SystemExit(f"{item_id}: no checkable {q['kind']} change in its answer")
        first = i % 2 == 0
        rows.append({
            "item_id": item_id,
            "subset": "qa",
            "document_id": doc.id,
            "domain": doc.domain,
            "title": doc.title,
            "question": asked,
            "response_1": q["answer"] if first else wrong.degraded,
            "response_2": wrong.degraded if first else q["answer"],
            "preferred": 1 if first else 2,
            "wrong_fact": wrong.change,
        })  # fmt: skip
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


def main(argv: list[str]) -> int:
    """Rewrite items.jsonl, or with ``--check`` say whether it is what the source builds."""
    built = build()
    if "--check" in argv:
        same = ITEMS.read_bytes() == built
        print("items.jsonl is up to date" if same else "items.jsonl differs: rebuild it")
        return 0 if same else 1
    ITEMS.write_bytes(built)
    print(f"wrote {ITEMS}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
