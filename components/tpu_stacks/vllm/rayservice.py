"""The multi-host vLLM server as a KubeRay `RayService` (ray.io/v1): a CPU head and one TPU worker group.

Decisions are in `vllm.multihost_plan` (the Serve config) and `vllm.plan` (the slice, the pools); this
module builds the object. The shape follows GKE's multi-host sample ([K-RAY-SERVE-TPU]
ray-service.tpu-v6e-multihost.yaml) with this project's hardening
(k8s.security), the weights bucket through GCS FUSE (read-only: one Job wrote the weights before,
vllm.weights_download) and the per-pod XLA compile cache of the single-host
server (vllm.pod), and KubeRay v1.7.0's fields (ray-operator/apis/ray/v1/rayservice_types.go,
raycluster_types.go):
- `workerGroupSpecs[0]`: `numOfHosts` = the slice's hosts (one pod per TPU VM, every chip of it), its
  `replicas`/`minReplicas`/`maxReplicas` = `vllm.replicas` in whole slices; KubeRay's in-tree autoscaler
  (`enableInTreeAutoscaling`) adds and removes slices as Ray Serve's autoscaler asks, only when the range
  is open. No HPA and no metrics adapter in this mode.
- `upgradeStrategy: None`: the default `NewCluster` starts a second cluster, a second whole slice per
  replica that the node pools do not have; a change of the cluster replaces the RayService instead
  (`replace_on_changes`), a change of the Serve config is applied in place by KubeRay.
- Probes: KubeRay injects the head's (the dashboard agent's node health) and the liveness probes, and on RayService
  workers a readiness probe that also asks the node's Serve proxy (common/pod.go initLivenessAndReadinessProbe;
  ledger: kuberay.worker-serve-readiness). Ray Serve runs a proxy only on the head and on nodes that hold a Serve
  replica (ray serve/_private/controller.py `_update_proxy_nodes`; ledger: ray.serve.proxy-nodes), so most hosts of a
  slice would never be Ready: the workers get their own readiness probe, KubeRay's node check alone
  (multihost_plan.WORKER_READINESS), which KubeRay keeps (ledger: kuberay.user-readiness-probe-kept). Traffic goes to
  the head's proxy only: KubeRay labels the head `ray.io/serve=true` while its proxy answers `/-/healthz`
  (rayservice_controller.go, the operator's check of the head pod; ledger: kuberay.head-serve-label-managed), and the
  stack's Service selects the head with that label. KubeRay's own `<name>-serve-svc` selects every pod labelled
  `ray.io/serve=true` (ledger: kuberay.serve-service-selector), and KubeRay labels workers so always: with Ready
  workers it lists them too, although they answer nothing on the serving port. Use the stack's `vllm-service`; the
  RayService's `Ready` condition (serve endpoints > 0) still requires every Serve application RUNNING, since that
  Service only exists then (ledger: kuberay.ready-condition).
- `authOptions: {mode: token}`: KubeRay generates a token Secret per RayCluster, gives it to every Ray container
  (RAY_AUTH_MODE, RAY_AUTH_TOKEN) and sends it on its dashboard calls; Ray then refuses unauthenticated calls to
  the dashboard, the agents and its gRPC servers. Serve's proxy on the serving port is not token-protected (Ray
  2.60.0 serve/_private/proxy.py has no authentication), nor are the health endpoints the probes call.
- GKE's Ray add-on runs Google's KubeRay at a version it does not name: that it behaves as v1.7.0 does here (the
  Ready condition, upgradeStrategy None, token authentication) is a claim the cluster check settles
  (ledger: gke.ray-addon.ready-condition, gke.ray-addon.upgrade-none, gke.ray-addon.auth).
- `pulumi up` waits for the RayService's `Ready` condition (serve endpoints > 0, rayservice_types.go
  RayServiceReady) for a slice, the image and the engine's cold start (`vllm.startupMinutes`).
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.engines.ray import RAY_SERVE
from tpu_stacks.catalog.upstream import text
from tpu_stacks.cluster.plan import PoolPlan
from tpu_stacks.k8s import compile_cache
from tpu_stacks.k8s.gcsfuse import fuse_volume, sidecar_annotations
from tpu_stacks.k8s.huggingface import hf_env
from tpu_stacks.k8s.platform_flows import TPU_RUNTIME_PORT
from tpu_stacks.k8s.security import container_security_context, harden
from tpu_stacks.k8s.tpu import tpu_node_selector, tpu_resources
from tpu_stacks.objects.awaits import IMAGE_PULL_MINUTES, NODE_PROVISIONING_MINUTES, WAIT_FOR_ANNOTATION, AwaitBudget
from tpu_stacks.ray.pods import RAY_TMP_GIB, ROLE_LABEL
from tpu_stacks.ray.ports import SERVE_HEAD_PORTS
from tpu_stacks.vllm.download_plan import model_path
from tpu_stacks.vllm.engine_env import engine_env
from tpu_stacks.vllm.multihost_plan import (
    DASHBOARD_AGENT_PORT,
    NODE_HEALTH_PATH,
    RAY_SERVE_VERSION,
    SERVE_PORT,
    WORKER_ENV,
    WORKER_GROUP,
    WORKER_READINESS,
    controller_env,
    serve_config,
    serve_config_yaml,
)
from tpu_stacks.vllm.plan import VllmPlan
from tpu_stacks.vllm.pod import (
    HF_SECRET_KEY,
    LOCAL_CACHE,
    OWNER_OPTIONS,
    USER,
    _mounts,
    _volumes,
    workload_annotations,
)

API_VERSION = "ray.io/v1"
NAME = "vllm-tpu"
WORKER_CONTAINER = "ray-worker"
"""The TPU worker group's container: the dashboard charts its accelerator and counts its pods as slice hosts."""
SERVE_LABEL = text("kuberay.label.serve")
"""KubeRay's label on the head while its Serve proxy is healthy (utils.RayClusterServingServiceLabelKey; on workers
always "true")."""
SERVING = text("kuberay.label.serve-true")
"""Its value on such a pod."""
SERVE_PORT_NAME = text("kuberay.port-name.serve")
"""The container port KubeRay finds Serve's proxy by (its readiness probe, the head's proxy health check)."""
METRICS_PORT_NAME = text("kuberay.port-name.metrics")
AUTH_OPTIONS = {"mode": "token"}
"""KubeRay token authentication, the mode explicit: KubeRay enables it only when `mode` is `token` (utils.go
IsAuthEnabled), and refuses it without a rayVersion of 2.52.0 or later (ledger: kuberay.auth-explicit-mode,
kuberay.auth-min-ray-version, kuberay.auth-dashboard-client)."""
HEAD_CPU = "4"
HEAD_MEMORY = "16Gi"
"""The head runs Ray's GCS, dashboard, Serve's controller, proxy and OpenAI ingress, no engine (the sample's
head asks 2 CPU and 16Gi; two more CPUs for the ingress replicas Serve LLM places per model replica)."""
READY = {WAIT_FOR_ANNOTATION: f"condition={text('kuberay.rayservice.ready-condition')}"}
HEAD_VOLUMES = ("dshm", "weights")
"""What the head mounts of the server's volumes: shared memory for Ray's object store and the weights read-only
(GKE's sample mounts the bucket on the head too, [K-RAY-SERVE-TPU-DL]: `model_source` is a path there, which Ray
Serve LLM may read on the head for the model's config and tokenizer). No Hugging Face token on any Ray pod: they load
from that path and download nothing; the download Job alone holds the token (vllm/weights_download.py)."""
WORKER_VOLUMES = ("dshm", "weights", "xla-cache")
"""A TPU host's: shared memory, the weights (read-only, no file cache: see READ_ONLY_OPTIONS), the compile cache."""
READ_ONLY_OPTIONS = ",".join(("implicit-dirs", "only-dir=weights", *OWNER_OPTIONS))
"""Every Ray pod's weights mount: the download Job's folder, no file cache. Each TPU host reads the whole checkpoint,
file after file on one thread (tpu-inference under TPU_MULTIHOST_BACKEND=ray, ledger:
tpu-inference.multihost-reads-every-file), once per start: a file cache would hold every byte once more in the
host's memory (the 811.7 GB of Llama 3.1 405B cannot fit, so it churns) and serve no second read. GKE's multi-host
sample mounts the bucket the same way (`implicit-dirs` only)."""
UNBOUNDED_SIDECAR = "0"
"""The TPU hosts' GCS FUSE sidecar has no CPU or memory limit ("0", GKE's "Configure the Cloud Storage FUSE CSI
driver sidecar container" and the multi-host sample): a CPU limit throttles the one reading stream each host runs,
and with no file cache the sidecar holds only its read buffers."""
METRICS_PORT = RAY_SERVE.scrape_port()
"""Ray's metrics export port on every Ray pod (8080, KubeRay's default, ledger: kuberay.port.metrics), where vLLM's
engine metrics go too (`log_engine_metrics`)."""


