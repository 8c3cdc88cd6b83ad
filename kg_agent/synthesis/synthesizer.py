"""The answer from ranked evidence: one seam, two implementations.

:class:`ExtractiveSynthesizer` quotes the evidence's best sentences (offline, no model);
:class:`ClaudeSynthesizer` asks Claude (or any Anthropic-compatible Messages endpoint:
``ANTHROPIC_BASE_URL``, ``--llm-base-url``) for a cited answer through
:func:`~kg_agent.llm.client.metered_complete`, and falls back to the extractive answer,
with one warning, when the call fails.
"""

from __future__ import annotations

import abc
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kg_agent.answering import OfflineReading, read_evidence
from kg_agent.answering.reader import MAX_ANSWER_WORDS, SUPPORT_THRESHOLD
from kg_agent.answering.sentence_ranker import SentenceRanker
from kg_agent.answering.span_ranker import SpanRanker
from kg_agent.language.question import Question, query_text
from kg_agent.llm.client import (
    LLMClient,
    LLMError,
    LLMReply,
    UsageMeter,
    metered_complete,
    metered_stream,
)
from kg_agent.retrieval.base import Evidence
from kg_agent.retrieval.connection import Connection
from kg_agent.synthesis.claude import (
    DEFAULT_SYNTHESIS_MODEL,
    REPAIR_PROMPT,
    SYSTEM_PROMPT,
    build_prompt,
    candidates_block,
    chain_text,
    refuses,
    says_not_in_graph,
    split_short_answer,
    support_note,
)
from kg_agent.synthesis.context import MultiDocSynthesizer, NumberedEvidence
from kg_agent.synthesis.extractive import NOT_IN_GRAPH, format_reading, format_unsure
from kg_agent.synthesis.fewshot import FewShotManager, format_examples

__all__ = [
    "ClaudeSynthesizer",
    "ExtractiveSynthesizer",
    "Synthesis",
    "Synthesizer",
    "claude_prompt",
    "strip_citations",
]

_CITE_MARK = re.compile(r"\s*\[\d{1,3}\]")


def strip_citations(text: str) -> str:
    """``text`` without its ``[n]`` marks (a short answer is shown without them)."""
    return _CITE_MARK.sub("", text).strip()


log = logging.getLogger(__name__)

#: The question's own evidence numbered after a connection's links (to read further).
CONNECTION_EXTRA = 3
#: What connects two articles is many things at once (a war both fought in, a programme
#: both flew in): the one named first is a reading, never *the* answer, so never bold.
CONNECTION_CONFIDENCE = 0.3


@dataclass(slots=True)
class Synthesis:
    """An answer, the numbered evidence its ``[n]`` point into, and how it was made
    (``mode``: ``claude`` or ``extractive``).

    ``short_answer`` is the answer in a few words, when it is sure enough to be shown
    (None otherwise); ``candidate`` the reader's best short answer, shown or not, with its
    ``confidence`` (0..1); ``answerable`` is False when the evidence does not support an
    answer, with ``support`` the evidence check's score behind that (0..1).
    """

    answer: str
    numbered: NumberedEvidence
    mode: str
    warnings: list[str] = field(default_factory=list)
    usage: UsageMeter = field(default_factory=UsageMeter)
    short_answer: str | None = None
    answerable: bool = True
    support: float = 0.0
    candidate: str | None = None
    confidence: float = 0.0
    found_by: str = ""  # how the reader found the candidate ("fact", "span", …)


def claude_prompt(
    question: str | Question,
    evidence: Sequence[Evidence],
    numbering: MultiDocSynthesizer,
    fewshot: FewShotManager | None = None,
    *,
    sentences: SentenceRanker | None = None,
    spans: SpanRanker | None = None,
) -> tuple[NumberedEvidence, str]:
    """The numbered evidence and the prompt Claude is sent for it, with the offline
    reader's evidence check, so Claude is told when the graph likely lacks the answer,
    and the reader's candidate answers (``spans`` chooses among the text's, as offline).

    The check reads the evidence as the prompt shows it (sections cut at the numbering's
    length), and is left out when a bridge round found evidence: bridge passages share few
    words with the question by design, so a lexical check would call the very evidence
    that answers a two-hop question unsupported."""
    text = query_text(question)
    numbered = numbering.number(evidence)
    examples = ""
    if fewshot is not None:
        examples = format_examples(fewshot.select(text, k=2))
    chain = chain_text(numbered.items)
    check = candidates = ""
    if numbered.items and not chain:
        reading = read_evidence(
            question, numbering.shown(numbered.items), sentences=sentences, spans=spans
        )
        check = support_note(reading.support, SUPPORT_THRESHOLD)
        candidates = candidates_block(reading.candidates, reading.confidence)
    return numbered, build_prompt(text, numbered.text, examples, chain, check, candidates)


