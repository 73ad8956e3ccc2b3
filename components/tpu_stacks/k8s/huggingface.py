"""Where a pod's Hugging Face client writes, so a download never fills the pod's small HOME.

`k8s.security.harden` gives HOME a 2 GiB emptyDir (a pod that writes more is evicted). Two writers
of the Hugging Face client would land there by default:

- Xet's chunk cache. huggingface_hub downloads Xet-backed files through `hf_xet` (an extra from 0.30.0,
  a dependency from 0.31.0) and keeps their chunks in `HF_XET_CACHE`, by default `$HF_HOME/xet`, i.e.
  `~/.cache/huggingface/xet`; that cache was 10 GiB by default until hf-xet 1.2 turned it off
  (huggingface_hub docs/source/en/package_reference/environment_variables.md at v0.31.0 and at
  v1.0.0; docs/source/en/guides/manage-cache.md, "Chunk-based caching (Xet)": the chunk cache is the
  download path's, the shard cache the upload path's). `HF_XET_CHUNK_CACHE_SIZE_BYTES=0` turns it
  off; hf-xet reads it from 1.0.1 (huggingface/xet-core chunk_cache/src/lib.rs `CHUNK_CACHE_SIZE_BYTES`
  through `configurable_constants!`, which reads `HF_XET_<NAME>`; 1.0.0 had a fixed 10 GiB). The
  pinned vLLM image (v0.29.0, September 2026: vLLM's requirements/common.txt asks for transformers >=
  5.10.4 and huggingface_hub >= 1.28.0) gets huggingface_hub and hf-xet through them, so its hf-xet is
  later than 1.0.1 (published on PyPI on 2025-04-06) [I: from the release dates, not run here].
  `HF_HUB_DISABLE_XET` exists only from huggingface_hub 0.34.0, so it is not relied on. Nothing here
  uploads to Hugging Face, so the shard cache stays empty.
- The hub cache (`HF_HUB_CACHE`, by default `$HF_HOME/hub`): huggingface_hub before 0.23.0 downloads
  every file into a temporary file in the hub cache even when the caller asks for `local_dir`
  (file_download.py at v0.22.2: `NamedTemporaryFile(..., dir=cache_dir)`), and the converter's
  `huggingface-cli download --local-dir` of those releases keeps big files in the cache and links them.

So: every container that downloads from Hugging Face gets `HF_XET_CHUNK_CACHE_SIZE_BYTES=0`, and where
its downloads go to a volume sized for them (JetStream's weights emptyDir, the converter's scratch
disk), `HF_HOME` on that same volume, so the hub cache, the Xet cache and the login token all live
there (a temporary file there is renamed, not copied). vLLM passes its `--download-dir` to
huggingface_hub as `cache_dir` for the weights (vllm/model_executor/model_loader/weight_utils.py,
`download_weights_from_hf`; tpu-inference's JAX models likewise, tpu_inference/models/jax/utils/weight_utils.py
`get_model_weights_files` at v0.29.0), so only the config and tokenizer files (megabytes) reach HOME.
"""

from __future__ import annotations

import pulumi_kubernetes as k8s

XET_CHUNK_CACHE_VARIABLE = "HF_XET_CHUNK_CACHE_SIZE_BYTES"


def hf_env(home: str | None = None) -> list[k8s.core.v1.EnvVarArgs]:
    """The variables of a container that downloads from Hugging Face: no Xet chunk cache, and with
    `home` the client's whole state (hub cache, Xet cache, token) on the volume mounted there."""
    env = [k8s.core.v1.EnvVarArgs(name=XET_CHUNK_CACHE_VARIABLE, value="0")]
    if home is not None:
        env.append(k8s.core.v1.EnvVarArgs(name="HF_HOME", value=home))
    return env