def pod_labels(base: dict[str, str], role: str) -> dict[str, str]:
    """The stack's labels plus the Ray role (head | worker): the network policies select each role."""
    return {**base, ROLE_LABEL: role}


def _serve_config(plan: VllmPlan) -> str:
    spec = plan.spec
    return serve_config_yaml(
        serve_config(
            model_id=plan.model.id,
            shape=plan.shape,
            max_model_len=spec.max_model_len,
            max_num_batched_tokens=spec.max_num_batched_tokens,
            max_num_seqs=spec.max_num_seqs,
            model_source=model_path(spec.download_dir, plan.model.id),
            min_replicas=spec.replicas.min,
            max_replicas=spec.replicas.max,
            engine_env=engine_env(spec),
            startup_minutes=spec.startup_minutes,
        )
    )


def token_env(plan: VllmPlan, secret_name: str | None) -> list[k8s.core.v1.EnvVarArgs]:
    """Hugging Face's client bounds, and the gated model's token read from a file, never an env value (ledger:
    huggingface-hub-vllm.token-path)."""
    env = hf_env()
    if secret_name and plan.model.architecture.gated:
        env.append(k8s.core.v1.EnvVarArgs(name="HF_TOKEN_PATH", value=f"/var/run/secrets/huggingface/{HF_SECRET_KEY}"))
    return env


