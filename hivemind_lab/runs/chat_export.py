"""The research loop: a run's agent calls as chat-format training records.

Every ``llm.*`` audit record carries the prompt messages an agent was sent and the replies it
gave, so a finished run is already a set of (system, user, assistant) conversations. This module
turns them into JSON lines — one header record saying what was included, then one record per
call with its role (theory, practicality, monitor), task kind, evidence ids, backend and model,
and the outcome of the solution set it belongs to — filterable by role and by outcome (e.g.
only calls of sets that cleared the practicality network). A sweep folder exports all its runs.

Client data stays out unless asked for: the problem statement and the client and market facts
are replaced in the task JSON, and any run of `SHARED_WORDS` or more consecutive words taken
from them is replaced wherever else it appears — in evidence, peers' solutions and the agent's
reply, inside quotation marks, and inside JSON encoded in a string — so a fact quoted without its
full stop, cut short with "…" or escaped twice is still found. A model's paraphrase of a fact
cannot be recognised; the header says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from hivemind_lab.agents.prompts import split_task_block
from hivemind_lab.errors import AuditIntegrityError, InputError
from hivemind_lab.models import FrozenRecord as Frozen
from hivemind_lab.runs import events
from hivemind_lab.runs.atomic import write_text_atomic
from hivemind_lab.runs.audit import read_records, verify_log
from hivemind_lab.runs.manifest import RunManifest, utc_now
from hivemind_lab.runs.rescore import RescoreReport
from hivemind_lab.runs.rundir import RunDir
from hivemind_lab.runs.sweepdir import STALE, SweepDir

CHAT_EXPORT_VERSION: Literal[1] = 1
Role = Literal["theory", "practicality", "monitor"]
ROLES: tuple[Role, ...] = ("theory", "practicality", "monitor")
OutcomeFilter = Literal["all", "cleared", "vetoed"]
SetOutcome = Literal["cleared", "vetoed", "unjudged"]
"""What the practicality network made of the solution set a call belongs to (``unjudged``: the
generation ended before scoring, e.g. abstention or a spent budget)."""
_TASK_ROLES: dict[str, Role] = {
    "score": "practicality",
    "score_batch": "practicality",
    "synthesize": "monitor",
}
PROBLEM_REDACTED = "[client problem redacted]"
CLIENT_TEXT_REDACTED = "[client text redacted]"
SHARED_WORDS = 6
"""A run of this many consecutive words shared with the client's text is client text: shorter
runs ("over the next three years") are ordinary phrases."""
REDACTION_NOTE = (
    "removed: the problem statement (the task's 'problem' field) and every client and market "
    "fact (the task's 'facts' field) in each user message; elsewhere, in every message including "
    f"the assistant's reply, quoted text and JSON inside strings, every run of {SHARED_WORDS} or "
    f"more consecutive words that also appears in the problem statement or the client or "
    f"market data is replaced by '{CLIENT_TEXT_REDACTED}'. Kept: the options, the knowledge-base "
    "evidence, ids. Not recognised: a model's paraphrase of client text"
)
_WORD = re.compile(r"[^\W_]+")


class ChatMessage(Frozen):
    role: Literal["system", "user", "assistant"]
    content: str


class ExportedRun(Frozen):
    """One run of the export, identified by its audit head."""

    run: str
    problem_id: str
    audit_head: str
    audit_records: int
    backend: str
    model: str


class ChatHeader(Frozen):
    """The first line: what the export holds and what it left out."""

    type: Literal["header"] = "header"
    format: Literal["chat-jsonl"] = "chat-jsonl"
    version: Literal[1] = CHAT_EXPORT_VERSION
    created_at: str
    runs: tuple[ExportedRun, ...]
    roles: tuple[Role, ...]
    outcome: OutcomeFilter
    client_data: Literal["included", "redacted"]
    redaction: str
    """How client data was removed (empty when it was included)."""
    records: int


class ChatRecord(Frozen):
    """One agent call as a conversation, with what a training set needs to select it."""

    type: Literal["chat"] = "chat"
    run: str
    seq: int
    """Position of the call's record in the run's audit log."""
    audit_hash: str
    role: Role
    task: str
    """The task kind (propose, critique, critique_batch, revise, score, synthesize)."""
    agent: str
    backend: str
    model: str
    evidence_ids: tuple[str, ...]
    regeneration: int
    outcome: SetOutcome
    attempts: int
    """Replies the call needed (the last one is the assistant message)."""
    messages: tuple[ChatMessage, ...]


def _outcomes(run: RunDir) -> dict[int, SetOutcome]:
    """The practicality verdict of each generation: result.json, else a rescore's verdicts."""
    if run.finished:
        verdicts = [(v.regeneration, v.vetoed) for v in run.read_result().vetoes]
    elif run.rescore_path.exists():
        rescore = RescoreReport.model_validate_json(run.rescore_path.read_text("utf-8"))
        verdicts = [(s.after.regeneration, s.after.vetoed) for s in rescore.sets]
    else:
        verdicts = []
    return {regen: "vetoed" if vetoed else "cleared" for regen, vetoed in verdicts}


