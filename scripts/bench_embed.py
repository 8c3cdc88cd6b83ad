#!/usr/bin/env python
"""Embedding speed against retrieval quality, on the 2WikiMultihopQA corpus.

For each setting, in a fresh process (so peak RSS and torch's thread settings are
its own), embed the passages and the 300 dev questions, then report throughput,
model load time, peak RSS, dense-retrieval Recall@2/@5 (share of gold titles among
the top-k titles by exact cosine) and the cosine between each passage vector and
the fp32 reference (``baseline``: plain ``SentenceTransformer.encode``).

    .venv/bin/python scripts/bench_embed.py --limit 2000
    .venv/bin/python scripts/bench_embed.py --settings baseline,bucket,bf16 --json out.json
    .venv/bin/python scripts/bench_embed.py --stage --json out.json   # kg-agent embed:
        # CPU 1/2 threads, local Ray 1/2 workers, CUDA batch sizes and fp16/fp32 on a GPU

Data: ``../shared/data/multihop/2wikimultihopqa/{corpus,questions.dev}.json``
relative to the project root (``--data`` overrides). Never touches a model hub.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "multihop" / "2wikimultihopqa"
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

# name -> (what it does, Embedder keyword arguments, special handling)
SETTINGS: dict[str, tuple[str, dict[str, Any], str]] = {
    "baseline": (
        "SentenceTransformer.encode(all, batch_size=64), fp32 (its own char sort)",
        {},
        "st-encode",
    ),
    "naive": ("input order, encode() per batch of 64, fp32", {"precision": "float32"}, "unsorted"),
    "bucket": ("token-length buckets, b64, fp32", {"precision": "float32"}, ""),
    "bucket-chars": ("char-length buckets, b64, fp32", {"precision": "float32"}, "chars"),
    "bucket-b8": ("token buckets, b8, fp32", {"precision": "float32", "batch_size": 8}, ""),
    "bucket-b16": ("token buckets, b16, fp32", {"precision": "float32", "batch_size": 16}, ""),
    "bucket-b32": ("token buckets, b32, fp32", {"precision": "float32", "batch_size": 32}, ""),
    "bucket-b128": ("token buckets, b128, fp32", {"precision": "float32", "batch_size": 128}, ""),
    "bucket-seq128": (
        "token buckets, b64, fp32, max_seq_length 128",
        {"precision": "float32", "max_seq_length": 128},
        "",
    ),
    "bucket-t1": (
        "token buckets, b64, fp32, 1 intra-op thread",
        {"precision": "float32", "threads": 1},
        "",
    ),
    "bucket-interop1": (
        "token buckets, b64, fp32, 1 inter-op thread",
        {"precision": "float32"},
        "interop1",
    ),
    "bucket-nograd": (
        "token buckets, b64, fp32, torch.no_grad instead of inference_mode",
        {"precision": "float32"},
        "nograd",
    ),
    "bf16": ("token buckets, b64, bf16 autocast", {"precision": "bfloat16"}, ""),
    "bf16-b8": ("token buckets, b8, bf16 autocast", {"precision": "bfloat16", "batch_size": 8}, ""),
    "bf16-b16": (
        "token buckets, b16, bf16 autocast",
        {"precision": "bfloat16", "batch_size": 16},
        "",
    ),
    "bf16-b32": (
        "token buckets, b32, bf16 autocast",
        {"precision": "bfloat16", "batch_size": 32},
        "",
    ),
    "bf16-b128": (
        "token buckets, b128, bf16 autocast",
        {"precision": "bfloat16", "batch_size": 128},
        "",
    ),
    "bucket-tok2048": (
        "token buckets, <=128 texts and <=2048 padded tokens a batch, fp32",
        {"precision": "float32", "batch_size": 128, "max_batch_tokens": 2048},
        "",
    ),
    "bf16-tok1024": (
        "token buckets, <=128 texts and <=1024 padded tokens a batch, bf16",
        {"precision": "bfloat16", "batch_size": 128, "max_batch_tokens": 1024},
        "",
    ),
    "bf16-tok2048": (
        "token buckets, <=128 texts and <=2048 padded tokens a batch, bf16",
        {"precision": "bfloat16", "batch_size": 128, "max_batch_tokens": 2048},
        "",
    ),
    "bf16-tok4096": (
        "token buckets, <=128 texts and <=4096 padded tokens a batch, bf16",
        {"precision": "bfloat16", "batch_size": 128, "max_batch_tokens": 4096},
        "",
    ),
    "bf16-seq128": (
        "token buckets, b64, bf16 autocast, max_seq_length 128",
        {"precision": "bfloat16", "max_seq_length": 128},
        "",
    ),
    "bf16-weights": (
        "token buckets, b64, model cast to bf16 (weights and activations)",
        {"precision": "float32"},
        "bf16-weights",
    ),
    "int8": (
        "token buckets, b64, dynamic int8 Linear (per-tensor weights)",
        {"quantize": True},
        "",
    ),
    "int8-pc": (
        "token buckets, b64, dynamic int8 Linear (per-channel weights)",
        {"quantize": True},
        "per-channel",
    ),
    "default": ("Embedder() as shipped", {}, ""),
    # ONNX Runtime (needs `pip install onnxruntime onnx`; not a project dependency):
    # torch.onnx export of the shipped weights, offline, then BERT fusion.
    "onnx": (
        "ONNX Runtime, fused BERT graph, fp32, token buckets, b64",
        {"precision": "float32"},
        "onnx",
    ),
    "onnx-int8": (
        "ONNX Runtime, fused graph, dynamic int8 (per-channel)",
        {"precision": "float32"},
        "onnx-int8",
    ),
}
# Settings whose vectors equal another's up to rounding (same maths, other schedule):
# timed on the sample only unless --quality all.
TIMING_ONLY = {
    "naive",
    "bucket-chars",
    "bucket-b8",
    "bucket-b16",
    "bucket-b32",
    "bucket-b128",
    "bucket-t1",
    "bucket-interop1",
    "bucket-nograd",
    "bucket-tok2048",
    "bf16-b8",
    "bf16-b16",
    "bf16-b32",
    "bf16-b128",
    "bf16-tok1024",
    "bf16-tok2048",
    "bf16-tok4096",
}
SWEEP = [s for s in SETTINGS if s != "default" and not s.startswith("onnx")]


# -- worker: one setting, one process -------------------------------------------------


def _make_embedder(setting: str) -> Any:
    import torch

    from kg_agent.embedding import Embedder

    _, kwargs, special = SETTINGS[setting]
    if setting != "default":  # batch by count alone unless the setting says otherwise
        kwargs = {"max_batch_tokens": None, **kwargs}
    if special == "interop1":
        torch.set_num_interop_threads(1)

    class Bench(Embedder):
        def _load(self) -> Any:
            model = super()._load()
            if special == "bf16-weights":
                model.to(torch.bfloat16)
            return model

        @staticmethod
        def _quantized(model: Any) -> Any:
            if special != "per-channel":
                return Embedder._quantized(model)
            from torch.ao.quantization import per_channel_dynamic_qconfig
            from torch.ao.quantization import quantize_dynamic as qd

            quantize_dynamic: Any = qd  # untyped

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return quantize_dynamic(model, {torch.nn.Linear: per_channel_dynamic_qconfig})

        def _context(self) -> Any:
            if special == "nograd":
                return torch.no_grad()
            return super()._context()

        def _encode_batch(self, model: Any, batch: list[str]) -> Any:
            if special != "nograd":
                return super()._encode_batch(model, batch)
            # encode() is decorated with inference_mode: run the modules by hand
            features = model.tokenize(batch)
            emb = model(features)["sentence_embedding"]
            emb = torch.nn.functional.normalize(emb.float(), p=2, dim=1)
            return emb.numpy()

    if special.startswith("onnx"):
        return _onnx_embedder(special, kwargs)
    emb = Bench(**kwargs)
    if special in ("st-encode", "nograd"):
        # sentence-transformers' own encode() and modules: not the plain loader's model
        emb._plain = False
    if special == "unsorted":
        emb._sort_by = "none"
    elif special == "chars":
        emb._sort_by = "chars"
    return emb


def _onnx_embedder(special: str, kwargs: dict[str, Any]) -> Any:
    """An Embedder whose batches run through ONNX Runtime (bench only)."""
    import torch

    from kg_agent.embedding import Embedder

    try:
        import onnxruntime as ort  # type: ignore[import-not-found]
    except ImportError:
        sys.exit("onnx settings need onnxruntime and onnx (pip install onnxruntime onnx)")

    workdir = Path(tempfile.mkdtemp(prefix="bench_onnx_"))

    class OnnxBench(Embedder):
        session: Any = None

        def _load(self) -> Any:
            model = super()._load()
            bert: Any = model[0].auto_model
            bert.eval()
            bert.config._attn_implementation = "eager"  # traceable attention
            enc = model.tokenizer(
                ["hello world", "a longer sentence for tracing"], padding=True, return_tensors="pt"
            )
            names = ["input_ids", "attention_mask", "token_type_ids"]

            class Wrap(torch.nn.Module):
                def __init__(self, inner: Any) -> None:
                    super().__init__()
                    self.inner = inner

                def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                    return self.inner(
                        input_ids=input_ids,
                        attention_mask=attention_mask,
                        token_type_ids=token_type_ids,
                    ).last_hidden_state

            raw = workdir / "model.onnx"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(
                    Wrap(bert),
                    tuple(enc[n] for n in names),
                    str(raw),
                    input_names=names,
                    output_names=["hidden"],
                    opset_version=17,
                    dynamo=False,
                    dynamic_axes={n: {0: "b", 1: "s"} for n in [*names, "hidden"]},
                )
            path = raw
            try:
                from onnxruntime.transformers import optimizer  # type: ignore[import-not-found]

                cfg = bert.config
                opt = optimizer.optimize_model(
                    str(raw),
                    model_type="bert",
                    num_heads=cfg.num_attention_heads,
                    hidden_size=cfg.hidden_size,
                )
                path = workdir / "model.opt.onnx"
                opt.save_model_to_file(str(path))
            except Exception as exc:
                print(f"bert fusion skipped: {exc}", file=sys.stderr)
            if special == "onnx-int8":
                import onnx  # type: ignore[import-not-found]
                from onnxruntime.quantization import (  # type: ignore[import-not-found]
                    QuantType,
                    quantize_dynamic,
                )

                qpath = workdir / "model.int8.onnx"
                quantize_dynamic(
                    str(path),
                    str(qpath),
                    weight_type=QuantType.QInt8,
                    per_channel=True,
                    extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
                )
                path = qpath
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = self.threads or os.cpu_count() or 1
            self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
            self.input_names = {i.name for i in self.session.get_inputs()}
            return model

        def _context(self) -> Any:
            import contextlib

            return contextlib.nullcontext()

        def _encode_batch(self, model: Any, batch: list[str]) -> Any:
            enc = model.tokenizer(
                batch,
                padding=True,
                truncation=True,
                max_length=model.max_seq_length,
                return_tensors="np",
            )
            feeds = {k: v.astype(np.int64) for k, v in enc.items() if k in self.input_names}
            hidden = self.session.run(None, feeds)[0]
            mask = enc["attention_mask"][..., None].astype(np.float32)
            vec = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            vec /= np.linalg.norm(vec, axis=1, keepdims=True)
            return vec.astype(np.float32)

    onnx = OnnxBench(**kwargs)
    onnx._plain = False  # the ONNX export reads sentence-transformers' modules
    return onnx


def _worker(args: argparse.Namespace) -> None:
    setting = args.worker
    passages, questions = _load_data(args.data, args.limit, args.text_format)
    _, _, special = SETTINGS[setting]
    embedder = _make_embedder(setting)
    if args.threads:
        embedder.threads = args.threads  # applied when the model loads
    t0 = time.perf_counter()
    model = embedder.load()
    load_s = time.perf_counter() - t0

    if special == "st-encode":

        def embed(texts: list[str]) -> Any:
            return model.encode(
                texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False
            ).astype(np.float32)
    else:
        embed = embedder.embed

    def timed(texts: list[str]) -> tuple[Any, dict[str, float]]:
        busy0, own0 = _busy_cpu_s(), _own_cpu_s()
        t0 = time.perf_counter()
        vecs = embed(texts)
        wall = time.perf_counter() - t0
        own = _own_cpu_s() - own0
        others = max(0.0, (_busy_cpu_s() - busy0 - own) / wall)
        return vecs, {"s": wall, "cpu_s": own, "other_cores": others}

    embed(passages[:8])  # warm-up: first-call allocations
    sample = _sample(len(passages), args.sample)
    svecs, stime = timed([passages[i] for i in sample])
    np.save(args.out + ".s.npy", np.asarray(svecs, dtype=np.float32))
    result: dict[str, Any] = {"setting": setting, "load_s": load_s, "sample": stime}
    if args.full:
        vecs, full = timed(passages)
        result["full"] = full
        np.save(args.out + ".p.npy", np.asarray(vecs, dtype=np.float32))
        qvecs = embed([q["question"] for q in questions])
        np.save(args.out + ".q.npy", np.asarray(qvecs, dtype=np.float32).reshape(-1, vecs.shape[1]))
    import torch

    result.update(
        peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        bf16=bool(getattr(embedder, "uses_bf16", False)) and special != "st-encode",
        threads=torch.get_num_threads(),
        interop_threads=torch.get_num_interop_threads(),
    )
    Path(args.out + ".json").write_text(json.dumps(result))


def _sample(n: int, k: int) -> list[int]:
    """A fixed random subset of ``range(n)`` (same for every setting), in corpus order."""
    rng = np.random.default_rng(0)
    return sorted(rng.choice(n, size=min(k, n), replace=False).tolist())


def _busy_cpu_s() -> float:
    """CPU seconds all cores have spent busy since boot (Linux; 0 elsewhere)."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
    except OSError:
        return 0.0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _own_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def _wait_idle(max_wait: float, threshold: float = 0.3) -> float:
    """Wait (up to ``max_wait`` s) until other processes use under ``threshold`` cores."""
    deadline = time.monotonic() + max_wait
    while True:
        b0, t0 = _busy_cpu_s(), time.monotonic()
        time.sleep(2.0)
        load = (_busy_cpu_s() - b0) / (time.monotonic() - t0)
        if load < threshold or time.monotonic() > deadline:
            return load
        print(f"# machine busy ({load:.1f} cores used by others), waiting", flush=True)
        time.sleep(10.0)


