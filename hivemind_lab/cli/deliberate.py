"""The ``deliberate`` command: one run from the command line, with a live progress line,
a summary of its conclusions and the report written beside it. Registered on the app in
`hivemind_lab.cli.app`; inputs are validated before the deliberation machinery is imported."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from hivemind_lab.calibrations import PRESETS
from hivemind_lab.cli.common import (
    BaseUrl,
    ConstraintFlags,
    EndpointConcurrency,
    InputPrice,
    ModelId,
    OptionFlags,
    OptionsFrom,
    OutputPrice,
    PlanFlag,
    RateLimit,
    RequestTimeout,
    Retries,
    console,
    endpoint_settings,
    err_console,
    flags_of,
    on_ctrl_c,
    prices,
)
from hivemind_lab.cli.common import erase as _erase
from hivemind_lab.cli.common import fail as _fail
from hivemind_lab.errors import HivemindError, InputError, did_you_mean

if TYPE_CHECKING:
    from hivemind_lab.runs.manifest import RunManifest

_BALANCED = PRESETS["balanced"]


def deliberate(
    ctx: typer.Context,
    problem: Annotated[
        str | None, typer.Option(help="Problem file (.toml, .txt or .md), or the problem as text.")
    ] = None,
    sufficiency: Annotated[
        int | None,
        typer.Option(
            help="Halt when distinct conclusions ≤ this (≥ 1).",
            show_default="the problem's suggestion, else 2",
        ),
    ] = None,
    feasibility: Annotated[
        int | None,
        typer.Option(
            help="Veto when mean constraint score ≤ this (1–100).",
            show_default="the problem's suggestion, else 50",
        ),
    ] = None,
    density: Annotated[
        int | None,
        typer.Option(
            help="Tokens of knowledge per theory agent (> 0).",
            show_default="the problem's suggestion, else 6000",
        ),
    ] = None,
    stubbornness: Annotated[
        float | None,
        typer.Option(
            help="0 adopts every well-supported critique … 1 never revises.",
            show_default=f"the preset's; balanced {_BALANCED.stubbornness}",
        ),
    ] = None,
    similarity: Annotated[
        float | None,
        typer.Option(
            help="Monitor's similarity threshold (0–1).",
            show_default=f"the preset's; balanced {_BALANCED.similarity_threshold}",
        ),
    ] = None,
    severity: Annotated[
        float | None,
        typer.Option(
            help="Constraint agents' strictness (0–1).",
            show_default=f"the preset's; balanced {_BALANCED.severity}",
        ),
    ] = None,
    preset: Annotated[
        str, typer.Option(help="Calibration preset: balanced, cooperative, adversarial.")
    ] = "balanced",
    profile: Annotated[
        str | None, typer.Option(help="enterprise, individual, or comma-separated constraints.")
    ] = None,
    critique_mode: Annotated[
        str | None,
        typer.Option(
            help="pairwise (N(N−1) calls a round) or batched (N calls a round).",
            show_default="batched for openai and local, pairwise for offline and test",
        ),
    ] = None,
    score_mode: Annotated[
        str | None,
        typer.Option(
            help="per_solution (a call per constraint agent and solution) or batched (a call "
            "per constraint agent for the set).",
            show_default="batched for openai, per_solution for local, offline and test",
        ),
    ] = None,
    exclusive: Annotated[
        bool | None,
        typer.Option(
            "--exclusive/--combinable",
            help="The client takes one of the options (alternatives, never sequenced), or may "
            "combine and sequence them.",
            show_default="the problem's `exclusive`, else read from the question, else combinable",
        ),
    ] = None,
    option: OptionFlags = None,
    constraint: ConstraintFlags = None,
    options_from: OptionsFrom = "reader",
    backend: Annotated[
        str,
        typer.Option(
            help="offline (no network), openai (any compatible endpoint), local (a llama.cpp "
            "server started for the run; set up by `make llama`) or test (content-free "
            "replies, for testing the machinery)."
        ),
    ] = "offline",
    model: ModelId = None,
    base_url: BaseUrl = None,
    timeout_s: RequestTimeout = None,
    max_retries: Retries = None,
    max_concurrency: EndpointConcurrency = None,
    rate_limit_rpm: RateLimit = None,
    input_usd_per_mtok: InputPrice = None,
    output_usd_per_mtok: OutputPrice = None,
    plan: PlanFlag = False,
    agent_model: Annotated[
        list[str] | None,
        typer.Option(
            "--agent-model",
            help="A model for a role or one agent, ROLE=BACKEND[:MODEL][@BASE_URL][,key=VAR]"
            "[,input=USD][,output=USD] (ROLE: theory, practicality, monitor or an agent id "
            "such as theory-03; a role given several takes them round-robin). Repeat for each; "
            "replaces the problem file's [roster] for what it names.",
            show_default="--backend's model for every agent",
        ),
    ] = None,
    model_file: Annotated[
        Path | None,
        typer.Option(
            help="GGUF model for the local backend (or HIVEMIND_MODEL_FILE).",
            show_default="the bundled SmolLM2-135M (plumbing, not strategy)",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for slicing and agents.")] = 0,
    max_rounds: Annotated[int, typer.Option(help="Rounds before stopping as non_converged.")] = 6,
    min_rounds: Annotated[
        int,
        typer.Option(
            help="Critique-and-revise rounds before the monitor may halt (0: it may halt the "
            "proposals)."
        ),
    ] = 1,
    max_regenerations: Annotated[
        int, typer.Option(help="Regenerations before stopping as vetoed_out.")
    ] = 3,
    max_tokens: Annotated[int | None, typer.Option(help="Token budget for the run.")] = None,
    concurrency: Annotated[int, typer.Option(help="Model calls in flight at once.")] = 16,
    kb: Annotated[Path, typer.Option(help="Knowledge base folder.")] = Path("data/knowledge"),
    practicality_kb: Annotated[Path, typer.Option(help="Constraint knowledge folder.")] = Path(
        "data/practicality"
    ),
    out: Annotated[
        Path | None, typer.Option(help="Run directory (default runs/<problem>-<time>).")
    ] = None,
    resume: Annotated[Path | None, typer.Option(help="Continue the run in this directory.")] = None,
    latency: Annotated[
        float, typer.Option(help="Artificial seconds per model call (demos, tests).", hidden=True)
    ] = 0.0,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            help="Also print the decision as read (options, constraints, facts) before the run "
            "and the whole summary after it; without it: progress, the outcome in one line and "
            "the report's path.",
        ),
    ] = False,
) -> None:
    """Run a deliberation: theory network → monitor → practicality network, with an audit trail."""
    started = time.monotonic()
    manifest: RunManifest | None = None  # --resume's, read once; a new run's, built once
    # Only the light input modules before validation: a bad value is answered in well under a
    # second; the deliberation machinery (scikit-learn, the OpenAI SDK, plotly) loads after.
    from hivemind_lab.inputs import (
        PRESETS,
        Calibrations,
        Limits,
        build,
        request_for,
    )
    from hivemind_lab.problems import Decision, resolve_problem

    # Ctrl-C while the problem is read or the engine's libraries load (seconds on a busy
    # machine): nothing was written yet.
    with on_ctrl_c(lambda: _before_the_run(resume)):
        try:
            settings = endpoint_settings(
                timeout_s=timeout_s,
                max_retries=max_retries,
                max_concurrency=max_concurrency,
                rate_limit_rpm=rate_limit_rpm,
            )
            cost = prices(
                input_usd_per_mtok=input_usd_per_mtok, output_usd_per_mtok=output_usd_per_mtok
            )
            if resume is not None:
                from hivemind_lab.runs.rundir import RunDir

                _refuse_ignored_flags(ctx)

                # The typed manifest, read once: older versions are upgraded as replay and
                # reports read them, and the run continues from this copy.
                manifest = RunDir(resume).read_manifest()
                request, limits = manifest.request, manifest.limits
                backend = manifest.backend
                roster = manifest.roster
                model = manifest.model if backend == "openai" else None
                started_with = manifest.model_info.get("model_path")
                if backend == "local" and model_file is None and started_with:
                    model_file = Path(started_with)  # the weights the run started with
                run_dir = resume
            else:
                if problem is None:
                    raise InputError(
                        "problem",
                        "required",
                        allowed="a .toml, .txt or .md problem file, or its text",
                    )
                prob = resolve_problem(problem)
                from hivemind_lab.agents.roster import Roster, roster_from_flags, roster_from_table

                written = (  # the problem file's [roster], named by its file in errors
                    Roster()
                    if prob.roster is None
                    else roster_from_table(prob.roster, where=f"{problem}: [roster]")
                )
                given = written.over(roster_from_flags(agent_model or ()))
                roster = None if given.empty else given
                if preset not in PRESETS:
                    raise InputError(
                        "preset",
                        f"unknown {preset!r}; {did_you_mean(preset, PRESETS)}".rstrip("; "),
                        allowed=", ".join(PRESETS),
                    )
                base = PRESETS[preset]
                cal = build(
                    Calibrations,
                    stubbornness=base.stubbornness if stubbornness is None else stubbornness,
                    similarity_threshold=base.similarity_threshold
                    if similarity is None
                    else similarity,
                    severity=base.severity if severity is None else severity,
                )
                from hivemind_lab.llm.endpoint import default_critique_mode, default_score_mode

                # The sliders and limits are checked before the problem is read: reading loads the
                # rule reader (~0.4 s), and a bad value is answered in well under a second.
                sliders: dict[str, Any] = {
                    "sufficiency": sufficiency,
                    "feasibility": feasibility,
                    "density": density,
                    "profile": profile,
                    "critique_mode": critique_mode
                    or default_critique_mode(_spending(backend, roster)),
                    "score_mode": score_mode or default_score_mode(_spending(backend, roster)),
                }
                request_for(prob, decision=Decision(reader_version="unread"), **sliders)
                limits = build(
                    Limits,
                    max_rounds=max_rounds,
                    min_rounds=min_rounds,
                    max_regenerations=max_regenerations,
                    max_tokens=max_tokens,
                    concurrency=concurrency,
                )
                from rich.markup import escape

                from hivemind_lab.cli.intake import card, reading_for
                from hivemind_lab.problems.decision import decide_or_refuse

                decision = decide_or_refuse(
                    prob,
                    options=option or (),
                    constraints=constraint or (),
                    exclusive=exclusive,
                    options_from=options_from,
                    reading=reading_for(
                        prob,
                        "offline" if plan else backend,  # a plan calls no model, not even intake
                        model=model,
                        base_url=base_url,
                        model_file=model_file,
                        options_given=bool(option),
                    ),
                )
                request = request_for(prob, decision=decision, **sliders)
                from hivemind_lab.deliberation.practicality import resolve_constraints
                from hivemind_lab.samples import KNOWLEDGE, PRACTICALITY, sample_path

                kb = sample_path(kb, KNOWLEDGE)
                practicality_kb = sample_path(practicality_kb, PRACTICALITY)
                # A mistyped --profile is refused before the decision card fills the screen.
                resolve_constraints(practicality_kb, request.profile)
                stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
                run_dir = out or Path("runs") / f"{prob.id}-{stamp}"
            from hivemind_lab.agents.backends import backend_choice  # loads the openai SDK: ~1 s

            choice = backend_choice(
                backend, model=model, base_url=base_url, model_file=model_file, latency_s=latency
            )
            from hivemind_lab.deliberation.engine import check_run_dir

            # A used --out is refused before a local server starts and loads its model.
            check_run_dir(run_dir, resume=resume is not None)
            if verbose and resume is None:  # every flag checked: no error follows the card
                console.print(escape(card(decision)), highlight=False, soft_wrap=True)
        except HivemindError as exc:
            from hivemind_lab.cli.intake import refused

            refused(exc)
            raise _fail(exc, command=deliberate, names=_run_dir_name(resume)) from None
        if plan:
            _print_plan(request, limits, kb, practicality_kb, seed=seed, cost=cost)
            return
        from hivemind_lab.agents.backends import open_model, open_models
        from hivemind_lab.agents.usage import CallMeter, CallPlan, ProgressEstimate, format_left
        from hivemind_lab.deliberation import Progress as RunProgress
        from hivemind_lab.reports import write_report

    columns = (
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("calls · {task.fields[detail]}"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[left]}"),  # from the tokens of the calls to come
    )
    failure: HivemindError | None = None
    interrupted = False
    # Calls done of those planned, tokens/s and the time left, updated as each call finishes.
    with Progress(*columns, console=err_console, transient=False, speed_estimate_period=600) as bar:
        task_id = bar.add_task("deliberating", total=None, detail="", left=format_left(None))
        estimate: ProgressEstimate | None = None

        def on_progress(p: RunProgress) -> None:
            if estimate is not None:  # the calls left are replanned at every phase
                estimate.reached(p.phase, p.round, p.distinct)
                left = format_left(estimate.seconds_left())
                bar.update(task_id, total=max(estimate.total, 1), left=left)
            bar.update(
                task_id,
                # attempts numbered from 1, as the report numbers them
                description=f"attempt {p.regeneration + 1} · round {p.round} · {p.phase}"
                + (f" · {p.distinct} distinct" if p.distinct is not None else ""),
            )

        def on_call(meter: CallMeter) -> None:
            reused = meter.usage.cached_prompt_tokens
            bar.update(
                task_id,
                total=meter.estimate.total,
                completed=meter.calls,
                left=format_left(meter.estimate.seconds_left()),
                detail=f"{meter.usage.total_tokens:,} tokens · "
                f"{meter.tokens_per_second():,.0f} tok/s"
                + (f" · {reused:,} reused" if reused else ""),
            )

        try:
            from hivemind_lab.asyncrun import run_sync
            from hivemind_lab.deliberation import knowledge_for, new_run, prepare_knowledge
            from hivemind_lab.deliberation import run_manifest as run_deliberation

            # The knowledge is prepared once (slicing, every agent's retrieval index): the
            # estimate, the plan and the run share it.
            known = (
                prepare_knowledge(
                    request, knowledge_base=kb, practicality_kb=practicality_kb, seed=seed
                )
                if manifest is None
                else knowledge_for(manifest)
            )
            estimate = ProgressEstimate(
                CallPlan(
                    len(known.theory_agents),
                    len(known.constraint_agents),
                    max_rounds=limits.max_rounds,
                    critique_mode=request.critique_mode,
                    score_mode=request.score_mode,
                )
            )
            bar.update(task_id, total=estimate.total)
            if len(known.theory_agents) < 3 and resume is None:
                from hivemind_lab.knowledge.documents import density_advice

                # Before the run, not only in its report: one agent is no deliberation.
                advice = density_advice(list(known.documents.values()), request.density)
                if advice:
                    err_console.print(f"warning: {advice}", highlight=False, soft_wrap=True)
            # A local server lives for this block only and is stopped by its PID on any exit.
            from hivemind_lab.agents.plan import plan_run

            planned = plan_run(request, limits, known, prices=cost)
            # A roster's agents by id (round-robin over each role), checked before any server
            # starts; the agents it does not name speak through --backend's model.
            assignment = (
                roster.assign(
                    (a.id for a in known.theory_agents), (a.id for a in known.constraint_agents)
                )
                if roster is not None
                else {}
            )
            with (
                open_model(
                    choice, concurrency=limits.concurrency, settings=settings, prices=cost
                ) as chat,
                open_models(
                    assignment,
                    choice,
                    concurrency=limits.concurrency,
                    settings=settings,
                    prices=cost,
                ) as models,
            ):
                for served in {
                    id(s): s
                    for m in (chat, *models.values())
                    if (s := getattr(m, "server", None)) is not None
                }.values():
                    err_console.print(
                        f"local model {served.info.model_file} on llama-server "
                        f"{served.base_url} (pid {served.pid})",
                        highlight=False,
                        soft_wrap=True,
                    )
                meter = CallMeter(chat, on_call, estimate)
                counted = {id(m): meter.over(m) for m in models.values()}
                agent_models = {agent: counted[id(m)] for agent, m in models.items()}
                if manifest is None:  # the manifest names the models: built once they are open
                    manifest = new_run(
                        request,
                        cal,
                        limits,
                        model=meter,
                        models=agent_models,
                        roster=roster,
                        seed=seed,
                        knowledge_base=kb,
                        practicality_kb=practicality_kb,
                        knowledge=known,
                    ).manifest
                result = run_sync(
                    run_deliberation(
                        manifest,
                        run_dir,
                        model=meter,
                        models=agent_models,
                        resume=resume is not None,
                        on_progress=on_progress,
                        knowledge=known,
                    )
                )
            done = bar.tasks[0].completed
            bar.update(task_id, total=done or 1, completed=done or 1)  # a finished bar is full
        except HivemindError as exc:
            failure = _erase(bar, exc)
        except KeyboardInterrupt:
            bar.live.transient = True
            interrupted = True
    if interrupted:
        raise _interrupted(run_dir)
    if failure is not None:
        # An error about the run directory itself (another process writes it, a rescore has
        # nothing to continue) says what to do; "resume it" would send the user round again.
        from hivemind_lab.runs.rundir import RunDir

        about_the_run = isinstance(failure, InputError) and failure.field in {"run_dir", "resume"}
        run = RunDir(run_dir)
        if not about_the_run and run.started and not run.finished:
            err_console.print(f"the run is resumable: hivemind-lab deliberate --resume {run_dir}")
        raise _fail(failure, command=deliberate, names=_run_dir_name(resume))
    with on_ctrl_c(lambda: _after_the_run(run_dir)):
        # The plan first: the report sets it beside what the run made.
        (Path(run_dir) / "plan.json").write_text(planned.model_dump_json(indent=1) + "\n")
        report = write_report(run_dir, force=True)
        if not verbose:
            _print_outcome(run_dir)
            console.print(f"report: {report}")
            return
        _print_summary(result, run_dir, wall_s=time.monotonic() - started)
        actual = result.usage
        console.print(
            f"planned {planned.calls} calls and {planned.tokens:,} tokens, made "
            f"{actual.calls} and {actual.tokens:,} (plan.json)",
            highlight=False,
        )
        console.print(f"report: {report} (and report.md)")


def _spending(backend: str, roster: Any) -> str:
    """The backend whose calls cost most among the run's and its roster's: a roster of hosted
    theory agents over an offline default critiques and scores as a model backend does."""
    from hivemind_lab.llm.endpoint import MODEL_BACKENDS

    if backend in MODEL_BACKENDS or roster is None:
        return backend
    named = sorted({e.backend for e in roster.entries()} & MODEL_BACKENDS)
    return named[0] if named else backend


def _print_plan(
    request: Any, limits: Any, kb: Path, practicality_kb: Path, *, seed: int, cost: Any
) -> None:
    """``--plan``: the run's expected calls, tokens and cost; no model is called."""
    from hivemind_lab.agents.plan import plan_run
    from hivemind_lab.deliberation.runner import prepare_knowledge

    known = prepare_knowledge(
        request, knowledge_base=kb, practicality_kb=practicality_kb, seed=seed
    )
    for line in plan_run(request, limits, known, prices=cost).lines():
        console.print(line, highlight=False, soft_wrap=True)