def client_texts(manifest: RunManifest) -> list[tuple[str, str]]:
    """(label, text) of everything client-supplied, longest first (so a fact inside a longer
    text is not left half-replaced)."""
    request = manifest.request
    texts = [(PROBLEM_REDACTED, request.problem)]
    texts += [(f"[client fact {f.id} redacted]", f.text) for f in request.facts()]
    for doc in (*request.client_data, *request.market_data):
        texts += [(f"[client data {doc.id} redacted]", doc.text)]
        texts += [
            (f"[client data {doc.id} redacted]", line.strip()) for line in doc.text.splitlines()
        ]
    seen: dict[str, str] = {}
    for label, text in texts:
        if len(text.strip()) >= 12:  # shorter strings would redact ordinary words
            seen.setdefault(text.strip(), label)
    return sorted(((lab, t) for t, lab in seen.items()), key=lambda x: -len(x[1]))


def _words(text: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(text))


def shingles(texts: Sequence[tuple[str, str]]) -> frozenset[tuple[str, ...]]:
    """Every run of `SHARED_WORDS` consecutive words (case-folded) of the client's texts."""
    out: set[tuple[str, ...]] = set()
    for _, text in texts:
        words = [m.group(0).casefold() for m in _words(text)]
        out.update(tuple(words[i : i + SHARED_WORDS]) for i in range(len(words) - SHARED_WORDS + 1))
    return frozenset(out)


def _scrub_text(
    value: str, texts: Sequence[tuple[str, str]], known: frozenset[tuple[str, ...]]
) -> str:
    """A string with client text replaced: whole texts by their label, then any run of words
    shared with them; JSON held in the string is scrubbed inside and re-encoded."""
    stripped = value.strip()
    if stripped[:1] in "[{" and len(stripped) > 1:
        try:
            inner = json.loads(stripped)
        except ValueError:
            pass
        else:
            return json.dumps(_scrub(inner, texts, known), ensure_ascii=False)
    for label, text in texts:
        if text in value:
            value = value.replace(text, label)
    words = _words(value)
    folded = [m.group(0).casefold() for m in words]
    hit = [False] * len(words)
    for i in range(len(words) - SHARED_WORDS + 1):
        if tuple(folded[i : i + SHARED_WORDS]) in known:
            for k in range(i, i + SHARED_WORDS):
                hit[k] = True
    if not any(hit):
        return value
    out, last, i = [], 0, 0
    while i < len(words):
        if not hit[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(words) and hit[j + 1]:
            j += 1
        out += [value[last : words[i].start()], CLIENT_TEXT_REDACTED]
        last, i = words[j].end(), j + 1
    return "".join([*out, value[last:]])


def _scrub(
    value: Any, texts: Sequence[tuple[str, str]], known: frozenset[tuple[str, ...]] | None = None
) -> Any:
    known = shingles(texts) if known is None else known
    if isinstance(value, str):
        return _scrub_text(value, texts, known)
    if isinstance(value, list):
        return [_scrub(v, texts, known) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, texts, known) for k, v in value.items()}
    return value


