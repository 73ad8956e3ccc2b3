"""Multi-host vLLM serving, decided: what a `RayService` serving one model over multi-host TPU slices runs.

A model no single TPU host holds (Llama 3.1 405B: 811.7 GB in bf16, a v6e host has 256 GiB) is sized on a
multi-host slice (`sizing.serving_parallelism(shape).multi_host`). vLLM TPU (tpu-inference) spans such a
slice through its Ray executor, one Ray worker per host, tensor parallelism across every chip of the
slice; GKE's documented path is Ray Serve LLM on KubeRay. Sources, as pinned here:
- GKE, "Serve Gemma open models using multi-host TPUs on GKE with Ray"
  (https://cloud.google.com/kubernetes-engine/docs/tutorials/serve-multi-host-tpu-llm) and its samples
  [K-RAY-SERVE-TPU] (ray-service.tpu-v6e-multihost.yaml, Dockerfile, serve_tpu_multihost.py): a RayService with
  a CPU head and one TPU worker group of `numOfHosts` = hosts, `google.com/tpu` = chips per host, the
  worker env `TPU_MULTIHOST_BACKEND=ray`, `TPU_BACKEND_TYPE=jax`, `JAX_PLATFORMS=tpu,cpu`,
  `ENABLE_PJRT_COMPATIBILITY=true`, `VBAR_CONTROL_SERVICE_URL=$(NODE_IP):8353`; Serve on 8000. Of those,
  `TPU_BACKEND_TYPE` is read by nothing at the pinned versions (ledger: tpu-inference.backend-type-unread;
  tpu-inference only copies it to its Ray workers, tpu_platform.py `additional_env_vars`; no reader in ray, vllm,
  tpu-inference, jax, jaxlib or libtpu): dropped.
- Ray Serve LLM's TPU guide (https://docs.ray.io/en/master/serve/llm/user-guides/tpu.html): with
  `accelerator_config: {kind: tpu, topology}` one replica reserves one whole slice (a SlicePlacementGroup,
  one bundle per host) and the tpu-inference executor starts one worker per bundle.
- Ray 2.60.0 (the release pinned here, PyPI `ray==2.60.0`): python/ray/llm/_internal/serve/core/configs/
  llm_config.py (LLMConfig: model_loading_config, accelerator_type, accelerator_config, engine_kwargs,
  deployment_config, runtime_env, log_engine_metrics), core/configs/accelerators.py (TPUConfig: kind,
  topology), core/ingress/builder.py (LLMServingArgs.llm_configs), engines/vllm/vllm_models.py (the
  executor backend is forced to `ray`; a `model` in engine_kwargs is refused). The GKE sample installs a
  Ray master wheel; 2.60.0 is the first release we found whose LLMConfig has the TPU `accelerator_config`.

What bounds a replica's start, left at Ray's defaults here: the engine's start (ledger:
ray.serve-llm.engine-start-timeout), the slice's reservation (ledger: ray.tpu.head-reservation-timeout) and Serve's
retries of a failed start (ledger: ray.serve.per-replica-retry-count, ray.serve.constructor-retry-count).

The server image must hold both vLLM TPU and `ray[serve]` at that release: no published image does, so
the stack runs an image built from `ray_serve_image/` (FROM the pinned vLLM TPU image, the pinned Ray on
top), pushed to the stack's registry (`vllm.registry.mode: standard`). Pure: no provider SDK.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from tpu_stacks.catalog.engines import engine_of_image, image_repository
from tpu_stacks.catalog.engines.ray import RAY_SERVE
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.inference_gateway import serving_api
from tpu_stacks.catalog.ray_serve import LLM_CONFIG_KEY, OPENAI_APP_IMPORT_PATH, RAY_SERVE_VERSION
from tpu_stacks.catalog.tpu import SliceShape
from tpu_stacks.catalog.upstream import fact, number, text
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.cloud_build import submit_command
from tpu_stacks.names import K8S_NAME
from tpu_stacks.objects.awaits import IMAGE_PULL_MINUTES, NODE_PROVISIONING_MINUTES
from tpu_stacks.serving.exposure import require_clients
from tpu_stacks.sizing import Parallelism, serving_parallelism
from tpu_stacks.vllm.download_plan import WRITER_SUFFIX, writer_ksa
from tpu_stacks.vllm.spec import VllmSpec


def _serve_port() -> int:
    port = serving_api("ray").default_port
    if port is None:  # the catalogue gives Ray Serve an HTTP port; a test keeps it so
        raise RuntimeError("catalog/inference_gateway.py: Ray Serve has no default port")
    return port


SERVE_PORT = _serve_port()
"""Ray Serve's HTTP proxy (`http_options.port`, Ray's default; KubeRay DefaultServingPort, v1.7.0
ray-operator/controllers/ray/utils/constant.go; ledger: kuberay.port.serving)."""
DASHBOARD_AGENT_PORT = number("kuberay.port.dashboard-agent")
"""The dashboard agent (Ray's and KubeRay's default listen port): the readiness probes call it from the kubelet, on
the pod itself. Its `/api/healthz` (raylet, and on the head the GCS) stays public with token authentication on (ray
dashboard/http_server_agent.py PUBLIC_EXACT_PATHS, ledger: ray.dashboard-agent.public-healthz)."""
NODE_HEALTH_PATH = str(fact("kuberay.node-health-path").value)
"""KubeRay's own readiness check of a Ray >= 2.53 node (an HTTP GET of the agent's unified health endpoint)."""
WORKER_READINESS = {
    "initial_delay_seconds": number("kuberay.readiness.initial-delay"),
    "timeout_seconds": number("kuberay.readiness.timeout"),
    "period_seconds": number("kuberay.readiness.period"),
    "failure_threshold": number("kuberay.readiness.failure-threshold"),
}
"""The TPU workers' readiness probe: KubeRay's node check and timings, without the Serve proxy check KubeRay adds on
RayService workers (a worker runs a proxy only while it holds a Serve replica, so most hosts of a slice would never
be Ready). KubeRay keeps a readiness probe the user sets (ledger: kuberay.user-readiness-probe-kept), the add-on's
KubeRay too, a claim `verify` settles (ledger: gke.ray-addon.probes)."""
APP_NAME = "llm"
SERVE_IMAGE_DIR = "components/tpu_stacks/vllm/ray_serve_image"
SERVE_IMAGE_REVISION = 3
"""The revision of SERVE_IMAGE_DIR a server image is built from, the `-r<N>` of its tag (Pulumi.vllm-405b.yaml):
an image built from an older folder lacks what the Serve config now names (revision 2: the start callback), so a
changed folder takes a new revision, and a test fails until it does (revision 3: cloudbuild.yaml logs to Cloud
Logging only, as a build run by the stack's builder account must)."""
VLLM_RELEASE_TAG = r"v\d+\.\d+\.\d+"
"""A vLLM release's image tag, the form of the pinned image's (catalog/engines/vllm.py: `v0.29.0`): in registry mode
standard, an image so tagged is a plain vLLM image pushed as is (the single-host recipe's `vllm-tpu:v0.29.0`), not
one built from SERVE_IMAGE_DIR, whose tag names its build (Pulumi.vllm-405b.yaml)."""
CALLBACK_MODULE = "tpu_stacks_serve_callbacks"
CALLBACK_CLASS = f"{CALLBACK_MODULE}:WaitForSlice"
"""The Serve config's `callback_config.callback_class` (`module:Class`, how Ray Serve LLM loads it): a replica waits
for its whole slice to be placed before Ray Serve LLM reads the slice's nodes, which it does at once on a group it
has not waited for (ledger: ray.serve-llm.node-init-reads-pending-group, ray.tpu.slice-group-not-awaited,
ray.serve-llm.callback-config, ray.serve-llm.callback-before-node-init, ray.serve-llm.callback-ctx-placement-group,
ray.serve-llm.callback-class-path). Without it a start that reserved the slice's first host fails within seconds
while the others come up, and the retries below run out. The module ships in the server image
(SERVE_IMAGE_DIR)."""
"""The multi-host server image's folder (Dockerfile, cloudbuild.yaml) from the repository root."""
WORKER_GROUP = "tpu-slice"
"""The RayService's one TPU worker group: each of its replicas is one slice of `hosts` pods."""

ENGINE_ENV = {
    # tpu-inference's Ray executor across hosts: read where the vLLM config is built (tpu_platform.py
    # check_and_update_config, in the replica's remote config task) and by every TPU worker; unset, it forces the
    # single-host executor over the `ray` Serve LLM asks for (ledger: tpu-inference.multihost-backend).
    "TPU_MULTIHOST_BACKEND": "ray",
}
"""The engine's multi-host setting, in the Serve config's runtime_env: Ray applies it to the replica and every
engine worker it starts (LLMConfig.runtime_env, "the model deployment replica and the engine workers")."""
WORKER_ENV = {
    # JAX's backends, TPU first: the GKE sample sets it on the TPU worker containers only. In the runtime_env it
    # also reached the CPU head (the Serve replica may run there), where no TPU backend can start.
    "JAX_PLATFORMS": "tpu,cpu",
    # Relaxes the PJRT C API version check between jaxlib and libtpu: jaxlib's XLA reads it (the string is in
    # jaxlib 0.11.0's libjax_common.so, the jax tpu-inference 0.29.0 pins); the GKE sample sets it on the workers
    # (ledger: gke.sample.tpu-worker-env).
    "ENABLE_PJRT_COMPATIBILITY": "true",
}
"""What the TPU worker containers set for JAX and libtpu (the GKE multi-host sample's worker env)."""
ENGINE_START_VARIABLE = "RAYLLM_ENGINE_START_TIMEOUT_S"
"""Ray Serve LLM's limit on one replica's engine start (3600 s unless set; read at import in the replica's process,
which the runtime_env reaches: ledger: ray.serve-llm.engine-start-timeout)."""
RETRY_VARIABLE = "RAY_SERVE_MAX_PER_REPLICA_RETRY_COUNT"
"""Serve's failed starts allowed per target replica (3 unless set), read at import by the Serve controller, which
runs on the head (ledger: ray.serve.per-replica-retry-count, ray.serve.controller-on-head)."""


HOST_START_MINUTES = 5
"""After its node and image, a TPU host runs its init containers (the compile cache's restore from GCS, the GCS FUSE
sidecar) and `ray start` before its raylet registers the slice's resources: an allowance [I], not a measurement."""


def start_attempts() -> int:
    """Replica starts Serve must allow before the slice's first host can answer: each start reserves the slice's
    host 0 and fails after Ray's fixed reservation timeout while that host is not up (a TPU node pool scaled from
    zero, then the image: awaits.py's budgets, then the host's own start: HOST_START_MINUTES), and Serve gives a
    deployment up for good after too many failed starts in a row (DEPLOY_FAILED, which KubeRay never resubmits).
    Once host 0 is up, a start waits for the rest of the slice inside its engine-start limit (CALLBACK_CLASS). So:
    every reservation that may time out within those budgets, plus the start that succeeds. KubeRay submits the
    Serve config once the head is Ready, whatever the hosts (ledger: ray.serve.deploy-failed-threshold,
    kuberay.submit-on-head-ready, kuberay.no-resubmit-on-failure)."""
    waiting_s = (NODE_PROVISIONING_MINUTES + IMAGE_PULL_MINUTES + HOST_START_MINUTES) * 60
    return math.ceil(waiting_s / number("ray.tpu.head-reservation-timeout")) + 1


def controller_env() -> dict[str, str]:
    """The Serve controller's environment (the head container's): the retries per replica, `start_attempts()`."""
    return {RETRY_VARIABLE: str(start_attempts())}


def parallelism(shape: SliceShape) -> Parallelism:
    """One source: the sizing module's parallelism of a serving replica on `shape`."""
    return serving_parallelism(shape)


def accelerator_type(shape: SliceShape) -> str:
    """Ray's accelerator type of the slice's generation (TPU-V6E for v6e), from the engine catalogue."""
    platform = RAY_SERVE.platform(shape.generation)
    if platform is None:
        raise UserError(
            "vllm.tpuGeneration",
            shape.generation,
            f"is not offered for multi-host serving with Ray Serve LLM {RAY_SERVE.version} (the {shape.topology} "
            "slice spans hosts; catalog/engines/ray.py RAY_SERVE says why)",
            f"use one of {', '.join(RAY_SERVE.served_generations or ())}",
        )
    return platform


def check_multihost(spec: VllmSpec, shape: SliceShape) -> None:
    """What a multi-host slice needs from the vllm section, refused in one line before any resource."""
    accelerator_type(shape)
    # the download Job's own ServiceAccount is named after the servers' (vllm/download_plan.py)
    K8S_NAME.check(
        "vllm.ksaName", writer_ksa(spec.ksa_name), f"use a name of at most {63 - len(WRITER_SUFFIX)} characters"
    )
    if spec.extra_args:
        raise UserError(
            "vllm.extraArgs[0]",
            spec.extra_args[0],
            f"cannot be given on the multi-host {shape.topology} slice: Ray Serve LLM takes engine settings as "
            "engine_kwargs in its config, not server flags",
            "remove extraArgs (maxModelLen, maxNumBatchedTokens and maxNumSeqs are set for you)",
        )
    if "autoscaling" in spec.model_fields_set:
        raise UserError(
            "vllm.autoscaling",
            spec.autoscaling.metric,
            f"has no effect on the multi-host {shape.topology} slice: Ray Serve's autoscaler adds and removes whole "
            "slices between vllm.replicas min and max, no HPA",
            "remove autoscaling",
        )
    if spec.api_key:
        raise UserError(
            "vllm.apiKey",
            True,
            f"is not offered on the multi-host {shape.topology} slice: Ray Serve LLM's OpenAI app has no API key",
            "remove apiKey and name your clients in vllm.sourceRanges, or use exposure cluster",
        )
    # No API key at all (ledger: ray.serve-llm.openai-app-no-auth): an internal load balancer must name its clients.
    unguarded = "Ray Serve LLM's OpenAI app has no API key or other authentication"
    require_clients("vllm", spec.exposure, spec.source_ranges, f"of the multi-host {shape.topology} slice", unguarded)
    image = spec.registry.image if spec.registry.mode == "standard" else spec.image
    if spec.registry.mode != "standard" and engine_of_image(image or "") is VLLM:
        raise UserError(
            "vllm.registry.mode",
            spec.registry.mode,
            f"runs the vLLM image {image}, which has no Ray Serve LLM {RAY_SERVE_VERSION}, on the multi-host "
            f"{shape.topology} slice",
            f"build {SERVE_IMAGE_DIR} (its cloudbuild.yaml) and set registry mode standard with that image",
        )
    if spec.registry.mode == "standard" and re.fullmatch(VLLM_RELEASE_TAG, image_repository(image or "")[1]):
        raise UserError(
            "vllm.registry.image",
            image,
            f"carries a vLLM release tag, as the plain vLLM image ({VLLM.images[0]}:{VLLM.version}) does, which has "
            f"no Ray Serve LLM {RAY_SERVE_VERSION}, on the multi-host {shape.topology} slice",
            f"build {SERVE_IMAGE_DIR} (its cloudbuild.yaml) and name that image with a tag of its build, e.g. "
            f"vllm-tpu:serve-ray{RAY_SERVE_VERSION}-vllm{VLLM.version.removeprefix('v')}-r{SERVE_IMAGE_REVISION}",
        )


def serve_config(
    *,
    model_id: str,
    shape: SliceShape,
    max_model_len: int,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    model_source: str,
    min_replicas: int,
    max_replicas: int,
    engine_env: dict[str, str],
    startup_minutes: int,
) -> dict[str, Any]:
    """The RayService's Serve config: Ray Serve LLM's OpenAI app with one model, one replica per slice.

    Tensor parallelism spans the slice's chips (pipeline 1: `Parallelism`); `accelerator_config`
    reserves the whole slice per replica; `min/max_replicas` are whole slices, scaled on the requests in
    flight per replica with `max_num_seqs` as the target: beyond it requests wait in the engine, so another
    slice helps (Ray Serve LLM's own default target, 1e9 per replica, would never scale on load: Ray 2.60.0
    python/ray/llm/_internal/serve/constants.py DEFAULT_MAX_TARGET_ONGOING_REQUESTS). `model_source`: the
    weights' folder on the bucket's GCS FUSE mount, written before by the download Job (vllm/download_plan.py):
    the engine loads from it and downloads nothing. `engine_env`: the engine's own variables
    (vllm/engine_env.py, the same as a single-host pod's). `startup_minutes`: the engine's cold start, which also
    bounds Ray Serve LLM's own wait for it (one budget for both: vllm.startupMinutes)."""
    split = parallelism(shape)
    env = {**engine_env, **ENGINE_ENV, ENGINE_START_VARIABLE: str(startup_minutes * 60)}
    llm_config: dict[str, Any] = {
        "model_loading_config": {"model_id": model_id, "model_source": model_source},
        "accelerator_type": accelerator_type(shape),
        # One whole slice of this topology per replica (ledger: ray.serve-llm.tpu-topology).
        "accelerator_config": {"kind": text("ray.serve-llm.tpu-kind"), "topology": shape.topology},
        "engine_kwargs": {
            "tensor_parallel_size": split.tensor_parallel,
            "pipeline_parallel_size": split.pipeline_parallel,
            "max_model_len": max_model_len,
            "max_num_batched_tokens": max_num_batched_tokens,
            "max_num_seqs": max_num_seqs,
            "distributed_executor_backend": "ray",
        },
        "deployment_config": {
            "autoscaling_config": {
                "min_replicas": min_replicas,
                "max_replicas": max_replicas,
                "target_ongoing_requests": max_num_seqs,
            },
            # Serve's other bound on failed starts, min(this, target replicas x RETRY_VARIABLE): settable here
            # (a DeploymentConfig field), silently dropped in serveConfigV2's deployments list.
            # A DeploymentConfig field, so LLMConfig.deployment_config sets it (ledger:
            # ray.serve.max-constructor-retry-count-field).
            "max_constructor_retry_count": start_attempts() * max_replicas,
        },
        # To the replica and the engine's workers (ledger: ray.serve-llm.runtime-env-to-replica).
        "runtime_env": {"env_vars": env},
        # vLLM's engine metrics through Ray's metrics port (LLMConfig.log_engine_metrics, default true): explicit.
        "log_engine_metrics": True,
        # Each start waits for its whole slice before Ray Serve LLM reads the slice's nodes (CALLBACK_CLASS).
        "callback_config": {"callback_class": CALLBACK_CLASS},
    }
    return {
        "http_options": {"host": "0.0.0.0", "port": SERVE_PORT},
        "applications": [
            {
                "name": APP_NAME,
                "route_prefix": "/",
                "import_path": OPENAI_APP_IMPORT_PATH,
                "args": {LLM_CONFIG_KEY: [llm_config]},
            }
        ],
    }


def serve_config_yaml(config: dict[str, Any]) -> str:
    """`serveConfigV2` is a YAML string (KubeRay RayServiceSpec.ServeConfigV2): sorted keys, so the same plan
    always writes the same text."""
    return yaml.safe_dump(config, sort_keys=True, default_flow_style=False)


def image_build_command(image: str, vllm_image: str, project: str, region: str, account: str, bucket: str) -> str:
    """`gcloud builds submit` of the server image folder (run from the repository root): `image` is the
    reference the RayService pulls, built FROM the pinned `vllm_image` with Ray Serve at RAY_SERVE_VERSION, in
    `project` and `region` as the stack's builder `account`, the source staged in `bucket` (gcp/cloud_build.py, the
    rule every stack's build follows)."""
    values = {"_IMAGE": image, "_VLLM_IMAGE": vllm_image, "_RAY_VERSION": RAY_SERVE_VERSION}
    return submit_command(SERVE_IMAGE_DIR, values, project, region, account, bucket)
