"""Multi-host vLLM: the weights are downloaded once, by one Job, before any TPU host starts.

Why not let the engine download, as the single-host server does: on a multi-host slice every host's
tpu-inference worker would call Hugging Face's `snapshot_download` into the same GCS FUSE directory at once.
- Ray Serve LLM downloads nothing itself unless the model has a cloud mirror (`model_source` as a
  `bucket_uri`): Ray 2.60.0 python/ray/llm/_internal/common/utils/download_utils.py `download_model_files`
  ("No cloud storage mirror configured": it returns the model id), so the engine on each host downloads.
- Hugging Face's client serialises a download with a file lock in the target folder (ledger:
  huggingface-hub-vllm.local-dir.lock); a lock on a GCS FUSE mount does not reach the other hosts' mounts (each
  host mounts the bucket through its own gcsfuse process).
- gcsfuse fails a write with ESTALE (stale file handle) when the object was changed from another mount since
  it was opened: GoogleCloudPlatform/gcsfuse docs/troubleshooting.md "Stale File Handle Error (ESTALE)"
  (https://github.com/GoogleCloudPlatform/gcsfuse/pull/3654) and docs/semantics.md, "Concurrency": several
  writers to one object are supported from the same mount only.
GKE's multi-host Ray Serve sample downloads with a one-shot Job first and then points `model_source` at the
mounted path ([K-RAY-SERVE-TPU-DL] components/model-downloader-job.yaml, serve_tpu_multihost.py
`MODEL_SOURCE=/data/<model id>`). This stack does the same, hardened: the Job runs the pinned upstream vLLM
image (`vllm.image`: published, so the download need not wait for the Ray Serve image the user builds during
the first `up`; it holds vLLM's own huggingface_hub and hf_xet, so the download is the one the engine would
have made), downloads only what vLLM loads, and the RayService waits for it (`depends_on`).

Pure: no provider SDK.
"""

from __future__ import annotations

import math

from tpu_stacks.objects.awaits import IMAGE_PULL_MINUTES, NODE_PROVISIONING_MINUTES

JOB_NAME = "vllm-weights-download"
WEIGHTS_DIR = "weights"
"""The bucket's folder the Job writes and the servers read (the GCS FUSE mounts' `only-dir`)."""
WRITER_SUFFIX = "-weights-writer"
"""The download Job's own Kubernetes ServiceAccount is the servers' (`vllm.ksaName`) plus this: the one identity
that may write the weights, and the one that holds the Hugging Face token."""
LABELS = {"app": JOB_NAME}
"""The Job's pod labels: not the server's `app: vllm-tpu`, so neither the Ray pods' contract nor the Service
selects it (its own network policy selects exactly these)."""
CPU = "2"
MEMORY = "8Gi"
"""The download waits on the network, not the CPU: small enough to share the CPU pool's node with the Ray head
(vllm/plan.py MULTI_HOST_SYSTEM_POOL)."""
WORKERS = 4
"""Files downloaded at once (huggingface_hub's `max_workers`, 8 by default; ledger:
huggingface-hub-vllm.snapshot.max-workers)."""
SHARD_GIB = 5
"""The largest safetensors shard to expect (transformers' `save_pretrained` shards at 5GB by default)."""
STAGED_GIB = WORKERS * SHARD_GIB + 4
"""What gcsfuse may stage on the node's disk at once: a file written through the mount is staged whole when
it is not written in order, then uploaded on close ([GCSFUSE] ephemeral storage of the sidecar)."""
BACKOFF_LIMIT = 2
"""A retried pod resumes: the client skips the files already complete in `local_dir`."""
DOWNLOAD_BYTES_PER_S = 100 * 10**6
"""The download rate the await budget assumes for one pod, Hugging Face to the bucket through GCS FUSE:
100 MB/s [I: an assumed floor, not measured; no network in this repository's tests]. At that rate Llama 3.1
405B's 811.7 GB take 136 minutes; a faster link finishes sooner, a slower one reaches the Job's deadline and
`pulumi up` reports it; replacing the Job (`pulumi up --replace <its URN>`) resumes the download."""
READ_BYTES_PER_S = 175 * 2**20
"""How fast the engine on one TPU host reads the checkpoint through GCS FUSE without a file cache: one file at a time,
one thread (tpu-inference under TPU_MULTIHOST_BACKEND=ray). [I: assumed, not measured here] Cloud Storage FUSE
documents no single-stream figure for this case: its published fio table (docs/benchmarks.md at v3.4.3, sequential
reads of 1 GiB files) runs 10 jobs of queue depth 64 for 14,198 MB/s together, which no single Python reader
approaches; its own single-reader benchmark (benchmarks/sequential_read, GoogleCloudPlatform/gcsfuse commit d4bbf69:
64 MiB files read whole, 1 MiB reads) reports a median of 175.13 MiB/s, the floor assumed here. Faster links and
newer gcsfuse (buffered reads, v3.3.0, "2-5x" for single-threaded large sequential reads; off unless
`read:enable-buffered-read` is given) finish sooner."""
ALLOW_PATTERNS = ("*.json", "*.safetensors", "*.model", "*.txt", "*.tiktoken")
IGNORE_PATTERNS = ("original/*",)
"""What vLLM loads: the safetensors weights, config and tokenizer files; never Meta's `original/` consolidated
checkpoint, which is as large again (vLLM 0.29.0's own download skips it too: it fetches only the safetensors files
the repository's index names, ledger: vllm.weights.index-only)."""
SCRIPT = (
    "import sys\n"
    "import filelock\n"
    "\n"
    "\n"
    "class NoLock:\n"
    "    def __init__(self, *args, **kwargs): pass\n"
    "    def __enter__(self): return self\n"
    "    def __exit__(self, *exc): return False\n"
    "    def acquire(self, *args, **kwargs): return self\n"
    "    def release(self, *args, **kwargs): pass\n"
    "\n"
    "\n"
    "filelock.FileLock = filelock.SoftFileLock = NoLock\n"
    "from huggingface_hub import snapshot_download\n"
    "snapshot_download(repo_id=sys.argv[1], local_dir=sys.argv[2], allow_patterns={allow}, "
    "ignore_patterns={ignore}, max_workers={workers})\n"
    "print('downloaded', sys.argv[1], 'to', sys.argv[2])\n"
)