def redact_user(content: str, texts: Sequence[tuple[str, str]]) -> str:
    """The user message with the task's problem and facts replaced, and client text scrubbed."""
    block = split_task_block(content)
    if block is None:
        return str(_scrub(content, texts))
    try:
        task = json.loads(block.data)
    except json.JSONDecodeError:
        return str(_scrub(content, texts))
    if isinstance(task, dict):
        if "problem" in task:
            task["problem"] = PROBLEM_REDACTED
        if isinstance(task.get("facts"), list):
            task["facts"] = [
                {**f, "text": f"[client fact {f.get('id', '?')} redacted]"}
                if isinstance(f, dict)
                else "[client fact redacted]"
                for f in task["facts"]
            ]
    body = json.dumps(_scrub(task, texts), indent=1, ensure_ascii=False)
    return block._replace(before=_scrub(block.before, texts)).join(body)


def redact_reply(content: str, texts: Sequence[tuple[str, str]]) -> str:
    """An agent's reply with client text replaced (JSON kept as JSON)."""
    try:
        value = json.loads(content)
    except json.JSONDecodeError:
        return str(_scrub(content, texts))
    return json.dumps(_scrub(value, texts), ensure_ascii=False)


def _evidence_ids(user: str) -> tuple[str, ...]:
    block = split_task_block(user)
    try:
        task = json.loads(block.data) if block is not None else {}
    except json.JSONDecodeError:
        return ()
    evidence = task.get("evidence", []) if isinstance(task, dict) else []
    return tuple(str(e["id"]) for e in evidence if isinstance(e, dict) and "id" in e)


def run_records(
    run_dir: str | Path, *, name: str, include_client_data: bool = False
) -> tuple[ExportedRun, list[ChatRecord]]:
    """Every agent call of one run (verified first) as chat records, in audit order."""
    run = RunDir(run_dir)
    manifest = run.read_manifest()
    check = verify_log(run.audit_path, require_anchor=False)
    if not check.ok:
        raise AuditIntegrityError(check.first_bad or 0, check.reason or "verification failed")
    outcomes = _outcomes(run)
    texts = [] if include_client_data else client_texts(manifest)
    out: list[ChatRecord] = []
    regeneration = 0
    for record in read_records(run.audit_path):
        event = record.event
        if isinstance(event, events.RescoreSet | events.Resume):
            regeneration = event.regeneration
        elif isinstance(event, events.Veto):
            regeneration = event.regeneration + 1
        if not isinstance(event, events.ModelCall) or not event.responses:
            continue
        task = event.kind.removeprefix("llm.")
        prompt = [m for m in event.prompt if m["role"] in ("system", "user")]
        reply = str(event.responses[-1]["content"])
        messages = [ChatMessage(role=m["role"], content=m["content"]) for m in prompt]
        if texts:
            messages = [
                m.model_copy(
                    update={
                        "content": redact_user(m.content, texts)
                        if m.role == "user"
                        else str(_scrub(m.content, texts))
                    }
                )
                for m in messages
            ]
            reply = redact_reply(reply, texts)
        user = next((m["content"] for m in prompt if m["role"] == "user"), "")
        out.append(
            ChatRecord(
                run=name,
                seq=record.seq,
                audit_hash=record.hash,
                role=_TASK_ROLES.get(task, "theory"),
                task=task,
                agent=record.actor,
                backend=event.backend,
                model=event.model,
                evidence_ids=_evidence_ids(user),
                regeneration=regeneration,
                outcome=outcomes.get(regeneration, "unjudged"),
                attempts=len(event.responses),
                messages=(*messages, ChatMessage(role="assistant", content=reply)),
            )
        )
    exported = ExportedRun(
        run=name,
        problem_id=manifest.request.problem_id,
        audit_head=check.head,
        audit_records=check.records,
        backend=manifest.backend,
        model=manifest.model,
    )
    return exported, out


