"""Per-slice retrieval: paragraph passages cut only between sentences, and BM25 search."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hivemind_lab.knowledge.documents import load_documents
from hivemind_lab.knowledge.retrieval import Passage, RetrievalIndex, split_passages
from hivemind_lab.text import split_sentences

KB = Path(__file__).parents[1] / "data" / "knowledge"


def passage(doc_id: str, n: int, text: str) -> Passage:
    return Passage(id=f"{doc_id}#{n}", document_id=doc_id, text=text)


# --- passages ----------------------------------------------------------------------------------


def test_passages_are_paragraphs_and_headings_are_skipped():
    text = (
        "# Holding the line\n\n"
        "Incumbents should not match. Matching costs margin.\n\n"
        "## Better responses\n\n"
        "Fighting brands\nwork better.\n\n\n"
        "Subscriptions reduce churn."
    )
    passages = split_passages("kb-1", text, topics=("pricing", "price-wars"))
    assert [p.text for p in passages] == [
        "Incumbents should not match. Matching costs margin.",
        "Fighting brands work better.",
        "Subscriptions reduce churn.",
    ]
    assert [p.id for p in passages] == ["kb-1#0", "kb-1#1", "kb-1#2"]
    assert all(p.document_id == "kb-1" for p in passages)
    assert all(p.topics == ("pricing", "price-wars") for p in passages)


def test_windows_line_endings_separate_paragraphs():
    passages = split_passages("d", "First paragraph.\r\n\r\nSecond paragraph.")
    assert [p.text for p in passages] == ["First paragraph.", "Second paragraph."]


def test_empty_text_gives_no_passages():
    assert split_passages("d", "") == []
    assert split_passages("d", "\n\n   \n\n# Only a heading\n") == []


_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=9)


@st.composite
def sentences(draw: st.DrawFn) -> str:
    words = draw(st.lists(_word, min_size=1, max_size=25))
    end = draw(st.sampled_from(".!?"))
    return words[0].capitalize() + "".join(" " + w for w in words[1:]) + end


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(sents=st.lists(sentences(), min_size=1, max_size=30), max_words=st.integers(5, 60))
def test_long_paragraph_is_split_only_between_sentences(sents, max_words):
    paragraph = " ".join(sents)
    passages = split_passages("doc", paragraph, max_words=max_words)
    # together the passages are the paragraph, in order, and each one is whole sentences
    assert " ".join(p.text for p in passages) == paragraph
    position = 0
    for p in passages:
        count = len(split_sentences(p.text))
        assert p.text == " ".join(sents[position : position + count])
        assert p.text[-1] in ".!?"
        words = len(p.text.split())
        assert words <= max_words or count == 1  # only a lone long sentence may exceed
        position += count
    assert position == len(sents)
    assert len({p.id for p in passages}) == len(passages)


def test_single_sentence_longer_than_limit_is_not_cut():
    long_sentence = "Firms " + " ".join(["grow"] * 50) + " slowly."
    passages = split_passages("d", long_sentence + " Short one.", max_words=10)
    assert [p.text for p in passages] == [long_sentence, "Short one."]


def test_passage_ids_are_unique_across_the_sample_knowledge_base():
    docs = load_documents(KB)
    ids = []
    for doc in docs:
        passages = split_passages(doc.id, doc.text, topics=doc.topics)
        assert passages, doc.id
        assert [p.id for p in passages] == [f"{doc.id}#{n}" for n in range(len(passages))]
        for p in passages:
            assert re.fullmatch(re.escape(doc.id) + r"#\d+", p.id)
            assert p.text[-1] in ".!?\"')”’:", (p.id, p.text[-40:])
            assert not p.text.startswith("#")
        ids += [p.id for p in passages]
    assert len(ids) == len(set(ids))


# --- BM25 search -------------------------------------------------------------------------------


@pytest.fixture
def small_index() -> RetrievalIndex:
    return RetrievalIndex(
        [
            passage("blue-ocean", 0, "Value innovation creates uncontested market space."),
            passage("pricing", 0, "Incumbents should not match a discount entrant's price."),
            passage("pricing", 1, "Subscriptions reduce churn when entrants cut prices."),
            passage("platforms", 0, "Network effects reward subsidising one side of a market."),
        ]
    )


def test_search_returns_the_relevant_passage_first(small_index):
    hits = small_index.search("discount entrant price", k=3)
    assert hits
    assert hits[0].passage.id == "pricing#0"
    assert hits[0].passage.document_id == "pricing"
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)


def test_search_respects_k_and_drops_zero_scores(small_index):
    assert len(small_index.search("market", k=1)) == 1
    hits = small_index.search("market", k=10)
    assert {h.passage.id for h in hits} == {"blue-ocean#0", "platforms#0"}
    assert small_index.search("market", k=0) == []


@pytest.mark.parametrize("query", ["zebra quantum", "", "the and of", "!!!"])
def test_search_without_known_terms_returns_nothing(small_index, query):
    assert small_index.search(query) == []


def test_empty_index_returns_nothing():
    index = RetrievalIndex([])
    assert len(index) == 0
    assert index.search("pricing") == []


def test_ties_are_broken_by_passage_order_deterministically():
    same = "Fighting brands protect margins."
    passages = [passage(f"doc-{n}", 0, same) for n in range(4)]
    passages.append(passage("other", 0, "Unrelated ecosystem orchestration."))
    index = RetrievalIndex(passages)
    hits = index.search("fighting brands", k=4)
    assert [h.passage.id for h in hits] == ["doc-0#0", "doc-1#0", "doc-2#0", "doc-3#0"]
    assert len({h.score for h in hits}) == 1
    assert index.search("fighting brands", k=4) == hits
    reversed_index = RetrievalIndex(list(reversed(passages)))
    hits = reversed_index.search("fighting brands", k=2)
    assert [h.passage.id for h in hits] == ["doc-3#0", "doc-2#0"]


@pytest.fixture(scope="module")
def kb_index() -> RetrievalIndex:
    docs = load_documents(KB)
    return RetrievalIndex(p for d in docs for p in split_passages(d.id, d.text, topics=d.topics))


def test_sample_kb_price_war_query_finds_pricing_or_cost_documents(kb_index):
    hits = kb_index.search("price war discount entrant", k=3)
    assert len(hits) == 3
    schools = {h.passage.topics[0] for h in hits}
    assert schools & {"pricing", "cost-leadership"}, [h.passage.id for h in hits]
    assert kb_index.search("price war discount entrant", k=3) == hits


def test_building_an_index_prints_nothing_even_when_the_root_logger_is_configured(caplog):
    import logging

    from hivemind_lab.knowledge.retrieval import RetrievalIndex, split_passages

    caplog.set_level(logging.DEBUG)  # as a library that calls basicConfig leaves the root
    RetrievalIndex(split_passages("d", "Firms that license succeed.\n\nBuyers overpay."))
    assert not [r for r in caplog.records if r.name.startswith("bm25s")]