def _from_reading(reading: OfflineReading, numbered: NumberedEvidence) -> Synthesis:
    return Synthesis(
        format_reading(reading),
        numbered,
        "extractive",
        short_answer=reading.short_answer if reading.shown else None,
        answerable=reading.answerable and bool(reading.sentences),
        support=reading.support,
        candidate=reading.short_answer,
        confidence=reading.confidence,
        found_by=reading.source,
    )


class Synthesizer(abc.ABC):
    """Turns a question and its ranked evidence into a cited answer; never raises for
    a model's failure."""

    #: the order of the sentences shown (None: the committed model's), and the chooser of
    #: a span to answer (None: the hand reader's pick; the agent hands its graph's)
    sentences: SentenceRanker | None = None
    spans: SpanRanker | None = None

    #: How the evidence is numbered for ``[n]`` (known before the answer is written).
    numbering: MultiDocSynthesizer

    @abc.abstractmethod
    def synthesize(
        self,
        question: str | Question,
        evidence: Sequence[Evidence],
        on_text: Callable[[str], None] | None = None,
        *,
        support_threshold: float | None = None,
    ) -> Synthesis:
        """The answer; ``on_text`` gets a model's text as it is written (streaming).
        ``support_threshold``: the share of the question the evidence must hold for the
        offline reader to answer (None: its own, :data:`SUPPORT_THRESHOLD`; 0 when the
        grounding model has already decided that the graph holds the topic)."""

    def refuse(
        self, question: str | Question, evidence: Sequence[Evidence], missing: Sequence[str]
    ) -> Synthesis:
        """ "Not in the graph": what the question names (``missing``) is no article of the
        graph, so no evidence can answer it, whatever a search returned (no model is
        asked); with no name to blame, the closest sections do not answer it. The
        closest evidence is still numbered, for a reader to check."""
        numbered = self.numbering.number(evidence[:3])
        if missing:
            text = (
                f"{NOT_IN_GRAPH}: the graph has no article about {'; '.join(missing)}, so it "
                "cannot answer this question."
            )
        else:  # nothing named to blame: say what was checked
            text = f"{NOT_IN_GRAPH}: the evidence found does not answer this question."
        return Synthesis(text, numbered, "extractive", answerable=False, found_by="grounding")

    def unsure(self, question: str | Question, evidence: Sequence[Evidence]) -> Synthesis:
        """The look-ups find what the question names, but the grounding model doubts the
        graph holds the answer: the sentences the reader chose, labelled, with no short
        answer, and ``answerable`` false (no model is asked)."""
        numbered = self.numbering.number(evidence)
        reading = read_evidence(
            question, numbered.items, threshold=0.0, sentences=self.sentences, spans=self.spans
        )
        return Synthesis(
            format_unsure(reading),
            numbered,
            "extractive",
            answerable=False,
            support=reading.support,
            found_by="grounding",
        )

    def connect(
        self, question: str | Question, connection: Connection, evidence: Sequence[Evidence]
    ) -> Synthesis:
        """ "How is X connected to Y?": the connection in words, one link per line with
        the sentence that makes it, cited (:mod:`kg_agent.retrieval.connection`); no model
        is asked, the graph states it. The question's evidence is numbered after the
        links' sections, for a reader to follow."""
        numbered = self.numbering.number([*connection.evidence, *evidence[:CONNECTION_EXTRA]])
        first: dict[str, int] = {}
        for n, ev in numbered.items:
            first.setdefault(ev.section_id, n)
        text = connection.describe(lambda ev: first[ev.section_id])
        return Synthesis(
            text,
            numbered,
            "graph",
            answerable=bool(connection.links),
            support=1.0 if connection.links else 0.0,
            candidate=connection.through,
            confidence=CONNECTION_CONFIDENCE if connection.through else 0.0,
            found_by="connection",
        )


class ExtractiveSynthesizer(Synthesizer):
    """The short answer and the sentences that answer, read from the evidence
    (:mod:`kg_agent.answering`), or "not in the graph" when the evidence lacks it."""

    def __init__(
        self,
        numbering: MultiDocSynthesizer | None = None,
        *,
        max_words: int = MAX_ANSWER_WORDS,
        sentences: SentenceRanker | None = None,
        spans: SpanRanker | None = None,
    ) -> None:
        self.numbering = numbering or MultiDocSynthesizer()
        self.max_words = max_words
        self.sentences = sentences
        self.spans = spans

    def synthesize(
        self,
        question: str | Question,
        evidence: Sequence[Evidence],
        on_text: Callable[[str], None] | None = None,
        *,
        support_threshold: float | None = None,
    ) -> Synthesis:
        numbered = self.numbering.number(evidence)
        threshold = SUPPORT_THRESHOLD if support_threshold is None else support_threshold
        reading = read_evidence(
            question,
            numbered.items,
            max_words=self.max_words,
            threshold=threshold,
            sentences=self.sentences,
            spans=self.spans,
        )
        return _from_reading(reading, numbered)