def find_runs(path: str | Path) -> list[tuple[str, Path]]:
    """A run directory, or every current run of a sweep folder (`SweepDir.runs`: never the
    stale ones set aside) or of a folder of sweeps: (name relative to ``path``, directory),
    sorted."""
    root = Path(path)
    if root.is_file() and root.name == "audit.jsonl":
        root = root.parent
    if RunDir(root).started:
        return [(root.name, root)]
    if not root.is_dir():
        raise InputError("path", f"{str(root)!r} does not exist", allowed="a run or sweep folder")
    runs: list[tuple[str, Path]] = []
    folders = [root]
    while folders:
        folder = SweepDir(folders.pop())
        current = folder.runs()
        runs += [(str(r.path.relative_to(root)), r.path) for r in current if r.audit_path.exists()]
        held = {r.path for r in current}
        folders += [
            p
            for p in folder.path.iterdir()
            if p.is_dir() and p.name != STALE and p not in held and not RunDir(p).started
        ]
    if not runs:
        raise InputError(
            "path", f"{str(root)!r} holds no runs", allowed="a run directory or a sweep folder"
        )
    return sorted(runs)


def export_chat(
    path: str | Path,
    out: str | Path,
    *,
    roles: Iterable[Role] = ROLES,
    outcome: OutcomeFilter = "all",
    include_client_data: bool = False,
) -> ChatHeader:
    """Write the chat records of a run (or of every run of a sweep) to ``out`` as JSON lines.

    Nothing is written unless every run's audit verifies; the file appears whole (renamed).
    """
    wanted = tuple(dict.fromkeys(roles))
    for role in wanted:
        if role not in ROLES:
            raise InputError("role", f"unknown role {role!r}", allowed=", ".join(ROLES))
    if outcome not in ("all", "cleared", "vetoed"):
        raise InputError("outcome", f"unknown outcome {outcome!r}", allowed="all, cleared, vetoed")
    runs, records = [], []
    for name, directory in find_runs(path):
        exported, chats = run_records(directory, name=name, include_client_data=include_client_data)
        runs.append(exported)
        records += [
            c for c in chats if c.role in wanted and (outcome == "all" or c.outcome == outcome)
        ]
    header = ChatHeader(
        created_at=utc_now(),
        runs=tuple(runs),
        roles=wanted,
        outcome=outcome,
        client_data="included" if include_client_data else "redacted",
        redaction="" if include_client_data else REDACTION_NOTE,
        records=len(records),
    )
    write_text_atomic(out, "".join(item.model_dump_json() + "\n" for item in (header, *records)))
    return header


def read_chat(path: str | Path) -> tuple[ChatHeader, list[ChatRecord]]:
    """Read a chat export back (header first); errors name the line."""
    lines = Path(path).read_text("utf-8").splitlines()
    if not lines:
        raise InputError("path", f"{str(path)!r} is empty", allowed="a chat-jsonl export")
    try:
        header = ChatHeader.model_validate_json(lines[0])
        records = [ChatRecord.model_validate_json(line) for line in lines[1:]]
    except ValueError as exc:
        raise InputError("path", f"{str(path)!r} is not a chat-jsonl export ({exc})") from None
    return header, records


def iter_messages(records: Iterable[ChatRecord]) -> Iterator[list[dict[str, str]]]:
    """The bare conversations (what a fine-tuning set takes)."""
    for r in records:
        yield [m.model_dump() for m in r.messages]
