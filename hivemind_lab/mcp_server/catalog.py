"""What the MCP server serves, by name, in a module that imports nothing: `serve --help` counts
from it without loading the SDK; the tests check that a served server lists exactly these."""

from __future__ import annotations

SPEC_TOOLS = (
    "hivemind_assert",
    "hivemind_query",
    "hivemind_conflicts",
    "hivemind_resolve",
    "hivemind_divergence",
    "hivemind_patterns",
)
"""The tools of the Hivemind MCP spec."""
TOOLS = (*SPEC_TOOLS, "hivemind_retract")
CONFLICT_URI = "hivemind://conflicts/{conflict_id}"
ENTITY_URI = "hivemind://entities/{subject}/assertions"
TRACK_RECORD_URI = "hivemind://models/{model}/track-record/{domain}"
RESOURCE_TEMPLATES = (CONFLICT_URI, ENTITY_URI, TRACK_RECORD_URI)
PROMPTS = ("summarise_subject", "review_conflict")


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


def summary() -> str:
    """What is served, counted: ``7 tools (…), 3 resource templates and 2 prompts``."""
    return (
        f"{_count(len(TOOLS), 'tool')} ({', '.join(TOOLS)}), "
        f"{_count(len(RESOURCE_TEMPLATES), 'resource template')} and "
        f"{_count(len(PROMPTS), 'prompt')}"
    )
