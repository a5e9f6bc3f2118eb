"""Run a real sweep (``judgeprobe.run``, in process) against the simulated judge."""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import BLIND, PLACEBO, REASK
from judgeprobe.cue.config import load_config
from judgeprobe.cue.run import main as run_main
from judgeprobe.runs.rundir import RunDir
from judgeprobe.selftest.formats import PUBLIC, Style, layout
from judgeprobe.selftest.logprobs import LOGPROB_PROMPT, LOGPROB_VERDICT, logprob_prompt_text
from judgeprobe.selftest.pointwise import SCORE_FORMAT, SCORE_PROMPT, score_prompt_text
from judgeprobe.selftest.server import (
    OWN_PROMPT,
    OWN_WORDINGS,
    PLAIN,
    SimulatedJudge,
    own_prompt_text,
)
from judgeprobe.selftest.simulator import Biases
from judgeprobe.selftest.synthetic import write_items

JUDGE = "simulated"
CONDITIONS = [BLIND, "True", "Flip", PLACEBO, "Verbosity"]
SENSITIVITY = ["DegradedNumber", "DegradedEntity", "DegradedNegation", "DegradedSentence"]
PRESSURE = ["Challenge", "Disagree", REASK]
FORMAT = ["FormatSpacing", "FormatSpacingBoth", "FormatBullets", "FormatBulletsBoth",
          "FormatEmphasis", "FormatEmphasisBoth"]  # fmt: skip
PROTOCOLS = ["baseline", "scot", "pbp"]
WORDINGS = 4  # --wording: every wording the built-in protocols ship
#: The ``--own`` judge's verdict: MT-Bench's "[[A]]"/"[[B]]"/"[[C]]", the last one counting.
OWN_VERDICT = r"""{ pattern = '\[\[(A|B|C)\]\]', map = { A = "1", B = "2", C = "tie" } }"""


def default_config(
    out: Path, n_items: int, *, sensitivity: bool = False, pressure: bool = False,
    wording: bool = False, format: bool = False, names: tuple[str, ...] = (),
) -> Path:  # fmt: skip
    """The self-test's own sweep.

    Synthetic items, both orders, every protocol, the cue conditions whose effects are planted;
    with ``sensitivity`` the sensitivity conditions too (the synthetic summaries have a number
    and a claim to degrade, no second name and one sentence: those two kinds judge nothing);
    with ``pressure`` the pressure conditions and their placebo; with ``wording`` every
    wording each protocol ships (``WORDINGS``: the original and its three paraphrases); with
    ``format`` the format conditions and their placebos; ``names``: further label schemes, each
    with Blind judged under it (``protocols.names``).
    """
    out.mkdir(parents=True, exist_ok=True)
    items = write_items(out / "items.jsonl", n_items)
    conditions = CONDITIONS + SENSITIVITY * sensitivity + PRESSURE * pressure + FORMAT * format
    schemes = f"names = {json.dumps(['numbers', *names])}\n" if names else ""
    # A quarter of Blind sent again: the noise floor (0 for a deterministic judge).
    return write_config(out, "selftest", items, PROTOCOLS, conditions, repeat=0.25,
                        wordings=WORDINGS if wording else 1, top_lines=schemes)  # fmt: skip


