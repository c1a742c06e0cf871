"""The hash-chained audit log: tamper detection, crash recovery, concurrency, export, CLI."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Literal

import polars as pl
import pytest
from typer.testing import CliRunner

from hivemind_lab.canonical import canonical_json
from hivemind_lab.cli import app
from hivemind_lab.errors import AuditIntegrityError, InputError
from hivemind_lab.models import Event
from hivemind_lab.runs import events
from hivemind_lab.runs.audit import (
    GENESIS,
    AuditLog,
    _digest,
    export_log,
    read_records,
    verify_log,
)

N = 6
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Claim(Event):
    """A stand-in event for the chain's tests (a kind no reader knows: it reads as Unknown)."""

    kind: Literal["test.claim"] = "test.claim"
    i: float = 0
    text: str = ""
    tags: list[str] = []


def _write_log(path: Path, n: int = N) -> list[dict]:
    with AuditLog(path) as log:
        for i in range(n):
            log.append(f"agent-{i % 3}", Claim(i=i, text=f"claim number {i}"))
    return _lines(path)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _rewrite(path: Path, records: list[dict]) -> None:
    path.write_text("".join(canonical_json(r) + "\n" for r in records), "utf-8")


def _rehash(record: dict) -> dict:
    fields = {k: v for k, v in record.items() if k != "hash"}
    return {**fields, "hash": _digest(fields)}


def _anchor(path: Path) -> Path:
    return path.with_name(path.name + ".head")


def _flat(text: str) -> str:
    """CLI output without colour codes and with rich's line wrapping undone."""
    return " ".join(_ANSI.sub("", text).split())


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "run" / "audit.jsonl"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


# --- intact logs ----------------------------------------------------------------------------


def test_appended_records_form_a_chain(log_path: Path) -> None:
    with AuditLog(log_path) as log:
        assert log.head == GENESIS
        assert log.count == 0
        first = log.append("engine", Claim(text="price war, ünïcode"))
        second = log.append("agent-1", Claim(i=1.5, tags=["a", "b"]))
        assert (first.seq, second.seq) == (0, 1)
        assert first.prev == GENESIS
        assert second.prev == first.hash
        assert first.expected_hash() == first.hash
        assert log.head == second.hash
        assert log.count == 2
    stored = list(read_records(log_path))
    assert stored == [first, second]
    assert json.loads(_anchor(log_path).read_text("utf-8")) == {"seq": 1, "hash": second.hash}


def test_intact_log_verifies(log_path: Path) -> None:
    with AuditLog(log_path) as log:
        for i in range(N):
            log.append("agent", Claim(i=i))
        head = log.head
    report = verify_log(log_path)
    assert report.ok
    assert report.records == N
    assert report.head == head
    assert report.anchored
    assert report.first_bad is None
    assert report.reason is None


def test_cli_verify_intact_log(log_path: Path, runner: CliRunner) -> None:
    records = _write_log(log_path)
    result = runner.invoke(app, ["audit", "verify", str(log_path)])
    assert result.exit_code == 0, result.output
    out = _flat(result.output)
    assert f"intact: {N} records" in out
    assert f"head {records[-1]['hash']}" in out


def test_cli_verify_accepts_run_directory(log_path: Path, runner: CliRunner) -> None:
    _write_log(log_path)
    result = runner.invoke(app, ["audit", "verify", str(log_path.parent)])
    assert result.exit_code == 0, result.output
    assert f"{N} records" in _flat(result.output)


def test_verify_missing_file_is_an_input_error(tmp_path: Path, runner: CliRunner) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(InputError) as info:
        verify_log(missing)
    assert info.value.field == "path"
    result = runner.invoke(app, ["audit", "verify", str(missing)])
    assert result.exit_code == 2
    assert "does not exist" in _flat(result.output)


# --- tampering ------------------------------------------------------------------------------


def _assert_tampered(path: Path, runner: CliRunner, first_bad: int) -> None:
    report = verify_log(path)
    assert not report.ok
    assert report.first_bad == first_bad, report.reason
    assert report.reason
    result = runner.invoke(app, ["audit", "verify", str(path)])
    assert result.exit_code == 1, result.output
    assert f"TAMPERED: record {first_bad}:" in _flat(result.output)


