"""``kg-agent embed --ray``: the embedding stage on a Ray cluster, through Ray Data.

Why Ray: embedding is the whole cost of a load (a full English Wikipedia is ~40M
sections, days on one CPU), and it is embarrassingly parallel. When one machine is
not enough the work goes to an existing distributed engine rather than a scheduler
of our own: Ray Data runs ``map_batches`` over the shards with a pool of model
actors (one per GPU, or one per N CPUs), restarts what a lost node was doing, and
streams completions back to the driver.

How the work is laid out, so that it stays resumable: the driver (the machine that
holds the graph) cuts the plan's sections into shards of ``chunk`` rows, the same
cut as the in-process batches (``todo/t000000.parquet``…). Each actor call takes
one shard number, reads that shard from the storage, embeds it and writes its
vectors as ``batches/b000000.parquet`` (written beside and renamed, so a file there
is whole). A shard whose batch exists is done: Ctrl-C or ``kill -9`` loses at most
the shards in flight, one per actor. The driver then bulk-loads the batches as the
in-process path does.

Storage is the embed work folder by default (one machine, or a cluster whose nodes
mount it at the same path); ``RayOptions.storage`` names a shared path or an object
store URI (``s3://bucket/prefix``, ``gs://…``: whatever ``pyarrow.fs`` reads), to
which the driver uploads the shards and from which it fetches the vectors.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from kg_agent.embedding import EmbeddingConfig
from kg_agent.exceptions import InvalidArgumentError, KGAgentError, one_line
from kg_agent.progress import Progress

if TYPE_CHECKING:
    import pyarrow.fs as pafs

__all__ = ["RayOptions", "RayUnavailableError", "embed_on_ray", "shard_path", "split_shards"]

#: The local Ray's object store: shards travel through the storage, not through it.
_LOCAL_OBJECT_STORE = 256 * 2**20


class RayUnavailableError(KGAgentError):
    """Ray is not installed, or the cluster address does not answer."""


@dataclass(frozen=True)
class RayOptions:
    """Where and how ``kg-agent embed --ray`` runs.

    ``address`` None starts a Ray on this machine (``ray.init()``); ``"auto"`` joins
    the cluster this machine belongs to; ``"ray://HEAD:10001"`` connects a client.
    ``workers`` is the number of model actors (default: one per GPU when the actors
    use GPUs, else the cluster's CPUs divided by ``cpus_per_worker``).
    ``gpus_per_worker`` None gives each actor one GPU when the cluster has GPUs and
    the device allows it. ``local_cpus`` caps the CPUs of a local Ray.
    """

    address: str | None = None
    workers: int | None = None
    cpus_per_worker: float = 1.0
    gpus_per_worker: float | None = None
    storage: str | None = None
    local_cpus: int | None = None

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise InvalidArgumentError(f"Ray workers must be at least 1, not {self.workers}")
        if self.cpus_per_worker <= 0:
            raise InvalidArgumentError("cpus_per_worker must be positive")
        if self.gpus_per_worker is not None and self.gpus_per_worker < 0:
            raise InvalidArgumentError("gpus_per_worker must be 0 or more")
        if self.local_cpus is not None and self.local_cpus < 1:
            raise InvalidArgumentError("local_cpus must be at least 1")
        if self.address is not None and not self.address.strip():
            raise InvalidArgumentError("a Ray address must not be empty")


def shard_path(root: str, kind: str, i: int) -> str:
    """``ROOT/todo/t000012.parquet`` or ``ROOT/batches/b000012.parquet``."""
    folder, letter = {"todo": ("todo", "t"), "batches": ("batches", "b")}[kind]
    return f"{root.rstrip('/')}/{folder}/{letter}{i:06d}.parquet"


def split_shards(todo: Path, root: Path, chunk: int) -> int:
    """Cut ``todo`` into shards of ``chunk`` rows under ``root/todo`` (once); returns
    how many. A marker says the cut is complete, so a rerun never reads a torn one."""
    marker = root / "todo" / "complete"
    if marker.exists():
        return int(marker.read_text())
    shutil.rmtree(root / "todo", ignore_errors=True)
    (root / "todo").mkdir(parents=True)
    n = 0
    if todo.exists():
        with pq.ParquetFile(todo) as src:
            for i, batch in enumerate(src.iter_batches(batch_size=chunk)):
                pq.write_table(pa.Table.from_batches([batch]), shard_path(str(root), "todo", i))
                n = i + 1
    marker.write_text(str(n))
    return n


def _filesystem(storage: str) -> tuple[pafs.FileSystem, str]:
    import pyarrow.fs as pafs

    if "://" not in storage:
        return pafs.LocalFileSystem(), str(Path(storage).resolve())
    fs, path = pafs.FileSystem.from_uri(storage)
    return fs, path


def _exists(fs: pafs.FileSystem, path: str) -> bool:
    import pyarrow.fs as pafs

    return bool(fs.get_file_info(path).type == pafs.FileType.File)


class ShardEmbedder:
    """A Ray Data actor: one model, loaded once, embedding whole shards.

    Built on the worker from an :class:`~kg_agent.embedding.EmbeddingConfig`, so no
    model or lock crosses the wire.
    """

    def __init__(self, config: EmbeddingConfig, device: str, storage: str) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        # a GPU actor's bound is its tokenizer (see ``kg-agent embed``, which leaves the
        # variable unset for its actors unless the user set it); a CPU actor has one CPU,
        # which the model uses
        os.environ.setdefault("TOKENIZERS_PARALLELISM", str(device != "cpu").lower())
        self.embedder = config.build(device)
        self.storage = storage
        self.fs, self.root = _filesystem(storage)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        shards = [int(s) for s in batch["shard"]]
        return {"shard": np.asarray(shards), "rows": np.asarray([self.one(s) for s in shards])}

    def one(self, shard: int) -> int:
        from kg_agent.ingest.embed_phase import section_texts, vector_rows

        with self.fs.open_input_file(shard_path(self.root, "todo", shard)) as fh:
            table = pq.read_table(fh)
        vectors = self.embedder.embed(section_texts(table))
        rows = vector_rows(
            table.column("id"), table.column("text_hash"), vectors, self.embedder.dimension
        )
        final = shard_path(self.root, "batches", shard)
        tmp = f"{final}.{uuid.uuid4().hex}.tmp"
        self.fs.create_dir(final.rsplit("/", 1)[0], recursive=True)
        with self.fs.open_output_stream(tmp) as out:
            pq.write_table(rows, out)
        self.fs.move(tmp, final)  # a rename on a filesystem: a batch file is whole
        return int(table.num_rows)


def _connect(options: RayOptions) -> tuple[Any, bool]:
    """Import Ray and connect; returns (the ray module, whether we started it)."""
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(
            "embedding with --ray needs Ray: pip install 'kg-agent[ray]' (ray[data])"
        ) from None
    if ray.is_initialized():
        return ray, False
    kwargs: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.ERROR,
        "configure_logging": True,
    }
    if options.address not in (None, "auto"):
        _probe(options.address)
    if options.address is None:
        kwargs["object_store_memory"] = _LOCAL_OBJECT_STORE
        if options.local_cpus is not None:
            kwargs["num_cpus"] = options.local_cpus
    else:
        kwargs["address"] = options.address
    try:
        ray.init(**kwargs)
    except Exception as exc:  # ConnectionError, ValueError, RuntimeError…: all one line
        where = options.address or "a local Ray"
        raise RayUnavailableError(
            f"cannot start or reach Ray at {where}: {one_line(exc)}"
        ) from None
    return ray, True


def _probe(address: str, timeout: float = 10.0) -> None:
    """Fail fast when a cluster address does not answer: ``ray.init`` itself retries
    for minutes before it gives up."""
    import socket

    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailableError(
            f"Ray address {address!r} is not HOST:PORT, ray://HOST:PORT or 'auto'"
        )
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise RayUnavailableError(
            f"cannot reach Ray at {address}: {one_line(exc)} (is the cluster's head up, "
            "and this port open?)"
        ) from None


def _pool(ray: Any, options: RayOptions, device: str) -> tuple[int, float, float]:
    """(actors, CPUs each, GPUs each) for this cluster and device."""
    resources = ray.cluster_resources()
    cpus, gpus = float(resources.get("CPU", 0)), float(resources.get("GPU", 0))
    per_gpu = options.gpus_per_worker
    if per_gpu is None:
        per_gpu = 1.0 if gpus >= 1 and device in ("auto", "cuda") else 0.0
    if per_gpu > 0 and gpus < per_gpu:
        raise RayUnavailableError(
            f"the Ray cluster has {gpus:g} GPUs; each worker asks for {per_gpu:g}"
        )
    if options.workers is not None:
        workers = options.workers
    elif per_gpu > 0:
        workers = max(1, int(gpus // per_gpu))
    else:
        workers = max(1, int(cpus // options.cpus_per_worker))
    return workers, options.cpus_per_worker, per_gpu


def _download(fs: pafs.FileSystem, remote: str, local: Path) -> None:
    tmp = local.with_name(local.name + ".tmp")
    with fs.open_input_stream(remote) as src, open(tmp, "wb") as dst:
        shutil.copyfileobj(src, dst)
    tmp.replace(local)


def _upload(fs: pafs.FileSystem, local: Path, remote: str) -> None:
    fs.create_dir(remote.rsplit("/", 1)[0], recursive=True)
    with open(local, "rb") as src, fs.open_output_stream(remote) as dst:
        shutil.copyfileobj(src, dst)


def embed_on_ray(
    root: Path,
    n_shards: int,
    config: EmbeddingConfig,
    device: str,
    options: RayOptions,
    *,
    total_rows: int,
    progress: bool = True,
    say: Callable[[str], None] = lambda msg: None,
) -> int:
    """Embed every shard of ``root/todo`` that has no batch yet, on Ray; the batches
    end up in ``root/batches``. Returns how many shards were already done."""
    storage = options.storage or str(root)
    fs, base = _filesystem(storage)
    local_batches = root / "batches"
    local_batches.mkdir(parents=True, exist_ok=True)
    remote = options.storage is not None and Path(base) != root.resolve()

    def done_here(i: int) -> bool:
        return (local_batches / f"b{i:06d}.parquet").exists()

    def fetch(i: int) -> None:
        if remote and not done_here(i):
            _download(fs, shard_path(base, "batches", i), local_batches / f"b{i:06d}.parquet")

    done = [
        i for i in range(n_shards) if done_here(i) or _exists(fs, shard_path(base, "batches", i))
    ]
    for i in done:
        fetch(i)
    rows_done = sum(pq.read_metadata(local_batches / f"b{i:06d}.parquet").num_rows for i in done)
    finished = set(done)
    pending = [i for i in range(n_shards) if i not in finished]
    if done:
        say(f"resuming: {len(done):,} of {n_shards:,} batches done")
    if not pending:
        return len(done)
    if remote:
        for i in pending:
            if not _exists(fs, shard_path(base, "todo", i)):
                _upload(fs, Path(shard_path(str(root), "todo", i)), shard_path(base, "todo", i))
    ray, started = _connect(options)
    prog = Progress("embed", total=total_rows, unit="sections", enabled=progress)
    prog.set(rows_done)
    prog.start_rate_at(rows_done)
    try:
        workers, cpus, gpus = _pool(ray, options, device)
        actor_device = "cuda" if gpus > 0 else ("cpu" if device == "auto" else device)
        if gpus == 0 and config.threads is None:
            config = _with_threads(config, max(1, int(cpus)))
        say(
            f"Ray: {workers} model worker(s), {cpus:g} CPU and {gpus:g} GPU each, "
            f"{len(pending):,} shards"
        )
        for shard, rows in _run(ray, pending, config, actor_device, storage, workers, cpus, gpus):
            fetch(shard)
            prog.update(rows)
    finally:
        prog.close()
        if started:
            ray.shutdown()
    return len(done)


def _with_threads(config: EmbeddingConfig, threads: int) -> EmbeddingConfig:
    from dataclasses import replace

    return replace(config, threads=threads)


def _run(
    ray: Any,
    pending: list[int],
    config: EmbeddingConfig,
    device: str,
    storage: str,
    workers: int,
    cpus: float,
    gpus: float,
) -> Iterator[tuple[int, int]]:
    """(shard, rows) as each shard's vectors are written."""
    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    ds = ray.data.from_items([{"shard": i} for i in pending], override_num_blocks=len(pending))
    out = ds.map_batches(
        ShardEmbedder,
        fn_constructor_kwargs={"config": config, "device": device, "storage": storage},
        batch_size=1,
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=cpus,
        num_gpus=gpus,
        # one shard a call: a lost actor costs one shard, and Ray retries it
        max_restarts=3,
        max_task_retries=3,
    )
    for row in out.iter_rows():
        yield int(row["shard"]), int(row["rows"])