def _run_dir_name(resume: Path | None) -> dict[str, str]:
    """The run directory came from --resume or --out (the default for an error about it)."""
    return {"run_dir": "--resume"} if resume is not None else {}


_RESUME_TAKES = frozenset(
    {
        "resume",
        "model_file",
        "base_url",
        "latency",
        "timeout_s",
        "max_retries",
        "max_concurrency",
        "rate_limit_rpm",
        "verbose",
    }
)
"""What --resume reads from the command line: how to reach the model. Everything else the run
is continued with comes from its own manifest."""


def _refuse_ignored_flags(ctx: typer.Context) -> None:
    """A flag typed beside --resume that the continued run would not use is refused by name
    (a resumed run follows its manifest: --max-tokens 900000 was silently ignored)."""
    flags = flags_of(deliberate)
    typed = [
        flags[name]
        for name in flags
        if name not in _RESUME_TAKES
        and (source := ctx.get_parameter_source(name)) is not None
        and source.name == "COMMANDLINE"
    ]
    if not typed:
        return
    more = (
        "; to let a stopped run spend more, run the problem again into a new directory with "
        "--max-tokens (its report says how many tokens one attempt needs)"
        if "--max-tokens" in typed
        else ""
    )
    raise InputError(
        "resume",
        f"a resumed run continues as its manifest records it, so {', '.join(typed)} would be "
        f"ignored{more}",
        allowed="--resume RUN_DIR alone (with --model-file or --base-url to reach its model)",
    )


