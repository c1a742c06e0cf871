"""Argument types shared by the MCP tools and the chat bridge.

Every type is strict: a client sending ``"0.5"`` or ``true`` for a confidence, or ``"200"`` for a
token budget, gets an error naming the argument rather than a silent conversion (the graph layer
refuses the same values). Fixed sets are `Literal`, so clients see them as enums in the schema.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, ValidationError

from hivemind_lab.graph.models import Resolution
from hivemind_lab.models import Frozen

StatusFilter = Literal["unresolved", "resolved", "forked", "all"]

Subject = Annotated[str, Field(strict=True, description="The entity or concept being described.")]
Predicate = Annotated[
    str,
    Field(
        strict=True,
        description='The relationship or property, e.g. "is", "causes", "implies", "contradicts".',
    ),
]
Object = Annotated[str, Field(strict=True, description="The target entity, value or claim.")]
Confidence = Annotated[
    float,
    Field(
        strict=True,
        description="0.0 (speculation) to 1.0 (verified fact); 0.5 for an untested hypothesis.",
    ),
]
Domain = Annotated[
    str,
    Field(
        strict=True,
        description='Knowledge domain, e.g. "general", "theory", "entity", "method", "meta".',
    ),
]
Evidence = Annotated[
    str, Field(strict=True, description="Supporting evidence, derivation or reference.")
]
Text = Annotated[str, Field(strict=True)]
"""Any other free-text argument (described where it is used)."""
TokenBudget = Annotated[
    int | None,
    Field(
        strict=True,
        description="Response budget in tokens (default depends on your model: larger context, larger budget).",
    ),
]
Share = Annotated[float, Field(strict=True)]
Count = Annotated[int, Field(strict=True)]
ResolutionChoice = Annotated[
    Resolution,
    Field(
        description="accept_a or accept_b (the other side is disproven), synthesize (a combined "
        "claim supersedes both) or fork (both stand).",
    ),
]
Status = Annotated[StatusFilter, Field(description="Which conflicts to list (default unresolved).")]


class BridgeAssertion(Frozen):
    """The chat bridge's POST body: hivemind_assert's arguments as a JSON object. The model
    acting is the bearer token's; any identity field in the body is ignored."""

    model_config = ConfigDict(extra="ignore", strict=True)

    subject: Subject
    predicate: Predicate
    obj: Object
    confidence: Confidence
    domain: Domain = "general"
    evidence: Evidence = ""


ERROR_LIMIT = 400
"""Longest error text a client gets: errors quote the offending value, which may be huge."""


def brief(message: str, *, limit: int = ERROR_LIMIT) -> str:
    """``message`` cut to ``limit`` characters around the middle: its head names the field and
    the start of the value, its tail what is allowed. A 0.9 MB argument must not come back as a
    0.9 MB error (nor fill the log and hold up other clients while it is sent)."""
    if len(message) <= limit:
        return message
    keep = (limit - 40) // 2
    return f"{message[:keep]} …[{len(message) - 2 * keep:,} characters cut]… {message[-keep:]}"


def describe(error: ValidationError) -> str:
    """One line naming each bad field of a bridge body, without echoing Python internals."""
    problems = []
    for err in error.errors(include_url=False):
        where = ".".join(str(part) for part in err["loc"]) or "body"
        if err["type"] == "json_invalid":
            problems.append("body: not valid JSON")
        elif err["type"] == "model_type":
            problems.append("body: must be a JSON object")
        elif err["type"] == "missing":
            problems.append(f"{where}: required")
        else:
            problems.append(f"{where}: {err['msg']}")
    return "; ".join(problems)