def _worker_env(plan: VllmPlan) -> list[k8s.core.v1.EnvVarArgs]:
    """Per node: JAX's and libtpu's settings (multihost_plan.WORKER_ENV) and libtpu's runtime on this host (the
    sample's VBAR_CONTROL_SERVICE_URL); the engine's own settings are in the Serve config's runtime_env
    (multihost_plan.ENGINE_ENV)."""
    return [
        *(k8s.core.v1.EnvVarArgs(name=name, value=value) for name, value in WORKER_ENV.items()),
        k8s.core.v1.EnvVarArgs(
            name="NODE_IP",
            value_from=k8s.core.v1.EnvVarSourceArgs(
                field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path="status.hostIP")
            ),
        ),
        k8s.core.v1.EnvVarArgs(name="VBAR_CONTROL_SERVICE_URL", value=f"$(NODE_IP):{TPU_RUNTIME_PORT}"),
        *hf_env(),
    ]


def _read_only_weights(
    plan: VllmPlan, bucket: pulumi.Input[str], names: tuple[str, ...]
) -> tuple[list[k8s.core.v1.VolumeArgs], list[k8s.core.v1.VolumeMountArgs]]:
    """The server's volumes and mounts (`names` of them) with the weights read-only and uncached: the download Job
    wrote them (vllm/weights_download.py), so no Ray pod writes the bucket and no two mounts race on a file."""
    volumes = [
        fuse_volume("weights", bucket, READ_ONLY_OPTIONS, read_only=True) if v.name == "weights" else v
        for v in _volumes(plan, bucket, None)
        if v.name in names
    ]
    mounts = [
        k8s.core.v1.VolumeMountArgs(name=m.name, mount_path=m.mount_path, read_only=True) if m.name == "weights" else m
        for m in _mounts(plan, None)
        if m.name in names
    ]
    return volumes, mounts


