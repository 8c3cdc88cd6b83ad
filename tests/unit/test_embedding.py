"""Embedder on the real shipped all-MiniLM-L6-v2 (offline: HF_HUB_OFFLINE=1)."""

from __future__ import annotations

import os
import random

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest

from kg_agent.embedding import (
    DEFAULT_MODEL_NAME,
    Embedder,
    EmbeddingConfig,
    cpu_has_native_bf16,
)
from kg_agent.exceptions import InvalidArgumentError

TEXTS = [
    "Paris is the capital and largest city of France.",
    "The cat sat on the mat and purred.",
    "Teutberga (died 11 November 875) was a queen of Lotharingia by marriage to Lothair II. "
    "She was a daughter of Bosonid Boso the Elder and sister of Hucbert, the lay-abbot of "
    "St. Maurice's Abbey.",
    "Kùzu is an embedded graph database.",
    "x",
    "A much longer passage about rivers: " + "the river flows through the valley. " * 40,
    "Berlin is the capital of Germany.",
    "Photosynthesis converts light energy into chemical energy in plants.",
    "",
    "Another medium-length sentence, about the history of the printing press in Europe.",
]


def _tolerance(embedder: Embedder) -> float:
    """Largest per-component difference that batch composition may cause.

    fp32: padding only changes rounding (1e-5). Under bf16 autocast the matrix
    products round to 8 bits of mantissa and the blocking depends on the batch shape:
    measured up to 1.5e-3 here, so 5e-3.
    """
    return 5e-3 if embedder.uses_bf16 else 1e-5


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    """What ``precision="auto"`` runs without ``KG_AGENT_PRECISION`` (the suite sets it
    to float32): bf16 autocast on a CPU with native bf16, else float32."""
    emb = Embedder(batch_size=4, precision="bfloat16" if cpu_has_native_bf16() else "float32")
    emb.load()
    return emb


@pytest.fixture(scope="module")
def fp32_embedder() -> Embedder:
    emb = Embedder(batch_size=4, precision="float32")
    emb.load()
    return emb


def test_construction_is_cheap() -> None:
    emb = Embedder()
    assert not emb.is_loaded
    assert emb.name == DEFAULT_MODEL_NAME
    assert emb.dimension == 384  # read from the model's files
    assert not emb.is_loaded
    assert "loaded=False" in repr(emb)


def test_default_model_aliases_keep_the_stored_name() -> None:
    for alias in (DEFAULT_MODEL_NAME, "all-MiniLM-L6-v2"):
        emb = Embedder(alias)
        assert emb.name == DEFAULT_MODEL_NAME
        assert emb.dimension == 384
        assert not emb.is_loaded


def test_other_model_names_are_kept() -> None:
    emb = Embedder("some-org/some-model")
    assert emb.name == "some-org/some-model"
    assert not emb.is_loaded


def test_shape_dtype_and_norm(embedder: Embedder) -> None:
    vecs = embedder.embed(TEXTS)
    assert embedder.is_loaded
    assert vecs.shape == (len(TEXTS), 384)
    assert vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert np.isfinite(vecs).all()


def test_embed_query_is_one_dimensional(embedder: Embedder) -> None:
    q = embedder.embed_query("What is the capital of France?")
    assert q.shape == (384,)
    assert q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5


def test_empty_input(embedder: Embedder) -> None:
    out = embedder.embed([])
    assert out.shape == (0, 384)
    assert out.dtype == np.float32


@pytest.mark.parametrize("which", ["default", "fp32"])
def test_order_is_preserved_under_bucketing(
    which: str, embedder: Embedder, fp32_embedder: Embedder
) -> None:
    emb = embedder if which == "default" else fp32_embedder
    shuffled = TEXTS[:]
    random.Random(7).shuffle(shuffled)
    batched = emb.embed(shuffled)
    single = np.stack([emb.embed_query(t) for t in shuffled])
    assert np.abs(batched - single).max() <= _tolerance(emb)
    # a swapped row would be a different text: cosine far below 1
    assert (batched * single).sum(axis=1).min() > 0.999


def test_default_agrees_with_fp32(embedder: Embedder, fp32_embedder: Embedder) -> None:
    cos = (embedder.embed(TEXTS) * fp32_embedder.embed(TEXTS)).sum(axis=1)
    assert cos.min() > 0.999


def test_semantic_sanity(embedder: Embedder) -> None:
    q = embedder.embed_query("What is the capital of France?")
    paris, cat = embedder.embed(["Paris is the capital of France.", "The cat sat on the mat."])
    assert float(q @ paris) > float(q @ cat) + 0.2


def test_progress_reports_texts_done(embedder: Embedder) -> None:
    seen: list[int] = []
    embedder.embed(TEXTS, progress=seen.append)
    assert seen == [4, 8, 10]


def test_token_budget_shrinks_batches_of_long_texts(fp32_embedder: Embedder) -> None:
    emb = fp32_embedder
    saved = emb.batch_size, emb.max_batch_tokens
    try:
        emb.batch_size, emb.max_batch_tokens = 64, 256
        seen: list[int] = []
        budgeted = emb.embed(TEXTS, progress=seen.append)
        emb.max_batch_tokens = None
        whole = emb.embed(TEXTS)
    finally:
        emb.batch_size, emb.max_batch_tokens = saved
    assert seen[0] == 1  # the 256-token passage fills a batch alone
    assert seen[-1] == len(TEXTS) and len(seen) > 1
    assert np.abs(budgeted - whole).max() <= 1e-5