@pytest.mark.parametrize("index", range(N))
def test_modified_payload_is_detected_at_that_record(
    log_path: Path, runner: CliRunner, index: int
) -> None:
    records = _write_log(log_path)
    records[index]["payload"]["text"] = "something the agent never said"
    _rewrite(log_path, records)
    _assert_tampered(log_path, runner, index)
    assert "modified" in verify_log(log_path).reason


@pytest.mark.parametrize("field", ["ts", "actor", "kind"])
def test_modified_metadata_is_detected(log_path: Path, runner: CliRunner, field: str) -> None:
    records = _write_log(log_path)
    records[2][field] = records[2][field] + "x"
    _rewrite(log_path, records)
    _assert_tampered(log_path, runner, 2)


def test_modified_and_rehashed_record_breaks_the_next_link(
    log_path: Path, runner: CliRunner
) -> None:
    records = _write_log(log_path)
    records[2]["payload"]["text"] = "forged"
    records[2] = _rehash(records[2])
    _rewrite(log_path, records)
    _assert_tampered(log_path, runner, 3)
    assert "previous-hash link broken" in verify_log(log_path).reason


def test_modified_and_rehashed_last_record_is_caught_by_the_anchor(
    log_path: Path, runner: CliRunner
) -> None:
    records = _write_log(log_path)
    records[-1]["payload"]["text"] = "forged"
    records[-1] = _rehash(records[-1])
    _rewrite(log_path, records)
    _assert_tampered(log_path, runner, N - 1)
    assert "anchor" in verify_log(log_path).reason


@pytest.mark.parametrize("index", range(N))
def test_deleted_record_is_detected_at_its_position(
    log_path: Path, runner: CliRunner, index: int
) -> None:
    records = _write_log(log_path)
    del records[index]
    _rewrite(log_path, records)
    _assert_tampered(log_path, runner, index)
    assert verify_log(log_path).records == index


def test_inserted_forged_record_with_valid_self_hash_is_detected(
    log_path: Path, runner: CliRunner
) -> None:
    records = _write_log(log_path)
    # A forgery that is internally consistent: right seq, right prev link, correct own hash.
    forged = _rehash(
        {
            "seq": 3,
            "ts": records[2]["ts"],
            "actor": "agent-9",
            "kind": "practicality.veto",
            "payload": {"text": "inserted later"},
            "prev": records[2]["hash"],
        }
    )
    assert forged["hash"] == _digest({k: v for k, v in forged.items() if k != "hash"})
    records.insert(3, forged)
    _rewrite(log_path, records)
    # The forged record itself is indistinguishable; the displaced original no longer fits.
    _assert_tampered(log_path, runner, 4)
    assert verify_log(log_path).records == 4


def test_inserted_record_with_wrong_sequence_is_detected_at_the_insert(
    log_path: Path, runner: CliRunner
) -> None:
    records = _write_log(log_path)
    records.insert(2, {**records[4], "payload": {"text": "copy of a later record"}})
    _rewrite(log_path, records)
    _assert_tampered(log_path, runner, 2)


def test_rewritten_chain_after_insertion_is_caught_by_the_anchor(
    log_path: Path, runner: CliRunner
) -> None:
    records = _write_log(log_path)
    records.insert(2, {**records[2], "payload": {"text": "inserted"}})
    prev = records[1]["hash"]
    for seq, record in enumerate(records[2:], start=2):
        records[seq] = _rehash({**record, "seq": seq, "prev": prev})
        prev = records[seq]["hash"]
    _rewrite(log_path, records)
    report = verify_log(log_path)
    assert not report.ok
    assert report.anchored
    assert "anchor" in report.reason
    result = runner.invoke(app, ["audit", "verify", str(log_path)])
    assert result.exit_code == 1


@pytest.mark.parametrize(("i", "j"), [(0, 1), (2, 3), (1, 4), (0, N - 1)])
def test_swapped_records_are_detected_at_the_first_swapped(
    log_path: Path, runner: CliRunner, i: int, j: int
) -> None:
    records = _write_log(log_path)
    records[i], records[j] = records[j], records[i]
    _rewrite(log_path, records)
    _assert_tampered(log_path, runner, i)


