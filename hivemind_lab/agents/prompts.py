"""Versioned prompts: pure functions from a task model to a ChatRequest.

The task travels as a JSON block between ``<task>`` tags after plain-language instructions, so
an LLM reads instructions plus data, and the offline model reads the same data.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, TypeAdapter

from hivemind_lab.agents.schemas import (
    AgentTask,
    BatchCritiqueOutput,
    BatchCritiqueTask,
    CritiqueOutput,
    CritiqueTask,
    ProposalOutput,
    ProposeTask,
    ReviseTask,
    RevisionOutput,
    ScoreOutput,
    ScoreTask,
)
from hivemind_lab.llm.base import ChatMessage, ChatRequest
from hivemind_lab.llm.structured import response_format_for

PROMPT_VERSION = "2026-11-29.1"
_TASK_BLOCK = re.compile(r"<task>\s*(\{.*\})\s*</task>", re.DOTALL)
_TASK_ADAPTER: TypeAdapter[AgentTask] = TypeAdapter(AgentTask)

_SYSTEM = {
    "theory": (
        "You are a theory agent in a strategic deliberation. Your knowledge is the evidence "
        "given to you: a slice of a peer-reviewed strategy knowledge base. Argue only from it, "
        "cite passage ids, and answer with a single JSON object following the schema."
    ),
    "practicality": (
        "You are a practicality agent representing one real-world feasibility constraint. You "
        "see proposed actions without their justification. Judge only whether the actions are "
        "feasible under your constraint, using your constraint knowledge, and answer with a "
        "single JSON object following the schema."
    ),
}

_INSTRUCTIONS = {
    "propose": (
        "Propose a solution to the problem: a short title and up to max_recommendations concrete, "
        "self-contained recommendations grounded in your evidence, a rationale, and the ids of "
        "the passages you relied on. Do not propose anything in `excluded` or close to it."
    ),
    "critique": (
        "Critique the target agent's solution using only your own evidence: mark recommendations "
        "your evidence supports or contradicts (0-based index), and name gaps your evidence "
        "says the solution misses. Give each point a strength in [0, 1] and a citation."
    ),
    "critique_batch": (
        "Critique each target solution in turn, using only your own evidence, exactly as for a "
        "single critique; return one entry per target_id."
    ),
    "revise": (
        "Revise your solution after reading every critique of it. Stubbornness (0 to 1) sets "
        "how far you move: at 0 adopt every well-supported point, at 1 change nothing. List the "
        "claims you adopted and rejected."
    ),
    "score": (
        "Score the solution's feasibility under your constraint from 0 (infeasible) to 100 "
        "(no concern), with a short reason and the risk signals you found. Severity (0 to 1) "
        "sets how strict you are."
    ),
}

OUTPUT_TYPES: dict[str, type[BaseModel]] = {
    "propose": ProposalOutput,
    "critique": CritiqueOutput,
    "critique_batch": BatchCritiqueOutput,
    "revise": RevisionOutput,
    "score": ScoreOutput,
}


def render(
    task: ProposeTask | CritiqueTask | BatchCritiqueTask | ReviseTask | ScoreTask,
    *,
    seed: int | None = None,
    temperature: float = 0.0,
) -> ChatRequest:
    """Build the request for one agent task."""
    role = "practicality" if isinstance(task, ScoreTask) else "theory"
    user = f"{_INSTRUCTIONS[task.task]}\n\n<task>\n{task.model_dump_json(indent=1)}\n</task>"
    return ChatRequest(
        messages=(
            ChatMessage(role="system", content=_SYSTEM[role]),
            ChatMessage(role="user", content=user),
        ),
        temperature=temperature,
        seed=seed,
        response_format=response_format_for(OUTPUT_TYPES[task.task]),
    )


def parse_task(request: ChatRequest) -> AgentTask:
    """Recover the task from a rendered request (first user message holding a task block)."""
    for message in request.messages:
        if message.role == "user":
            match = _TASK_BLOCK.search(message.content)
            if match:
                return _TASK_ADAPTER.validate_json(match.group(1))
    raise ValueError("request holds no <task> block")
