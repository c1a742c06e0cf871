"""Versioned prompts: pure functions from a task model to a ChatRequest.

The task travels as JSON, so an LLM reads instructions plus data, and the offline model reads
the same data. Every prompt runs from the most shared to the least, so a server that caches
prompt prefixes re-reads only what follows the longest part a call shares with the last one on
its slot: the system text (one for every role), the decision between ``<decision>`` tags (the
same for every agent of a run) and the rules on it, then the role's text and rules, then the
rest of the task between ``<task>`` tags (the agent's constraint and evidence first, then what is
particular to the call), then the call's instructions. An agent's calls share everything up to
its call's own part; agents of different roles share the decision.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Literal, NamedTuple, get_args

from pydantic import BaseModel, TypeAdapter

from hivemind_lab.agents.schemas import (
    MAX_FACTS_USED,
    AgentTask,
    AnyTask,
    BatchCritiqueOutput,
    BatchCritiqueTask,
    BatchScoreOutput,
    BatchScoreTask,
    CritiqueOutput,
    DecisionContext,
    ProposalOutput,
    ProposeTask,
    RationaleOutput,
    ReviseTask,
    RevisionOutput,
    ScoreOutput,
    ScoreTask,
    Stance,
    SynthesizeTask,
)
from hivemind_lab.llm.base import ChatMessage, ChatRequest, ResponseFormat
from hivemind_lab.llm.structured import response_format_for
from hivemind_lab.wire import OPTION_LETTERS, WIRE

PROMPT_VERSION = "2026-12-04.1"
"""2026-12-04.1: a constraint agent may score every distinct solution of a set in one call
(`score_batch`: each judged alone on the absolute rubric, in a rotation of its own); the
monitor is told once where ids go (in `citations`, not in its sentences); a revision lists up
to 16 adopted and rejected claims and reads the passages its critics cite (`cited`); the score
rubric says plainly that severity is the engine's; a proposal's reply schema no longer
describes the exclusive rule to every decision; an exclusive decision's solution may say when
to revisit the choice.
2026-12-03.1: options are named by letter on the wire (``{"id": "A", "label": …}``, every
option field of a task and a reply takes the letter; the engine keeps 0-based ints); critique
kinds name the three stances (a contradiction's `stance`), no "opposite"; theory agents may
reason on the client's facts and say when their evidence does not bear on the decision; reply
schemas admit every fact in `facts_used` and cite constraint ids in `constraints_used`; longer
texts and completion budgets; a score lists the plan's `strengths`; a repeat proposal is told
what was refused and why (`refused`); the synthesize task carries the practicality network's
unanswered `concerns`.
2026-12-02.4: a batched critique carries the single critique's instructions (`instead` among
them); the engine never holds a crossing agent on a forbidden option, and takes an open
question's changed course when a point cleared the bar (engine rules are versioned here too: a
run at another version is stale).
2026-12-02.3: a critique point may name the option its critic favours `instead`.
2026-12-02.2: a proposal's or revision's reply schema holds one stance per option, in order.
2026-12-02.1: the score task no longer carries severity (the engine applies it)."""
_TASK_BLOCK = re.compile(r"<task>\s*(\{.*\})\s*</task>", re.DOTALL)
_TWO_BLOCKS = re.compile(
    r"<decision>\n(\{.*\})\n</decision>(.*?)<task>\n(\{.*\})\n</task>", re.DOTALL
)
"""The decision block, the text between, the task block. JSON escapes newlines inside strings,
so a newline next to a tag is always the layout's own."""
_TASK_ADAPTER: TypeAdapter[AgentTask] = TypeAdapter(AgentTask)
Task = AnyTask
"""Every task an agent (theory, practicality or the monitor) is asked."""

SYSTEM = (
    "You are one agent of a strategic deliberation for one client. You read the client's "
    "decision, then your role, your own knowledge and your task, and you answer with a single "
    "JSON object following the schema."
)
"""The one system text of every agent task: a role's text follows the decision, so agents of
every role share the prompt prefix up to the end of the decision."""