@pytest.mark.parametrize("keep", [0, 1, 3, N - 1])
def test_records_cut_off_the_end_are_detected_by_the_anchor(
    log_path: Path, runner: CliRunner, keep: int
) -> None:
    records = _write_log(log_path)
    _rewrite(log_path, records[:keep])
    assert _anchor(log_path).exists()
    _assert_tampered(log_path, runner, keep)
    report = verify_log(log_path)
    assert report.records == keep
    assert report.anchored
    assert "cut off" in report.reason


def test_last_line_cut_in_half_is_detected(log_path: Path, runner: CliRunner) -> None:
    _write_log(log_path)
    data = log_path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    log_path.write_bytes(data[: last_start + (len(data) - last_start) // 2])
    _assert_tampered(log_path, runner, N - 1)
    assert verify_log(log_path).records == N - 1


def test_garbage_line_in_the_middle_is_detected(log_path: Path, runner: CliRunner) -> None:
    _write_log(log_path)
    lines = log_path.read_text("utf-8").splitlines(keepends=True)
    lines[2] = "not json at all\n"
    log_path.write_text("".join(lines), "utf-8")
    _assert_tampered(log_path, runner, 2)


def test_missing_anchor_fails_unless_not_required(log_path: Path, runner: CliRunner) -> None:
    records = _write_log(log_path)
    _anchor(log_path).unlink()
    report = verify_log(log_path)
    assert not report.ok
    assert report.first_bad == N
    assert not report.anchored
    assert "anchor" in report.reason
    result = runner.invoke(app, ["audit", "verify", str(log_path)])
    assert result.exit_code == 1

    relaxed = verify_log(log_path, require_anchor=False)
    assert relaxed.ok
    assert not relaxed.anchored
    assert relaxed.records == N
    assert relaxed.head == records[-1]["hash"]


def test_corrupt_anchor_fails(log_path: Path) -> None:
    _write_log(log_path)
    _anchor(log_path).write_text("{not json", "utf-8")
    report = verify_log(log_path)
    assert not report.ok
    assert "anchor" in report.reason


def test_anchor_lagging_behind_the_log_still_verifies(log_path: Path) -> None:
    """A crash between the record's fsync and the anchor update leaves the anchor one behind."""
    records = _write_log(log_path)
    _anchor(log_path).write_text(
        canonical_json({"seq": N - 2, "hash": records[N - 2]["hash"]}), "utf-8"
    )
    report = verify_log(log_path)
    assert report.ok
    assert report.records == N


# --- reopening and crash recovery -------------------------------------------------------------


def test_reopening_continues_the_chain(log_path: Path) -> None:
    first = _write_log(log_path, 3)
    with AuditLog(log_path) as log:
        assert log.count == 3
        assert log.head == first[-1]["hash"]
        resumed = log.append("engine", events.Resume(phase="propose", regeneration=0, round=0))
        log.append("agent-1", Claim(i=99))
    assert resumed.seq == 3
    assert resumed.prev == first[-1]["hash"]
    records = list(read_records(log_path))
    assert [r.seq for r in records] == [0, 1, 2, 3, 4]
    assert [r.model_dump() for r in records[:3]] == first
    report = verify_log(log_path)
    assert report.ok
    assert report.records == 5


def test_reopening_an_empty_file_starts_at_genesis(log_path: Path) -> None:
    log_path.parent.mkdir(parents=True)
    log_path.touch()
    with AuditLog(log_path) as log:
        record = log.append("engine", Claim())
    assert (record.seq, record.prev) == (0, GENESIS)
    assert verify_log(log_path).ok


@pytest.mark.parametrize("complete", [3, 0])
def test_torn_last_line_is_dropped_and_the_repair_logged(log_path: Path, complete: int) -> None:
    if complete:
        before = _write_log(log_path, complete)
    else:
        before = []
        log_path.parent.mkdir(parents=True)
    torn = b'{"actor":"agent-2","hash":"ab12'
    with log_path.open("ab") as handle:
        handle.write(torn)

    with AuditLog(log_path) as log:
        assert log.count == complete + 1
        log.append("engine", events.Resume(phase="propose", regeneration=0, round=0))

    records = list(read_records(log_path))
    assert [r.model_dump() for r in records[:complete]] == before
    repair = records[complete]
    assert repair.seq == complete
    assert repair.actor == "audit"
    assert repair.payload == {"dropped_bytes": len(torn)}
    assert repair.prev == (before[-1]["hash"] if before else GENESIS)
    assert isinstance(records[-1].event, events.Resume)
    assert isinstance(repair.event, events.Repair)
    report = verify_log(log_path)
    assert report.ok
    assert report.records == complete + 2


def test_reopening_a_log_with_a_corrupt_complete_last_line_refuses(log_path: Path) -> None:
    _write_log(log_path, 3)
    with log_path.open("a", encoding="utf-8") as handle:
        handle.write("garbage\n")
    with pytest.raises(AuditIntegrityError) as info:
        AuditLog(log_path)
    assert info.value.index == 3


# --- concurrency ----------------------------------------------------------------------------


def test_concurrent_appends_from_threads_form_a_valid_chain(log_path: Path) -> None:
    threads_n, per_thread = 8, 25
    barrier = threading.Barrier(threads_n)
    errors: list[BaseException] = []

    with AuditLog(log_path) as log:

        def worker(t: int) -> None:
            try:
                barrier.wait()
                for i in range(per_thread):
                    log.append(f"agent-{t}", Claim(i=i, text=str(t)))
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(threads_n)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert log.count == threads_n * per_thread

    assert errors == []
    report = verify_log(log_path)
    assert report.ok, report.reason
    assert report.records == threads_n * per_thread
    records = list(read_records(log_path))
    assert [r.seq for r in records] == list(range(threads_n * per_thread))
    seen = sorted((int(r.payload["text"]), r.payload["i"]) for r in records)
    assert seen == [(t, i) for t in range(threads_n) for i in range(per_thread)]
    # Each thread's own records stay in the order it appended them.
    for t in range(threads_n):
        mine = [r.payload["i"] for r in records if r.payload["text"] == str(t)]
        assert mine == list(range(per_thread))


# --- export ---------------------------------------------------------------------------------


def test_export_parquet_round_trips(log_path: Path, tmp_path: Path) -> None:
    _write_log(log_path)
    records = list(read_records(log_path))
    out = export_log(log_path, tmp_path / "exports" / "audit.parquet", format="parquet")
    assert out == tmp_path / "exports" / "audit.parquet"
    frame = pl.read_parquet(out)
    assert frame.columns == ["seq", "ts", "actor", "kind", "payload", "prev", "hash"]
    assert frame["seq"].to_list() == [r.seq for r in records]
    assert frame["hash"].to_list() == [r.hash for r in records]
    assert frame["prev"].to_list() == [r.prev for r in records]
    assert [json.loads(p) for p in frame["payload"].to_list()] == [r.payload for r in records]
    assert not list(out.parent.glob("*.tmp"))


def test_export_jsonl_is_a_verifiable_copy(log_path: Path, tmp_path: Path) -> None:
    _write_log(log_path)
    out = export_log(log_path, tmp_path / "audit.export.jsonl", format="jsonl")
    assert out.read_text("utf-8") == log_path.read_text("utf-8")
    assert [r.hash for r in read_records(out)] == [r.hash for r in read_records(log_path)]
    assert verify_log(out, require_anchor=False).ok


def test_export_refuses_a_tampered_log(log_path: Path, tmp_path: Path) -> None:
    records = _write_log(log_path)
    records[2]["payload"]["text"] = "tampered"
    _rewrite(log_path, records)
    out = tmp_path / "audit.parquet"
    with pytest.raises(AuditIntegrityError) as info:
        export_log(log_path, out, format="parquet")
    assert info.value.index == 2
    assert not out.exists()


def test_export_refuses_a_truncated_log(log_path: Path, tmp_path: Path) -> None:
    records = _write_log(log_path)
    _rewrite(log_path, records[:3])
    with pytest.raises(AuditIntegrityError) as info:
        export_log(log_path, tmp_path / "audit.jsonl", format="jsonl")
    assert info.value.index == 3


def test_export_rejects_unknown_format(log_path: Path, tmp_path: Path) -> None:
    _write_log(log_path)
    with pytest.raises(InputError) as info:
        export_log(log_path, tmp_path / "audit.csv", format="csv")  # type: ignore[arg-type]
    assert info.value.field == "format"


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_cli_export_writes_beside_the_log(log_path: Path, runner: CliRunner, fmt: str) -> None:
    _write_log(log_path)
    result = runner.invoke(app, ["audit", "export", str(log_path), "--format", fmt])
    assert result.exit_code == 0, result.output
    out = log_path.with_name(f"audit.export.{fmt}")
    assert out.exists()
    if fmt == "parquet":
        seqs = pl.read_parquet(out)["seq"].to_list()
    else:
        seqs = [r.seq for r in read_records(out)]
    assert seqs == list(range(N))


def test_cli_export_to_chosen_path(log_path: Path, runner: CliRunner, tmp_path: Path) -> None:
    _write_log(log_path)
    out = tmp_path / "elsewhere" / "trail.parquet"
    result = runner.invoke(app, ["audit", "export", str(log_path.parent), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert pl.read_parquet(out)["hash"].to_list() == [r.hash for r in read_records(log_path)]


def test_cli_export_refuses_tampered_log(log_path: Path, runner: CliRunner) -> None:
    records = _write_log(log_path)
    del records[1]
    _rewrite(log_path, records)
    result = runner.invoke(app, ["audit", "export", str(log_path), "--format", "jsonl"])
    assert result.exit_code != 0
    assert "record 1" in _flat(result.output)
    assert not log_path.with_name("audit.export.jsonl").exists()


def test_cli_export_rejects_unknown_format(log_path: Path, runner: CliRunner) -> None:
    _write_log(log_path)
    result = runner.invoke(app, ["audit", "export", str(log_path), "--format", "csv"])
    assert result.exit_code == 2
    assert "csv" in _flat(result.output)


def test_an_empty_log_that_was_closed_verifies(tmp_path):
    path = tmp_path / "empty.jsonl"
    AuditLog(path).close()
    report = verify_log(path)
    assert report.ok
    assert report.records == 0


def test_events_read_typed_and_unknown_kinds_fall_back_without_breaking_the_chain(tmp_path):
    from hivemind_lab.runs.results import ConstraintScore

    class FutureKind(Event):  # what a later version might write
        kind: Literal["engine.future_kind"] = "engine.future_kind"
        anything: list[int]

    class OddAbstained(Event):  # a known kind written with a payload this version cannot read
        kind: Literal["theory.abstained"] = "theory.abstained"
        agents: str

    path = tmp_path / "audit.jsonl"
    score = ConstraintScore(constraint="cost", solution_id="s1", score=40, reason="dear")
    with AuditLog(path) as log:
        log.extend(
            [
                ("constraint-cost", events.Score.of(score)),
                ("engine", FutureKind(anything=[1, 2])),
                ("monitor", OddAbstained(agents="not a list")),
            ]
        )
    assert verify_log(path).ok
    read = [r.event for r in read_records(path)]
    assert isinstance(read[0], events.Score)
    assert read[0].constraint_score == score
    assert read[1] == events.Unknown(kind="engine.future_kind", data={"anything": [1, 2]})
    assert isinstance(read[2], events.Unknown) and read[2].kind == "theory.abstained"
    assert [e.payload() for e in read] == [r.payload for r in read_records(path)]


def test_events_are_written_typed_and_old_payloads_read_without_their_retired_fields(tmp_path):
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log, pytest.raises(TypeError, match="typed events"):
        log.append("engine", events.Unknown(kind="engine.result", data={"status": "converged"}))
    with pytest.raises(ValueError, match="extra"):
        events.Abstained(agents=["a"], reason="gone")  # type: ignore[call-arg]
    old = events.parse("theory.abstained", {"agents": ["a"], "reason": "an older field"})
    assert old == events.Abstained(agents=["a"])
    texts = events.parse("monitor.rationales", {"0": "one", "1": "two"})
    assert isinstance(texts, events.Rationales) and texts.texts == {0: "one", 1: "two"}
    assert texts.payload() == {"0": "one", "1": "two"}