class ClaudeSynthesizer(Synthesizer):
    """A cited answer written by ``model``; the extractive one when there is no
    evidence or the call fails."""

    def __init__(
        self,
        llm: LLMClient,
        *,
        model: str = DEFAULT_SYNTHESIS_MODEL,
        timeout: float = 30.0,
        numbering: MultiDocSynthesizer | None = None,
        fewshot: FewShotManager | None = None,
        max_tokens: int = 700,
        answer_words: int = MAX_ANSWER_WORDS,
        sentences: SentenceRanker | None = None,
        spans: SpanRanker | None = None,
    ) -> None:
        self.llm = llm
        self.sentences = sentences
        self.spans = spans
        self.model = model
        self.timeout = timeout
        self.numbering = numbering or MultiDocSynthesizer()
        self.fewshot = fewshot
        self.max_tokens = max_tokens
        self.fallback = ExtractiveSynthesizer(
            self.numbering, max_words=answer_words, sentences=sentences, spans=spans
        )

    def context(
        self, question: str | Question, evidence: Sequence[Evidence]
    ) -> tuple[NumberedEvidence, str]:
        """The numbered evidence and the whole prompt (few-shot examples included)."""
        return claude_prompt(
            question,
            evidence,
            self.numbering,
            self.fewshot,
            sentences=self.sentences,
            spans=self.spans,
        )

    def synthesize(
        self,
        question: str | Question,
        evidence: Sequence[Evidence],
        on_text: Callable[[str], None] | None = None,
        *,
        support_threshold: float | None = None,
    ) -> Synthesis:
        if not evidence:
            return self.fallback.synthesize(question, evidence, support_threshold=support_threshold)
        numbered, prompt = self.context(question, evidence)
        meter = UsageMeter()
        call = dict(
            model=self.model,
            system=SYSTEM_PROMPT,
            prompt=prompt,
            max_tokens=self.max_tokens,
            timeout=self.timeout,
        )
        warnings: list[str] = []
        try:
            reply = (
                metered_complete(self.llm, meter, **call)  # type: ignore[arg-type]
                if on_text is None
                else metered_stream(self.llm, meter, on_text, **call)  # type: ignore[arg-type]
            )
            short, text = self._validated(reply)
            if short is None and not refuses(text):
                # one repair request: the reply quoted, the format asked for again
                again = dict(call, prompt=f"{prompt}\n\n{reply.text.strip()}\n\n{REPAIR_PROMPT}")
                reply = metered_complete(self.llm, meter, **again)  # type: ignore[arg-type]
                short, text = self._validated(reply)
                if short is None and not refuses(text):
                    raise LLMError("bad_response", "no 'Short answer:' line, after one repair")
            text, unknown = numbered.without_unknown_citations(text)
            if unknown:
                marks = ", ".join(f"[{n}]" for n in unknown)
                warnings.append(
                    f"synthesis with {self.model}: removed citations naming no evidence ({marks})"
                )
                log.warning(warnings[-1])
            unanswered = short is None or says_not_in_graph(short)
            reading = read_evidence(question, numbered.items)
            return Synthesis(
                text,
                numbered,
                "claude",
                warnings=warnings,
                usage=meter,
                short_answer=None if unanswered else short,
                answerable=not unanswered,
                support=reading.support,
                candidate=None if unanswered else short,
                confidence=reading.confidence,
            )
        except LLMError as exc:
            exc.located_at(self.llm)  # a reply this class refused: the same server to name
            msg = f"synthesis with {self.model} failed ({exc.brief}): extractive answer"
            log.warning(msg)
        out = self.fallback.synthesize(question, evidence, support_threshold=support_threshold)
        out.warnings.append(msg)
        out.usage = meter
        return out

    def _validated(self, reply: LLMReply) -> tuple[str | None, str]:
        """(short answer, the rest) of a reply that is whole; an empty or cut-off reply
        is a failed answer (a cut-off one may have lost its conclusion or citations)."""
        if reply.cut_off:
            raise LLMError("cut_off", f"the reply stopped at max_tokens ({self.max_tokens})")
        if not reply.text.strip():
            raise LLMError("bad_response", "empty answer")
        return split_short_answer(reply.text)

    def connect(
        self, question: str | Question, connection: Connection, evidence: Sequence[Evidence]
    ) -> Synthesis:
        """The connection's lines, then Claude's account of them, cited alike (the same
        evidence, numbered the same); the lines alone when the call fails."""
        lines = super().connect(question, connection, evidence)
        prose = self.synthesize(question, [*connection.evidence, *evidence[:CONNECTION_EXTRA]])
        if prose.mode != "claude":
            lines.warnings += prose.warnings
            lines.usage = prose.usage
            return lines
        return Synthesis(
            f"{lines.answer}\n\n{prose.answer}",
            lines.numbered,
            "claude",
            usage=prose.usage,
            answerable=lines.answerable,
            support=lines.support,
            candidate=lines.candidate,
            confidence=lines.confidence,
            found_by="connection",
        )