_ROLE = {
    "theory": (
        "Your role: a theory agent. Your knowledge is the evidence given to you: a slice of a "
        "peer-reviewed strategy knowledge base. Answer the client's actual decision: choose or "
        "sequence among its options and use its facts. Reason from your evidence and from the "
        "client's facts; arithmetic on the client's own figures is welcome. When your evidence "
        "does not bear on this decision (for instance corporate-strategy findings on a personal "
        "decision), say so rather than stretch it, and rely on the client's facts. Cite passage "
        "ids, fact ids and constraint ids."
    ),
    "monitor": (
        "Your role: the monitor. Several theory agents reached one conclusion from different "
        "knowledge slices. Write its combined rationale for the client's executives from the "
        "members' solutions and justifications only. Put the passage ids the members cite "
        "and you rely on in `citations`; the sentences themselves name no ids."
    ),
    "practicality": (
        "Your role: a practicality agent representing one real-world feasibility constraint. You "
        "see the client's problem, its options and facts, and the proposed actions without "
        "their theoretical justification. Judge only whether the actions are feasible for this "
        "client under your constraint, using your constraint knowledge and the client's facts."
    ),
}

_CRITIQUE = (
    "Critique the target agent's solution, option by option, using your own evidence and the "
    "client's facts (reasoning on the client's figures included). A stance is one of pursue "
    "(now), later (after the options pursued now) or avoid. support: your evidence backs the "
    "target's stance on an option. contradiction: your evidence goes against the target's "
    "stance on an option; put in `stance` the stance your evidence favours on it. gap: an "
    "option or a client fact the target ignores. Give each point the option letter, a "
    "strength from 1 (weak) to 5 (decisive) and a citation (passage id, constraint id, or "
    "fact id for a fact gap). At most six points. A contradiction of an option the target "
    "pursues names in `instead` the letter of the option your evidence favours in its place, "
    "if any. When the problem has no options, a contradiction names the course of action "
    "your evidence favours instead in `course`."
)
"""The critique instructions, also the batch's (its model sees no single critique's text)."""

_SCORE = (
    "Score the solution's feasibility for this client under your constraint, on this "
    "rubric: 100 no concern; 75 manageable concerns with known mitigations; 50 serious "
    "concerns that need conditions the solution does not state; 25 likely to fail under "
    "this constraint given the client's facts; 0 infeasible or unlawful. Then list your "
    "concerns (at most six): the option each bears on, its grade (minor: a cost or a "
    "condition; major: likely harm unless handled; critical: it blocks the move), whether "
    "the solution or the client's facts already mitigate it, and the fact, passage or "
    "constraint id behind it. List in `strengths` (at most four) what makes the solution "
    "feasible under your constraint. Score by the rubric alone: the engine applies the "
    "client's risk tolerance to your unmitigated concerns afterwards, so do not raise or "
    "lower your score for it. Give a short reason naming the option and the fact or "
    "knowledge that decides it, and the risk signals you found."
)
"""The score instructions, also the batch's (its model sees no single score's text)."""

_INSTRUCTIONS = {
    "propose": (
        "Propose a solution to the client's decision. `options` lists the courses of action "
        "the client weighs, each with its letter (`id`); if it is empty, propose your own course "
        "of action and state it in `course`. Give a stance on each option by its letter (pursue "
        "now, later in a sequence, or avoid), a short title naming the chosen option, and up to "
        "max_recommendations concrete recommendations: the first states the choice or sequence, "
        "each names an option or a client fact (quote its figure), and none merely restates a "
        "general finding. Justify in the rationale from your evidence and the client's facts "
        "(the `about` field of a passage gives the letters of the options it was retrieved for). "
        "List the passage ids in `citations`, the fact ids in `facts_used` and the constraint "
        "ids in `constraints_used`. Do not propose anything in `excluded` or close to it; "
        "`refused` lists your proposals already refused and why: make this one different."
    ),
    "critique": _CRITIQUE,
    "critique_batch": (
        "Critique each target solution in turn, as follows, and return one entry per "
        "target_id. " + _CRITIQUE
    ),
    "revise": (
        "Revise your solution after reading every critique of it, with your own evidence shown "
        "again and, in `cited`, the passages your critics cite that are not in it. The engine has weighed every point by the distinct evidence behind it and your "
        "stubbornness: `must_answer` lists the points (critic_id, 0-based point index, weight) "
        "you must answer, by adopting each or rebutting it from your evidence; `may_weigh` "
        "lists points near your bar that you may adopt or not; every other point you may leave. "
        "Change your stance only on options those points address (a contradiction's `instead` "
        "option included), towards the critics who raised them, and no further than the points "
        "reach: the engine takes a revision whole or not at all, and it never edits your "
        "stances under your words. When `not_taken` is set, your last revision was not taken "
        "for the reason given: write the revision again so that it can be. Keep addressing the "
        "client's options and facts; cite passage, fact and constraint ids as in a proposal; "
        "list the claims you adopted and rejected."
    ),
    "synthesize": (
        "Write the conclusion's combined rationale: in `shared`, the reasons its members have "
        "in common (the options they choose and the client facts and evidence behind them); in "
        "`differences`, where they differ; in `objection`, the strongest objection still "
        "standing, taken from `objections` (contradictions the members did not take in) or "
        "`concerns` (major or critical concerns a constraint agent raised that the solutions "
        "leave unanswered; name that constraint), or leave it empty when none stands. Plain "
        "sentences for the client."
    ),
    "score": _SCORE,
    "score_batch": (
        "Score each solution of `solutions` in turn, as follows, and return one entry per "
        "solution_id. Judge each solution alone, against the rubric, as if it were the only "
        "one you were shown: do not rank the solutions against each other or spread their "
        "scores apart; equally feasible solutions get the same score. `evidence_ids` names "
        "the passages of `evidence` retrieved for that solution. " + _SCORE
    ),
}

