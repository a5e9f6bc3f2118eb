"""The simulated judge as an OpenAI-compatible server on loopback (aiohttp, its own thread).

It reads judgeprobe's real prompts as a model would: the stage from the reply schema's
title, the document, summaries and labels from the materials block (``materials_v1``), the
locked notes and scores from the PBP prompts, and a Reveal-After correction or a pressure
sentence (``protocols.pressure``) from the last turn; the screen names (``protocols.names``)
from the reply schema's verdicts or keys. It answers at once with JSON that
conforms to the requested schema. A prompt it cannot read is answered HTTP 400 with the
reason, so the judgment ends Invalid and the self-test reports it. It presents itself as
vLLM (``/version``); the version string carries the biases' digest, so a judge with other
biases has another fingerprint.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from importlib import resources
from itertools import pairwise
from typing import Any

import orjson
from aiohttp import web

from judgeprobe.engine.probe import TEXT_PROBE_PROMPT
from judgeprobe.prompts import load_template
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.budget import least
from judgeprobe.protocols.names import NUMBERS, Names
from judgeprobe.protocols.pressure import SENTENCES
from judgeprobe.selftest import simulator as sim
from judgeprobe.selftest.formats import Style
from judgeprobe.selftest.logprobs import PROBE_TOKENS, choice_logprobs, planted_top
from judgeprobe.selftest.loopback import LoopbackServer
from judgeprobe.selftest.pointwise import read_score_request, score_reply
from judgeprobe.selftest.simulator import Biases

MODEL = "judgeprobe-simulated"
OWN_PROMPT = "own_prompt.txt"
OWN_WORDINGS = ("own_prompt_w1.txt", "own_prompt_w2.txt")
"""Two paraphrases of the bundled own prompt: ``--own --wording``'s wordings."""
PLAIN = Style()
OWN_TOKENS = PLAIN.tokens
_PLACEHOLDER = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")
_INLINE_LABEL = re.compile(r"\(label = ([^\n]*)\)\n")
_HEADER = re.compile(r"^Summary ([0-9A-Z]{1,3})(?: \(label = (.*)\))?:$", re.MULTILINE)
_SIDE = re.compile(r"^summary_([0-9A-Z]{1,3})$")
_REVEAL = re.compile(
    r"The true labels are: Summary 1 \(label = (.*)\) and Summary 2 \(label = (.*)\)\."
)


