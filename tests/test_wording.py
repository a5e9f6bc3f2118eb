"""Prompt wordings (issue 30 item 2): the paraphrases, the config, the plan, the agreement metrics
(Fleiss' κ and the wording flip share) on hand-made tables, the card's wording row, the report,
and the self-test recovering a planted wording sensitivity."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pytest

from judgeprobe.conditions import builtin_conditions
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.plan import count, cue_jobs, protocols_for
from judgeprobe.prompts import load_template
from judgeprobe.protocols import PBP, Baseline, SCoT, templates_hash
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.wording import BUILTIN, paraphrase, shipped, worded, wordings_of
from tests.conftest import make_items

JUDGE = {"name": "j", "url": "http://127.0.0.1:9/v1"}

# The original prompts' SHA-256 as released, and each protocol's template hash: wording 0 must
# never move a judgment key, a digest or a golden file.
ORIGINALS = {
    "baseline_v1": "e4150d1b2e2614c4207e69eca2cd68c15c448b13af00c55e9ba980cc4547dac1",
    "scot_v1": "e1188bdf1f9a0a675236462312bbfb255852a720305d2d5c0f7e489efcf122ff",
    "pbp_lock_v3": "05ac24d171c8d882054fff4760b4ea5d2e345e59349e4048e3da59e90adcf881",
    "pbp_score_v1": "606ce7deb44320fb345c40619cbc1663689c4b4f2e018957c9d86922757ffd4a",
    "pbp_rank_v1": "738879815496421e2a2aa9bac3fb9d8a4c7d2b9c6accf684e3aa2191164de555",
    "materials_v1": "34174d5a311294d7204d6b98b1cb217cf30dcd80156b9ba0b405df73dfbf3cbc",
}
PROTOCOL_HASHES = {
    "baseline": "c2b59418e9a3a613674c8ac7c20ff9d654bf31812206caa90645a7b0514d7996",
    "scot": "68b22a11b633a2fc8f13095e19faf75bb342363390ac68c11e21a4b009192518",
    "pbp": "7211d80d05cd8fe1d04ef91cdc07888de312db5dc8fe609c7752b0f150d0d491",
}


def _items(tmp_path: Path, n: int) -> list[Item]:
    path = make_items(tmp_path / "items.jsonl", n)
    return [Item.model_validate(orjson.loads(line)) for line in path.read_bytes().splitlines()]


def test_wording_0_is_the_original_byte_for_byte() -> None:
    for name, sha in ORIGINALS.items():
        assert hashlib.sha256(load_template(name).text.encode()).hexdigest() == sha
    for protocol in (Baseline(), SCoT(), PBP()):
        assert templates_hash(protocol.templates) == PROTOCOL_HASHES[protocol.name]
        assert paraphrase(protocol.templates[0], 0) == protocol.templates[0]


def test_every_builtin_protocol_ships_three_paraphrases_of_the_same_instructions() -> None:
    for name, cls in BUILTIN.items():
        original = cls()
        assert wordings_of(name) == shipped(original.templates) == 4
        texts = set()
        for k in range(4):
            protocol = worded(original, k) if k else original
            assert protocol.templates[-1] == "materials_v1"  # the screen is never reworded
            for before, after in zip(original.templates, protocol.templates, strict=True):
                a, b = load_template(before), load_template(after)
                assert a.placeholders == b.placeholders  # the same texts filled in
                # the same output format: every JSON key and verdict token of the original
                tokens = {
                    '"[1,2]"',
                    '"[2,1]"',
                    '"Tie"',
                    '"summary_1"',
                    '"summary_2"',
                    '"verdict"',
                    '"explanation"',
                    '"justification"',
                    '"criteria"',
                    '"notes"',
                    '"note"',
                    '"quotes"',
                    '"accuracy"',
                    '"fluency"',
                    "0-5",
                    "Locked notes:",
                    "Scores:",
                    "25 words",
                    "12 words",
                }
                assert {t for t in tokens if t in a.text} == {t for t in tokens if t in b.text}
                texts.add(b.text)
        assert len(texts) == 4 * (len(original.templates) - 1) + 1  # materials once
        with pytest.raises(ValueError, match="ships no wording 4"):
            worded(original, 4)


async def _prompt(protocol: Baseline | SCoT | PBP) -> str:
    seen: list[str] = []

    async def ask(messages: Any, reply_model: Any, max_tokens: int) -> Any:
        seen.append(messages[-1]["content"])
        raise RuntimeError("stop")

    p = Presentation("The doc.", "One.", "Two.", "", "")
    with pytest.raises(RuntimeError):
        await protocol.run(p, ask)
    return seen[0]


@pytest.mark.asyncio
async def test_a_worded_protocol_sends_its_paraphrase_and_keeps_the_materials() -> None:
    for cls in BUILTIN.values():
        original = await _prompt(cls())
        other = await _prompt(worded(cls(), 2))
        assert original != other
        shown = Presentation("The doc.", "One.", "Two.", "", "").materials()
        assert shown in original
        assert shown in other


def test_wording_jobs_follow_blind_in_both_orders_keyed_apart_and_counted(
    tmp_path: Path,
) -> None:
    base = {"protocols": ["baseline", "pbp"], "conditions": ["Blind", "True"], "order": "12",
            "swap": 1.0, "judges": [JUDGE]}  # fmt: skip
    cfg = SweepConfig(**base, wordings=3)
    items, conditions, protocols = _items(tmp_path, 3), builtin_conditions(), protocols_for(cfg)
    jobs = list(cue_jobs(cfg, protocols, items, conditions, {"j": "fp"}))
    keys = [j.key for j in jobs]
    assert len(set(keys)) == len(keys)
    by = {(j.condition, j.protocol.name, j.item_id, j.order): j for j in jobs}
    worded_jobs = [j for j in jobs if j.condition.startswith("BlindWording")]
    assert {j.condition for j in worded_jobs} == {"BlindWording1", "BlindWording2"}
    # each wording judges every Blind showing, in both orders (the swap), with Blind's screen
    blind = [j for j in jobs if j.condition == "Blind"]
    assert len(worded_jobs) == 2 * len(blind)
    assert {j.order for j in worded_jobs} == {"12", "21"}
    for j in worded_jobs:
        twin = by[("Blind", j.protocol.name, j.item_id, j.order)]
        assert j.presentation == twin.presentation
        assert j.target == "none"
        assert j.template_hash != twin.template_hash
        k = int(j.condition.removeprefix("BlindWording"))
        assert j.template_hash == templates_hash(worded(twin.protocol, k).templates)  # type: ignore[arg-type]
    counted = count(cfg, protocols, items, conditions)
    assert counted.judgments == len(jobs)
    assert counted.requests["baseline"] == sum(j.protocol.name == "baseline" for j in jobs)
    assert counted.requests["pbp"] == 3 * sum(j.protocol.name == "pbp" for j in jobs)
    # wordings = 1 plans exactly what a config without wordings did: the same keys, one digest
    plain = SweepConfig(**base)
    assert SweepConfig(**base, wordings=1).digest() == plain.digest() != cfg.digest()
    old = [j.key for j in cue_jobs(plain, protocols_for(plain), items, conditions, {"j": "fp"})]
    assert old == [j.key for j in jobs if not j.condition.startswith("BlindWording")]
