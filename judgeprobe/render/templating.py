"""Pages from Jinja templates with autoescaping: judgeprobe's one way to write HTML.

Every page (the report, the judge card, the evidence browser, the annotation form) is a
template in ``render/templates/``; a new page is a new template and one ``page`` call. Every
value a template prints is HTML-escaped unless it is ``Markup``, and text from outside
(judge replies, candidate texts, item ids, condition names, manifest fields) never is: the
only ``Markup`` made here is a fragment rendered by a template itself (``fragment``), which
was escaped while it was rendered.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import orjson
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup


def _json(value: Any, **_: Any) -> str:
    return orjson.dumps(value).decode()


ENVIRONMENT = Environment(
    loader=PackageLoader("judgeprobe.render", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,  # a misspelt name fails the render instead of printing ""
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=False,
)
# ``|tojson`` (data for a page's script) through orjson; Jinja still makes it safe inside
# <script> by writing <, >, & and ' as \u escapes.
ENVIRONMENT.policies["json.dumps_function"] = _json
ENVIRONMENT.policies["json.dumps_kwargs"] = {}


def static(name: str) -> str:
    """A page's script as the package ships it (``render/static/``), served beside its page."""
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def page(template: str, **context: Any) -> str:
    """A whole page from ``template`` (a name in ``render/templates/``)."""
    return ENVIRONMENT.get_template(template).render(**context)


def fragment(template: str, **context: Any) -> Markup:
    """A block for another page (the evidence browser inside the report).

    Trusted HTML, marked here and nowhere else: the template escaped every value it printed.
    """
    return Markup(page(template, **context))  # trusted: rendered with autoescaping