# The one writer takes no file lock. huggingface_hub locks each file it downloads with a lock file under
# `<local_dir>/.cache/huggingface/download/` (ledger: huggingface-hub-vllm.local-dir.lock), and where the filesystem
# has no flock its WeakFileLock falls back to SoftFileLock, a lock *file* that a killed pod leaves in the bucket and
# that its retry would wait on forever. GKE's sample replaces the lock for the same download ([K-RAY-SERVE-TPU-DL]
# model-downloader-job.yaml). `NoLock` is set before huggingface_hub is imported, which binds both names at import
# (ledger: huggingface-hub-vllm.lock.names-bound-at-import).


def writer_ksa(ksa_name: str) -> str:
    return f"{ksa_name}{WRITER_SUFFIX}"


def model_path(download_dir: str, model_id: str) -> str:
    """Where the Job writes the model and the engine loads it: the weights mount, then the Hugging Face id, so
    the path's last two parts name the model (the pack reads a model from them, serve_config.py)."""
    return f"{download_dir.rstrip('/')}/{model_id}"


def command(model_id: str, path: str) -> list[str]:
    """`python3 -c SCRIPT MODEL PATH`: huggingface_hub's `snapshot_download` into `local_dir` (files, not
    links into a cache), the token read from HF_TOKEN_PATH by the client itself (ledger:
    huggingface-hub-vllm.token-path)."""
    script = SCRIPT.format(allow=list(ALLOW_PATTERNS), ignore=list(IGNORE_PATTERNS), workers=WORKERS)
    return ["python3", "-c", script, model_id, path]


def download_minutes(weights_bytes: int) -> int:
    """Minutes to download `weights_bytes` at DOWNLOAD_BYTES_PER_S."""
    return math.ceil(weights_bytes / DOWNLOAD_BYTES_PER_S / 60)


def load_minutes(weights_bytes: int) -> int:
    """Minutes one TPU host takes to read `weights_bytes` through GCS FUSE at READ_BYTES_PER_S (every host at once,
    each the whole checkpoint: the bucket serves hosts x weights bytes per cold start)."""
    return math.ceil(weights_bytes / READ_BYTES_PER_S / 60)


def deadline_seconds(weights_bytes: int) -> int:
    """The Job's `activeDeadlineSeconds`: a CPU node, the server image, then the download."""
    return (NODE_PROVISIONING_MINUTES + IMAGE_PULL_MINUTES + download_minutes(weights_bytes)) * 60
