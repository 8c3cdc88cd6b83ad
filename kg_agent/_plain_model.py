"""A Transformer + mean-Pooling (+ Normalize) sentence-transformers model, run without
importing sentence-transformers.

Why: importing sentence-transformers 6 takes ~3 s (it brings scikit-learn and its
trainer), against ~0.5 s for ``transformers``, and every process that embeds pays it:
a cold ``ask``, ``serve``'s start, an update that embeds a few hundred sections (there
it was a fifth of the update). Such a model (the bundled all-MiniLM-L6-v2 is one) is a
tokenizer, a Hugging Face encoder and a masked mean, and this module runs exactly the
steps sentence-transformers runs for it (``SentenceTransformer.encode``: texts ordered
by length, tokenised with padding and truncation at ``max_seq_length``, the encoder's
last hidden state averaged over the mask in float32, normalised when the model says
so), so the vectors are the same: ``tests/unit/test_plain_model.py`` compares the two
on real text, in float32 and under bf16 autocast. Any other layout (a Dense layer, CLS
pooling, prompts, a lower-casing config) is left to sentence-transformers.

A BERT (the bundled model is one) skips ``transformers`` too: its encoder is
:mod:`kg_agent._bert` and its tokenizer its ``tokenizer.json``, read by the
``tokenizers`` library, with the same ids and the same hidden states; the model is ready
in ~0.2 s after torch instead of ~2.5 s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kg_agent._bert import BertEncoder, bert_config

__all__ = ["PlainLayout", "PlainSentenceModel", "plain_layout"]


@dataclass(frozen=True)
class PlainLayout:
    """What a plain model directory says about itself."""

    max_seq_length: int | None
    normalize: bool


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def plain_layout(root: str | Path) -> PlainLayout | None:
    """The layout of the local model directory ``root`` when it is exactly a Transformer
    at its root, a mean Pooling and optionally a Normalize, with no prompt and no
    lower-casing; else None (and sentence-transformers loads it)."""
    base = Path(root)
    try:
        modules = _read(base / "modules.json")
        kinds = [str(m["type"]).rsplit(".", 1)[-1] for m in modules]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            return None
        if modules[0].get("path", "") != "":
            return None
        pooling = _read(base / modules[1]["path"] / "config.json")
        if isinstance(pooling.get("pooling_mode"), str):  # sentence-transformers 5+ layout
            if pooling["pooling_mode"] != "mean" or pooling.get("include_prompt") is False:
                return None
        else:
            modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True}
            if modes != {"pooling_mode_mean_tokens"} or pooling.get("include_prompt") is False:
                return None
        st_config = base / "sentence_bert_config.json"
        config = _read(st_config) if st_config.exists() else {}
        if config.get("do_lower_case") or set(config) - {"max_seq_length", "do_lower_case"}:
            return None
        extra = base / "config_sentence_transformers.json"
        if extra.exists():
            meta = _read(extra)
            if meta.get("prompts") or meta.get("default_prompt_name"):
                return None
        length = config.get("max_seq_length")
        return PlainLayout(
            max_seq_length=int(length) if length is not None else None,
            normalize=len(kinds) == 3,
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


class PlainSentenceModel(torch.nn.Module):
    """The parts of ``SentenceTransformer`` that :class:`~kg_agent.embedding.Embedder`
    uses: ``tokenizer``, ``max_seq_length``, ``encode``, ``eval``, ``half``, and the
    Linear layers a dynamic quantisation converts."""

    def __init__(self, root: str | Path, layout: PlainLayout, device: str = "cpu") -> None:
        super().__init__()
        config = bert_config(root)
        tokenizer = _word_pieces(root, layout) if config is not None else None
        encoder: torch.nn.Module | None = None
        if config is not None and tokenizer is not None:
            try:  # a BERT without transformers' import (kg_agent/_bert.py)
                encoder = BertEncoder.load(root, config)
            except ValueError:
                encoder = None
        if encoder is None or tokenizer is None:
            from transformers import AutoModel, AutoTokenizer

            kwargs: dict[str, Any] = {"local_files_only": True}
            if layout.max_seq_length is not None:
                kwargs["model_max_length"] = layout.max_seq_length
            tokenizer = AutoTokenizer.from_pretrained(str(root), **kwargs)
            auto = AutoModel.from_pretrained(str(root), local_files_only=True)
            encoder, config = auto, auto.config.to_dict()
        assert config is not None
        self.tokenizer: Any = tokenizer
        self.auto_model = encoder
        self.hidden_size = int(config["hidden_size"])
        limit = config.get("max_position_embeddings")
        if limit is not None and self.tokenizer.model_max_length > limit:
            self.tokenizer.model_max_length = limit
        self.normalize = layout.normalize
        self.to(device)
        self.eval()

    def get_embedding_dimension(self) -> int:
        return self.hidden_size

    @property
    def max_seq_length(self) -> int:
        return int(self.tokenizer.model_max_length)

    @max_seq_length.setter
    def max_seq_length(self, value: int) -> None:
        self.tokenizer.model_max_length = value

    def encode(
        self,
        sentences: list[str],
        *,
        batch_size: int = 32,
        show_progress_bar: bool = False,
        convert_to_tensor: bool = True,
        normalize_embeddings: bool = False,
    ) -> Any:
        """Vectors of ``sentences`` as a tensor, in input order (see the module doc)."""
        del show_progress_bar, convert_to_tensor  # always a tensor, never a bar
        device = next(self.parameters()).device
        order = np.argsort([-len(s) for s in sentences])
        ordered = [sentences[i] for i in order]
        out: list[Any] = []
        for start in range(0, len(ordered), batch_size):
            batch = ordered[start : start + batch_size]
            features = self.tokenizer(
                batch, padding=True, truncation="longest_first", return_tensors="pt"
            )
            features = {k: v.to(device) for k, v in features.items()}
            hidden = self._hidden(features)
            mask = features["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            acc = torch.float32 if hidden.dtype in (torch.float16, torch.bfloat16) else hidden.dtype
            total = (hidden * mask).sum(dim=1, dtype=acc)
            count = torch.clamp(mask.sum(dim=1, dtype=acc), min=1e-9)
            emb = (total / count).to(hidden.dtype)
            if self.normalize:
                emb = torch.nn.functional.normalize(emb, p=2, dim=-1)
            if normalize_embeddings:
                emb = torch.nn.functional.normalize(emb, p=2, dim=1)
            out.extend(emb)
        back = [out[i] for i in np.argsort(order)]
        return torch.stack(back) if back else torch.zeros(0)

    def _hidden(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        hidden: torch.Tensor
        if isinstance(self.auto_model, BertEncoder):
            ids, mask = features["input_ids"], features["attention_mask"]
            hidden = self.auto_model(ids, mask, features["token_type_ids"])
        else:
            hidden = self.auto_model(**features, return_dict=True).last_hidden_state
        return hidden


class _WordPieces:
    """A model's fast tokenizer read straight from its ``tokenizer.json`` with the
    ``tokenizers`` library, called as ``transformers`` calls it for a BERT (padding to
    the longest of a batch, truncation at ``model_max_length``): the same ids, without
    importing ``transformers`` (``tests/unit/test_plain_model.py``)."""

    def __init__(self, tokenizer: Any, max_length: int, pad: tuple[int, str]) -> None:
        self._tokenizer = tokenizer
        self.model_max_length = max_length
        self._pad = pad

    def __call__(
        self,
        texts: list[str],
        *,
        padding: bool = False,
        truncation: bool | str = False,
        max_length: int | None = None,
        return_tensors: str | None = None,
        add_special_tokens: bool = True,
        return_attention_mask: bool = True,
        return_token_type_ids: bool = True,
    ) -> dict[str, Any]:
        tok = self._tokenizer
        if truncation:
            tok.enable_truncation(max_length=max_length or self.model_max_length)
        else:
            tok.no_truncation()
        if padding:
            tok.enable_padding(pad_id=self._pad[0], pad_token=self._pad[1])
        else:
            tok.no_padding()
        encoded = tok.encode_batch(list(texts), add_special_tokens=add_special_tokens)
        out: dict[str, Any] = {"input_ids": [e.ids for e in encoded]}
        if return_token_type_ids:
            out["token_type_ids"] = [e.type_ids for e in encoded]
        if return_attention_mask:
            out["attention_mask"] = [e.attention_mask for e in encoded]
        if return_tensors == "pt":
            out = {k: torch.tensor(v, dtype=torch.long) for k, v in out.items()}
        return out


#: the tokenizer classes whose ``tokenizer.json`` is the whole tokenizer
_BERT_TOKENIZERS = frozenset([None, "BertTokenizer", "BertTokenizerFast"])


def _word_pieces(root: str | Path, layout: PlainLayout) -> _WordPieces | None:
    """The model's tokenizer without ``transformers``, when its ``tokenizer.json`` is
    a BERT's whole tokenizer (padded on the right); else None."""
    base = Path(root)
    try:
        from tokenizers import Tokenizer

        config = _read(base / "tokenizer_config.json")
        if config.get("tokenizer_class") not in _BERT_TOKENIZERS:
            return None
        if config.get("padding_side", "right") != "right":
            return None
        tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
        pad_token = str(config.get("pad_token") or "[PAD]")
        pad_id = tokenizer.token_to_id(pad_token)
        if pad_id is None:
            return None
    except Exception:  # no file, one tokenizers cannot read: transformers reads it
        return None
    length = layout.max_seq_length or int(config.get("model_max_length") or 512)
    return _WordPieces(tokenizer, length, (pad_id, pad_token))