def _before_the_run(resume: Path | None) -> str:
    if resume is not None:
        return (
            f"{resume} is as it was; continue it with:\n  hivemind-lab deliberate --resume {resume}"
        )
    return "before the run started: nothing was written"


def _after_the_run(run_dir: Path) -> str:
    return (
        f"the run in {run_dir} had finished; write its report with:\n  "
        f"hivemind-lab report {run_dir}"
    )


def _interrupted(run_dir: Path) -> typer.Exit:
    """Ctrl-C: say what was kept and how to continue (exit 130, as a shell expects)."""
    from hivemind_lab.runs.rundir import RunDir

    run = RunDir(run_dir)
    if run.audit_path.exists():
        with run.audit_path.open("rb") as handle:
            records = sum(1 for _ in handle)
        err_console.print(
            f"interrupted: {run_dir} keeps the run so far ({records} audit records, model "
            f"replies cached); continue it with:\n  hivemind-lab deliberate --resume {run_dir}",
            highlight=False,
            soft_wrap=True,
        )
    else:
        err_console.print("interrupted before the run started: nothing was kept", highlight=False)
    return typer.Exit(code=130)


def _view(title: str, quoted: bool) -> str:
    """A plan's title as the report shows it: the agents' own words in quotation marks."""
    from rich.markup import escape

    return escape(f"“{title}”" if quoted else title)


