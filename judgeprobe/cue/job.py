"""One judgment to make: a protocol run on one presentation, plus a second turn.

The second turn is Reveal-After's (``reveal``: the true labels) or a pressure condition's
(``pressure``: a challenge with no new information, ``protocols.pressure``).

``run_job`` turns the protocol's screen-terms answer into a stored ``Outcome`` in candidate
terms. Any stage that ends Invalid makes the judgment Invalid with that stage's reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from judgeprobe.core.layouts import Gold
from judgeprobe.core.records import INVALID, Order, Pressure, Target, Verdict
from judgeprobe.engine.cached import CachedAsker
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.request import Sampling
from judgeprobe.engine.store import Outcome, Store
from judgeprobe.protocols import JudgeProtocol
from judgeprobe.protocols.base import Presentation, StageFailed, Turn
from judgeprobe.protocols.pressure import press, pressed
from judgeprobe.protocols.reveal import Recorder, reveal

SCREEN_TO_CANDIDATE: dict[str, dict[str, Verdict]] = {
    "12": {"[1,2]": "A", "[2,1]": "B", "Tie": "Tie", "summary_1": "A", "summary_2": "B"},
    "21": {"[1,2]": "B", "[2,1]": "A", "Tie": "Tie", "summary_1": "B", "summary_2": "A"},
}
"""Screen terms (verdicts, summary positions) to candidate identity, per presentation order."""


@dataclass(frozen=True, slots=True)
class Job:
    """Where a judgment sits in the sweep, and everything needed to make it."""

    key: str
    judge: str
    protocol: JudgeProtocol
    condition: str
    item_id: str
    subset: str
    document_id: str  # the bootstrap's resampling unit
    domain: str
    generators: tuple[str, str]  # what wrote candidate 1 and 2
    order: Order
    seed: int
    target: Target
    turn1_target: Target | None
    label_1: str  # candidate terms
    label_2: str
    source_1: str  # true provenance of candidate 1 and 2
    source_2: str
    attack: str
    presentation: Presentation  # screen terms
    reveal: tuple[str, str] | None  # turn-2 labels, screen terms
    template_hash: str
    sampling: Sampling  # the sweep's, one shared object: a job carries all its requests need
    repeat: int = 0  # > 0: the noise-floor re-send of a Blind judgment (fresh request keys)
    degraded: Target = "none"  # a sensitivity condition: the candidate that is the degraded copy
    pressure: Pressure | None = None  # a pressure condition: what its second turn says
    gold: Gold | None = None  # the item's gold, where the condition shows its own two texts
    attack_on: str = ""  # the candidate a style attack rewrote ("" = no attack)
    reformat: str = ""  # a format condition's form ("" = none)
    reformat_on: str = ""  # the candidate(s) shown in that form: A, B or both


def to_candidates(value: Any, order: str, key: str = "") -> Any:
    """Rename screen terms to candidate terms through nested details.

    It renames ``summary_1``/``_2`` keys, quote ``source`` values and ``*verdict`` values; free
    text is left alone.
    """
    table = SCREEN_TO_CANDIDATE[order]
    if isinstance(value, dict):
        return {table.get(k, k): to_candidates(v, order, k) for k, v in value.items()}
    if isinstance(value, list):
        return [to_candidates(v, order, key) for v in value]
    if isinstance(value, str) and (key == "source" or key.endswith("verdict")):
        return table.get(value, value)
    return value


def _details(first: Turn | None, turn: Turn) -> dict[str, Any]:
    """The final turn's details.

    Under Reveal-After, turn 1's details go under ``turn1`` (its locked notes aside, which turn 2
    carries).
    """
    earlier = {k: v for k, v in first.details.items() if k != "notes"} if first else {}
    return {**turn.details, "turn1": earlier} if earlier else turn.details


async def run_job(job: Job, endpoint: Endpoint, store: Store) -> Outcome:
    """Make one judgment (every request cached in ``store``) and return its outcome."""
    salt = f"repeat:{job.repeat}" if job.repeat else ""
    ask = CachedAsker(endpoint, store, job.sampling, job.seed, salt)
    turn1 = Recorder(ask)
    first: Turn | None = None
    failure: StageFailed | None = None
    try:
        turn = await job.protocol.run(job.presentation, turn1)
        if job.reveal is not None:
            truth = replace(job.presentation, label_1=job.reveal[0], label_2=job.reveal[1])
            first, turn = turn, await reveal(job.protocol, turn, turn1, truth, ask)
        elif job.pressure is not None:
            target = pressed(job.pressure, SCREEN_TO_CANDIDATE[job.order][turn.verdict],
                             job.item_id, job.seed)  # fmt: skip
            stated = 1 if (target == "A") == (job.order == "12") else 2
            first, turn = turn, await press(job.protocol, turn, turn1, job.pressure, stated, ask,
                                            job.presentation.names)  # fmt: skip
    except StageFailed as exc:
        failure = exc
    stats: dict[str, Any] = {"key": job.key, "model": endpoint.info.model, **ask.totals()}
    if failure is not None:
        return Outcome(
            status="invalid",
            verdict=INVALID,
            explanation=failure.result.raw,
            invalid_reason=str(failure),
            retryable=failure.result.retryable,
            **stats,
        )
    order = job.order
    details = to_candidates(_details(first, turn), order)
    if job.pressure is not None:  # the candidate the pressure pointed to: the row's target
        details["pressure_target"] = target
    return Outcome(
        status="valid",
        verdict=SCREEN_TO_CANDIDATE[order][turn.verdict],
        raw_verdict=turn.verdict,
        explanation=turn.explanation,
        details=details,
        turn1_verdict=SCREEN_TO_CANDIDATE[order][first.verdict] if first else "",
        turn1_explanation=first.explanation if first else "",
        **stats,
    )
