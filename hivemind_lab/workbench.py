"""Helpers the notebooks share (so notebooks stay thin and never define primitives).

The decision editor of notebook 01 and the explorer is here as pure functions: the decision as
read becomes editable rows (`decision_rows`, with `decision_notes` saying where each part came
from, or why the reader refused), and the rows the user edited become the `Decision` a run
deliberates (`edited_decision`), with an error naming the row at fault.
"""

from __future__ import annotations

import html
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import polars as pl

from hivemind_lab.agents.policy import OfflineAgentModel
from hivemind_lab.deliberation import deliberate
from hivemind_lab.errors import InputError
from hivemind_lab.inputs import Calibrations, Limits, request_for
from hivemind_lab.llm.base import ChatModel
from hivemind_lab.models import Frozen
from hivemind_lab.problems import Problem, load_problems
from hivemind_lab.problems.decision import checked_options
from hivemind_lab.problems.model import (
    MAX_CONSTRAINTS,
    Constraint,
    ConstraintSource,
    Decision,
    DecisionSource,
    ExclusivitySource,
    Option,
)
from hivemind_lab.runs.results import DeliberationResult
from hivemind_lab.samples import PROJECT


def project_root(start: Path | None = None) -> Path:
    """The folder holding ``data/`` (notebooks run from notebooks/, scripts from the root): the
    first above ``start`` (the current folder), else the project's own copy, as the CLI does."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents, PROJECT):
        if (folder / "data" / "knowledge").is_dir():
            return folder
    raise FileNotFoundError(
        f"no data/knowledge folder above {str(here)!r} nor in the project ({str(PROJECT)!r})"
    )


def problems(root: Path | None = None) -> dict[str, Problem]:
    """The sample problems by id."""
    return {p.id: p for p in load_problems((root or project_root()) / "data" / "problems")}


def run_deliberation(
    problem: Problem,
    *,
    sufficiency: int,
    feasibility: int,
    density: int,
    calibrations: Calibrations,
    limits: Limits | None = None,
    seed: int = 0,
    run_dir: Path | None = None,
    root: Path | None = None,
    decision: Decision | None = None,
    model: ChatModel | None = None,
) -> tuple[Path, DeliberationResult]:
    """One deliberation into ``run_dir`` (a fresh temporary folder by default), on ``decision``
    when given (the editor's, from `edited_decision`), else the problem's as read; offline (the
    stand-in) unless another ``model`` is given."""
    root = root or project_root()
    run_dir = run_dir or Path(tempfile.mkdtemp(prefix="hivemind-")) / "run"
    request = request_for(
        problem,
        decision=decision,
        sufficiency=sufficiency,
        feasibility=feasibility,
        density=density,
    )
    result = deliberate(
        request,
        calibrations,
        limits or Limits(),
        model=model or OfflineAgentModel(),
        run_dir=run_dir,
        seed=seed,
        knowledge_base=root / "data" / "knowledge",
        practicality_kb=root / "data" / "practicality",
    )
    return run_dir, result


Exclusivity = Literal["one_of", "combinable", "not_stated"]
"""The editor's exclusivity: the client takes exactly one option, may combine or sequence them,
or the text does not say (then they may be combined)."""

EXCLUSIVITY_CHOICES: dict[str, Exclusivity] = {
    "not stated (the options may be combined)": "not_stated",
    "choose exactly one option": "one_of",
    "the options may be combined or sequenced": "combinable",
}
"""The exclusivity drop-down's labels and values."""

_FROM: dict[DecisionSource, str] = {
    "toml": "the problem file",
    "front_matter": "the problem's front matter",
    "flag": "a command-line flag",
    "request": "the request",
    "notebook": "edited here",
    "intake": "read by the model intake",
    "reader": "read from the text by rules: check it",
    "agents": "the agents' own",
}
_BOUND = re.compile(r"(?i)(forbids|limits|not\s+first|after)\b\s*(.*)")
_BOUND_WORDS = ("forbids", "not first", "after", "limits")


class DecisionRows(Frozen):
    """The decision as the editor holds it: the lines a user reads and edits.

    Constraint rows read ``text | forbids 1, 3 | not first 2 | after 1 | limits 4``: the
    options are numbered as listed (from 1), a forbidden option is vetoed whatever the agents
    score, one barred first is vetoed when pursued now but may come later (after the option
    named, if any), a limited one is bounded.
    """

    options: tuple[str, ...] = ()
    """One option a row."""
    exclusive: Exclusivity = "not_stated"
    constraints: tuple[str, ...] = ()
    """One binding constraint a row."""

    @classmethod
    def from_text(cls, options: str, constraints: str, exclusive: Exclusivity) -> DecisionRows:
        """The rows of the editor's text boxes (blank lines are not rows)."""
        return cls(
            options=tuple(line.strip() for line in options.splitlines() if line.strip()),
            exclusive=exclusive,
            constraints=tuple(line.strip() for line in constraints.splitlines() if line.strip()),
        )

    @property
    def options_text(self) -> str:
        return "\n".join(self.options)

    @property
    def constraints_text(self) -> str:
        return "\n".join(self.constraints)

    @property
    def exclusive_label(self) -> str:
        """The drop-down label of ``exclusive``."""
        return next(k for k, v in EXCLUSIVITY_CHOICES.items() if v == self.exclusive)


def decision_as_read(problem: Problem) -> Decision:
    """The problem's decision as a run would read it offline: its own options, constraints and
    exclusivity when it states them, else what the rule reader found (or its refusal)."""
    from hivemind_lab.problems.decision import decide

    return decide(problem)


def _constraint_row(constraint: Constraint) -> str:
    row = constraint.text
    after = (constraint.after,) if constraint.after is not None and constraint.not_first else ()
    for word, indexes in (
        ("forbids", constraint.forbids),
        ("not first", constraint.not_first),
        ("after", after),
        ("limits", constraint.limits),
    ):
        if indexes:
            row += f" | {word} " + ", ".join(str(i + 1) for i in indexes)
    return row


def decision_rows(decision: Decision) -> DecisionRows:
    """The editor's rows for a decision (a refused one has no option rows)."""
    exclusive: Exclusivity = (
        "not_stated"
        if decision.exclusive is None
        else "one_of"
        if decision.exclusive
        else "combinable"
    )
    return DecisionRows(
        options=decision.labels,
        exclusive=exclusive,
        constraints=tuple(_constraint_row(c) for c in decision.constraints),
    )


def decision_notes(decision: Decision) -> tuple[str, ...]:
    """Where each option, the exclusivity and each constraint came from, as lines to show beside
    the editor; for a refusal, why the reader gave no options and what to do."""
    if decision.refusal is not None:
        lines = [f"The reader refused to name options: {decision.refusal.reason}."]
        lines += [f"It found {found}" for found in decision.refusal.found[:6]]
        lines.append("Give the client's options below, one per line, before Run.")
    else:
        lines = [f"Options: {_FROM[decision.options_source]}."]
        for n, option in enumerate(decision.options, start=1):
            quoted = f' ← "{option.quote}"' if option.quote else ""
            lines.append(f"{n}. {option.label} ({_FROM[option.source]}){quoted}")
    if decision.exclusive is None:
        lines.append("Exclusivity: not stated.")
    else:
        where = _FROM[decision.exclusive_source] if decision.exclusive_source else "the default"
        quoted = f' ← "{decision.exclusive_quote}"' if decision.exclusive_quote else ""
        what = "choose exactly one" if decision.exclusive else "may be combined"
        lines.append(f"Exclusivity: {what} ({where}){quoted}.")
    for c in decision.constraints:
        quoted = f' ← "{c.quote}"' if c.quote and c.quote != c.text else ""
        lines.append(f"Constraint {c.id.split('.')[-1]} [{c.kind}] ({_FROM[c.source]}){quoted}")
    return tuple(lines)


def notes_html(decision: Decision) -> str:
    """`decision_notes` as HTML lines (escaped)."""
    return "<br>".join(html.escape(line) for line in decision_notes(decision))


def _option_rows(rows: Sequence[str], read: Decision) -> tuple[Option, ...]:
    """The edited options, each keeping its source and quote when the reading named it."""
    labels = tuple(row.strip() for row in rows)
    if not labels:
        refused = f": the reader refused ({read.refusal.reason})" if read.refusal else ""
        raise InputError(
            "options", f"none given{refused}", allowed="the client's options, one per line"
        )
    if len(labels) == 1:
        raise InputError(
            "options",
            f"only one given ({labels[0]!r})",
            allowed="two or more; for a yes or no, add declining it (e.g. 'Do not …')",
        )
    labels = checked_options(labels, given="row")
    known = {o.label.casefold(): o for o in read.options}
    options = []
    for label in labels:
        was = known.get(label.casefold())
        options.append(
            was.model_copy(update={"label": label})
            if was is not None
            else Option(label=label, source="notebook")
        )
    return tuple(options)


def _numbers(row: int, word: str, text: str, count: int) -> tuple[int, ...]:
    """Option numbers as typed (``1, 3``) as indexes, each checked against the options listed."""
    found = []
    for item in (x for x in re.split(r"[,\s]+", text) if x):
        if not item.isdigit():
            raise InputError(
                f"constraint {row}",
                f"{word} {item!r}, which is not an option number",
                allowed=f"option numbers 1-{count}, e.g. '{word} 1, 3'",
            )
        if not 1 <= int(item) <= count:
            raise InputError(
                f"constraint {row}",
                f"{word} option {item}, but {count} options are listed",
                allowed=f"option numbers 1-{count}",
            )
        found.append(int(item) - 1)
    if not found:
        raise InputError(
            f"constraint {row}", f"{word!r} names no option", allowed=f"e.g. '{word} 1, 3'"
        )
    return tuple(sorted(set(found)))


def _constraint(n: int, row: str, labels: Sequence[str], read: Decision) -> Constraint:
    """One edited constraint row; it keeps the reading's kind, quote and source when neither its
    text nor the options it binds changed."""
    text, *parts = (part.strip() for part in row.split("|"))
    if not text:
        raise InputError(f"constraint {n}", "its text is blank", allowed="'text | forbids 1'")
    bound: dict[str, tuple[int, ...]] = dict.fromkeys(_BOUND_WORDS, ())
    for part in parts:
        found = _BOUND.fullmatch(part)
        if found is None:
            raise InputError(
                f"constraint {n}",
                f"{part!r} after '|' is neither 'forbids …', 'not first …', 'after …' nor "
                "'limits …'",
                allowed="'text | forbids 1, 3 | not first 2 | after 1 | limits 4'",
            )
        word = " ".join(found.group(1).lower().split())
        bound[word] = tuple(sorted({*bound[word], *_numbers(n, word, found.group(2), len(labels))}))
    for one, other, said in (
        ("forbids", "limits", "forbidden and limited"),
        ("forbids", "not first", "forbidden and barred first"),
        ("not first", "limits", "barred first and limited"),
        ("not first", "after", "barred first and to come before"),
    ):
        both = set(bound[one]) & set(bound[other])
        if both:
            raise InputError(
                f"constraint {n}",
                f"option {min(both) + 1} is both {said}",
                allowed="each option under one of forbids, not first and limits",
            )
    if len(bound["after"]) > 1 or (bound["after"] and not bound["not first"]):
        raise InputError(
            f"constraint {n}",
            "'after' names one option, the one that must come before those 'not first'",
            allowed="'text | not first 2 | after 1'",
        )
    named = {w: {labels[i] for i in bound[w]} for w in bound}
    was = next(
        (
            c
            for c in read.constraints
            if c.text == text
            and {read.labels[i] for i in c.forbids} == named["forbids"]
            and {read.labels[i] for i in c.limits} == named["limits"]
            and {read.labels[i] for i in c.not_first} == named["not first"]
            and {read.labels[i] for i in (c.after,) if i is not None} == named["after"]
        ),
        None,
    )
    source: ConstraintSource = was.source if was is not None else "notebook"
    return Constraint(
        id=f"constraint.{n}",
        text=text,
        quote=was.quote if was is not None else None,
        kind=was.kind if was is not None else "other",
        forbids=bound["forbids"],
        limits=bound["limits"],
        not_first=bound["not first"],
        after=bound["after"][0] if bound["after"] else None,
        source=source,
    )


def edited_decision(rows: DecisionRows, *, read: Decision, problem: Problem) -> Decision:
    """The decision a run deliberates: exactly the editor's rows, recorded as edited in a
    notebook (``options_source="notebook"``); each option, constraint and the exclusivity keep
    where they came from when the user left them as read.

    Raises:
        InputError: naming the row at fault (``option 3``, ``constraint 2``), or ``options``
            when there are none (the reader's refusal is never deliberated on).
    """
    options = _option_rows(rows.options, read)
    labels = [o.label for o in options]
    if len(rows.constraints) > MAX_CONSTRAINTS:
        raise InputError(
            "constraints", f"{len(rows.constraints)} given", allowed=f"up to {MAX_CONSTRAINTS}"
        )
    constraints = tuple(
        _constraint(n, row, labels, read) for n, row in enumerate(rows.constraints, start=1)
    )
    exclusive = {"one_of": True, "combinable": False, "not_stated": None}[rows.exclusive]
    source: ExclusivitySource | None
    if exclusive == read.exclusive:
        source, quote = read.exclusive_source, read.exclusive_quote
    else:
        source, quote = (None if exclusive is None else "notebook"), None
    if tuple(labels) == read.labels or read.intake is not None:
        facts = read.facts
    else:  # the question's facts leave out the option sentences: read them for these options
        from hivemind_lab.problems.decision import facts_for

        facts = facts_for(problem, labels)
    return Decision(
        options=options,
        options_source="notebook",
        facts=facts,
        constraints=constraints,
        exclusive=exclusive,
        exclusive_quote=quote,
        exclusive_source=source,
        reader_version=read.reader_version,
        intake=read.intake,
    )


def conclusions_frame(result: DeliberationResult) -> pl.DataFrame:
    """Conclusions as a table: rank, title, the model's combined rationale, agents, mean
    feasibility and one column per constraint (the justifications: `justifications_frame`)."""
    rows = [
        {
            "rank": c.rank,
            "conclusion": c.title,
            "why": c.combined_rationale,
            "agents": len(c.agents),
            "mean_feasibility": c.mean_score,
            **c.scores,
        }
        for c in result.conclusions
    ]
    return pl.DataFrame(rows) if rows else pl.DataFrame({"rank": [], "conclusion": []})


def justifications_frame(result: DeliberationResult, run_dir: Path | None = None) -> pl.DataFrame:
    """Each conclusion's justifications side by side (one row per member agent); with the run
    folder, citations read as document titles, authors and years, as in the report."""
    from hivemind_lab.reports.evidence import gather

    evidence = gather(run_dir) if run_dir is not None else None
    rows = []
    for c in result.conclusions:
        for j in c.justifications:
            sources = dict.fromkeys(evidence.source(x) for x in j.citations) if evidence else {}
            rows.append(
                {
                    "rank": c.rank,
                    "agent": j.agent_id,
                    "rationale": (
                        evidence.justification_text(c, j.solution_id, j.rationale)
                        if evidence
                        else j.rationale
                    ),
                    "citations": "; ".join(sources) if evidence else ", ".join(j.citations),
                }
            )
    return pl.DataFrame(
        rows or [{"rank": None, "agent": None, "rationale": None, "citations": None}]
    )


def table_html(frame: pl.DataFrame) -> str:
    """A frame as an HTML table with every text in full (notebook tables cut at 30 characters)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    rows = "".join(
        "<tr>"
        + "".join(
            f'<td style="text-align:left;vertical-align:top">{html.escape(_cell(v))}</td>'
            for v in row
        )
        + "</tr>"
        for row in frame.iter_rows()
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _cell(value: object) -> str:
    if value is None:
        return ""
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def cached_sweep(root: Path | None = None, name: str = "grocer-calibration") -> pl.DataFrame:
    """The results of ``experiments/<name>.toml``, running whatever points are not finished yet
    or whose runs are stale (made by other prompts, model code, problem text or knowledge)."""
    from hivemind_lab.experiments import load, load_spec, run

    root = root or project_root()
    spec = load_spec(root / "experiments" / f"{name}.toml")
    report = run(spec, project=root)
    return load(report.root)
