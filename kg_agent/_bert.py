"""A BERT encoder in plain torch, for the plain sentence models (:mod:`kg_agent._plain_model`).

Why: importing ``transformers`` to build a BERT costs ~2 s a process (its modelling
utilities bring ``torch._dynamo`` and its kernel hub), against ~0.2 s to read the
weights: every process that embeds paid it (a cold ``ask``, ``serve``'s start, an
update's model process, each Ray actor). The encoder here runs the operations
``transformers`` 5's ``BertModel`` runs in inference, in the same order (embeddings
summed word + token type, then position; layer norms; scaled-dot-product attention with
no mask when nothing is padded, a boolean one otherwise; exact GELU), so its hidden
states are the same bit for bit, in float32, under bf16 autocast and dynamically
quantised (``tests/unit/test_plain_model.py``). A model this does not describe (another
architecture, relative positions, another activation, weights not in safetensors) is
left to ``transformers``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["BertEncoder", "bert_config"]

#: weights of a checkpoint that the encoder has no use for
_UNUSED = ("embeddings.position_ids", "pooler.")
#: a layer's weights in the checkpoint → in :class:`_Layer`
_LAYER_PARTS = {
    "attention.self.query": "query",
    "attention.self.key": "key",
    "attention.self.value": "value",
    "attention.output.dense": "attention_out",
    "attention.output.LayerNorm": "attention_norm",
    "intermediate.dense": "intermediate",
    "output.dense": "out",
    "output.LayerNorm": "out_norm",
}
_EMBEDDINGS = {
    "embeddings.word_embeddings": "word",
    "embeddings.position_embeddings": "position",
    "embeddings.token_type_embeddings": "token_type",
    "embeddings.LayerNorm": "norm",
}


def bert_config(root: str | Path) -> dict[str, Any] | None:
    """The config of the BERT at ``root`` when this encoder runs it exactly; else None."""
    base = Path(root)
    try:
        config = json.loads((base / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    plain = (
        config.get("model_type") == "bert"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and config.get("hidden_act") == "gelu"
        and not config.get("is_decoder")
        and not config.get("add_cross_attention")
        and (base / "model.safetensors").is_file()
    )
    return config if plain else None


class _Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, intermediate: int, eps: float) -> None:
        super().__init__()
        self.head_size = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attention_out = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=eps)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.out = nn.Linear(intermediate, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        heads = (*x.shape[:-1], -1, self.head_size)
        q = self.query(x).view(*heads).transpose(1, 2)
        k = self.key(x).view(*heads).transpose(1, 2)
        v = self.value(x).view(*heads).transpose(1, 2)
        scale = self.head_size**-0.5
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0, scale=scale)
        a = a.transpose(1, 2).contiguous().reshape(*x.shape[:-1], -1).contiguous()
        a = self.attention_norm(self.attention_out(a) + x)
        out: torch.Tensor = self.out_norm(self.out(F.gelu(self.intermediate(a))) + a)
        return out


class BertEncoder(nn.Module):
    """A BERT's last hidden state, from the weights of a ``transformers`` checkpoint."""

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__()
        hidden, eps = int(config["hidden_size"]), float(config["layer_norm_eps"])
        self.hidden_size = hidden
        self.word = nn.Embedding(config["vocab_size"], hidden, config.get("pad_token_id", 0))
        self.position = nn.Embedding(config["max_position_embeddings"], hidden)
        self.token_type = nn.Embedding(config["type_vocab_size"], hidden)
        self.norm = nn.LayerNorm(hidden, eps=eps)
        self.layers = nn.ModuleList(
            _Layer(hidden, config["num_attention_heads"], config["intermediate_size"], eps)
            for _ in range(config["num_hidden_layers"])
        )

    @classmethod
    def load(cls, root: str | Path, config: dict[str, Any]) -> BertEncoder:
        """The encoder with the checkpoint's weights; ValueError when a weight is missing
        or one is left over (a layout this encoder does not run)."""
        from safetensors.torch import load_file

        encoder = cls(config)
        weights: dict[str, torch.Tensor] = {}
        for name, tensor in load_file(str(Path(root) / "model.safetensors")).items():
            name = name.removeprefix("bert.")
            if name.startswith(_UNUSED):
                continue
            weights[_own_name(name)] = tensor
        missing, unexpected = encoder.load_state_dict(weights, strict=False)
        if missing or unexpected:
            raise ValueError(f"weights not of a plain BERT: {(missing + unexpected)[:3]}")
        return encoder

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        n = input_ids.shape[1]
        positions = torch.arange(n, device=input_ids.device).unsqueeze(0)
        x: torch.Tensor = self.word(input_ids) + self.token_type(token_type_ids)
        x = self.norm(x + self.position(positions))
        mask = None
        if not bool(attention_mask.all()):  # transformers passes none when nothing is padded
            keep = attention_mask.bool()
            mask = keep[:, None, None, :].expand(keep.shape[0], 1, n, n)
        for layer in self.layers:
            x = layer(x, mask)
        return x


def _own_name(name: str) -> str:
    """A checkpoint's weight name as this encoder's (unknown names are kept, and refused)."""
    module, _, leaf = name.rpartition(".")
    if module in _EMBEDDINGS:
        return f"{_EMBEDDINGS[module]}.{leaf}"
    if module.startswith("encoder.layer."):
        index, _, part = module.removeprefix("encoder.layer.").partition(".")
        if part in _LAYER_PARTS:
            return f"layers.{index}.{_LAYER_PARTS[part]}.{leaf}"
    return name
