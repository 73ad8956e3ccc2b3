"""What a JetStream-PyTorch deployment asks for, and the names, paths and arguments its plan derives.

Two flows, as upstream shipped them (shared/reference/upstream-manifests.md §4):
- `converter` (the tutorial, v0.2.3): a Job converts the Hugging Face checkpoint into
  `gs://BUCKET/pytorch/<model>/final/bf16/`; the server reads it through a read-only GCS FUSE mount.
- `download` (upstream since Dec 2024, v0.2.4): `jpt serve --model_id` downloads at start; no Job.
`jetstream.plan.plan_jetstream` checks a spec and sizes the slice into a `JetStreamPlan`.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tpu_stacks.catalog.models import ResolvedModel
from tpu_stacks.catalog.tpu import SliceShape
from tpu_stacks.jetstream.models import JetStreamModel
from tpu_stacks.sizing import Candidate, ServingRequest

# Pinned upstream images (§4.2, §4.3, §4.4). Tags only: upstream publishes no digests.
REGISTRY = "us-docker.pkg.dev/cloud-tpu-images/inference"
CONVERTER_IMAGE = f"{REGISTRY}/inference-checkpoint:v0.2.3"
FLOW_IMAGES = {
    "converter": (f"{REGISTRY}/jetstream-pytorch-server:v0.2.3", f"{REGISTRY}/jetstream-http:v0.2.2"),
    "download": (f"{REGISTRY}/jetstream-pytorch-server:v0.2.4", f"{REGISTRY}/jetstream-http:v0.2.3"),
}
FLOW_BATCH = {"converter": 32, "download": 30}  # upstream batch sizes (§4.2; §4.3 after ad1460eb)
HTTP_PORT = 8000
GRPC_PORT = 9000
MODELS_DIR = "/models"  # the FUSE mount, as in the tutorial's --checkpoint_path
WEIGHTS_DIR = "/weights"  # download flow: --working_dir, a local emptyDir per pod
COMPILE_CACHE_DIR = "/jax-cache"
HEALTHCHECK_SINCE = (0, 2, 3)  # jetstream-http serves /healthcheck from v0.2.3 (Oct 2024, §4.1)


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ResourcesSpec(_Spec):
    cpu: str = "8"
    memory: str = "64Gi"


class ConverterSpec(_Spec):
    """The checkpoint-converter Job (converter flow). It runs on CPU: conversion needs no TPU."""

    image: str = CONVERTER_IMAGE
    cpu: str = "8"
    memory: str = "64Gi"
    """The 7B/8B conversions hold the whole state dict in memory (Gemma's PyTorch checkpoint is fp32)."""
    disk_gib: int = Field(default=150, ge=40, le=4000, alias="diskGib")
    """Scratch disk for the download, the converted copy and /tmp staging (~70 GB for 7B/8B)."""
    storage_class: str = Field(default="standard-rwo", alias="storageClass")
    timeout_minutes: int = Field(default=120, ge=10, le=1440, alias="timeoutMinutes")
    backoff_limit: int = Field(default=2, ge=0, le=10, alias="backoffLimit")
    ttl_hours: int = Field(default=24, ge=0, le=24 * 90, alias="ttlHours")
    """Keep the finished Job, its pods and their logs this long; 0 keeps them until destroy."""
    node_selector: dict[str, str] | None = Field(default=None, alias="nodeSelector")
    """Run on these nodes instead (Standard default: the CPUs of the idle TPU pool's VMs)."""


class JetStreamSpec(_Spec):
    model: str
    flow: Literal["converter", "download"] = "converter"
    tpu_generation: str = Field(default="v5e", alias="tpuGeneration")
    topology: str = "2x4"
    """The tutorial's single-host slice; `auto` picks the smallest single-host slice that fits."""
    zone: str | None = None
    """Zone of the TPU pool (required for a regional Standard cluster)."""
    replicas: int = Field(default=2, ge=1, le=64)
    """Server replicas; the TPU pool gets one node per replica."""
    batch_size: int | None = Field(default=None, gt=0, le=4096, alias="batchSize")
    max_cache_length: int = Field(default=2048, gt=0, alias="maxCacheLength")
    max_input_length: int = Field(default=1024, gt=0, alias="maxInputLength")
    max_output_length: int = Field(default=1024, gt=0, alias="maxOutputLength")
    quantize_weights: bool = Field(default=False, alias="quantizeWeights")
    quantize_kv_cache: bool = Field(default=False, alias="quantizeKvCache")
    server_image: str | None = Field(default=None, alias="serverImage")
    http_image: str | None = Field(default=None, alias="httpImage")
    converter: ConverterSpec = Field(default_factory=ConverterSpec)
    namespace: str = "jetstream"
    ksa_name: str = Field(default="jetstream", alias="ksaName")
    gsa_name: str = Field(default="wi-jetstream", alias="gsaName")
    force_destroy_bucket: bool = Field(default=False, alias="forceDestroyBucket")
    compile_cache: bool = Field(default=True, alias="compileCache")
    resources: ResourcesSpec = Field(default_factory=ResourcesSpec)
    startup_minutes: int = Field(default=30, ge=5, le=240, alias="startupMinutes")
    spot: bool = False
    reservation: str | None = None


class JetStreamPlan(BaseModel):
    """Everything decided for one JetStream deployment."""

    model_config = ConfigDict(frozen=True)

    spec: JetStreamSpec
    model: ResolvedModel
    names: JetStreamModel
    request: ServingRequest
    verdict: Candidate
    server_image: str
    http_image: str

    @property
    def shape(self) -> SliceShape:
        return self.verdict.shape

    @property
    def converter_flow(self) -> bool:
        return self.spec.flow == "converter"

    @property
    def dtype_dir(self) -> str:
        return "int8" if self.spec.quantize_weights else "bf16"

    @property
    def checkpoint_prefix(self) -> str:
        """Bucket path the converter writes and the server reads (the tutorial's layout)."""
        return f"pytorch/{self.names.checkpoint_dir}/final/{self.dtype_dir}/"

    @property
    def converter_job_name(self) -> str:
        """One per model and dtype, so two conversions can run side by side."""
        return f"checkpoint-converter-{self.names.checkpoint_dir}-{self.dtype_dir}"

    @property
    def health_path(self) -> str:
        """The HTTP sidecar's end-to-end check, or its root on builds older than /healthcheck."""
        match = re.search(r":v(\d+)\.(\d+)\.(\d+)$", self.http_image)
        if match and tuple(int(part) for part in match.groups()) < HEALTHCHECK_SINCE:
            return "/"
        return "/healthcheck"

    @property
    def compile_cache_prefix(self) -> str:
        """Keyed by model, slice and server build: JAX keys entries itself, this keeps them apart."""
        model_slug = re.sub(r"[^a-z0-9.-]+", "-", self.model.id.lower()).strip("-")
        build = re.sub(r"[^A-Za-z0-9.-]+", "-", self.server_image.rsplit(":", 1)[-1])[:16]
        return f"jax-cache/{model_slug}/{self.shape.generation}-{self.shape.topology}/{build}"

    def server_args(self) -> list[str]:
        spec = self.spec
        if self.converter_flow:  # the tutorial's eight arguments, in its order (§4.2)
            directory = f"{MODELS_DIR}/{self.checkpoint_prefix}"
            return [
                f"--size={self.names.size}",
                f"--model_name={self.names.model_name}",
                f"--batch_size={self.request.batch}",
                f"--max_cache_length={spec.max_cache_length}",
                f"--quantize_weights={spec.quantize_weights}",
                f"--quantize_kv_cache={spec.quantize_kv_cache}",
                f"--tokenizer_path={directory}tokenizer.model",
                f"--checkpoint_path={directory}model.safetensors",
            ]
        args = [  # `jpt serve` (§4.3)
            f"--model_id={self.names.hf_id}",
            f"--override_batch_size={self.request.batch}",
            "--enable_model_warmup=True",
            f"--max_input_length={spec.max_input_length}",
            f"--max_output_length={spec.max_output_length}",
            f"--working_dir={WEIGHTS_DIR}",
        ]
        if spec.quantize_weights:
            args.append("--quantize_weights=True")
        if spec.quantize_kv_cache:
            args.append("--quantize_kv_cache=True")
        if spec.compile_cache:
            args.append(f"--internal_jax_compilation_cache={COMPILE_CACHE_DIR}")
        return args

    def converter_args(self, bucket: str) -> list[str]:
        """The converter's `-x=value` arguments (its getopts parser takes the text after `=`, §4.4)."""
        return [
            "-s=jetstream-pytorch",
            f"-m={self.names.converter_repo}",
            f"-o=gs://{bucket}/{self.checkpoint_prefix}",
            f"-n={self.names.model_name}",
            f"-q={self.spec.quantize_weights}",
            "-h=True",
        ]
