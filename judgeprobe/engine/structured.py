"""Structured output the way each backend wants it.

- llama.cpp (``llama-server`` and llama-cpp-python): ``response_format`` type ``json_object``
  with a ``schema``; both compile it to a grammar.
- vLLM: ``response_format`` type ``json_schema`` (its old ``guided_json`` extra fields are
  silently ignored since 0.12, so they are never sent).
- TGI: its grammar form, ``response_format = {"type": "json", "value": schema}`` (``json_object``
  is an alias). TGI's ``json_schema`` type (v3.3.0+) also takes the schema under ``value``
  (``{"name", "schema"}``); OpenAI's ``json_schema`` key fails to deserialize there (422).
- anything else OpenAI-compatible: ``json_schema``.
"""

from __future__ import annotations

from typing import Any

BACKENDS: tuple[str, ...] = ("llama-server", "llama-cpp-python", "vllm", "tgi", "openai")


def response_format(backend: str, name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` body field that constrains a reply to ``schema``."""
    if backend in ("llama-server", "llama-cpp-python"):
        return {"type": "json_object", "schema": schema}
    if backend == "tgi":
        return {"type": "json", "value": schema}
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
