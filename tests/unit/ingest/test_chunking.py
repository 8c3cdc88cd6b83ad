from __future__ import annotations

from kg_agent.ingest.chunking import chunk_text, embedding_input


def _words(n: int, word: str = "w") -> str:
    return " ".join(f"{word}{i}" for i in range(n))


def test_short_text_is_one_part() -> None:
    assert chunk_text("Short text here.") == ["Short text here."]
    assert chunk_text("   ") == []


def test_paragraphs_are_packed_up_to_the_limit() -> None:
    paras = [_words(60, f"p{i}_") for i in range(5)]  # 300 words
    parts = chunk_text("\n\n".join(paras), max_words=130)
    assert [len(p.split()) for p in parts] == [120, 120, 60]
    # Paragraph boundaries are kept inside a part, and no word is lost or repeated.
    assert parts[0] == paras[0] + "\n\n" + paras[1]
    assert " ".join(parts).split() == " ".join(paras).split()


def test_long_paragraph_is_cut_at_sentence_ends() -> None:
    sentences = [f"Sentence {i} has exactly six words." for i in range(40)]  # 240 words
    parts = chunk_text(" ".join(sentences), max_words=100)
    assert all(len(p.split()) <= 100 for p in parts)
    assert all(p.endswith(".") for p in parts)
    assert " ".join(parts) == " ".join(sentences)


def test_short_tail_is_merged_into_previous_part() -> None:
    text = _words(150, "a") + "\n\n" + _words(150, "b") + "\n\n" + _words(10, "c")
    parts = chunk_text(text, max_words=160, min_words=40)
    assert len(parts) == 2
    assert parts[-1].endswith("c9")


def test_a_giant_unpunctuated_block_is_cut_by_words() -> None:
    parts = chunk_text(_words(1000), max_words=160)
    assert max(len(p.split()) for p in parts) <= 160
    assert sum(len(p.split()) for p in parts) == 1000


def test_embedding_input_carries_title_and_heading() -> None:
    assert embedding_input("Ada Lovelace", "", "She wrote.") == "Ada Lovelace: She wrote."
    assert (
        embedding_input("Ada Lovelace", "Life > Early", "She wrote.")
        == "Ada Lovelace — Life > Early: She wrote."
    )