# -- parent --------------------------------------------------------------------------


def _load_data(
    data: Path, limit: int | None, text_format: str
) -> tuple[list[str], list[dict[str, Any]]]:
    corpus_path, questions_path = data / "corpus.json", data / "questions.dev.json"
    for p in (corpus_path, questions_path):
        if not p.is_file():
            sys.exit(f"bench_embed: {p} not found (expects 2WikiMultihopQA under --data {data})")
    corpus = json.loads(corpus_path.read_text(encoding="utf-8"))
    questions = json.loads(questions_path.read_text(encoding="utf-8"))
    if limit is not None:
        corpus = corpus[:limit]
    titles = {d["title"] for d in corpus}
    questions = [q for q in questions if set(q["supporting_facts"]) <= titles]
    if text_format == "title":
        passages = [f"{d['title']}: {d['text']}" for d in corpus]
    else:
        passages = [d["text"] for d in corpus]
    return passages, questions


def recall_at(
    pvecs: np.ndarray,
    qvecs: np.ndarray,
    titles: list[str],
    gold: list[list[str]],
    ks: tuple[int, ...] = (2, 5),
) -> dict[int, float]:
    """Mean share of gold titles among the top-k distinct titles (exact cosine)."""
    if not gold:
        return {k: float("nan") for k in ks}
    scores = qvecs @ pvecs.T
    top = np.argsort(-scores, axis=1, kind="stable")[:, : max(ks) * 4]
    out = {k: 0.0 for k in ks}
    for row, g in zip(top, gold, strict=True):
        ranked: list[str] = []
        for i in row:
            if titles[i] not in ranked:
                ranked.append(titles[i])
            if len(ranked) == max(ks):
                break
        gs = set(g)
        for k in ks:
            out[k] += len(gs & set(ranked[:k])) / len(gs)
    return {k: v / max(len(gold), 1) for k, v in out.items()}


