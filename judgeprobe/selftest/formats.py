"""Public judges' formats for ``selftest --own FORMAT``: each judge as its users run it, planted.

Each format is a judge's own prompt in a public judge's shape (its system/user split, its
placeholder names, its verdict tokens; the prompt text is this project's): FastChat's MT-Bench
``pair-v2`` (``fastchat``), Prometheus 2's relative grading (``prometheus``: a fixed rubric,
the item's reference answer, ``[RESULT] A``/``[RESULT] B`` and no tie) and inspect_ai's
``model_graded_qa`` (``inspect``: each answer graded alone, ``GRADE: C``/``P``/``I`` read as 1,
0.5 and 0). The simulated judge reads each request back by the prompt's layout (the user
message with every placeholder named by what fills it, ``layout``) and answers in the format's
tokens (``Style``), so the self-test recovers every planted effect through the verbatim path:
system message, own placeholder names, item fields, fixed texts and graded categories.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from judgeprobe.prompts.judge import JudgePrompt

#: ``selftest --own``'s bundled design, then the public formats.
FORMATS = ("bundled", "fastchat", "prometheus", "inspect")
#: The grades of an inspect_ai-style grader, ascending: what ``GRADE: X`` is worth.
GRADES = (("I", 0.0), ("P", 0.5), ("C", 1.0))


@dataclass(frozen=True)
class Style:
    """How the simulated judge states its decision: verdict tokens, or a pointwise scale.

    ``tokens``: the reply's last line per winner (0 = tie, 1 = the answer shown first, 2 =
    the second); ``grades``: a graded pointwise judge's categories, ascending by value (none:
    a 1-10 rating, ``Rating: [[k]]``); ``system``: the system message every request of the
    judge's own prompt must open with (none: no system message), else it is unreadable.
    """

    tokens: dict[int, str] = field(default_factory=lambda: {0: "[[C]]", 1: "[[A]]", 2: "[[B]]"})
    grades: tuple[tuple[str, float], ...] = ()
    system: str = ""


@dataclass(frozen=True)
class Format:
    """One public judge's shape: its files, its judge lines in a sweep config, its style."""

    name: str
    system: str
    user: str
    placeholders: dict[str, str | dict[str, str]]
    reads: str  # the judge's verdict or score line(s), TOML
    style: Style
    pointwise: bool = False
    reference: bool = False  # its items carry a "reference" field

    def judge_lines(self, system_path: str, user_path: str) -> str:
        """The ``[[judges]]`` lines that run this format (paths as written)."""
        lines = f"system = {json.dumps(system_path)}\n" if self.system else ""
        lines += f"prompt = {json.dumps(user_path)}\n"
        lines += 'kind = "score"\n' if self.pointwise else ""
        lines += f"{self.reads}\n[judges.placeholders]\n"
        for name, source in self.placeholders.items():
            value = (
                f"{{ text = {json.dumps(source['text'])} }}"
                if isinstance(source, dict)
                else json.dumps(source)
            )
            lines += f"{name} = {value}\n"
        return lines


_PAIR_SYSTEM = (
    "You compare two assistants' answers to one question and say which serves the user "
    'better. Explain briefly, then end with "[[A]]", "[[B]]" or "[[C]]" (a tie).\n'
)
_PAIR_USER = (
    "[User Question]\n{question}\n\n[Answer of Assistant A]\n{answer_a}\n[End of Answer A]\n\n"
    "[Answer of Assistant B]\n{answer_b}\n[End of Answer B]\n"
)
_PROMETHEUS_SYSTEM = "You grade responses fairly, by the rubric you are given.\n"
_PROMETHEUS_USER = (
    "### What to do\nCompare responses A and B against the rubric, then end with one line "
    '"[RESULT] A" or "[RESULT] B".\n\n### Instruction\n{instruction}\n\n### Response A\n'
    "{response_A}\n\n### Response B\n{response_B}\n\n### Reference answer (top mark)\n"
    "{reference_answer}\n\n### Rubric\n{rubric}\n\n### Your feedback\n"
)
_INSPECT_USER = (
    "Grade the submission below against the criterion.\n\nTask:\n{question}\n\nSubmission:\n"
    "{answer}\n\nCriterion:\n{criterion}\n\n{instructions}\n"
)
_RUBRIC = "Does the response state the decision and the vote count the question asks for?"
_GRADING = "End with one line: 'GRADE: C' (meets it), 'GRADE: P' (partly) or 'GRADE: I' (not)."

PUBLIC: dict[str, Format] = {
    "fastchat": Format(
        "fastchat", _PAIR_SYSTEM, _PAIR_USER,
        {"question": "context", "answer_a": "response_1", "answer_b": "response_2"},
        """verdict = { pattern = '\\[\\[(A|B|C)\\]\\]', map = { A = "1", B = "2", C = "tie" } }""",
        Style(system=_PAIR_SYSTEM),
    ),
    "prometheus": Format(
        "prometheus", _PROMETHEUS_SYSTEM, _PROMETHEUS_USER,
        {"instruction": "context", "response_A": "response_1", "response_B": "response_2",
         "reference_answer": "reference", "rubric": {"text": _RUBRIC}},
        """verdict = { pattern = '\\[RESULT\\]\\s*(A|B)', map = { A = "1", B = "2" } }""",
        Style(tokens={1: "[RESULT] A", 2: "[RESULT] B"}, system=_PROMETHEUS_SYSTEM),
        reference=True,
    ),
    "inspect": Format(
        "inspect", "", _INSPECT_USER,
        {"question": "context", "answer": "response", "criterion": "reference",
         "instructions": {"text": _GRADING}},
        """score = { pattern = 'GRADE:\\s*([CPI])', map = { C = 1, P = 0.5, I = 0 } }""",
        Style(grades=GRADES),
        pointwise=True,
        reference=True,
    ),
}  # fmt: skip


def layout(prompt: JudgePrompt) -> str:
    """The prompt's last user message with each placeholder named by what fills it.

    In judgeprobe's own form (``{CONTEXT}``, ``{RESPONSE_1}``, an item field as
    ``{REFERENCE}``; a fixed text as written), which the simulated judge reads requests by.
    """
    named = {target: f"{{{target.upper()}}}" for target in prompt.targets}
    return prompt.fill(named)[-1]["content"]
