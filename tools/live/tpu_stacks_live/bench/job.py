"""The objects one `bench` run creates in the stack's namespace: a NetworkPolicy, a ConfigMap and a Job.

- The Job runs the pinned inference-perf image once (`backoffLimit: 0`, `restartPolicy: Never`), hardened as every
  workload pod is (`k8s.security.harden`: non-root numeric user, read-only root filesystem with /tmp and HOME on
  emptyDirs, all capabilities dropped, seccomp RuntimeDefault, no service-account token), with CPU and memory
  limits, bounded by `activeDeadlineSeconds` (the sweep's length plus inference-perf's teardown grace and the
  pod's start) and collected by `ttlSecondsAfterFinished` if `bench` itself dies before deleting it.
- Its pod carries the smoke-test component label (`k8s.connectivity.SMOKE_TEST_LABELS`): the server's policy
  admits smoke-test pods on the API port (`platform_flows.smoke_test_clients`), and bench is a client of the same
  kind. The stack's own smoke-test policy therefore also selects it (NetworkPolicies add up): its egress is the
  union of that policy's (DNS, the server's API and metrics ports) and this one's.
- The NetworkPolicy is built from a connectivity-contract group (`k8s.network_policy.policy_spec`, with the flows
  annotation the contract checkers read): no ingress; egress to DNS, to the server's pods on the port the Service
  forwards to, and HTTPS outside the private ranges (`platform_flows.google_apis`), because inference-perf's vLLM
  client always loads the model's tokenizer (ledger: inference-perf.vllm-client.tokenizer), from Hugging Face.
- The ConfigMap holds inference-perf's configuration file (config.py), mounted read-only.
Every object carries `tpu-stacks.dev/bench-run: <id>`, so a crashed run's leftovers are found:
`kubectl delete job,configmap,networkpolicy -n NAMESPACE -l tpu-stacks.dev/bench-run`.
"""

from __future__ import annotations

import math

import pulumi_kubernetes as k8s
import yaml

from tpu_stacks.catalog.image_users import NONROOT_UID, ImageUser
from tpu_stacks.catalog.upstream import number, text
from tpu_stacks.k8s.connectivity import Group, Pods, egress, unique
from tpu_stacks.k8s.network_policy import ANNOTATION, MANAGED, policy_spec
from tpu_stacks.k8s.platform_flows import dns, google_apis
from tpu_stacks.k8s.security import harden
from tpu_stacks.serving.smoke_plan import SMOKE_TEST_LABELS
from tpu_stacks_live.bench.config import COMMAND, IMAGE, STAGE_INTERVAL_S, Workload, inference_perf_config
from tpu_stacks_live.bench.target import BenchTarget
from tpu_stacks_live.probe.pod import plain

LABELS = {**SMOKE_TEST_LABELS, "app.kubernetes.io/name": "tpu-stacks-bench"}
RUN = "tpu-stacks.dev/bench-run"
CONTAINER = "inference-perf"
CONFIG_DIR = "/config"
CONFIG_FILE = "config.yml"
USER = ImageUser(
    NONROOT_UID,
    "inference-perf's Dockerfile sets no USER (python:3.12.11-alpine3.22, root); the package is readable by any "
    "user, and it writes only its reports (/tmp/reports) and the Hugging Face cache (HOME)",
)
RESOURCES = k8s.core.v1.ResourceRequirementsArgs(
    requests={"cpu": "2", "memory": "4Gi"}, limits={"cpu": "4", "memory": "8Gi"}
)
"""inference-perf's own chart leaves resources to the user and suggests 1-2 CPUs and 4-8 GiB
(deploy/inference-perf/values.yaml); `load.num_workers` (config.py) matches the CPU limit."""
NUM_WORKERS = 4
"""inference-perf starts `load.num_workers` worker processes, by default the CPU count (ledger:
inference-perf.load.num-workers), which in a container is the node's, not the limit's: set to the CPU limit."""
TEARDOWN_GRACE_S = number("inference-perf.load.teardown-grace")
"""inference-perf lets in-flight requests finish for `load.stage_teardown_grace_seconds` after a stage (by default):
part of the Job's deadline."""
HF_TOKEN_PATH = text("huggingface-hub.token-path")
"""The variable naming the file huggingface_hub reads the token from (the server's, set to the same file here), in
the 1.x release bench's transformers requires (ledger: inference-perf.requires.transformers)."""
START_S = 600
"""The pod's start: a CPU node, the image (about 1 GB), the tokenizer's download."""
TTL_S = 3600


def job_name(target: BenchTarget, run_id: str) -> str:
    return f"bench-{target.stack}"[: 63 - len(run_id) - 1].rstrip("-") + f"-{run_id}"


def config_document(target: BenchTarget, workload: Workload) -> dict:
    document = inference_perf_config(target.base_url, target.served_model, target.model, workload)
    document["load"]["num_workers"] = NUM_WORKERS
    return document