def _print_outcome(run_dir: Path) -> None:
    """The outcome in one line, in the report's words: the status and the recommended plan
    with its support, or what happened when no plan is recommended."""
    from rich.markup import escape

    from hivemind_lab.reports import gather
    from hivemind_lab.reports.summary import summarise

    said = summarise(gather(run_dir))
    rec = said.recommendation
    line = (
        f"{_view(rec.title, rec.quoted)} — {escape(said.support)}"
        if rec is not None
        else escape(said.happened)
    )
    console.print(f"[bold]{said.status_label}:[/] {line}", highlight=False, soft_wrap=True)


def _print_summary(result: Any, run_dir: Path, *, wall_s: float) -> None:
    """The outcome in the report's words: status, what happened, what would change it."""
    from rich.markup import escape

    from hivemind_lab.reports import gather
    from hivemind_lab.reports.summary import plural, summarise

    said = summarise(gather(run_dir))
    console.print(f"[bold]{said.status_label}:[/] {escape(said.happened)}", highlight=False)
    console.print(
        f"{plural(result.rounds, 'round')} in the final attempt, "
        f"{plural(result.regenerations, 'regeneration')}, "
        f"{plural(result.n_agents, 'theory agent')}; "
        f"{result.usage.calls} calls, {result.usage.tokens:,} tokens, "
        + (
            f"{result.usage.prompt_tokens:,} prompt tokens of which "
            f"{result.usage.cached_prompt_tokens:,} reused from the server's cache, "
            if result.usage.cached_prompt_tokens
            else ""
        )
        + f"{result.usage.cache_hits} cache hits; {wall_s:.1f} s in all "
        f"({result.wall_time_s:.1f} s deliberating)",
        highlight=False,
    )
    if said.recommendation is not None:
        console.print(
            f"recommendation: {_view(said.recommendation.title, said.recommendation.quoted)} — "
            f"{escape(said.support)}",
            highlight=False,
        )
    if said.recommendation is not None and said.minority:
        # Each view in the report's words (its decision), the agents' own titles quoted.
        table = Table(title="The views, most support first")
        for col in ("view", "agents", "mean feasibility"):
            table.add_column(col)
        rec = said.recommendation
        table.add_row(
            f"recommended: {_view(rec.title, rec.quoted)}",
            f"{len(result.conclusions[0].agents)} of {result.n_agents}",
            f"{rec.mean:.1f}",
        )
        for m in said.minority:
            table.add_row(
                _view(m.title, m.quoted), m.support.removesuffix(" agents"), f"{m.mean:.1f}"
            )
        console.print(table)
    for line in said.change:
        console.print(f"• {escape(line)}", highlight=False)
    console.print(
        f"run directory: {escape(str(run_dir))} (status {result.status})", highlight=False
    )
