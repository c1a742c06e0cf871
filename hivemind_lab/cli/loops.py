"""CLI commands of the compliance and research loops: ``rescore``, ``kb diff`` and the chat
export of ``audit export``. Registered on the app in `hivemind_lab.cli.app`; like it, this module
imports nothing heavy until a command runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from hivemind_lab.cli.common import console
from hivemind_lab.cli.common import fail as _fail
from hivemind_lab.errors import HivemindError, InputError


def _verdict(vetoed: bool) -> str:
    return "[red]vetoed[/]" if vetoed else "[green]passes[/]"


def rescore(
    run_dir: Annotated[Path, typer.Argument(help="A finished run directory (only read).")],
    practicality: Annotated[Path, typer.Option(help="The updated constraint knowledge folder.")],
    out: Annotated[Path, typer.Option(help="New directory for the rescore run.")],
    profile: Annotated[
        str | None,
        typer.Option(
            help="enterprise, individual, or comma-separated constraints.",
            show_default="the run's",
        ),
    ] = None,
    severity: Annotated[
        float | None,
        typer.Option(help="Constraint agents' strictness (0–1).", show_default="the run's"),
    ] = None,
    regenerate: Annotated[
        bool,
        typer.Option(
            "--regenerate",
            help="Continue the deliberation when the final set is newly vetoed.",
        ),
    ] = False,
    score_mode: Annotated[
        str | None,
        typer.Option(help="per_solution or batched scoring calls.", show_default="the run's"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Re-judge a finished run's solution sets against updated constraint knowledge.

    Only the practicality network runs again (on the run's vetoed and final sets, with the
    run's problem, options and facts, on the run's backend). The new run links to the original,
    which is never modified."""
    from hivemind_lab.agents.backends import backend_choice, open_model
    from hivemind_lab.compliance import rescore as rescore_run
    from hivemind_lab.runs.rundir import RunDir

    try:
        manifest = RunDir(run_dir).read_manifest()
        chosen: str | tuple[str, ...] | None = None
        if profile is not None:
            named = profile in ("enterprise", "individual")
            chosen = profile if named else tuple(p.strip() for p in profile.split(",") if p.strip())
        started_with = manifest.model_info.get("model_path")
        choice = backend_choice(
            manifest.backend,
            model=manifest.model if manifest.backend == "openai" else None,
            model_file=Path(started_with) if manifest.backend == "local" and started_with else None,
        )
        with open_model(choice, concurrency=manifest.limits.concurrency) as chat:
            report = rescore_run(
                run_dir,
                practicality_kb=practicality,
                out=out,
                model=chat,
                profile=chosen,
                severity=severity,
                score_mode=score_mode,
                regenerate=regenerate,
            )
    except HivemindError as exc:
        raise _fail(exc) from None
    if as_json:
        console.print_json(report.model_dump_json())
        return
    knowledge = ", ".join(f"{c} {state}" for c, state in report.knowledge.items())
    console.print(f"constraint knowledge: {knowledge}", highlight=False, soft_wrap=True)
    sets = Table(title="Solution sets")
    for col in ("generation", "before", "after", "outcome", "per constraint now"):
        sets.add_column(col)
    for s in report.sets:
        sets.add_row(
            f"{s.regeneration}{' (final)' if s.final else ''}",
            f"{s.before.mean_score:g} {_verdict(s.before.vetoed)}",
            f"{s.after.mean_score:g} {_verdict(s.after.vetoed)}",
            s.outcome.replace("_", " "),
            ", ".join(f"{c} {v:g}" for c, v in s.after.per_constraint.items()),
        )
    console.print(sets)
    if report.conclusions:
        table = Table(title=f"Conclusions (feasibility {report.feasibility})")
        for col in ("conclusion", "before", "after", "flags now", "weakest constraint now"):
            table.add_column(col, overflow="fold")
        for c in report.conclusions:
            weakest = min(c.after, key=lambda k: c.after[k]) if c.after else None
            why = f"{weakest} {c.after[weakest]:g}: {c.reasons[weakest][0]}" if weakest else "—"
            table.add_row(
                c.label, f"{c.before_mean:g}", f"{c.after_mean:g}", ", ".join(c.flags) or "—", why
            )
        console.print(table)
        console.print("every constraint's reasons: rescore.json (or --json)", highlight=False)
    console.print(report.regeneration_note, highlight=False)
    console.print(
        f"rescore run: {out} (links {report.original.run_dir}, audit head "
        f"{report.original.audit_head[:12]}…)",
        highlight=False,
        soft_wrap=True,
    )


def kb_diff(
    old: Annotated[Path, typer.Argument(help="The earlier knowledge folder.")],
    new: Annotated[Path, typer.Argument(help="The later knowledge folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Which documents were added, removed or changed between two knowledge folders.

    Documents are matched by id and compared by content hash (metadata and body), for theory
    and constraint knowledge alike; exits 1 when they differ."""
    from hivemind_lab.knowledge.fingerprint import diff_folders

    try:
        diff = diff_folders(old, new)
    except HivemindError as exc:
        raise _fail(exc) from None
    if as_json:
        console.print_json(diff.model_dump_json())
    else:
        table = Table(title=f"{old} → {new}")
        for col in ("change", "id", "title", "location", "old hash", "new hash"):
            table.add_column(col, overflow="fold")
        colour = {"added": "green", "removed": "red", "changed": "yellow"}
        for c in diff.changes:
            table.add_row(
                f"[{colour[c.change]}]{c.change}[/]",
                c.id,
                c.title,
                c.location,
                (c.old_hash or "—")[:19],
                (c.new_hash or "—")[:19],
            )
        if diff.changes:
            console.print(table)
        console.print(
            f"{sum(c.change == 'added' for c in diff.changes)} added, "
            f"{sum(c.change == 'removed' for c in diff.changes)} removed, "
            f"{sum(c.change == 'changed' for c in diff.changes)} changed, "
            f"{diff.unchanged} unchanged",
            highlight=False,
        )
    if diff.changes:
        raise typer.Exit(code=1)


def chat_export(
    path: Path,
    out: Path | None,
    *,
    roles: list[str] | None,
    outcome: str,
    include_client_data: bool,
) -> None:
    """``audit export --format chat-jsonl``: a run's (or a sweep's) agent calls as chats."""
    from hivemind_lab.runs.chat_export import ROLES, export_chat

    target = path.parent if path.is_file() else path
    destination = out or target / "audit.export.chat.jsonl"
    try:
        for role in roles or ():
            if role not in ROLES:
                raise InputError("role", f"unknown role {role!r}", allowed=", ".join(ROLES))
        header = export_chat(
            target,
            destination,
            roles=tuple(roles) if roles else ROLES,  # type: ignore[arg-type]
            outcome=outcome,  # type: ignore[arg-type]
            include_client_data=include_client_data,
        )
    except HivemindError as exc:
        raise _fail(exc) from None
    summary: dict[str, Any] = {
        "records": header.records,
        "runs": len(header.runs),
        "client_data": header.client_data,
    }
    console.print(f"exported {destination} ({json.dumps(summary)})", highlight=False)