def _machine() -> str:
    model = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["--stage"]:  # the whole embed stage: CPU threads, Ray, CUDA
        from scripts.bench_embed_stage import main as stage

        stage(args_in[1:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--limit", type=int, default=None, help="first N passages only")
    ap.add_argument(
        "--settings",
        default=",".join(SWEEP),
        help=f"comma-separated subset of: {', '.join(SETTINGS)}",
    )
    ap.add_argument(
        "--reference",
        default="baseline",
        help="setting whose vectors the cosine column compares to (always run)",
    )
    ap.add_argument(
        "--text-format",
        choices=("title", "text"),
        default="title",
        help='"title" embeds "title: text", "text" the text alone',
    )
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--json", dest="json_out", type=Path, help="write the results here")
    ap.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="S",
        help="before each setting, wait up to S s for other processes to go idle",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="time each setting N times, interleaved with the others; keep the best",
    )
    ap.add_argument(
        "--sample",
        type=int,
        default=384,
        help="passages (a fixed random subset) timed in each round",
    )
    ap.add_argument(
        "--quality",
        choices=("auto", "all", "none"),
        default="auto",
        help="'auto' skips the full-corpus recall run for settings that only "
        "re-time the fp32 maths (batch size, threads...); 'all' runs it "
        "everywhere; 'none' only times",
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="override torch's (and ONNX Runtime's) intra-op threads everywhere",
    )
    ap.add_argument("--list", action="store_true", help="list the settings and exit")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--full", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        _worker(args)
        return 0
    if args.list:
        for name, (desc, _, _) in SETTINGS.items():
            print(f"{name:16} {desc}")
        return 0
    wanted = [s.strip() for s in args.settings.split(",") if s.strip()]
    unknown = [s for s in [*wanted, args.reference] if s not in SETTINGS]
    if unknown:
        sys.exit(f"bench_embed: unknown setting(s) {unknown}; --list shows them")
    order = [args.reference] + [s for s in wanted if s != args.reference]

    corpus_path = args.data / "corpus.json"
    passages, questions = _load_data(args.data, args.limit, args.text_format)  # checks data
    corpus = json.loads(corpus_path.read_text(encoding="utf-8"))[: len(passages)]
    titles = [d["title"] for d in corpus]
    gold = [q["supporting_facts"] for q in questions]
    print(
        f"# {_machine()}; {len(passages)} passages, {len(questions)} questions, "
        f"text format {args.text_format!r}",
        flush=True,
    )

    need_quality = {"all": set(order), "none": set(), "auto": set(order) - TIMING_ONLY}[
        args.quality
    ]
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in order}
    results: dict[str, dict[str, Any]] = {}
    ref_s: np.ndarray | None = None
    ref_p: np.ndarray | None = None
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(args.rounds):
            for setting in order:
                if rnd > 0 and not runs[setting]:
                    continue  # failed in round 1
                out = str(Path(tmp) / f"{setting}.{rnd}")
                quality = rnd == 0 and setting in need_quality
                cmd = [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "--worker",
                    setting,
                    "--out",
                    out,
                    "--text-format",
                    args.text_format,
                    "--data",
                    str(args.data),
                    "--sample",
                    str(args.sample),
                ]
                if args.limit is not None:
                    cmd += ["--limit", str(args.limit)]
                if quality:
                    cmd.append("--full")
                if args.threads:
                    cmd += ["--threads", str(args.threads)]
                if args.wait_idle > 0:
                    _wait_idle(args.wait_idle)
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
                    print(f"# {setting}: failed: {tail}", flush=True)
                    failed.append(setting)
                    continue
                run = json.loads(Path(out + ".json").read_text())
                runs[setting].append(run)
                sv = np.load(out + ".s.npy")
                if setting == args.reference and rnd == 0:
                    ref_s = sv
                row = results.setdefault(
                    setting,
                    {
                        "setting": setting,
                        "desc": SETTINGS[setting][0],
                        "n": len(passages),
                        "sample": min(args.sample, len(passages)),
                    },
                )
                row["load_s"] = min(row.get("load_s", 1e9), run["load_s"])
                row["peak_rss_mib"] = max(row.get("peak_rss_mib", 0.0), run["peak_rss_mib"])
                row["bf16"], row["threads"] = run["bf16"], run["threads"]
                if ref_s is not None and "cos_sample" not in row:
                    row["cos_sample"] = float((sv * ref_s).sum(axis=1).mean())
                if quality:
                    pv, qv = np.load(out + ".p.npy"), np.load(out + ".q.npy")
                    if setting == args.reference:
                        ref_p = pv
                    rec = recall_at(pv, qv, titles, gold)
                    row["recall@2"], row["recall@5"] = rec[2], rec[5]
                    row["full_s"] = run["full"]["s"]
                    row["full_other_cores"] = run["full"]["other_cores"]
                    row["norm_err"] = float(np.abs(np.linalg.norm(pv, axis=1) - 1).max())
                    if ref_p is not None:
                        cos = (pv * ref_p).sum(axis=1)
                        row["cos_mean"], row["cos_min"] = float(cos.mean()), float(cos.min())
                best = min(runs[setting], key=lambda r: r["sample"]["s"])
                row["sample_s"] = best["sample"]["s"]
                row["sample_other_cores"] = best["sample"]["other_cores"]
                row["sample_cpu_s"] = best["sample"]["cpu_s"]
                row["per_s"] = row["sample"] / row["sample_s"]
                row["rounds"] = len(runs[setting])
                print(
                    f"# round {rnd + 1}: {setting}: {row['sample'] / run['sample']['s']:.1f}"
                    f" passages/s (others {run['sample']['other_cores']:.2f} cores)"
                    + (f", full {len(passages)} in {run['full']['s']:.0f} s" if quality else ""),
                    flush=True,
                )
    rows = [results[s] for s in order if s in results]
    print()
    _print_table(rows, results.get(args.reference))

    if args.json_out:
        args.json_out.write_text(
            json.dumps(
                {
                    "machine": _machine(),
                    "n": len(passages),
                    "questions": len(questions),
                    "sample": args.sample,
                    "rounds": args.rounds,
                    "threads": args.threads,
                    "text_format": args.text_format,
                    "argv": sys.argv,
                    "results": rows,
                },
                indent=2,
            )
        )
        print(f"# wrote {args.json_out}")
    if failed:
        # the table holds the rest; a failed setting must not pass for a finished run
        print(f"# failed: {', '.join(dict.fromkeys(failed))}", file=sys.stderr)
        return 1
    return 0


