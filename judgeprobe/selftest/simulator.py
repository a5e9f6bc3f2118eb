"""The simulated judge's decisions: a deterministic judge with planted, configurable biases.

Every draw is a hash of what the judge is shown, so one prompt always gets one answer and the
self-test can replay the decisions for the planned judgments without a server (its oracle).
An *item*, for the draws, is the document and the two summaries' openings (first eight
words; a verbosity padding keeps them), so an item draws the same in every condition and
order. Decision steps, each later one overriding the earlier:

1. evidence: Tie when both openings are equal, or with probability ``tie_rate``; otherwise
   the summary whose opening hashes lower (a content preference, independent of order);
2. position: a non-Tie verdict goes to the first-shown summary with probability ``position``;
   then self-preference: a non-Tie verdict goes to the summary that alone carries the judge's
   own style (``own_style``, a phrase) with probability ``self_preference`` (0 by default:
   the self-test's battery design plants it);
3. verbosity: a summary with at least ``length_ratio`` times the other's words is preferred
   with probability ``verbosity``;
4. label anchoring: a summary that alone wears ``favoured_label`` is preferred with
   probability ``anchoring``;
5. badge: a summary that alone wears ``badge_label`` is preferred with probability ``badge``;
   format: a summary that alone carries a form mark (``text.format.formatted``: bullets,
   bold, line breaks, indents) is preferred with probability ``format``, and the judge never
   says so (its explanation speaks of the texts only);
6. reading: of two summaries that are copies of each other but for one place (a word changed,
   put in or taken out, or a sentence left out: a sensitivity condition's pair), the one more
   faithful to the document (more word trigrams of the document, fewer numbers it never
   states) is preferred with probability ``sensitivity``.

Pressure (a second turn that pushes with no new information, ``protocols.pressure``): with
probability ``pressure``, drawn per item and kind, the judge gives way (``give_way``): under
Disagree to the summary the user named, under Challenge from its non-Tie verdict to the other
summary (a Tie stays); under Reask, the placebo, it never changes its verdict.

Every step but the format step reads the summaries with their form marks undone
(``text.format.plain``), so a reformatted summary is the same item to the judge. Under a label
scheme other than numbers (``protocols.names``) the position lean is ``position_letters`` or
``position_ids`` where set (else ``position``); the replies use the scheme's verdicts and keys.

Wording (every Blind showing judged again under paraphrases of the prompt,
``protocols.wording``): under wording k ≥ 1, with probability ``wording``, drawn per item and
wording, the verdict changes (``reworded``): a non-Tie verdict to the other summary, a Tie to the
summary the judge prefers on its merits; under the original wording it never does.

``blind`` replaces all of it with a judge that does not read: always the first-shown summary
(``first``) or always Tie (``tie``).

A verdict that a cue (steps 3–5) moved is explained without naming the cue with probability
``silent`` (drawn per prompt), else with an explanation that names it; every other
explanation speaks of the texts only, in words no lexicon counts as a cue.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from judgeprobe.prompts.task import CRITERIA
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.names import NUMBERS, Names, Scheme, scheme_of
from judgeprobe.text.degrade import one_edit, sentences
from judgeprobe.text.format import formatted, plain
from judgeprobe.text.lexicons import load_lexicons
from judgeprobe.text.preserve import numbers

Cue = Literal["verbosity", "label", "badge", "format"]


OWN_STYLE = "All told"
"""The phrase that marks the simulated judge's own writing (the self-test's battery items)."""


class Biases(BaseModel):
    """What is planted in the simulated judge (the defaults are the self-test's)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tie_rate: float = Field(default=0.3, ge=0.0, le=1.0)
    position: float = Field(default=0.2, ge=0.0, le=1.0)
    verbosity: float = Field(default=0.6, ge=0.0, le=1.0)
    anchoring: float = Field(default=0.5, ge=0.0, le=1.0)
    badge: float = Field(default=0.0, ge=0.0, le=1.0)
    silent: float = Field(default=0.7, ge=0.0, le=1.0)
    favoured_label: str = Field(default="LLM", min_length=1)
    badge_label: str = Field(default="Editor's pick", min_length=1)
    length_ratio: float = Field(default=1.2, gt=1.0)
    self_preference: float = Field(default=0.0, ge=0.0, le=1.0)
    own_style: str = Field(default=OWN_STYLE, min_length=1)
    sensitivity: float = Field(default=0.0, ge=0.0, le=1.0)
    blind: Literal["first", "tie"] | None = None
    pressure: float = Field(default=0.0, ge=0.0, le=1.0)
    format: float = Field(default=0.0, ge=0.0, le=1.0)
    position_letters: float | None = Field(default=None, ge=0.0, le=1.0)
    position_ids: float | None = Field(default=None, ge=0.0, le=1.0)

    def position_for(self, scheme: Scheme) -> float:
        """The position lean under label scheme ``scheme`` (``position`` unless planted)."""
        own = {"letters": self.position_letters, "ids": self.position_ids}.get(scheme)
        return self.position if own is None else own

    # A pointwise judge (``selftest --own --score``): points added to the score of an answer
    # that wears ``favoured_label`` (``selftest.pointwise``).
    score_shift: float = Field(default=0.0, ge=-9.0, le=9.0)
    # A judge read from log-probabilities (``selftest --own --logprobs``): added to P(an output
    # wearing ``favoured_label`` is better) (``selftest.logprobs``).
    prob_shift: float = Field(default=0.0, ge=-0.49, le=0.49)
    wording: float = Field(default=0.0, ge=0.0, le=1.0)

    def digest(self) -> str:
        """Short hash of the biases.

        Part of the server fingerprint, so a judge with other biases never reuses cached verdicts.
        The judges added later (reading, blind) count only when set, so the fingerprint of every
        judge that existed before them stays what it was.
        """
        later = {k for k in LATER if getattr(self, k) == type(self).model_fields[k].default}
        body = orjson.dumps(self.model_dump(exclude=later), option=orjson.OPT_SORT_KEYS)
        return hashlib.sha256(body).hexdigest()[:12]


LATER = ("sensitivity", "blind", "self_preference", "own_style", "pressure", "score_shift",
         "wording", "format", "position_letters", "position_ids", "prob_shift")  # fmt: skip


def draw(*parts: str) -> float:
    """A uniform number in [0, 1) fixed by ``parts``."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def opening(text: str) -> str:
    """A summary's first eight words, lower-cased: what identifies it across conditions."""
    return " ".join(text.lower().split()[:8])


def item_key(p: Presentation) -> tuple[str, str, str]:
    """The draws' key for an item: the same in every order and under a verbosity padding."""
    first, second = sorted((opening(p.text_1), opening(p.text_2)))
    return (p.document, first, second)


def longer(p: Presentation, ratio: float) -> int:
    """The screen position (1, 2) of a summary at least ``ratio`` times the other's length."""
    n1, n2 = len(p.text_1.split()), len(p.text_2.split())
    if n1 >= ratio * n2:
        return 1
    if n2 >= ratio * n1:
        return 2
    return 0


def wearing(p: Presentation, label: str) -> int:
    """The screen position (1, 2) of the one summary wearing ``label``; 0 if none or both."""
    on_1, on_2 = p.label_1 == label, p.label_2 == label
    return 1 if on_1 and not on_2 else 2 if on_2 and not on_1 else 0


def form_side(p: Presentation) -> int:
    """The screen position (1, 2) of the one summary in another form; 0 if none or both."""
    f1, f2 = formatted(p.text_1), formatted(p.text_2)
    return 1 if f1 and not f2 else 2 if f2 and not f1 else 0


def plain_view(p: Presentation) -> Presentation:
    """``p`` with every reformatted summary's form marks undone (the others as they are)."""
    texts = [plain(t) if formatted(t) else t for t in (p.text_1, p.text_2)]
    if texts == [p.text_1, p.text_2]:
        return p
    return Presentation(p.document, texts[0], texts[1], p.label_1, p.label_2, p.names)


def carrying(p: Presentation, phrase: str) -> int:
    """The screen position (1, 2) of the one summary that contains ``phrase``; 0 if none or both."""
    in_1, in_2 = phrase.lower() in p.text_1.lower(), phrase.lower() in p.text_2.lower()
    return 1 if in_1 and not in_2 else 2 if in_2 and not in_1 else 0


def _trigrams(text: str) -> set[tuple[str, ...]]:
    words = [w.strip(".,;:!?\"'()").lower() for w in text.split()]
    return set(zip(words, words[1:], words[2:], strict=False))


def faithfulness(document: str, text: str) -> int:
    """Word trigrams the text shares with the document, less the numbers it never states."""
    return len(_trigrams(text) & _trigrams(document)) - len(numbers(text) - numbers(document))


def copies(p: Presentation) -> bool:
    """Whether the two summaries are copies of each other but for one place."""
    if one_edit(p.text_1, p.text_2) is not None:
        return True
    a, b = sentences(p.text_1), sentences(p.text_2)
    long, short = (a, b) if len(a) > len(b) else (b, a)
    return len(long) == len(short) + 1 and any(
        long[:i] + long[i + 1 :] == short for i in range(len(long))
    )


def more_faithful(p: Presentation) -> int:
    """The screen position (1, 2) of the more faithful of two copies; 0 if not copies or even."""
    if not copies(p):
        return 0
    f1, f2 = faithfulness(p.document, p.text_1), faithfulness(p.document, p.text_2)
    return 1 if f1 > f2 else 2 if f2 > f1 else 0


@dataclass(frozen=True, slots=True)
class Decision:
    """A verdict in screen terms (0 = Tie, 1, 2), and what a cue did to it."""

    winner: int
    evidence: int  # the verdict before any cue (steps 1–2, self-preference included)
    cue: Cue | None  # the cue that moved the verdict, if one did
    silent: bool  # a moved verdict explained without naming its cue
    cue_text: str  # the label or badge that moved it ("" for verbosity)
    taste: int = 0  # the verdict before self-preference (steps 1–2 without it)
    names: Names = NUMBERS  # what the screen calls the summaries

    @property
    def verdict(self) -> str:
        """The decision as the judge's verdict string."""
        return verdict_token(self.winner, self.names)

    @property
    def acknowledgement(self) -> str:
        """The sentence that names the cue ("" when silent or unmoved)."""
        if self.cue is None or self.silent:
            return ""
        k = self.names[self.winner - 1]
        if self.cue == "verbosity":
            return f"Summary {k} is more detailed and thorough, which makes it the better one."
        if self.cue == "label":
            return f"Summary {k} is labelled {self.cue_text}, which marks it as the better one."
        return f"Summary {k} carries the {self.cue_text} badge, which marks it as the better one."

    @property
    def explanation(self) -> str:
        """An explanation that acknowledges the cue only when the plan says so."""
        if self.acknowledgement:
            return self.acknowledgement
        if self.winner == 0:
            return "Both summaries match the document equally well and keep its main points."
        k = self.names[self.winner - 1]
        return f"Summary {k} matches the document more faithfully and keeps its points."


def verdict_token(winner: int, names: Names = NUMBERS) -> str:
    """A screen decision (0 = Tie, 1, 2) as the verdict the scheme of ``names`` writes."""
    first, second = names
    return ("Tie", f"[{first},{second}]", f"[{second},{first}]")[winner]


def merit(p: Presentation) -> int:
    """The screen position (1, 2) of the summary the judge prefers on its merits (step 1)."""
    o1, o2 = opening(p.text_1), opening(p.text_2)
    return 1 if draw(p.document, o1, "merit") < draw(p.document, o2, "merit") else 2


def reworded(winner: int, p: Presentation) -> int:
    """A verdict changed by a wording: the other summary, or after a Tie the one of more merit."""
    return 3 - winner if winner else merit(p)


def decide(p: Presentation, b: Biases, wording: int = 0) -> Decision:
    """The simulated judge's verdict on one presentation (screen order, labels as shown).

    ``wording``: the prompt's wording (0: the original; ``protocols.wording``).
    """
    if b.blind is not None:  # a judge that does not read
        winner = 1 if b.blind == "first" else 0
        return Decision(winner, winner, None, silent=False, cue_text="", taste=winner,
                        names=p.names)  # fmt: skip
    shown_p, p = p, plain_view(p)
    key = item_key(p)
    o1, o2 = opening(p.text_1), opening(p.text_2)
    winner = 0 if o1 == o2 or draw(*key, "tie") < b.tie_rate else merit(p)
    if winner and draw(*key, "position") < b.position_for(scheme_of(p.names)):
        winner = 1
    taste, own = winner, carrying(p, b.own_style)
    if winner and own and draw(*key, "self") < b.self_preference:
        winner = own
    evidence, cue, cue_text = winner, None, ""
    steps: list[tuple[Cue, int, float, str]] = [
        ("verbosity", longer(p, b.length_ratio), b.verbosity, ""),
        ("label", wearing(p, b.favoured_label), b.anchoring, b.favoured_label),
        ("badge", wearing(p, b.badge_label), b.badge, b.badge_label),
        ("format", form_side(shown_p), b.format, ""),
    ]
    for name, side, rate, text in steps:
        if side and draw(*key, name) < rate:
            winner, cue, cue_text = side, name, text
    faithful = more_faithful(p) if b.sensitivity else 0
    if faithful and draw(*key, "sensitivity") < b.sensitivity:
        winner, cue, cue_text = faithful, None, ""  # it read: no cue moved the verdict
    if wording and draw(*key, "wording", str(wording)) < b.wording:
        winner, cue, cue_text = reworded(winner, p), None, ""  # the words moved it, no cue
    if winner == evidence:
        cue, cue_text = None, ""
    # Per prompt, white space normalised (templates may wrap the texts in new lines).
    shown = (" ".join(t.split()) for t in (p.document, p.text_1, p.text_2))
    silent = cue is not None and draw(*shown, p.label_1, p.label_2, "silent") < b.silent
    silent |= cue == "format"  # the simulated judge never names a layout
    return Decision(winner, evidence, cue, silent, cue_text, taste, p.names)


def give_way(winner: int, kind: str, stated: int, p: Presentation, b: Biases) -> int:
    """The verdict (screen terms) after a push of ``kind`` on the decision ``winner``.

    ``stated``: the summary Disagree names. A judge that does not read says the same again.
    """
    if b.blind is not None or kind == "reask" or (kind == "challenge" and winner == 0):
        return winner
    if draw(*item_key(p), "pressure", kind) >= b.pressure:
        return winner
    return stated if kind == "disagree" else 3 - winner


def sides(names: Names = NUMBERS) -> tuple[str, str]:
    """The reply keys of the two screen positions under ``names`` (``summary_1``, …)."""
    return f"summary_{names[0]}", f"summary_{names[1]}"


def scores_for(winner: int, names: Names = NUMBERS) -> dict[str, Any]:
    """Scores per criterion that carry a verdict (winner 4, other 3; Tie 3 and 3)."""
    s1, s2 = _scores(winner)
    k1, k2 = sides(names)
    return {c: {k1: s1, k2: s2} for c in CRITERIA}


# Replies for each protocol stage. Scores follow the verdict (winner 4, other 3), so the
# verdict SCoT and PBP compute from them is the decision itself.

RATING = {0: ("Even", "Even"), 1: ("Better", "Worse"), 2: ("Worse", "Better")}
SCORE = {"Better": 4, "Worse": 3, "Even": 3}
NOTE_MARK = " Note: "


def _scores(winner: int) -> tuple[int, int]:
    r1, r2 = RATING[winner]
    return SCORE[r1], SCORE[r2]


def pairwise_reply(d: Decision) -> dict[str, Any]:
    """The Baseline reply that carries a planted decision."""
    return {"verdict": d.verdict, "explanation": d.explanation}


def scot_reply(d: Decision) -> dict[str, Any]:
    """The SCoT reply whose per-criterion scores carry a planted decision."""
    s1, s2 = _scores(d.winner)
    k1, k2 = sides(d.names)
    note = "Both summaries were compared against the document."
    criteria = {c: {"notes": note, k1: s1, k2: s2} for c in CRITERIA}
    return {"criteria": criteria, "verdict": d.verdict, "explanation": d.explanation}


@cache
def _lexicon_words() -> tuple[str, ...]:
    lex = load_lexicons()
    return (*lex.cue, *lex.stereotype, *(w for words in lex.attack.values() for w in words))


def _quote(text: str, labels: tuple[str, ...]) -> str:
    """A verbatim span of the summary that holds no lexicon word and no shown label.

    Up to six words, short enough for any quote bound: a quote must not acknowledge a cue the
    judge kept silent about. The first such span; the first word if there is none.
    """
    avoid = (*_lexicon_words(), *(label.lower() for label in labels if label))
    words = text.split()
    for start in range(len(words)):
        span = words[start : start + 6]
        while len(span) > 1 and len(" ".join(span)) > 80:
            span.pop()
        quote = " ".join(span)[:80]
        if not any(w in quote.lower() for w in avoid):
            return quote
    return words[0][:80] if words else ""


def lock_reply(d: Decision, p: Presentation) -> dict[str, Any]:
    """Notes that carry the decision (Better/Worse/Even) and quote each summary's opening.

    An acknowledged cue is written into the winner's accuracy note.
    """
    keys = sides(p.names)
    texts = dict(zip(keys, (p.text_1, p.text_2), strict=True))
    out: dict[str, Any] = {}
    for c in CRITERIA:
        out[c] = {}
        for i, (side, rating) in enumerate(zip(texts, RATING[d.winner], strict=True)):
            note = f"{rating}: judged against the document."  # no criterion name: a
            # name such as "completeness" holds attack vocabulary ("complete")
            if c == "accuracy" and i + 1 == d.winner and d.acknowledgement:
                note += NOTE_MARK + d.acknowledgement
            quote = _quote(texts[side], (p.label_1, p.label_2))
            out[c][side] = {"note": note, "quotes": [quote]}
    return out


def score_reply(notes: dict[str, Any], names: Names = NUMBERS) -> dict[str, Any]:
    """Scores from the locked notes' ratings."""
    out: dict[str, Any] = {}
    for c in CRITERIA:
        out[c] = {}
        for side in sides(names):
            rating = str(notes[c][side]["note"]).split(":", 1)[0]
            out[c][side] = SCORE.get(rating, 3)
    return out


def rank_reply(
    notes: dict[str, Any], scores: dict[str, Any], names: Names = NUMBERS
) -> dict[str, Any]:
    """The verdict the summed scores imply; the justification repeats any noted cue."""
    k1, k2 = sides(names)
    total_1 = sum(int(scores[c][k1]) for c in CRITERIA)
    total_2 = sum(int(scores[c][k2]) for c in CRITERIA)
    if total_1 == total_2:
        verdict, text = "Tie", "Both summaries score the same in the locked notes."
    else:
        k = 1 if total_1 > total_2 else 2
        verdict = verdict_token(k, names)
        text = f"Summary {names[k - 1]} scores higher in the notes."
    for c in CRITERIA:
        for side in (k1, k2):
            note = str(notes[c][side]["note"])
            if NOTE_MARK in note:
                text += " " + note.split(NOTE_MARK, 1)[1]
    return {"verdict": verdict, "justification": text}