def group(target: BenchTarget) -> Group:
    """The bench pod's connectivity contract."""
    server = Pods(target.namespace, dict(target.server_labels))
    return Group(
        "tpu-stacks-bench",
        target.namespace,
        dict(LABELS),
        unique(
            (
                *dns(),
                *egress(server, [target.server_port], "inference-perf's requests, through the server's Service"),
                *google_apis(),
            )
        ),
    )


def deadline_seconds(workload: Workload) -> int:
    per_stage = workload.duration_s + STAGE_INTERVAL_S + TEARDOWN_GRACE_S
    return START_S + math.ceil(per_stage * len(workload.rates))


def _metadata(name: str, target: BenchTarget, run_id: str, annotations: dict | None = None) -> dict:
    metadata = {"name": name, "namespace": target.namespace, "labels": {**LABELS, **MANAGED, RUN: run_id}}
    return {**metadata, "annotations": annotations} if annotations else metadata


def network_policy(target: BenchTarget, run_id: str) -> dict:
    contract = group(target)
    metadata = _metadata(job_name(target, run_id), target, run_id, {ANNOTATION: contract.annotation()})
    spec = plain(policy_spec(contract))
    spec["podSelector"]["matchLabels"][RUN] = run_id  # this run's pod only
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": metadata, "spec": spec}


def config_map(target: BenchTarget, workload: Workload, run_id: str) -> dict:
    text = yaml.safe_dump(config_document(target, workload), sort_keys=False)
    metadata = _metadata(job_name(target, run_id), target, run_id)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {CONFIG_FILE: text}}


def _env(target: BenchTarget) -> list[k8s.core.v1.EnvVarArgs]:
    """HF_TOKEN_PATH where the server reads it (a gated model's tokenizer; inference-perf passes no token of its own,
    so huggingface_hub reads that file, ledger: inference-perf.tokenizer.token, huggingface-hub.token-path,
    huggingface-hub.token-file) and API_KEY from the key's Secret."""
    env = [
        k8s.core.v1.EnvVarArgs(name="PYTHONDONTWRITEBYTECODE", value="1"),
        k8s.core.v1.EnvVarArgs(name="PYTHONUNBUFFERED", value="1"),
    ]
    if target.hf_token is not None:
        env.append(k8s.core.v1.EnvVarArgs(name=HF_TOKEN_PATH, value=target.hf_token[2]))
    if target.api_key_secret is not None:
        ref = k8s.core.v1.SecretKeySelectorArgs(name=target.api_key_secret[0], key=target.api_key_secret[1])
        env.append(k8s.core.v1.EnvVarArgs(name="API_KEY", value_from=k8s.core.v1.EnvVarSourceArgs(secret_key_ref=ref)))
    return env


def _volumes(target: BenchTarget, name: str) -> tuple[list, list]:
    """The configuration file, and the server's token Secret (the one key, read-only) when it has one."""
    mounts = [k8s.core.v1.VolumeMountArgs(name="config", mount_path=CONFIG_DIR, read_only=True)]
    volumes = [k8s.core.v1.VolumeArgs(name="config", config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(name=name))]
    if target.hf_token is not None:
        secret, key, path = target.hf_token
        directory, _, file = path.rpartition("/")
        mounts.append(k8s.core.v1.VolumeMountArgs(name="hf-token", mount_path=directory, read_only=True))
        items = [k8s.core.v1.KeyToPathArgs(key=key, path=file)]
        source = k8s.core.v1.SecretVolumeSourceArgs(secret_name=secret, items=items)
        volumes.append(k8s.core.v1.VolumeArgs(name="hf-token", secret=source))
    return mounts, volumes


def job(target: BenchTarget, workload: Workload, run_id: str) -> dict:
    name = job_name(target, run_id)
    args = [*COMMAND, f"{CONFIG_DIR}/{CONFIG_FILE}"]
    mounts, volumes = _volumes(target, name)
    if target.api_key_secret is not None:
        # The API key never enters the ConfigMap: Kubernetes expands $(API_KEY) from the container's environment,
        # and inference-perf takes any config field as a flag (ledger: inference-perf.cli.config-flags).
        args += ["--server.api_key", "$(API_KEY)"]
    container = k8s.core.v1.ContainerArgs(
        name=CONTAINER,
        image=IMAGE,
        command=args,
        env=_env(target),
        resources=RESOURCES,
        volume_mounts=mounts,
    )
    pod = harden(k8s.core.v1.PodSpecArgs(containers=[container], volumes=volumes, restart_policy="Never"), USER, gib=4)
    labels = {**LABELS, RUN: run_id}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _metadata(name, target, run_id),
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": deadline_seconds(workload),
            "ttlSecondsAfterFinished": TTL_S,
            "template": {"metadata": {"labels": labels}, "spec": plain(pod)},
        },
    }


def manifests(target: BenchTarget, workload: Workload, run_id: str) -> list[dict]:
    """In creation order: the policy first, so the pod never runs without it."""
    return [network_policy(target, run_id), config_map(target, workload, run_id), job(target, workload, run_id)]