OPTIONS_RULE = (
    "Each option of the decision has a letter (`id` in `options`); every option field of a "
    "task and of your reply holds that letter. In sentences for the client (titles, "
    "recommendations, rationales, claims), name an option by its label."
)
"""Told to every agent of a decision with options: a stable letter, never an engine index."""

ONE_OF_RULE = (
    "This decision is exclusive (`exclusive` is true): the client can take only one of its "
    "options. Choose exactly one option; the others are alternatives you reject. A solution "
    "pursues exactly one option, marks every other option avoid, never uses later and never "
    'sequences options (no "first …, then …"). A recommendation may say when the client '
    "should revisit the choice (a date, a figure, an event)."
)
"""Told to every agent of an exclusive decision: one of the options, never a sequence."""

BINDING_RULES = {
    "theory": (
        "`constraints` lists the client's binding constraints; `forbids` names the options "
        "each rules out (illegal, barred, in breach), `not_first` the options it bars as a "
        "first move but allows later (after the option in `after`, when one is named) and "
        "`limits` the options it only bounds. Never pursue an option a constraint forbids and "
        "never put one first: mark it avoid. Never pursue a not_first option now: mark it "
        "later, after the option it must follow, or avoid. In a critique, a target that "
        "pursues now an option a constraint forbids or bars as a first move gets a "
        "contradiction on that option citing the constraint id."
    ),
    "practicality": (
        "`constraints` lists the client's binding constraints; `forbids` names the options "
        "each rules out, `not_first` the options it bars as a first move but allows later "
        "(after the option in `after`, when one is named) and `limits` the options it only "
        "bounds. In `violations`, list each constraint the solution breaks with the option it "
        "pursues now in breach of it (the constraint id and the option): a solution that "
        "pursues now a forbidden or a not_first option is infeasible and scores 0; one that "
        "sequences a not_first option later is not in breach. A limit alone is a concern, "
        "not a violation."
    ),
}
"""Told to theory and practicality agents of a decision with binding constraints."""

MAX_TOKENS: dict[str, int] = {
    "propose": 2400,
    "critique": 1800,
    "revise": 3200,
    "score": 2200,
    "score_batch": 2200,
    "synthesize": 1400,
}
"""Completion budget per task: above what the bounded output schema can hold in ordinary text
(about four characters a token), so a reply is cut only when a model pads its strings; a
grammar-constrained small model stops at it instead of looping."""
CRITIQUE_TOKENS_PER_TARGET = 1600


def max_tokens_for(
    task: Task,
) -> int:
    """The completion budget for one task (a batched critique grows with its targets)."""
    if isinstance(task, BatchCritiqueTask):
        return 100 + CRITIQUE_TOKENS_PER_TARGET * max(1, len(task.targets))
    if isinstance(task, BatchScoreTask):
        return 100 + MAX_TOKENS["score"] * len(task.solutions)
    return MAX_TOKENS[task.task]


OUTPUT_TYPES: dict[str, type[BaseModel]] = {
    "synthesize": RationaleOutput,
    "propose": ProposalOutput,
    "critique": CritiqueOutput,
    "critique_batch": BatchCritiqueOutput,
    "revise": RevisionOutput,
    "score": ScoreOutput,
    "score_batch": BatchScoreOutput,
}


SHARED_KEYS: tuple[str, ...] = tuple(DecisionContext.model_fields)
"""The decision every agent of a run sees, whatever its role: the ``<decision>`` block."""
AGENT_KEYS = ("constraint", "red_flags", "mitigations", "evidence")
"""What one agent's calls repeat (its constraint, its evidence): the first keys of the
``<task>`` block, before the call's own (the target, the critiques, the current solution) in
their declared order. A practicality agent's evidence is retrieved per solution, so it comes
last of these."""


