"""The ``intake`` command: the client's decision as a run would deliberate it — options and
where each came from, binding constraints and what they forbid, exclusivity and its quote,
facts — without deliberating. Registered on the app in `hivemind_lab.cli.app`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from hivemind_lab.cli.common import console
from hivemind_lab.cli.common import fail as _fail
from hivemind_lab.errors import HivemindError
from hivemind_lab.problems.model import Decision

_SOURCE = {
    "toml": "the problem file",
    "front_matter": "the front matter",
    "flag": "--option",
    "request": "the request",
    "intake": "the model intake",
    "reader": "read from the text (rule reader: check it)",
    "agents": "the agents propose their own",
}


def card(decision: Decision) -> str:
    """The decision card as plain text (one fact, option or constraint a line)."""
    lines = [f"Options ({_SOURCE[decision.options_source]}):"]
    labels = decision.labels
    for n, option in enumerate(decision.options, start=1):
        quoted = f'  ← "{option.quote}"' if option.quote else ""
        lines.append(f"  {n}. {option.label}{quoted}")
    if not decision.options:
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
        bound = (f" — forbids: {forbids}" if forbids else "") + (
            f" — limits: {limits}" if limits else ""
        )
        lines.append(f"  [{c.kind}, {c.source}] {c.text}{bound}")
    lines.append(f"Facts ({len(decision.facts)}):")
    lines += [f"  {f.id}: {f.text}" for f in decision.facts]
    lines.append(f"Reader: {decision.reader_version}")
    return "\n".join(lines)


def intake(
    problem: Annotated[
        str, typer.Argument(help="Problem file (.toml, .txt or .md), or the problem as text.")
    ],
    option: Annotated[
        list[str] | None,
        typer.Option("--option", help="An option the client weighs (repeat for each)."),
    ] = None,
    constraint: Annotated[
        list[str] | None,
        typer.Option("--constraint", help="A binding constraint (repeat for each)."),
    ] = None,
    exclusive: Annotated[
        bool | None,
        typer.Option(
            "--exclusive/--combinable",
            help="The client takes one of the options, or may combine and sequence them.",
            show_default="the problem's `exclusive`, else read from the question",
        ),
    ] = None,
    options_from: Annotated[
        str,
        typer.Option(
            help="When no options are given: reader (refuses when unsure) or agents (they "
            "propose their own)."
        ),
    ] = "reader",
    json_out: Annotated[bool, typer.Option("--json", help="Print the Decision as JSON.")] = False,
) -> None:
    """Show the client's decision as it would be deliberated, without deliberating."""
    from hivemind_lab.problems import resolve_problem
    from hivemind_lab.problems.decision import decide_or_refuse

    try:
        decision = decide_or_refuse(
            resolve_problem(problem),
            options=option or (),
            constraints=constraint or (),
            exclusive=exclusive,
            options_from=options_from,
        )
    except HivemindError as exc:
        raise _fail(exc) from None
    if json_out:
        print(decision.model_dump_json(indent=2))
        return
    console.print(escape(card(decision)), highlight=False, soft_wrap=True)
