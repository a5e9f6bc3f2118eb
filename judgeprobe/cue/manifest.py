"""The cue sweep's manifest: its provenance, config, protocols, schemas, conditions, judges."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from judgeprobe.conditions import Condition
from judgeprobe.core.files import content_hash
from judgeprobe.cue.config import SweepConfig
from judgeprobe.engine.cached import schema_of
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.settings import own_records
from judgeprobe.engine.wire import sampling_record
from judgeprobe.protocols import JudgeProtocol, replies, templates_hash
from judgeprobe.protocols.names import LETTERS, NUMBERS, Scheme
from judgeprobe.protocols.reveal import reveal_templates
from judgeprobe.protocols.wording import Builtin
from judgeprobe.protocols.wording import worded as worded_
from judgeprobe.runs.manifest import provenance, public_url


def reply_models(criteria: tuple[str, ...]) -> tuple[type[BaseModel], ...]:
    """Every reply model a sweep may ask for, under the task's criteria."""
    keyed = replies.criteria_replies(criteria)
    return replies.PairwiseReply, keyed.scot, keyed.lock, keyed.score, replies.RankReply


def label_schemes(cfg: SweepConfig, protocols: Mapping[str, JudgeProtocol]) -> dict[str, Any]:
    """What each label scheme of the sweep asked with (``protocols.names``).

    Numbers and letters: their names and the hashes of the templates and reply schemas as read
    under them; ids: the rule that draws two IDs per item (the hashes differ per item).
    """
    fixed: dict[Scheme, tuple[str, str]] = {"numbers": NUMBERS, "letters": LETTERS}
    out: dict[str, Any] = {}
    for scheme in cfg.schemes:
        names = fixed.get(scheme)
        if names is None:
            out[scheme] = {"names": "two IDs per item from sha256('names:ids:' + item_id)"}
            continue
        models: list[type[BaseModel]] = [
            replies.named(m, names) for m in reply_models(cfg.task.criteria)
        ]
        asked = [schema_of(m) for m in models]
        out[scheme] = {
            "names": list(names),
            "protocol_templates": {n: templates_hash(p.templates, cfg.task, names)
                                   for n, p in protocols.items()},
            "schemas": {str(s["title"]): content_hash(s) for s in asked},
        }  # fmt: skip
    return out


def new_manifest(
    run_id: str,
    cfg: SweepConfig,
    protocols: Mapping[str, JudgeProtocol],
    endpoints: dict[str, Endpoint],
    conditions: dict[str, Condition],
) -> dict[str, Any]:
    """The run's manifest: everything needed to reproduce or audit the sweep.

    The sweep's own parts first, then what the layers below say (provenance, template
    hashes, then each backend's wire sampling), so the config is read top down.
    """
    digest, config = cfg.digest(), cfg.model_dump(mode="json")
    own = own_records(cfg.judges)  # each judge's own prompt: path, hash, verdict format
    chosen = {name: conditions[name].model_dump() for name in cfg.conditions}
    names = {t for p in protocols.values() for t in p.templates}
    names |= {t for name in protocols for t in reveal_templates(name)}
    # the built-in protocols' further wordings (a judge's own are in own_prompts)
    worded = {n: [worded_(p, k) for k in range(1, cfg.wordings)]
              for n, p in protocols.items() if isinstance(p, Builtin)}  # fmt: skip
    names |= {t for others in worded.values() for p in others for t in p.templates}
    hashes = {n: [templates_hash(p.templates, cfg.task) for p in others]
              for n, others in worded.items()}  # fmt: skip
    made = provenance("cue", digest, names, cfg.task)
    # the level every judge reaches; per judge under judges[]
    every = all(j.batch_invariant for j in cfg.judges)
    reached = cfg.sampling.determinism(cfg.seeds[0], batch_invariant=every)
    return {
        **made,
        "run_id": run_id,
        "config": config,
        "seeds": cfg.seeds,
        "determinism": reached,
        "protocol_templates": {
            n: templates_hash(p.templates, cfg.task) for n, p in protocols.items()
        },
        "budgets": {n: dict(p.budgets) for n, p in protocols.items()},  # max_tokens per stage
        "schemas": {
            str(schema_of(m)["title"]): content_hash(schema_of(m))
            for m in reply_models(cfg.task.criteria)
        },
        "conditions": chosen,
        **({"wording_templates": hashes} if cfg.wordings > 1 else {}),
        **({"own_prompts": own} if own else {}),
        **({"label_schemes": label_schemes(cfg, protocols)} if cfg.schemes != ["numbers"] else {}),
        "judges": _judge_records(cfg, endpoints),
    }


def _judge_records(cfg: SweepConfig, endpoints: dict[str, Endpoint]) -> list[dict[str, Any]]:
    """Each judge as it answered: its server, model, fingerprint, sampling and determinism."""
    seed, sampling = cfg.seeds[0], cfg.sampling
    return [
        {
            "name": name,
            "url": public_url(ep.judge.url),
            "api_key_env": ep.judge.api_key_env,
            "backend": ep.info.backend,
            "model": ep.info.model,
            "fingerprint": ep.info.fingerprint,
            "server": ep.info.details,
            "sampling": sampling_record(ep.info.backend, sampling, cfg.seeds),
            "determinism": sampling.determinism(seed, batch_invariant=ep.judge.batch_invariant),
        }
        for name, ep in endpoints.items()
    ]
