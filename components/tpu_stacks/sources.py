"""The citation keys the code, docs and CLI use, each with the public address it stands for.

Why: a fact in this repository names its source, and a short key (`[XPK]`, `[D-GKE-TPU]`) keeps a
comment or a `source=` field readable where the full address would not fit. A key is only useful if
a reader can open it, so every key resolves here, and nowhere else: docs/sources.md is generated from
this table (`python -m tpu_stacks.sources > docs/sources.md`), `tpu-stacks size` prints the address of
each key its output shows, and tests/test_sources.py fails on a key used anywhere that is not listed.

What a key is (the one definition; `KEY` below): `[`, an upper-case letter followed by letters and
digits, then any number of `-` parts of at least two letters or digits, `]`, standing alone: not
inside a word, nor next to another bracket, a backslash, `(`, `|` or a regex quantifier. So `[XPK]`,
`[D-v5e]` and `[I]` are keys; `[KMGTPE]i`, `([A-Z])`, `[A-Z0-9]+` (regex classes: a one-character
part, or a quantifier after) and `[link](url)` (Markdown link text) are not. Code is not prose:
Python code outside comments and strings, and Markdown code spans and fenced blocks, hold no keys.

Pure data: no provider SDK.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

KEY = re.compile(r"(?<![\w\\\[\]|])\[([A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]{2,})*)\](?![\w(\[|+*?{])")
"""A citation key as the module docstring defines it; group 1 is the key without its brackets."""


@dataclass(frozen=True)
class Source:
    """One key: what the source is, where it is (a version-pinned address where one exists)."""

    key: str
    title: str
    url: str


LABELS = {
    "V": "verified in the cited source",
    "I": "inferred from nearby sources (images' Dockerfiles, what the processes write), not verified",
}
"""Labels that mark how sure a statement is, not where it comes from."""

_KES = "https://github.com/GoogleCloudPlatform/kubernetes-engine-samples/tree"
_AOG = "https://github.com/GoogleCloudPlatform/ai-on-gke/tree"

SOURCES = (
    # -- Google Cloud documentation --------------------------------------------------------------
    Source("D-v4", 'Cloud TPU "TPU v4"', "https://cloud.google.com/tpu/docs/v4"),
    Source("D-v5e", 'Cloud TPU "TPU v5e"', "https://cloud.google.com/tpu/docs/v5e"),
    Source("D-v5p", 'Cloud TPU "TPU v5p"', "https://cloud.google.com/tpu/docs/v5p"),
    Source("D-v6e", 'Cloud TPU "TPU v6e"', "https://cloud.google.com/tpu/docs/v6e"),
    Source("D-7x", 'Cloud TPU "TPU7x (Ironwood)"', "https://cloud.google.com/tpu/docs/tpu7x"),
    Source(
        "D-ZONES",
        'Cloud TPU "TPU regions and zones" (German edition)',
        "https://cloud.google.com/tpu/docs/types-zones?hl=de",
    ),
    Source("D-TPU-CONS", 'Cloud TPU "Consumption options"', "https://cloud.google.com/tpu/docs/consumption-options"),
    Source("D-GKE-TPU", 'GKE "About TPUs in GKE"', "https://cloud.google.com/kubernetes-engine/docs/concepts/tpus"),
    Source(
        "D-GKE-GATEWAYCLASS",
        'GKE "GatewayClass capabilities" (Gateway API versions per GKE version; services per class)',
        "https://cloud.google.com/kubernetes-engine/docs/how-to/gatewayclass-capabilities",
    ),
    Source(
        "D-GKE-NAP",
        'GKE "About node pool auto-creation"',
        "https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning",
    ),
    Source(
        "D-GKE-MS", 'Cloud TPU "Deploy TPU Multislices in GKE"', "https://cloud.google.com/tpu/docs/tpu-gke-multislice"
    ),
    Source(
        "D-GKE-MSK",
        'GKE tutorial "Orchestrate Multislice workloads using JobSet and Kueue"',
        "https://cloud.google.com/kubernetes-engine/docs/tutorials/tpu-multislice-kueue",
    ),
    Source(
        "D-CCC",
        'GKE "About custom ComputeClasses" (and its ComputeClass CRD reference, .../docs/reference/crds/computeclass)',
        "https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes",
    ),
    Source(
        "D-FLEX",
        'GKE "About flex-start provisioning mode"',
        "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model",
    ),
    # -- the four GKE tutorials this project builds (the Saxml one also in its sovereign edition) --
    Source(
        "D-GKE-SAX",
        'GKE tutorial "Serve an LLM using multi-host TPUs on GKE with Saxml"',
        "https://cloud.google.com/kubernetes-engine/docs/tutorials/tpu-multihost-saxml",
    ),
    Source(
        "D-S3NS-SAX",
        "The Saxml tutorial's Cloud de Confiance by S3NS edition (Portuguese)",
        "https://documentation.s3ns.fr/kubernetes-engine/docs/tutorials/tpu-multihost-saxml?hl=pt-br",
    ),
    Source(
        "D-GKE-VLLM",
        'GKE tutorial "Serve an LLM using TPU Trillium on GKE with vLLM"',
        "https://cloud.google.com/kubernetes-engine/docs/tutorials/serve-vllm-tpu",
    ),
    Source(
        "D-GKE-JETSTREAM",
        'GKE tutorial "Serve an LLM using TPUs on GKE with JetStream and PyTorch"',
        "https://cloud.google.com/kubernetes-engine/docs/tutorials/serve-llm-tpu-jetstream-pytorch",
    ),
    Source(
        "D-GKE-RAY",
        'GKE tutorial "Train an LLM using JAX, Ray Train, and TPU Trillium on GKE"',
        "https://cloud.google.com/kubernetes-engine/docs/tutorials/distributed-training-tpu",
    ),
    # -- the tutorials' manifests and the sources of their images, at the commits read ------------
    Source(
        "K-SAX",
        "kubernetes-engine-samples ai-ml/llm-multihost-tpus-saxml (sax-admin-server, sax-model-server-set, "
        "sax-http), commit c6f85f55",
        f"{_KES}/c6f85f550a5d93a31f8c0831958165cb72646bb8/ai-ml/llm-multihost-tpus-saxml",
    ),
    Source(
        "SAX-HTTP",
        "ai-on-gke's Saxml HTTP server (the sax-http image's source; removed in 2025), last version",
        f"{_AOG}/e997f425b15805366694007f039ab0bc71b44c89/tools/saxml-on-gke/httpserver",
    ),
    Source(
        "SAX-IMAGES",
        "google/saxml v1.1.0 (Dockerfile.admin, Dockerfile.model, model_service_main.py)",
        "https://github.com/google/saxml/tree/70f314c76ee58f27d405b38287cde2bda495b0f9",
    ),
    Source(
        "K-VLLM",
        "kubernetes-engine-samples ai-ml/vllm-tpu (vllm-llama3-70b.yaml at a3f1a423; vllm-hpa.yaml, "
        "vllm_pod_monitor.yaml and the version history in the same folder)",
        f"{_KES}/a3f1a42367565b53aaf1e8300b12ac65a06178f9/ai-ml/vllm-tpu",
    ),
    Source(
        "VLLM-TPU",
        "vllm-project/tpu-inference v0.29.0, the TPU backend of the vllm/vllm-tpu:v0.29.0 image (docker/Dockerfile, "
        "tpu_inference/envs.py, runner/compilation_manager.py, worker/tpu_worker.py; the same tree is PyPI's "
        "tpu-inference 0.29.0 wheel)",
        "https://github.com/vllm-project/tpu-inference/tree/v0.29.0",
    ),
    Source(
        "VLLM-SRC",
        "vllm-project/vllm v0.29.0, the vLLM of the vllm/vllm-tpu:v0.29.0 image (vllm/v1/metrics/loggers.py, "
        "vllm/envs.py, vllm/engine/arg_utils.py; the same tree is PyPI's vllm-tpu 0.29.0 sdist)",
        "https://github.com/vllm-project/vllm/tree/v0.29.0",
    ),
    Source(
        "ADAPTER",
        "Custom Metrics Stackdriver Adapter manifest (GoogleCloudPlatform/k8s-stackdriver), commit 0857364d",
        "https://github.com/GoogleCloudPlatform/k8s-stackdriver/blob/0857364d151373fb985599f4ddee6504166de939/"
        "custom-metrics-stackdriver-adapter/deploy/production/adapter_new_resource_model.yaml",
    ),
    Source(
        "K-JETSTREAM",
        "kubernetes-engine-samples ai-ml/llm-serving-tpus-jetstream/pytorch, the download flow (`jpt serve`, "
        "jetstream-pytorch v0.2.4), commit 585132bb",
        f"{_KES}/585132bbcec695524f36603e8ad176af54361860/ai-ml/llm-serving-tpus-jetstream/pytorch",
    ),
    Source(
        "K-JETSTREAM-CONV",
        "kubernetes-engine-samples ai-ml/llm-serving-tpus-jetstream/pytorch, the converter flow (converter Jobs, "
        "jetstream-pytorch v0.2.3 Deployments), commit ae62563f",
        f"{_KES}/ae62563f1b920450d017a1e1182c0ef903276458/ai-ml/llm-serving-tpus-jetstream/pytorch",
    ),
    Source(
        "CONVERTER",
        "ai-on-gke's checkpoint converter image (Dockerfile, checkpoint_converter.sh), commit 6d21def9",
        f"{_AOG}/6d21def955d77cd130309318928f102ef0ac6e58/tutorials-and-examples/inference-servers/checkpoints",
    ),
    Source(
        "K-RAY",
        "kubernetes-engine-samples ai-ml/gke-ray/raytrain/maxtext (ray-cluster.tpu-v6e-16.yaml, Dockerfile, "
        "maxtext_ray_trainer.py), commit 0a556a67",
        f"{_KES}/0a556a677481b5f5b3e9d81cb286082057c3fc7f/ai-ml/gke-ray/raytrain/maxtext",
    ),
    Source(
        "K-RAY-SERVE-TPU",
        "kubernetes-engine-samples ai-ml/gke-ray/rayserve/llm/tpu (Dockerfile FROM vllm/vllm-tpu:v0.23.0, "
        "ray-service.tpu-v6e-multihost.yaml, serve_tpu_multihost.py), commit 7fd2a646",
        f"{_KES}/7fd2a646e542c5fb5ae1f53f5a5b40de3d5345e9/ai-ml/gke-ray/rayserve/llm/tpu",
    ),
    Source(
        "K-RAY-SERVE-TPU-DL",
        "kubernetes-engine-samples ai-ml/gke-ray/rayserve/llm/tpu at commit d9411e1c: the one-shot model "
        "downloader Job (components/model-downloader-job.yaml) and MODEL_SOURCE from the mounted path "
        "(serve_tpu_multihost.py)",
        f"{_KES}/d9411e1c82307c3563cba247a2fbd79d3c5fbc50/ai-ml/gke-ray/rayserve/llm/tpu",
    ),
    Source(
        "TPUI",
        "vllm-project/tpu-inference v0.27.0 support matrices (docs/includes/core_features.md, parallelism.md, "
        "model_support.md; .buildkite/features/multi-host.yml), the newest release tag whose docs were read: the "
        "pinned v0.29.0's matrices were not",
        "https://github.com/vllm-project/tpu-inference/tree/v0.27.0/docs/includes",
    ),
    Source(
        "GCSFUSE",
        'GKE "Configure the sidecar container of the Cloud Storage FUSE CSI driver" (volume attributes, '
        "sidecar annotations, reserved volumes)",
        "https://cloud.google.com/kubernetes-engine/docs/how-to/cloud-storage-fuse-csi-driver-sidecar",
    ),
    # -- Google's own tooling and the engines' sources, at the commits read -----------------------
    Source(
        "XPK",
        "AI-Hypercomputer/xpk src/xpk/core (system_characteristics.py, nodepool.py, capacity.py, ...), commit 367c8382",
        "https://github.com/AI-Hypercomputer/xpk/tree/367c8382/src/xpk/core",
    ),
    Source(
        "CTK",
        "GoogleCloudPlatform/cluster-toolkit (modules/internal/tpu-definition, modules/compute/gke-node-pool, "
        "examples/gke-tpu-7x, examples/gke-tpu-v6e), commit 104708037",
        "https://github.com/GoogleCloudPlatform/cluster-toolkit/tree/104708037",
    ),
    Source(
        "ACP",
        "GoogleCloudPlatform/accelerated-platforms, platforms/gke/base/core/custom_compute_class (TPU ComputeClasses)",
        "https://github.com/GoogleCloudPlatform/accelerated-platforms/tree/07d895fb/platforms/gke/base/core/custom_compute_class",
    ),
    Source(
        "REC",
        "tpu-recipes training/ironwood/cluster-nodepool.sh (fork llm-on-gke/tpu-recipes)",
        "https://github.com/llm-on-gke/tpu-recipes/blob/main/training/ironwood/cluster-nodepool.sh",
    ),
    Source(
        "MT",
        "AI-Hypercomputer/maxtext model configs and base.yml (src/maxtext/configs), commit e591f30c",
        "https://github.com/AI-Hypercomputer/maxtext/tree/e591f30c/src/maxtext/configs",
    ),
    Source(
        "SAX",
        "google/saxml saxml/server/pax/lm/params/lm_cloud.py, commit eb93f3e5",
        "https://github.com/google/saxml/blob/eb93f3e5/saxml/server/pax/lm/params/lm_cloud.py",
    ),
    Source(
        "PAX",
        "google/paxml paxml/tasks/lm/params/lm_cloud.py and model_params.py, version 03e5aeec",
        "https://github.com/google/paxml/tree/03e5aeec/paxml/tasks/lm",
    ),
    Source(
        "RAY",
        "ray-project/ray user guide gcp-gke-tpu-cluster.md, version 4443b09d",
        "https://github.com/ray-project/ray/blob/4443b09d/doc/source/cluster/kubernetes/user-guides/gcp-gke-tpu-cluster.md",
    ),
    Source(
        "RAY-SERVE-TPU",
        'Ray Serve LLM "TPU serving" guide (doc/source/serve/llm/user-guides/tpu.md), commit 4d566857',
        "https://github.com/ray-project/ray/blob/4d566857fd741029a3f14eb80c6fd9e766e67667/doc/source/serve/llm/user-guides/tpu.md",
    ),
    Source(
        "TF",
        "hashicorp/terraform-provider-google container_node_pool docs, version 020ce19e",
        "https://github.com/hashicorp/terraform-provider-google/blob/020ce19e/website/docs/r/container_node_pool.html.markdown",
    ),
    Source(
        "PUL",
        "pulumi/pulumi-gcp sdk/python/pulumi_gcp/container/_inputs.py, version 01316f36",
        "https://github.com/pulumi/pulumi-gcp/blob/01316f36/sdk/python/pulumi_gcp/container/_inputs.py",
    ),
    # -- sizing for traffic: GIQ's API, Google's serving recipes and published TPU measurements --------
    Source(
        "GIQ",
        "googleapis/googleapis google/cloud/gkerecommender/v1/gkerecommender.proto (GKE Inference Quickstart), "
        "commit 731d7f2a",
        "https://github.com/googleapis/googleapis/blob/731d7f2ab6e4e2ea15030c95039e2cb66174d4fb/google/cloud/"
        "gkerecommender/v1/gkerecommender.proto",
    ),
    Source(
        "REC-VLLM",
        "AI-Hypercomputer/tpu-recipes inference/trillium/vLLM/Llama3.1/README.md, commit 51a4773b",
        "https://github.com/AI-Hypercomputer/tpu-recipes/blob/51a4773b471442d6f97b760e6b85a1eb8f758f05/inference/"
        "trillium/vLLM/Llama3.1/README.md",
    ),
    Source(
        "JSPT-BENCH",
        "AI-Hypercomputer/jetstream-pytorch benchmarks/summary.md, commit 2ba0dd8b",
        "https://github.com/AI-Hypercomputer/jetstream-pytorch/blob/2ba0dd8bd3725d8ec6173261ab0016f9f336eeb8/"
        "benchmarks/summary.md",
    ),
    # -- books and articles ------------------------------------------------------------------------
    Source(
        "SB",
        'jax-ml/scaling-book "How to Scale Your Model" (tpus.md, inference.md, training.md, applied-*.md), '
        "commit 0819a7d8",
        "https://github.com/jax-ml/scaling-book/tree/0819a7d8",
    ),
    Source(
        "NEO",
        "Neowin on Trillium's general availability, quoting Google's GA announcement (Dec 2024)",
        "https://www.neowin.net/amp/google-takes-on-nvidia-blackwell-gpus-with-the-new-trillium-tpus/",
    ),
)

BY_KEY = {source.key: source for source in SOURCES}


def keys_in(text: str) -> list[str]:
    """The citation keys in one piece of prose, in order, repeats kept."""
    return [match.group(1) for match in KEY.finditer(text)]


def resolves(key: str) -> bool:
    return key in BY_KEY or key in LABELS


def addresses(text: str) -> dict[str, str]:
    """Key -> address for each source key `text` cites, first use first (what `--json` output carries)."""
    return {key: BY_KEY[key].url for key in keys_in(text) if key in BY_KEY}


def footnotes(text: str) -> list[str]:
    """`[KEY] title: address` for each source key `text` shows, first use first: what a CLI prints
    below output that cites, so the reader can open every key without this repository."""
    seen = dict.fromkeys(key for key in keys_in(text) if key in BY_KEY)
    return [f"[{key}] {BY_KEY[key].title}: {BY_KEY[key].url}" for key in seen]


def markdown() -> str:
    """docs/sources.md."""
    lines = [
        "# Sources",
        "",
        "<!-- Generated by `python -m tpu_stacks.sources > docs/sources.md` from components/tpu_stacks/sources.py;",
        "     tests/test_sources.py fails when this file is stale. -->",
        "",
        "Facts in this repository name their source. Where a full address would not fit, a short key in",
        "brackets stands for it, and this table resolves every key the code, the docs, the stack files and",
        "the CLI use (`tpu-stacks size` prints the address of each key it shows). Repositories are cited at",
        "the commit that was read.",
        "",
        "| Key | Source | Address |",
        "|---|---|---|",
    ]
    lines += [f"| [{s.key}] | {s.title} | <{s.url}> |" for s in SOURCES]
    lines += ["", "Labels that mark how sure a statement is:", ""]
    lines += [f"- [{label}] {meaning}." for label, meaning in LABELS.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