def _ordered(task: Task) -> tuple[dict[str, object], dict[str, object]]:
    """The task's fields split into the decision and the rest, each from the most shared key to
    the least."""
    data = task.model_dump(mode="json", context=WIRE)
    decision = {key: data[key] for key in SHARED_KEYS if key in data}
    first = [key for key in AGENT_KEYS if key in data]
    rest = {key: data[key] for key in first} | {
        key: value for key, value in data.items() if key not in decision and key not in first
    }
    return decision, rest


def _dump(data: dict[str, object]) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False)


def task_json(task: Task) -> str:
    """The whole task's JSON, keys from the most shared to the least (what `split_task_block`
    gives back as ``data``). The order carries no meaning; `parse_task` reads any."""
    decision, rest = _ordered(task)
    return _dump(decision | rest)


def _role(task: Task) -> Literal["theory", "monitor", "practicality"]:
    if isinstance(task, ScoreTask | BatchScoreTask):
        return "practicality"
    if isinstance(task, SynthesizeTask):
        return "monitor"
    return "theory"


def render(
    task: Task,
    *,
    seed: int | None = None,
    temperature: float = 0.0,
) -> ChatRequest:
    """Build the request for one agent task.

    From the most shared to the least: the system text and the decision with its rules (the
    same for every agent of the run), the role's text and rules (the same for every call of an
    agent), the rest of the task (the agent's constraint and evidence, then the call's own
    part), the instructions of this kind of call.
    """
    role = _role(task)
    decision, rest = _ordered(task)
    shared = [OPTIONS_RULE] if task.options else []
    shared += [ONE_OF_RULE] if task.exclusive else []
    own = [_ROLE[role]]
    if task.constraints and role in BINDING_RULES:
        own.append(BINDING_RULES[role])
    between = "".join(f"\n\n{text}" for text in (*shared, *own))
    user = (
        f"<decision>\n{_dump(decision)}\n</decision>{between}\n\n"
        f"<task>\n{_dump(rest)}\n</task>\n\n{_INSTRUCTIONS[task.task]}"
    )
    return ChatRequest(
        messages=(
            ChatMessage(role="system", content=SYSTEM),
            ChatMessage(role="user", content=user),
        ),
        temperature=temperature,
        seed=seed,
        response_format=_response_format(task),
        max_tokens=max_tokens_for(task),
    )


def _response_format(task: Task) -> ResponseFormat:
    """The reply schema of a task, sized to it: option letters only of the task's options
    (`letters_of`); a proposal or revision cites any of its facts and constraints
    (`cited_ids`) and, among options, holds one stance per option, in order
    (`stance_per_option`)."""
    base = response_format_for(OUTPUT_TYPES[task.task])
    schema = letters_of(base.json_schema, len(task.options)) if task.options else base.json_schema
    if isinstance(task, ProposeTask | ReviseTask):
        schema = cited_ids(schema, task)
        if task.options:
            schema = stance_per_option(schema, task)
    if isinstance(task, BatchScoreTask):
        schema = scored_ids(schema, task)
    if schema is base.json_schema:
        return base
    return ResponseFormat(name=base.name, json_schema=schema)


_LETTER_ENUM = {"type": "string", "enum": list(OPTION_LETTERS)}


def letters_of(schema: dict[str, Any], n_options: int) -> dict[str, Any]:
    """``schema`` with every option letter narrowed to the first ``n_options`` letters."""
    letters = list(OPTION_LETTERS[:n_options])

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if node == _LETTER_ENUM:
                return {"type": "string", "enum": letters}
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value) for value in node]
        return node

    narrowed: dict[str, Any] = walk(schema)
    return narrowed


def cited_ids(schema: dict[str, Any], task: DecisionContext) -> dict[str, Any]:
    """``schema`` with ``facts_used`` and ``constraints_used`` taking the task's own ids, as
    many as it has (every fact may be cited; a static cap below the task's facts made a capable
    model drop citations)."""
    narrowed = copy.deepcopy(schema)
    cited = {
        "facts_used": [f.id for f in task.facts][:MAX_FACTS_USED],
        "constraints_used": [c.id for c in task.constraints],
    }
    for key, ids in cited.items():
        if key not in narrowed["properties"]:
            continue
        narrowed["properties"][key] = {
            "type": "array",
            "items": {"type": "string", "enum": ids} if ids else {"type": "string"},
            "maxItems": len(ids),
            "uniqueItems": True,
            "default": [],
        }
    return narrowed