def head_template(
    plan: VllmPlan, labels: dict[str, str], bucket: pulumi.Input[str], image: pulumi.Input[str]
) -> k8s.core.v1.PodTemplateSpecArgs:
    """A CPU pod: Ray's GCS, dashboard and client ports (Ray 2.60.0's, ray/ports.py), Serve's proxy, Ray's metrics;
    no TPU."""
    ports = {**SERVE_HEAD_PORTS, SERVE_PORT_NAME: SERVE_PORT, METRICS_PORT_NAME: METRICS_PORT}
    volumes, mounts = _read_only_weights(plan, bucket, HEAD_VOLUMES)
    pod = harden(
        k8s.core.v1.PodSpecArgs(
            service_account_name=plan.spec.ksa_name,
            containers=[
                k8s.core.v1.ContainerArgs(
                    name="ray-head",
                    image=image,
                    ports=[
                        k8s.core.v1.ContainerPortArgs(name=name, container_port=port) for name, port in ports.items()
                    ],
                    resources=k8s.core.v1.ResourceRequirementsArgs(
                        requests={"cpu": HEAD_CPU, "memory": HEAD_MEMORY},
                        limits={"cpu": HEAD_CPU, "memory": HEAD_MEMORY},
                    ),
                    # The Serve controller runs here (Ray's head resource; ledger: ray.serve.controller-on-head):
                    # its retry budget (multihost_plan).
                    env=[
                        *(k8s.core.v1.EnvVarArgs(name=name, value=value) for name, value in controller_env().items()),
                        *hf_env(),
                    ],
                    volume_mounts=mounts,
                )
            ],
            volumes=volumes,
        ),
        USER,
        api_token=plan.spec.replicas.min < plan.spec.replicas.max,  # KubeRay's autoscaler sidecar calls the API
        gib=RAY_TMP_GIB,  # /tmp: Ray's session directory (logs, spilled objects), as Ray Train's pods
    )
    sidecar = sidecar_annotations(0, staged_gib=0, volumes=pod.volumes or [])
    return k8s.core.v1.PodTemplateSpecArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels, annotations=sidecar), spec=pod
    )


def worker_template(
    plan: VllmPlan,
    pool: PoolPlan,
    labels: dict[str, str],
    bucket: pulumi.Input[str],
    image: pulumi.Input[str],
) -> k8s.core.v1.PodTemplateSpecArgs:
    """One TPU VM of the slice: every chip, the slice's node selectors, the bucket, the compile cache."""
    spec = plan.spec
    volumes, mounts = _read_only_weights(plan, bucket, WORKER_VOLUMES)
    pod = harden(
        k8s.core.v1.PodSpecArgs(
            service_account_name=spec.ksa_name,
            node_selector=tpu_node_selector(pool),
            # the upload's write grant covers its key only (vllm/weights_download.py server_grants)
            init_containers=compile_cache.sync_containers(
                "xla-cache",
                "xla-cache",
                LOCAL_CACHE,
                bucket,
                plan.compile_cache_prefix,
                env=compile_cache.NO_PARALLEL_COMPOSITE_UPLOADS,
            )
            if spec.compile_cache
            else None,
            containers=[
                k8s.core.v1.ContainerArgs(
                    name=WORKER_CONTAINER,
                    image=image,
                    ports=[
                        k8s.core.v1.ContainerPortArgs(name=SERVE_PORT_NAME, container_port=SERVE_PORT),
                        k8s.core.v1.ContainerPortArgs(name=METRICS_PORT_NAME, container_port=METRICS_PORT),
                    ],
                    resources=tpu_resources(pool, spec.resources.cpu, spec.resources.memory),
                    readiness_probe=worker_readiness(),
                    env=_worker_env(plan),
                    volume_mounts=mounts,
                )
            ],
            volumes=volumes,
            termination_grace_period_seconds=60,
        ),
        USER,
        gib=RAY_TMP_GIB,
    )
    sidecar = sidecar_annotations(
        0, UNBOUNDED_SIDECAR, memory_limit=UNBOUNDED_SIDECAR, staged_gib=0, volumes=pod.volumes or []
    )
    return k8s.core.v1.PodTemplateSpecArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels, annotations=sidecar), spec=pod
    )


def worker_readiness() -> k8s.core.v1.ProbeArgs:
    """Ready when the host's raylet is (KubeRay's node check, an HTTP GET of the dashboard agent): no Serve proxy."""
    return k8s.core.v1.ProbeArgs(
        http_get=k8s.core.v1.HTTPGetActionArgs(path=NODE_HEALTH_PATH, port=DASHBOARD_AGENT_PORT),
        **WORKER_READINESS,
    )