def test_a_gpu_batch_holds_the_texts_asked_for(fp32_embedder: Embedder) -> None:
    """On a GPU an explicit batch size is the batch (texts of up to 256 word pieces):
    the CPU's token cap cut 1,024 sections to ~37, and fp16 ran 5.6x slower."""
    texts = [f"Section {i} of a long article. " * 12 for i in range(1100)]  # ~100 pieces
    model = fp32_embedder.load()  # only its tokenizer plans batches
    gpu = Embedder(device="cuda", batch_size=1024)  # built without touching CUDA
    assert gpu.max_batch_tokens == 1024 * 256
    assert [len(b) for b in gpu._batches(model, texts)] == [1024, 76]
    assert Embedder(device="cuda").max_batch_tokens == 256 * 256  # the GPU default
    assert Embedder(device="cuda", batch_size=64, max_batch_tokens=512).max_batch_tokens == 512
    cpu = Embedder(batch_size=1024)  # a CPU keeps its cap: long batches are slow there
    assert cpu.max_batch_tokens == 4096
    assert len(next(iter(cpu._batches(model, texts)))) < 64


def test_auto_is_the_cpu_without_importing_torch_where_no_gpu_driver_is() -> None:
    """``load`` and ``update`` resolve ``--device auto`` even with nothing to embed:
    importing torch for it cost ~2 s a command on a machine that has no GPU."""
    import subprocess
    import sys

    from kg_agent.embedding import _GPU_DRIVER_FILES

    if not sys.platform.startswith("linux") or any(os.path.exists(p) for p in _GPU_DRIVER_FILES):
        pytest.skip("a GPU driver is here: auto asks torch")
    code = (
        "import sys; from kg_agent.embedding import pick_device; "
        "print(pick_device('auto'), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["cpu", "False"]


def test_auto_with_a_gpu_driver_is_resolved_where_the_model_loads() -> None:
    """On a machine with a GPU driver, ``--device auto`` is left unresolved by the
    command (an update's process hands it to the model's own process, which resolves
    it): torch is imported only when something asks for the device, here the batch size."""
    import subprocess
    import sys

    code = (
        "import sys, kg_agent.embedding as e\n"
        "e.may_have_gpu = lambda: True  # as on a machine with a GPU driver\n"
        "from kg_agent.cli.common import make_embedder\n"
        "emb = make_embedder(None, None, 'auto')\n"
        "print(emb.device_setting, 'torch' in sys.modules, emb.dimension)\n"
        "size = emb.batch_size\n"
        "print(emb.device, 'torch' in sys.modules, size == (256 if emb.device != 'cpu' else 16))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, second = out.stdout.splitlines()
    assert first.split() == ["auto", "False", "384"]
    device, imported, sized = second.split()
    assert device in ("cpu", "cuda", "mps") and imported == "True" and sized == "True"


def test_auto_without_a_gpu_refuses_float16_when_resolved() -> None:
    from kg_agent.embedding import may_have_gpu

    if may_have_gpu():
        pytest.skip("a GPU driver is here: auto may find a GPU")
    emb = Embedder(device="auto", precision="float16")  # nothing resolved yet
    with pytest.raises(InvalidArgumentError, match="float16"):
        _ = emb.device


def test_bad_model_path_raises_one_line_error(tmp_path: object) -> None:
    emb = Embedder(str(tmp_path) + "/no-such-model")
    assert not emb.is_loaded
    with pytest.raises(InvalidArgumentError) as info:
        emb.embed(["hello"])
    message = str(info.value)
    assert "\n" not in message
    assert "no-such-model" in message
    assert len(message) < 400


def test_unknown_hub_name_offline_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InvalidArgumentError) as info:
        Embedder("kg-agent-tests/no-such-model-anywhere").load()
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 0},
        {"max_seq_length": -1},
        {"threads": 0},
        {"max_batch_tokens": 0},
        {"precision": "fp8"},
    ],
)
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidArgumentError):
        Embedder(**kwargs)  # type: ignore[arg-type]


def test_bad_inputs(embedder: Embedder) -> None:
    with pytest.raises(InvalidArgumentError):
        embedder.embed("a single string")
    with pytest.raises(InvalidArgumentError):
        embedder.embed(["ok", 3])  # type: ignore[list-item]


def test_max_seq_length_and_config() -> None:
    emb = EmbeddingConfig(batch_size=8, max_seq_length=128, precision="float32").build()
    assert (emb.batch_size, emb.max_seq_length, emb.uses_bf16) == (8, 128, False)
    assert not emb.is_loaded
    assert emb.load().max_seq_length == 128


def test_precision_env_decides_what_auto_means(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_AGENT_PRECISION", "float32")
    assert Embedder().precision == "float32" and not Embedder().uses_bf16
    assert Embedder(precision="bfloat16").uses_bf16  # an explicit precision wins
    monkeypatch.setenv("KG_AGENT_PRECISION", "BFloat16")
    assert Embedder().uses_bf16
    assert Embedder().config.build().uses_bf16  # handed on to workers as it is
    monkeypatch.setenv("KG_AGENT_PRECISION", "fp8")
    with pytest.raises(InvalidArgumentError, match="KG_AGENT_PRECISION"):
        Embedder()
    monkeypatch.delenv("KG_AGENT_PRECISION")
    assert Embedder().precision == "auto"
    assert Embedder().uses_bf16 is cpu_has_native_bf16()