def _fmt(value: Any, spec: str, scale: float = 1.0) -> str:
    return "" if value is None else format(value * scale, spec)


def _print_table(rows: list[dict[str, Any]], ref: dict[str, Any] | None) -> None:
    """Markdown table: speed from the best of the rounds on the sample, quality from the
    full run (``-`` where the setting is exact fp32 and was only timed)."""
    head = [
        "setting",
        "pass/s",
        "speed-up",
        "pass/cpu-s",
        "others",
        "full s",
        "R@2",
        "R@5",
        "cos mean",
        "cos min",
        "load s",
        "RSS MiB",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    for r in rows:
        speed = r["per_s"] / ref["per_s"] if ref and "per_s" in ref else None
        cos_mean = r.get("cos_mean", r.get("cos_sample"))
        cells = [
            r["setting"],
            _fmt(r.get("per_s"), ".1f"),
            _fmt(speed, ".2f") + "x",
            _fmt(r["sample"] / r["sample_cpu_s"] if r.get("sample_cpu_s") else None, ".1f"),
            _fmt(r.get("sample_other_cores"), ".2f"),
            _fmt(r.get("full_s"), ".0f"),
            _fmt(r.get("recall@2"), ".2f", 100),
            _fmt(r.get("recall@5"), ".2f", 100),
            _fmt(cos_mean, ".5f") + ("" if "cos_mean" in r else "*"),
            _fmt(r.get("cos_min"), ".4f"),
            _fmt(r.get("load_s"), ".1f"),
            _fmt(r.get("peak_rss_mib"), ".0f"),
        ]
        print("| " + " | ".join(c if c not in ("", "x", "*") else "-" for c in cells) + " |")
    print(
        "\npass/s: best of the rounds on the fixed sample; pass/cpu-s: the same run's "
        "passages per CPU-second of its own; others: cores other processes "
        "took meanwhile; full s: wall time of the whole set (one run); * cosine on the "
        "sample only",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