@cache
def _pushes() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each pressure kind and the pattern of its sentence (Disagree's names a summary)."""
    out = []
    for kind, name in SENTENCES.items():
        text = re.escape(load_template(name).text)
        text = text.replace(re.escape("{STATED}"), "([0-9A-Z]{1,3})")
        out.append((kind, re.compile(text)))
    return tuple(out)


def read_push(users: list[str], names: Names = NUMBERS) -> tuple[str, int] | None:
    """The pressure of a second turn: its kind and the summary it names (0: none); or None.

    The summary is named as the screen names it (``names``) and returned as its position.
    """
    if len(users) < 2:
        return None
    for kind, pattern in _pushes():
        found = pattern.search(users[-1])
        if found:
            stated = found.group(1) if found.groups() else ""
            return kind, names.index(stated) + 1 if stated in names else 0
    return None


def names_in(schema: dict[str, Any]) -> Names:
    """The screen names a reply schema asks for: its verdicts' (``[A,B]``) or its keys'."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for token in node.get("enum", []):
                if isinstance(token, str) and token.startswith("[") and not found:
                    found.extend(token.strip("[]").split(","))
            for key in node.get("properties", {}):
                side = _SIDE.match(key)
                if side and len(found) < 2:
                    found.append(side.group(1))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return (found[0], found[1]) if len(found) >= 2 else NUMBERS


class Unreadable(ValueError):
    """A prompt the simulated judge cannot read."""


@cache
def _materials_ends() -> tuple[str, ...]:
    """What can follow the second summary in a prompt.

    The materials block's own tail, then the text that follows ``{MATERIALS}`` in any packaged
    template (up to its next placeholder). Read from the templates, so a new template version is
    read too.
    """
    folder = resources.files("judgeprobe.prompts").joinpath("templates")
    tail = load_template("materials_v1").text.rsplit("{SUM2}", 1)[1]
    ends = set()
    for path in folder.iterdir():
        if path.name.endswith(".txt"):
            text = load_template(path.name.removesuffix(".txt")).text
            if "{MATERIALS}" in text:
                after = text.split("{MATERIALS}", 1)[1].split("{", 1)[0]
                if after.strip():
                    ends.add(tail + after[: len(after) - len(after.lstrip()) + 24])
    return tuple(sorted(ends))


@cache
def _wording_openings() -> tuple[tuple[str, int], ...]:
    """Each packaged paraphrase's opening (its text before its first placeholder) and wording."""
    folder = resources.files("judgeprobe.prompts").joinpath("templates")
    out = []
    for path in folder.iterdir():
        found = re.search(r"_w(\d+)\.txt$", path.name)
        if found:
            text = load_template(path.name.removesuffix(".txt")).text
            out.append((_PLACEHOLDER.split(text, 1)[0], int(found.group(1))))
    return tuple(sorted(out))


def read_wording(text: str) -> int:
    """The wording a built-in prompt is in (``protocols.wording``): 0 for the original."""
    return next((k for opening, k in _wording_openings() if text.startswith(opening)), 0)


def read_materials(text: str, names: Names = NUMBERS) -> Presentation | None:
    """The document, summaries and labels of a ``materials_v1`` block; None if absent.

    ``names``: what the screen calls the summaries ("Summary 1", or the scheme's).
    """
    start = text.find("Document:\n")
    if start < 0:
        return None
    heads = list(_HEADER.finditer(text, start))
    pair = next(((a, b) for a, b in pairwise(heads) if (a[1], b[1]) == names), None)
    if pair is None:
        return None
    h1, h2 = pair
    ends = [i for i in (text.find(m, h2.end()) for m in _materials_ends()) if i >= 0]
    return Presentation(
        document=text[start + len("Document:\n") : h1.start()].removesuffix("\n\n"),
        text_1=text[h1.end() + 1 : h2.start()].removesuffix("\n\n"),
        text_2=text[h2.end() + 1 : min(ends, default=len(text))],
        label_1=h1.group(2) or "",
        label_2=h2.group(2) or "",
        names=names,
    )


def own_prompt_text(name: str = OWN_PROMPT) -> str:
    """The self-test's bundled own prompt (``selftest/own_prompt.txt``) or a paraphrase of it."""
    return resources.files(__package__).joinpath(name).read_text("utf-8")


@cache
def own_layout(prompt: str) -> re.Pattern[str]:
    """A judge's own prompt file as a pattern that gives back what filled its placeholders.

    The text between placeholders is matched literally; a label fills one line, a context or
    response any text (the shortest that lets the whole prompt match).
    """
    parts, seen = [], set()
    for i, part in enumerate(_PLACEHOLDER.split(prompt)):
        if i % 2 == 0:
            parts.append(re.escape(part))
        elif part in seen:
            parts.append(f"(?P={part})")
        else:
            seen.add(part)
            parts.append(f"(?P<{part}>[^\n]*)" if part.startswith("LABEL") else f"(?P<{part}>.*?)")
    return re.compile("".join(parts), re.DOTALL)


def read_own(text: str, prompt: str) -> Presentation:
    """The context, responses and labels of an own-prompt request filled from ``prompt``.

    A prompt with no label placeholder shows each label above its response (``(label = …)``,
    ``protocols.own``); it is read from there.
    """
    return read_own_worded(text, (prompt,))[0]


def read_own_worded(text: str, prompts: Sequence[str]) -> tuple[Presentation, int]:
    """An own-prompt request filled from one of ``prompts`` (the prompt, then its wordings).

    What it shows, and which wording it is (the prompt's index).
    """
    for wording, prompt in enumerate(prompts):
        found = own_layout(prompt).fullmatch(text)
        if found is not None:
            return _own_values(found.groupdict()), wording
    raise Unreadable("a request with no reply schema that is not the own prompt's layout")


def _own_values(values: dict[str, str]) -> Presentation:
    texts, labels = [values.get(f"RESPONSE_{k}") or "" for k in (1, 2)], ["", ""]
    for k in (0, 1):
        if f"LABEL_{k + 1}" in values:
            labels[k] = values[f"LABEL_{k + 1}"]
        elif inline := _INLINE_LABEL.match(texts[k]):
            labels[k], texts[k] = inline.group(1), texts[k][inline.end() :]
    return Presentation(values.get("CONTEXT") or "", texts[0], texts[1], labels[0], labels[1])


def own_score_reply(text: str, prompt: str, biases: Biases, style: Style = PLAIN) -> str:
    """A pointwise request (a prompt with ``{RESPONSE}``) answered with its planted score."""
    found = own_layout(prompt).fullmatch(text)
    if found is None:
        raise Unreadable("a request with no reply schema that is not the own prompt's layout")
    return score_reply(*read_score_request(found.groupdict()), biases, style.grades)


def own_text_reply(text: str, layouts: Sequence[str], biases: Biases, style: Style = PLAIN) -> str:
    """A request with no reply schema: a pointwise judge's (``{RESPONSE}``) or a pairwise one's.

    ``layouts``: the judge's prompt, then its wordings (a pairwise request is read by the one
    it was filled from, and decided under that wording). A text judge's start-up probe is
    answered too.
    """
    if text == TEXT_PROBE_PROMPT:
        return "ready"
    if "{RESPONSE}" in layouts[0]:  # one answer, scored
        return own_score_reply(text, layouts[0], biases, style)
    asked, wording = read_own_worded(text, layouts)
    return own_reply(asked, biases, wording, style)


def own_reply(p: Presentation, biases: Biases, wording: int = 0, style: Style = PLAIN) -> str:
    """The own-prompt judge's reply: the planted decision's explanation, then its verdict."""
    d = sim.decide(p, biases, wording)
    if d.winner not in style.tokens:
        raise Unreadable(f"the planted decision {d.winner} has no token in this format")
    return f"{d.explanation}\n\n{style.tokens[d.winner]}"


def read_json_after(text: str, marker: str) -> dict[str, Any]:
    """The JSON object that follows ``marker`` in a prompt (PBP notes and scores)."""
    at = text.find(marker)
    brace = text.find("{", at) if at >= 0 else -1
    if brace < 0:
        raise Unreadable(f"no JSON after {marker.strip()!r}")
    try:
        value, _ = json.JSONDecoder().raw_decode(text, brace)
    except ValueError as exc:
        raise Unreadable(f"unreadable JSON after {marker.strip()!r}: {exc}") from None
    if not isinstance(value, dict):
        raise Unreadable(f"no JSON object after {marker.strip()!r}")
    return value


def _schema(body: dict[str, Any]) -> dict[str, Any]:
    fmt = body.get("response_format") or {}
    schema = fmt.get("json_schema", {}).get("schema") or fmt.get("schema") or fmt.get("value")
    return schema if isinstance(schema, dict) else {}


def _latest_materials(users: list[str], names: Names) -> Presentation | None:
    """The most recent materials block: a Reveal-After turn shows the texts again."""
    for text in reversed(users):
        found = read_materials(text, names)
        if found is not None:
            return found
    return None


def _materials(users: list[str], names: Names) -> Presentation:
    found = _latest_materials(users, names)
    if found is None:
        raise Unreadable("no document and summaries (materials block) in the prompt")
    return found


def _notes(users: list[str]) -> dict[str, Any]:
    """The latest locked notes in the conversation (PBP)."""
    for text in reversed(users):
        if "Locked notes:" in text:
            return read_json_after(text, "Locked notes:")
    raise Unreadable("no locked notes in the prompt")


def _check_system(messages: list[dict[str, Any]], last: str, style: Style) -> None:
    """A request of the judge's own prompt opens with its system message, or with none."""
    opening = messages[0] if messages[0].get("role") == "system" else {}
    if opening.get("content", "") != style.system and last != TEXT_PROBE_PROMPT:
        raise Unreadable("not the system message of the judge's own prompt")


def reply(
    body: dict[str, Any],
    biases: Biases,
    own_prompt: str | Sequence[str] | None = None,
    style: Style = PLAIN,
) -> Any:
    """The simulated judge's answer to one chat request, as a JSON-ready value.

    A request with no reply schema is read by the layout of ``own_prompt`` (the self-test's
    bundled prompt when None; several: the prompt and its wordings, in order) and answered as
    text (protocol ``own``). A built-in prompt's wording is read from its opening
    (``read_wording``), so a planted wording sensitivity acts on it.

    The stage comes from the reply schema's title. A stage that sees materials decides on
    the latest ones (a Reveal-After turn shows them again, with the true labels); PBP's
    score stage without texts scores from the locked notes, its rank stage from the scores.
    """
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    users = [str(m.get("content", "")) for m in messages if m.get("role") == "user"]
    if not users:
        raise Unreadable("no user message")
    schema = _schema(body)
    stage = schema.get("title", "")
    if not schema:
        _check_system(messages, users[-1], style)
        layouts = [own_prompt] if isinstance(own_prompt, str) else own_prompt
        return own_text_reply(users[-1], layouts or [own_prompt_text()], biases, style)
    reveal = _REVEAL.search(users[-1])
    names = names_in(schema)
    push = read_push(users, names)
    if stage in ("pairwise_verdict", "scot_verdict"):
        p = _materials(users, names)
        if reveal and read_materials(users[-1], names) is None:  # labels named in words only
            p = Presentation(p.document, p.text_1, p.text_2, reveal.group(1), reveal.group(2),
                             names)  # fmt: skip
        d = sim.decide(p, biases, read_wording(users[0]))
        if push is not None:  # turn 1's decision, pushed
            winner = sim.give_way(d.winner, *push, p, biases)
            d = d if winner == d.winner else replace(d, winner=winner, cue=None, silent=False)
        return sim.pairwise_reply(d) if stage == "pairwise_verdict" else sim.scot_reply(d)
    if stage == "pbp_lock":
        p = _materials(users, names)
        return sim.lock_reply(sim.decide(p, biases, read_wording(users[0])), p)
    if stage == "pbp_score":
        shown = read_materials(users[-1], names)
        if shown is not None:
            d = sim.decide(shown, biases, read_wording(users[0]))
            return sim.score_reply(sim.lock_reply(d, shown), names)
        scores = sim.score_reply(_notes(users), names)
        if push is not None:  # re-scored after a push: turn 1's scores, or given way
            p = _materials(users, names)
            winner = sim.decide(p, biases).winner
            return sim.scores_for(sim.give_way(winner, *push, p, biases), names)
        return scores
    if stage == "pbp_rank":
        scores = read_json_after(users[-1], "Scores:")
        return sim.rank_reply(_notes(users), scores, names)
    if schema.get("type") == "object":
        return least(schema)
    raise Unreadable(f"unknown reply schema {stage!r}")


def first_token(
    body: dict[str, Any], biases: Biases, own_prompt: str | Sequence[str] | None
) -> tuple[str, dict[str, object]]:
    """A request that asks for log-probabilities: its one token and ``choice.logprobs``.

    An own-prompt request gets the planted distribution (``selftest.logprobs``); any other
    (the start-up probe) a fixed one.
    """
    users = [str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user"]
    layouts = [own_prompt] if isinstance(own_prompt, str) else own_prompt
    try:
        shown, _ = read_own_worded(users[-1] if users else "", layouts or [own_prompt_text()])
        top = planted_top(shown, biases)
    except Unreadable:
        top = list(PROBE_TOKENS)
    return top[0][0], choice_logprobs(top, int(body.get("top_logprobs") or 0))


class SimulatedJudge(LoopbackServer):
    """The simulated judge on loopback, in a background thread; ``url`` is its API base."""

    def __init__(
        self,
        biases: Biases,
        own_prompt: str | Sequence[str] | None = None,
        style: Style = PLAIN,
    ) -> None:
        super().__init__()
        self.biases = biases
        # the layout of own-prompt requests (None: the bundled; several: its wordings in order)
        self.own_prompt = own_prompt
        self.style = style  # its verdict tokens or grades (selftest.formats)
        self.requests: Counter[str] = Counter()
        self.unreadable: Counter[str] = Counter()

    def app(self) -> web.Application:
        """OpenAI-compatible routes: the model list, a vLLM-style version, chat completions."""
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/version", self._version)
        app.router.add_post("/v1/chat/completions", self._chat)
        return app

    async def _models(self, _: web.Request) -> web.Response:
        model = {"id": MODEL, "object": "model", "owned_by": "judgeprobe"}
        return web.json_response({"object": "list", "data": [model]})

    async def _version(self, _: web.Request) -> web.Response:
        return web.json_response({"version": f"simulated-{self.biases.digest()}"})

    async def _chat(self, request: web.Request) -> web.Response:
        try:
            body = orjson.loads(await request.read())
            stage = str(_schema(body).get("title", "own"))
            logprobs = None
            if body.get("logprobs"):  # one token, read from its log-probabilities
                content, logprobs = first_token(body, self.biases, self.own_prompt)
            else:
                value = reply(body, self.biases, self.own_prompt, self.style)
                content = value if isinstance(value, str) else orjson.dumps(value).decode()
        except (Unreadable, orjson.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            reason = f"simulated judge cannot read the request: {exc}"
            self.unreadable[reason] += 1
            return web.json_response({"error": {"message": reason}}, status=400)
        self.requests[stage] += 1
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body["messages"])
        out = {
            "id": f"chatcmpl-sim-{sum(self.requests.values())}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "logprobs": logprobs,
                    "finish_reason": "length" if logprobs else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_words,
                "completion_tokens": len(content.split()),
                "total_tokens": prompt_words + len(content.split()),
            },
        }
        return web.Response(body=orjson.dumps(out), content_type="application/json")
