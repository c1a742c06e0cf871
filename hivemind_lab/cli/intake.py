"""The ``intake`` command: the client's decision as a run would deliberate it — options and
where each came from, binding constraints and what they forbid, exclusivity and its quote,
facts — without deliberating. Registered on the app in `hivemind_lab.cli.app`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from hivemind_lab.cli.common import (
    BaseUrl,
    ConstraintFlags,
    ModelId,
    OptionFlags,
    OptionsFrom,
    console,
    err_console,
)
from hivemind_lab.cli.common import fail as _fail
from hivemind_lab.errors import HivemindError
from hivemind_lab.problems.model import Decision

if TYPE_CHECKING:
    from hivemind_lab.agents.backends import BackendChoice
    from hivemind_lab.problems.intake import IntakeResult
    from hivemind_lab.problems.loading import Problem

INTAKE_CACHE = Path(".cache") / "intake.sqlite"
"""Where model intakes are cached by content (relative to the working directory): the same
text read again by the same model is served from it."""


RULE_READ = ("offline", "test")
"""Backends that cannot read a text: the rule reader reads the decision for them."""


def model_reading(
    problem: Problem,
    choice: BackendChoice,
    *,
    options_given: bool,
    cache_path: Path = INTAKE_CACHE,
) -> IntakeResult | None:
    """The model intake's reading of the problem when the backend is a language model and no
    options were given (on the command line or in the problem file); None otherwise (the rule
    reader reads it). The call goes through a response cache, like every run's calls."""
    if choice.backend in RULE_READ or options_given or problem.options:
        return None
    from hivemind_lab.agents.backends import open_model
    from hivemind_lab.llm.cache import CachingChatModel, ResponseCache
    from hivemind_lab.problems.intake import intake as read_intake

    cache = ResponseCache(cache_path)
    try:
        with open_model(choice, concurrency=1) as chat:
            return read_intake(CachingChatModel(chat, cache), problem)
    finally:
        cache.close()


_SOURCE = {
    "toml": "the problem file",
    "front_matter": "the front matter",
    "flag": "--option",
    "request": "the request",
    "notebook": "edited in a notebook",
    "intake": "the model intake",
    "reader": "read from the text (rule reader: check it)",
    "agents": "the agents propose their own",
}


def card(decision: Decision) -> str:
    """The decision card as plain text (one fact, option or constraint a line); a refused
    decision's says why, and what was found."""
    refusal = decision.refusal
    lines = [
        f"Options refused: {refusal.reason}"
        if refusal
        else f"Options ({_SOURCE[decision.options_source]}):"
    ]
    lines += [f"  found {found}" for found in (refusal.found if refusal else ())]
    labels = decision.labels
    for n, option in enumerate(decision.options, start=1):
        quoted = f'  ← "{option.quote}"' if option.quote else ""
        lines.append(f"  {n}. {option.label}{quoted}")
    if not decision.options and refusal is None:
        lines.append("  none: the agents propose their own courses of action")
    if decision.exclusive is None:
        lines.append("Exclusivity: not stated (the options may be combined or sequenced)")
    else:
        what = "take exactly one option" if decision.exclusive else "options may be combined"
        where = f' ← "{decision.exclusive_quote}"' if decision.exclusive_quote else ""
        lines.append(f"Exclusivity: {what} ({decision.exclusive_source}){where}")
    lines.append(f"Binding constraints ({len(decision.constraints)}):")
    for c in decision.constraints:
        forbids = ", ".join(labels[i] for i in c.forbids)
        limits = ", ".join(labels[i] for i in c.limits)
        first = ", ".join(labels[i] for i in c.not_first)
        before = f"not before {labels[c.after]}" if c.after is not None else "not first"
        bound = (
            (f" — forbids: {forbids}" if forbids else "")
            + (f" — {first}: {before}" if first else "")
            + (f" — limits: {limits}" if limits else "")
        )
        lines.append(f"  [{c.kind}, {c.source}] {c.text}{bound}")
    lines.append(f"Facts ({len(decision.facts)}):")
    lines += [f"  {f.id}: {f.text}" for f in decision.facts]
    lines.append(f"Reader: {decision.reader_version}")
    return "\n".join(lines)


def refused(exc: HivemindError, *, json_out: bool = False) -> None:
    """For a refused decision, print what was read (its card, or the `Decision` as JSON)
    before the error says why."""
    from hivemind_lab.problems.decision import DecisionRefused

    if isinstance(exc, DecisionRefused) and json_out:
        print(exc.decision.model_dump_json(indent=2))
    elif isinstance(exc, DecisionRefused):
        console.print(escape(card(exc.decision)), highlight=False, soft_wrap=True)


def reading_for(
    problem: Problem,
    backend: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    model_file: Path | None = None,
    options_given: bool = False,
    cache_path: Path = INTAKE_CACHE,
) -> Decision | None:
    """The model intake's reading for the command line's backend options (None: offline, or
    options given); what the checks dropped is printed on stderr."""
    if backend in RULE_READ or options_given or problem.options:
        return None
    from hivemind_lab.agents.backends import backend_choice

    choice = backend_choice(backend, model=model, base_url=base_url, model_file=model_file)
    read = model_reading(problem, choice, options_given=options_given, cache_path=cache_path)
    if read is None:
        return None
    for line in read.call.dropped:
        err_console.print(f"intake dropped {escape(line)}", highlight=False, soft_wrap=True)
    return read.decision


def intake(
    problem: Annotated[
        str, typer.Argument(help="Problem file (.toml, .txt or .md), or the problem as text.")
    ],
    option: OptionFlags = None,
    constraint: ConstraintFlags = None,
    exclusive: Annotated[
        bool | None,
        typer.Option(
            "--exclusive/--combinable",
            help="The client takes one of the options, or may combine and sequence them.",
            show_default="the problem's `exclusive`, else read from the question",
        ),
    ] = None,
    options_from: OptionsFrom = "reader",
    backend: Annotated[
        str,
        typer.Option(
            help="offline (the rule reader) or a language model that reads the text: openai "
            "(any compatible endpoint) or local (a llama.cpp server started for the intake)."
        ),
    ] = "offline",
    model: ModelId = None,
    base_url: BaseUrl = None,
    model_file: Annotated[
        Path | None, typer.Option(help="GGUF model for the local backend (or HIVEMIND_MODEL_FILE).")
    ] = None,
    intake_cache: Annotated[
        Path, typer.Option(help="Response cache of model intakes.")
    ] = INTAKE_CACHE,
    json_out: Annotated[bool, typer.Option("--json", help="Print the Decision as JSON.")] = False,
) -> None:
    """Show the client's decision as it would be deliberated, without deliberating."""
    from hivemind_lab.problems import resolve_problem
    from hivemind_lab.problems.decision import decide_or_refuse

    try:
        prob = resolve_problem(problem)
        reading = reading_for(
            prob,
            backend,
            model=model,
            base_url=base_url,
            model_file=model_file,
            options_given=bool(option),
            cache_path=intake_cache,
        )
        decision = decide_or_refuse(
            prob,
            options=option or (),
            constraints=constraint or (),
            exclusive=exclusive,
            options_from=options_from,
            reading=reading,
        )
    except HivemindError as exc:
        refused(exc, json_out=json_out)
        raise _fail(exc) from None
    if json_out:
        print(decision.model_dump_json(indent=2))
        return
    console.print(escape(card(decision)), highlight=False, soft_wrap=True)