def budget(plan: VllmPlan) -> AwaitBudget:
    """A slice's nodes, the image, then the engine's cold start (weights and XLA compile) that
    `vllm.startupMinutes` allows; a replacement (the only update of the cluster) starts it all again."""
    minutes = NODE_PROVISIONING_MINUTES + IMAGE_PULL_MINUTES + plan.spec.startup_minutes
    return AwaitBudget(create_minutes=minutes, update_minutes=minutes)


def rayservice_spec(
    plan: VllmPlan,
    head: k8s.core.v1.PodTemplateSpecArgs,
    workers: k8s.core.v1.PodTemplateSpecArgs,
) -> dict[str, object]:
    spec = plan.spec
    autoscales = spec.replicas.min < spec.replicas.max
    cluster: dict[str, object] = {
        "rayVersion": RAY_SERVE_VERSION,  # also what KubeRay's token authentication requires (>= 2.52.0)
        "authOptions": dict(AUTH_OPTIONS),
        "enableInTreeAutoscaling": autoscales,
        "headGroupSpec": {"rayStartParams": {}, "template": head},
        "workerGroupSpecs": [
            {
                "groupName": WORKER_GROUP,
                "replicas": spec.replicas.min,  # one replica is one slice ...
                "minReplicas": spec.replicas.min,
                "maxReplicas": spec.replicas.max,
                "numOfHosts": plan.parallelism.hosts,  # ... of one pod per TPU host
                "rayStartParams": {},
                "template": workers,
            }
        ],
    }
    if autoscales:
        # The autoscaler sidecar KubeRay adds to the head: hardened like the head's own container (the
        # namespace enforces `restricted`), and slow to give a slice back (a new one costs a cold start).
        cluster["autoscalerOptions"] = {
            "idleTimeoutSeconds": 600,
            "securityContext": container_security_context(USER),
        }
    return {
        "serveConfigV2": _serve_config(plan),
        "upgradeStrategy": {"type": text("kuberay.rayservice.upgrade-none")},
        "rayClusterConfig": cluster,
    }


def rayservice(
    resource: str,
    plan: VllmPlan,
    metadata: k8s.meta.v1.ObjectMetaArgs,
    head: k8s.core.v1.PodTemplateSpecArgs,
    workers: k8s.core.v1.PodTemplateSpecArgs,
    opts: pulumi.ResourceOptions,
) -> k8s.apiextensions.CustomResource:
    """The RayService, awaited until Ready; a change of its cluster replaces it (delete first: the slices)."""
    metadata.annotations = {**(metadata.annotations or {}), **READY}
    return k8s.apiextensions.CustomResource(
        resource,
        api_version=API_VERSION,
        kind="RayService",
        metadata=metadata,
        spec=rayservice_spec(plan, head, workers),
        opts=pulumi.ResourceOptions.merge(
            opts,
            pulumi.ResourceOptions(
                replace_on_changes=["spec.rayClusterConfig"],
                delete_before_replace=True,
                custom_timeouts=budget(plan).custom_timeouts(),
            ),
        ),
    )


def declare_ray_service(
    name: str,
    plan: VllmPlan,
    labels: dict[str, str],
    bucket: pulumi.Input[str],
    image: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> tuple[k8s.apiextensions.CustomResource, dict[str, str]]:
    """The RayService; returns it and the selector of the stack's Service (the head, while KubeRay finds its Serve
    proxy healthy). Managed Prometheus scrapes Ray's metrics port on every Ray pod (Ray Serve's and vLLM's engine
    metrics, the monitoring target's port): the lifecycle's scrape step (VllmStack.scrape) declares it."""
    spec = plan.spec
    head = head_template(plan, pod_labels(labels, "head"), bucket, image)
    workers = worker_template(plan, plan.pool, pod_labels(labels, "worker"), bucket, image)
    metadata = k8s.meta.v1.ObjectMetaArgs(
        name=NAME, namespace=spec.namespace, labels=labels, annotations=workload_annotations(plan)
    )
    service = rayservice(f"{name}-rayservice", plan, metadata, head, workers, opts)
    return service, {**pod_labels(labels, "head"), SERVE_LABEL: SERVING}