def scored_ids(schema: dict[str, Any], task: BatchScoreTask) -> dict[str, Any]:
    """``schema`` with one score per solution of ``task``: ``solution_id`` takes the task's
    ids and ``scores`` holds as many entries as it has solutions (the reply is also validated
    for each id exactly once: `BatchScoreOutput`)."""
    narrowed = copy.deepcopy(schema)
    ids = [item.solution_id for item in task.solutions]
    scores = narrowed["properties"]["scores"]
    scores["minItems"] = scores["maxItems"] = len(ids)
    ref = scores["items"]["$ref"].rsplit("/", 1)[-1]
    narrowed["$defs"][ref]["properties"]["solution_id"] = {"type": "string", "enum": ids}
    return narrowed


def stance_per_option(schema: dict[str, Any], task: DecisionContext) -> dict[str, Any]:
    """``schema`` with its ``stances`` narrowed to one entry per option of ``task``, in order.

    Why: a model that may leave the list empty states no decision, and then the engine has
    nothing to weigh (a small local model did so on every reply, and its calibration curves
    were flat because of it). A stance on every option costs nothing in meaning (an unnamed
    option counts as avoided, `deliberation.stances.UNNAMED`), and a server that compiles the
    schema into a grammar (llama.cpp) can then only write a decision. Exclusivity stays the
    validator's rule (a reply that breaks it is asked again with the error).
    """
    stances: list[str] = ["avoid", "pursue"] if task.exclusive else list(get_args(Stance))
    items = [
        {
            "type": "object",
            "properties": {
                "option": {"const": OPTION_LETTERS[index]},
                "stance": {"enum": stances},
            },
            "required": ["option", "stance"],
            "additionalProperties": False,
        }
        for index in range(len(task.options))
    ]
    narrowed = copy.deepcopy(schema)
    narrowed["properties"]["stances"] = {
        "type": "array",
        "prefixItems": items,
        "minItems": len(items),
        "maxItems": len(items),
        "description": "Your stance on every option, in the order of the decision's options.",
    }
    required = narrowed.setdefault("required", [])
    if "stances" not in required:
        required.insert(1, "stances")
    return narrowed


class TaskBlock(NamedTuple):
    """A user message split around its task data (one ``<task>`` block, or since prompt
    version 2026-12-01.7 a ``<decision>`` block and a ``<task>`` block with text between)."""

    before: str
    """The text before the first block."""
    data: str
    """The whole task's JSON (both blocks' keys, the decision's first)."""
    after: str
    """What follows the closing ``</task>`` tag."""
    between: str | None = None
    """The text between the two blocks; None for a message with one block."""

    def join(self, data: str) -> str:
        """The message with ``data`` (a whole task's JSON) in place of the task's JSON: split
        again into the decision and the rest when the message had two blocks."""
        if self.between is None:
            return f"{self.before}<task>\n{data}\n</task>{self.after}"
        whole = json.loads(data)
        decision = {key: value for key, value in whole.items() if key in SHARED_KEYS}
        rest = {key: value for key, value in whole.items() if key not in SHARED_KEYS}
        return (
            f"{self.before}<decision>\n{_dump(decision)}\n</decision>{self.between}"
            f"<task>\n{_dump(rest)}\n</task>{self.after}"
        )


def split_task_block(content: str) -> TaskBlock | None:
    """The one reader of the task data `render` writes (None when a message has none); reads
    the one-block messages of earlier prompt versions too."""
    two = _TWO_BLOCKS.search(content)
    if two is not None:
        try:
            decision, rest = json.loads(two.group(1)), json.loads(two.group(3))
        except json.JSONDecodeError:
            decision = rest = None
        if isinstance(decision, dict) and isinstance(rest, dict):
            return TaskBlock(
                content[: two.start()], _dump(decision | rest), content[two.end() :], two.group(2)
            )
    match = _TASK_BLOCK.search(content)
    if match is None:
        return None
    return TaskBlock(content[: match.start()], match.group(1), content[match.end() :])


def parse_task(request: ChatRequest) -> AgentTask:
    """Recover the task from a rendered request (first user message holding a task block)."""
    for message in request.messages:
        if message.role == "user":
            block = split_task_block(message.content)
            if block is not None:
                return _TASK_ADAPTER.validate_json(block.data)
    raise ValueError("request holds no <task> block")
