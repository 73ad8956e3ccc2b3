"""Where a pod's Hugging Face client writes, so a download never fills the pod's small HOME.

`k8s.security.harden` gives HOME a 2 GiB emptyDir (a pod that writes more is evicted). The client keeps its state
under `HF_HOME`, `~/.cache/huggingface` unless set (ledger: huggingface-hub-vllm.hf-home), so in HOME. Two writers
there could be large:

- Xet's chunk cache. huggingface_hub downloads Xet-backed files through `hf_xet`, whose caches live in
  `HF_XET_CACHE`, else `$HF_HOME/xet` (ledger: hf-xet-vllm.cache-root, hf-xet-sglang.cache-root). Which hf-xet an
  image holds is bounded by its huggingface_hub, and the rows are read at the oldest release each image may hold:
  - SGLang (huggingface_hub 0.34, which requires hf-xet >= 1.1.3; ledger: sglang-jax.requires.huggingface-hub,
    huggingface-hub-sglang.requires.hf-xet): hf-xet 1.1.3 downloads through a chunk cache of up to 10 GiB unless
    `HF_XET_CHUNK_CACHE_SIZE_BYTES` says otherwise, and 0 turns it off (ledger: hf-xet-sglang.chunk-cache.default,
    hf-xet-sglang.chunk-cache.variable, hf-xet-sglang.configurable-constants, hf-xet-sglang.chunk-cache.zero-off).
    This is the image the variable protects.
  - vLLM, Ray Serve LLM and the multi-host download Job (huggingface_hub >= 1.28.0, which requires hf-xet >= 1.5.2;
    ledger: vllm.requires.huggingface-hub, huggingface-hub-vllm.requires.hf-xet): hf-xet 1.5.2 still reads the
    variable (ledger: huggingface-hub-vllm.xet-session, hf-xet-vllm.chunk-cache.variable), but its Python package
    already defaults the cache to 0 (ledger: hf-xet-vllm.chunk-cache.off-by-default) and its downloads take no chunk
    cache at all (ledger: hf-xet-vllm.download.no-chunk-cache): there the variable changes nothing today and guards
    against a later 1.x that brings the cache back. It does write logs under the Xet cache, pruned to 250 MB only
    after a day (ledger: hf-xet-vllm.log-dir) [I: a download's log size is not measured here].
  - JetStream's images and the Ray Train image: no requirement bounds their huggingface_hub, and an image without
    hf_xet ignores the variable.
  Nothing here uploads to Hugging Face, so the upload path's shard cache stays empty.
- The hub cache (`HF_HUB_CACHE`, by default `$HF_HOME/hub`; ledger: huggingface-hub-vllm.hub-cache,
  huggingface-hub-sglang.hub-cache): huggingface_hub before 0.23.0 writes even a `local_dir` download to a
  temporary file in the hub cache first and keeps big files there, linked into `local_dir` (ledger:
  huggingface-hub-jetstream.local-dir-through-cache). JetStream's images may hold such a release: the converter's
  `huggingface-cli download --local-dir` and `jpt serve` would then fill the hub cache.

So: every container that downloads from Hugging Face gets `HF_XET_CHUNK_CACHE_SIZE_BYTES=0`, and where its
downloads go to a volume sized for them (JetStream's weights emptyDir, the converter's scratch disk), `HF_HOME` on
that same volume (ledger: huggingface-hub-jetstream.hf-home), so the hub cache, the Xet cache and the login token
all live there (a temporary file there is renamed, not copied). vLLM passes its `--download-dir` to huggingface_hub
as `cache_dir` for the weights (ledger: vllm.weights.cache-dir; tpu-inference's JAX models likewise, ledger:
tpu-inference.weights.cache-dir), so only the config and tokenizer files (megabytes) reach HOME.
"""

from __future__ import annotations

import pulumi_kubernetes as k8s

from tpu_stacks.catalog.upstream import text

XET_CHUNK_CACHE_VARIABLE = text("hf-xet-vllm.chunk-cache.variable")
"""The name hf-xet 1.5.2's config group gives the chunk cache's size, and the one hf-xet 1.1.3's
`configurable_constants!` reads: `HF_XET_` and the constant's name (ledger: hf-xet-sglang.configurable-constants,
hf-xet-sglang.chunk-cache.variable; tests/stacks/test_huggingface_writes.py checks the two agree)."""
HF_HOME_VARIABLE = text("huggingface-hub-jetstream.hf-home")


def hf_env(home: str | None = None) -> list[k8s.core.v1.EnvVarArgs]:
    """The variables of a container that downloads from Hugging Face: no Xet chunk cache, and with
    `home` the client's whole state (hub cache, Xet cache, token) on the volume mounted there."""
    env = [k8s.core.v1.EnvVarArgs(name=XET_CHUNK_CACHE_VARIABLE, value="0")]
    if home is not None:
        env.append(k8s.core.v1.EnvVarArgs(name=HF_HOME_VARIABLE, value=home))
    return env