def own_config(
    out: Path,
    n_items: int,
    *,
    sensitivity: bool = False,
    score: bool = False,
    wording: bool = False,
    logprobs: bool = False,
    fmt: str = "bundled",
) -> Path:
    """The self-test's design through protocol ``own`` (``--own``).

    Question/answer pairs, both orders, the same cue conditions; the judge carries the bundled
    MT-Bench-style prompt (copied into ``out``, where the simulated judge's layout is read from)
    and the pattern verdict; with ``wording`` its two bundled paraphrases as its ``wordings``.
    ``score`` (``--own --score``): a pointwise judge instead, MT-Bench's single-answer prompt and
    its "Rating: [[k]]" on 1–10 (``selftest.pointwise``). ``logprobs`` (``--own --logprobs``):
    a judge read from its first token's log-probabilities, AlpacaEval 2's m/M
    (``selftest.logprobs``). ``fmt`` (``--own FORMAT``): a public judge's shape instead
    (``selftest.formats``): its system and user prompt files written into ``out``, its
    placeholders, its verdict or graded score; its items carry a reference answer when it shows
    one.
    """
    out.mkdir(parents=True, exist_ok=True)
    public = PUBLIC.get(fmt)
    items = write_items(out / "items.jsonl", n_items, questions=True,
                        reference=public is not None and public.reference)  # fmt: skip
    if public is not None:
        system, user = out / f"{fmt}_system.txt", out / f"{fmt}_user.txt"
        if public.system:
            system.write_text(public.system, encoding="utf-8")
        user.write_text(public.user, encoding="utf-8")
        judge = public.judge_lines(system.resolve().as_posix(), user.resolve().as_posix())
        name = f"selftest-own-{fmt}"
        return write_config(out, name, items, ["own"], CONDITIONS + SENSITIVITY * sensitivity,
                            repeat=0.25, judge_lines=judge)  # fmt: skip
    if logprobs:
        prompt = out / LOGPROB_PROMPT
        prompt.write_text(logprob_prompt_text(), encoding="utf-8")
        judge = f"prompt = {json.dumps(prompt.resolve().as_posix())}\nverdict = {LOGPROB_VERDICT}\n"
    elif score:
        prompt = out / SCORE_PROMPT
        prompt.write_text(score_prompt_text(), encoding="utf-8")
        judge = f"prompt = {json.dumps(prompt.resolve().as_posix())}\n"
        judge += f'kind = "score"\nscore = {SCORE_FORMAT}\n'
    else:
        paths = []
        for name in (OWN_PROMPT, *(OWN_WORDINGS if wording else ())):
            path = out / name
            path.write_text(own_prompt_text(name), encoding="utf-8")
            paths.append(path.resolve().as_posix())
        judge = f"prompt = {json.dumps(paths[0])}\nverdict = {OWN_VERDICT}\n"
        judge += f"wordings = {json.dumps(paths[1:])}\n" if wording else ""
    design = "-logprobs" if logprobs else "-score" if score else ""
    name = f"selftest-own{design}"
    return write_config(out, name, items, ["own"],
                        CONDITIONS + SENSITIVITY * sensitivity, repeat=0.25,
                        judge_lines=judge)  # fmt: skip


def write_config(
    out: Path,
    name: str,
    items: Path,
    protocols: list[str],
    conditions: list[str],
    repeat: float | None = None,
    judge: str = JUDGE,
    judge_lines: str = "",
    wordings: int = 1,
    top_lines: str = "",
) -> Path:
    """A self-test sweep config in ``out``: both orders, seed 0, the simulated judge."""
    again = f"repeat = {repeat}\n" if repeat is not None else ""
    again += f"wordings = {wordings}\n" if wordings > 1 else ""
    again += top_lines
    text = f"""# Written by judgeprobe selftest.
name = {json.dumps(name)}
items = {json.dumps(items.resolve().as_posix())}
protocols = {json.dumps(protocols)}
conditions = {json.dumps(conditions)}
order = "both"
seeds = [0]
{again}
[engine]
attempt_timeout_s = 30
max_attempts = 2

[[judges]]
name = {json.dumps(judge)}
url = "http://127.0.0.1:9/v1"  # replaced by the simulated judge's address at run time
concurrency = 16
{judge_lines}"""
    path = out / "selftest.toml"
    path.write_text(text, encoding="utf-8")
    return path


@contextlib.contextmanager
def _lexical_drift() -> Iterator[None]:
    """The report's explanation drift without the embedding model.

    Nothing is planted there, and loading the model would take longer than the whole sweep.
    """
    before = os.environ.get("JUDGEPROBE_DRIFT")
    os.environ["JUDGEPROBE_DRIFT"] = before or "lexical"
    try:
        yield
    finally:
        if before is None:
            del os.environ["JUDGEPROBE_DRIFT"]


def run_sweep(
    config: Path, out: Path, biases: Biases, style: Style = PLAIN
) -> tuple[int, str, SimulatedJudge]:
    """Sweep ``config`` against a simulated judge with ``biases``, answering in ``style``.

    (exit code, the sweep's console output, the judge with its request counts). Stored results are
    reused.
    """
    buffer = io.StringIO()
    # A judge with its own prompt (protocol own) is read by that prompt's layout, or by the
    # layouts of its wordings (the prompt first).
    own = next((j for j in load_config(config).judges if j.judge_prompt is not None), None)
    prompts = (own.judge_prompt, *own.judge_wordings) if own else ()
    layouts = [layout(p) for p in prompts if p is not None] or None
    with SimulatedJudge(biases, own_prompt=layouts, style=style) as judge:
        args = ["--config", str(config), "--out", str(out), "--judge", f"{JUDGE}={judge.url}"]
        args += ["--no-progress"]
        if RunDir(out).manifest_file.exists():
            args.append("--resume")
        quiet = contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer)
        with quiet[0], quiet[1], _lexical_drift():
            try:
                code = run_main(args)
            except JudgeprobeError as exc:
                buffer.write(f"error: {exc}\n")
                code = 2
    return code, buffer.getvalue(), judge
