"""The corpus of wrong inputs, one table per kind, each a careless user's mistake.

Stack-file cases are run through `tpu-stacks plan`; `SIZE` cases through `tpu-stacks size`. Every case
names the key the user wrote; `secret` marks a value no output may contain.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.bad_input.harness import CLUSTER, QWEN, ROOT, Case
from tests.clients import CLIENTS

HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"  # shaped like a Hugging Face token, not a real one
GOOGLE_KEY = "AIza" + "SyA1234567890abcdefghijklmnopqrstu"  # shaped like a Google API key, not a real one
PRIVATE_KEY = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"


def shipped(stack: str) -> dict[str, Any]:
    """A shipped stack's config, to change one value of (every shipped stack plans clean)."""
    return yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]


def section(stack: str, part: str, /, **changes: Any) -> dict[str, Any]:
    """The shipped stack with `changes` in its section `tpu-stacks:<part>` (None removes a key)."""
    config = shipped(stack)
    merged = {**config[f"tpu-stacks:{part}"], **changes}
    config[f"tpu-stacks:{part}"] = {k: v for k, v in merged.items() if v is not None}
    return config


def vllm(**changes: Any) -> dict[str, Any]:
    return section("dev", "vllm", **changes)


def saxml(**changes: Any) -> dict[str, Any]:
    return section("saxml", "saxml", **changes)


def jetstream(**changes: Any) -> dict[str, Any]:
    return section("jetstream-gemma", "jetstream", **changes)


def raytrain(**changes: Any) -> dict[str, Any]:
    return section("raytrain", "raytrain", **changes)


def cluster(**changes: Any) -> dict[str, Any]:
    return section("cluster", "cluster", **changes)


def identity(**changes: Any) -> dict[str, Any]:
    return section("cluster", "identity", **changes)


def raw(body: str) -> str:
    """A stack file written by hand (what the loader must read as the Pulumi CLI does)."""
    return "config:\n  gcp:project: my-proj\n  gcp:region: us-central1\n" + body


CLUSTER_YAML = "  tpu-stacks:cluster:\n    name: c\n    location: us-central1-b\n"

# --- Resources declared before the refusal: checks that used to run inside WorkloadIdentity ---------
BEFORE_ANY_RESOURCE = [
    Case("vllm-namespace", vllm(namespace="Bad_NS"), "tpu-stacks:vllm.namespace"),
    Case("vllm-namespace-long", vllm(namespace="n" * 70), "tpu-stacks:vllm.namespace"),
    Case("vllm-ksa", vllm(ksaName="Vllm SA"), "tpu-stacks:vllm.ksaName"),
    Case("vllm-ksa-underscore", vllm(ksaName="vllm_sa"), "tpu-stacks:vllm.ksaName"),
    Case("saxml-namespace", saxml(namespace="sax.ns"), "tpu-stacks:saxml.namespace"),
    Case("saxml-ksa", saxml(ksaName="-sax"), "tpu-stacks:saxml.ksaName"),
    Case("saxml-gsa", saxml(gsaName="sa"), "tpu-stacks:saxml.gsaName"),
    Case("saxml-gsa-upper", saxml(gsaName="Sax-IAM-SA"), "tpu-stacks:saxml.gsaName"),
    Case("jetstream-namespace", jetstream(namespace="JetStream"), "tpu-stacks:jetstream.namespace"),
    Case("jetstream-ksa", jetstream(ksaName="js/sa"), "tpu-stacks:jetstream.ksaName"),
    Case("jetstream-gsa", jetstream(gsaName="wi-" + "x" * 40), "tpu-stacks:jetstream.gsaName"),
    Case("raytrain-namespace", raytrain(namespace="ray train"), "tpu-stacks:raytrain.namespace"),
    Case("raytrain-ksa", raytrain(ksaName="RAY"), "tpu-stacks:raytrain.ksaName"),
    Case("identity-namespace", identity(namespace="Bad_NS"), "tpu-stacks:identity.namespace"),
    Case("identity-ksa", identity(ksaName="tpu workload"), "tpu-stacks:identity.ksaName"),
    Case("identity-gsa", identity(mode="service-account", gsaName="x"), "tpu-stacks:identity.gsaName"),
    Case("identity-mode", identity(mode="impersonate"), "tpu-stacks:identity.mode"),
    Case("identity-project-number", identity(projectNumber="12ab"), "tpu-stacks:identity.projectNumber"),
    # Which KubeRay calls the Ray heads: GKE's add-on or the user's own, in a namespace the user names.
    Case(
        "kuberay-namespace",
        section("raytrain", "cluster", kuberay={"namespace": "Ray_System"}),
        "tpu-stacks:cluster.kuberay.namespace",
    ),
    Case("kuberay-no-namespace", section("raytrain", "cluster", kuberay={}), "tpu-stacks:cluster.kuberay.namespace"),
    Case(
        "kuberay-and-addon",
        section("raytrain", "cluster", kuberay={"namespace": "ray-system"}, addons={"rayOperator": True}),
        "tpu-stacks:cluster.addons.rayOperator",
        also=("two operators",),
    ),
    Case(
        "no-kuberay",
        section("vllm-405b", "cluster", addons={"rayOperator": False}),
        "tpu-stacks:cluster.addons.rayOperator",
        also=("cluster.kuberay.namespace",),
    ),
]

# --- The key the user wrote, not a derived one --------------------------------------------------------
USER_SPELLING = [
    Case("vllm-topology", vllm(topology="4x9"), "tpu-stacks:vllm.topology"),
    Case("vllm-generation", vllm(tpuGeneration="v9"), "tpu-stacks:vllm.tpuGeneration"),
    Case("vllm-reservation", vllm(reservation="Bad Reservation"), "tpu-stacks:vllm.reservation"),
    Case("vllm-replicas-max", vllm(replicas={"min": 1, "max": 100}), "tpu-stacks:vllm.replicas.max"),
    Case("vllm-replicas-min", vllm(replicas={"min": 0, "max": 1}), "tpu-stacks:vllm.replicas.min"),
    Case("vllm-spot-flex", vllm(spot="sometimes"), "tpu-stacks:vllm.spot"),
    Case("vllm-smoke-test-word", vllm(smokeTest="yes"), "tpu-stacks:vllm.smokeTest"),
    Case("saxml-smoke-test-word", saxml(smokeTest="off"), "tpu-stacks:saxml.smokeTest"),
    Case("jetstream-smoke-test-word", jetstream(smokeTest="no"), "tpu-stacks:jetstream.smokeTest"),
    Case("saxml-topology", saxml(topology="3x3"), "tpu-stacks:saxml.topology"),
    Case("saxml-generation", saxml(tpuGeneration="v5"), "tpu-stacks:saxml.tpuGeneration"),
    Case("saxml-reservation", saxml(reservation="UPPER"), "tpu-stacks:saxml.reservation"),
    Case("saxml-pool-name", saxml(poolName="Pool_{n}"), "tpu-stacks:saxml.poolName"),
    Case("saxml-replicas", saxml(replicas=0), "tpu-stacks:saxml.replicas"),
    Case("jetstream-topology", jetstream(topology="9x9"), "tpu-stacks:jetstream.topology"),
    Case("jetstream-zone", jetstream(zone="us-central1-a"), "tpu-stacks:jetstream.zone"),
    Case("jetstream-reservation", jetstream(reservation="Res ervation"), "tpu-stacks:jetstream.reservation"),
    Case("jetstream-generation", jetstream(tpuGeneration="v6"), "tpu-stacks:jetstream.tpuGeneration"),
    Case("raytrain-topology", raytrain(topology="5x5"), "tpu-stacks:raytrain.topology"),
    Case("raytrain-slices", raytrain(slices=0), "tpu-stacks:raytrain.slices"),
    Case("raytrain-machine-type", raytrain(machineType="ct6e-standard-99t"), "tpu-stacks:raytrain.machineType"),
    Case("raytrain-threads", raytrain(threadsPerCore=4), "tpu-stacks:raytrain.threadsPerCore"),
    Case("raytrain-reservation", raytrain(reservation="a b"), "tpu-stacks:raytrain.reservation"),
    Case(
        "existing-location",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": {**CLUSTER, "existing": {"name": "prod", "location": "nowhere"}},
            "tpu-stacks:vllm": {"model": QWEN, "sourceRanges": CLIENTS},
        },
        "tpu-stacks:cluster.existing.location",
    ),
    Case(
        "existing-name",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": {**CLUSTER, "existing": {"name": "Prod_Cluster", "location": "us-central1-b"}},
            "tpu-stacks:vllm": {"model": QWEN, "sourceRanges": CLIENTS},
        },
        "tpu-stacks:cluster.existing.name",
    ),
    Case(
        "existing-typo",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": {**CLUSTER, "existing": {"name": "prod", "locaton": "us-central1-b"}},
            "tpu-stacks:vllm": {"model": QWEN, "sourceRanges": CLIENTS},
        },
        "tpu-stacks:cluster.existing.locaton",
        also=("did you mean 'location'",),
    ),
    Case("vllm-typo", vllm(maxModelLength=4096), "tpu-stacks:vllm.maxModelLength", also=("maxModelLen",)),
    Case("saxml-typo", saxml(batchsize=4), "tpu-stacks:saxml.batchsize", also=("batchSize",)),
    Case("jetstream-typo", jetstream(replica=2), "tpu-stacks:jetstream.replica"),
    Case("raytrain-typo", raytrain(step=10), "tpu-stacks:raytrain.step"),
    Case("cluster-typo", cluster(releasechannel="RAPID"), "tpu-stacks:cluster.releasechannel"),
    Case(
        "slice-typo", cluster(slices=[{"generation": "v6e", "topolgy": "2x4"}]), "tpu-stacks:cluster.slices[0].topolgy"
    ),
    Case("vllm-nested-typo", vllm(replicas={"minimum": 1}), "tpu-stacks:vllm.replicas.minimum"),
]

# --- The loader: stack files read as the Pulumi CLI reads them ------------------------------------------
LOADER = [
    Case("not-utf8", b"config:\n  gcp:project: my-proj\n  tpu-stacks:cluster:\n    name: caf\xe9\n", "line 4"),
    Case("latin1-comment", b"# r\xe9sum\xe9\nconfig:\n  gcp:project: my-proj\n", "line 1"),
    Case("binary", raw(CLUSTER_YAML + "    releaseChannel: !!binary UkFQSUQ=\n"), "line 7"),
    Case("unknown-tag", raw(CLUSTER_YAML + "    releaseChannel: !Ref channel\n"), "line 7"),
    Case("timestamp-tag", raw(CLUSTER_YAML + "    minVersion: !!timestamp 2024-01-01\n"), "line 7"),
    Case("set-tag", raw(CLUSTER_YAML + "    nodeLocations: !!set {us-central1-b}\n"), "line 7"),
    Case("python-tag", raw(CLUSTER_YAML + "    releaseChannel: !!python/name:os.system\n"), "line 7"),
    Case("duplicate-key", raw(CLUSTER_YAML + "    name: d\n"), "tpu-stacks:cluster.name", also=("line 7",)),
    Case("duplicate-top", raw(CLUSTER_YAML + "  gcp:project: other\n"), "gcp:project", also=("line 7",)),
    Case(
        "duplicate-slice-key",
        raw(CLUSTER_YAML + "    slices:\n      - generation: v6e\n        topology: 2x4\n        topology: 4x4\n"),
        "topology",
        also=("line 10",),
    ),
    Case("bad-indent", raw("  tpu-stacks:cluster:\n    name: c\n   location: x\n"), "line 6"),
    Case("tab", raw("  tpu-stacks:cluster:\n\tname: c\n"), "line 5"),
    Case("unclosed-quote", raw('  tpu-stacks:cluster:\n    name: "c\n'), "Pulumi.bad-unclosed-quote.yaml"),
    Case("unclosed-flow", raw("  tpu-stacks:cluster: {name: c, location: us-central1-b\n"), "line"),
    Case("inf", raw(CLUSTER_YAML + "    systemPool:\n      nodes: .inf\n"), "tpu-stacks:cluster.systemPool.nodes"),
    Case("nan", raw(CLUSTER_YAML + "    systemPool:\n      nodes: .nan\n"), "tpu-stacks:cluster.systemPool.nodes"),
    Case("minus-inf", raw("  tpu-stacks:scenario: -.inf\n" + CLUSTER_YAML), "tpu-stacks:scenario"),
    Case("merge-key", raw("  base: &b {name: c}\n  tpu-stacks:cluster:\n    <<: *b\n"), "<<"),
    Case(
        "date-in-object",
        raw("  tpu-stacks:cluster:\n    name: 2024-01-01\n    location: us-central1-b\n"),
        "tpu-stacks:cluster.name",
    ),
    Case(
        "time-not-sexagesimal",
        raw(CLUSTER_YAML.replace("name: c", "name: 12:30:00")),
        "tpu-stacks:cluster.name",
        also=("'12:30:00'",),
    ),
    Case(
        "on-is-a-string",
        raw(CLUSTER_YAML + "    deletionProtection: on\n"),
        "tpu-stacks:cluster.deletionProtection",
        also=("'on'",),
    ),
    Case(
        "yes-is-a-string",
        raw(CLUSTER_YAML + "    addons:\n      gcsFuse: yes\n"),
        "tpu-stacks:cluster.addons.gcsFuse",
        also=("'yes'",),
    ),
    Case(
        "no-is-a-string",
        raw(CLUSTER_YAML + "    addons:\n      rayOperator: no\n"),
        "tpu-stacks:cluster.addons.rayOperator",
    ),
    Case("not-a-map", "just a string\n", "Pulumi.bad-not-a-map.yaml"),
    Case("config-list", "config:\n  - gcp:project\n", "config"),
    Case("namespace-missing", raw("  cluster:\n    name: c\n"), "cluster"),
    Case(
        "near-namespace",
        {"tpu-stacks:cluster": CLUSTER, "tpu-stack:model": QWEN},
        "tpu-stack:model",
        also=("tpu-stacks",),
    ),
    Case("near-namespace-case", {"tpu-stacks:cluster": CLUSTER, "TPU-stacks:scenario": "vllm"}, "TPU-stacks:scenario"),
    Case(
        "near-namespace-underscore",
        {"tpu-stacks:cluster": CLUSTER, "tpu_stacks:scenario": "vllm"},
        "tpu_stacks:scenario",
    ),
]

# --- Missing values said well, numbers where text belongs --------------------------------------------
MESSAGES = [
    Case(
        "no-project",
        {"gcp:region": "us-central1", "tpu-stacks:cluster": CLUSTER},
        "cluster.project",
        base=False,
        also=("gcp:project",),
    ),
    Case(
        "no-location",
        {"gcp:project": "my-proj", "tpu-stacks:cluster": {"name": "c"}},
        "cluster.location",
        base=False,
        also=("gcp:zone", "gcp:region"),
    ),
    Case(
        "version-float",
        raw("  tpu-stacks:kubernetesVersion: 1.30\n" + CLUSTER_YAML),
        "tpu-stacks:kubernetesVersion",
        also=("'1.30'", "quote"),
    ),
    Case("min-version-float", cluster(minVersion=1.3), "tpu-stacks:cluster.minVersion", also=("quote",)),
    # A malformed version meets the capacity checks first (a ComputeClass fallback, a flex-start pool).
    Case(
        "min-version-malformed-fallback",
        section("vllm-fallback", "cluster", minVersion="1.33.3-gke"),
        "tpu-stacks:cluster.minVersion",
        also=("'1.33.3-gke'", "is not a GKE version"),
    ),
    Case(
        "min-version-malformed-flex-start",
        cluster(minVersion="v1.33", slices=[{"generation": "v6e", "topology": "2x4", "flexStart": True}]),
        "tpu-stacks:cluster.minVersion",
        also=("'v1.33'", "is not a GKE version"),
    ),
    Case("jobset-version-float", saxml(jobset={"version": 0.12}), "tpu-stacks:saxml.jobset.version", also=("quote",)),
    Case("scenario-number", {"tpu-stacks:cluster": CLUSTER, "tpu-stacks:scenario": 3}, "tpu-stacks:scenario"),
    Case("name-number", cluster(name=12345), "tpu-stacks:cluster.name"),
    Case("model-missing", vllm(model=None), "tpu-stacks:vllm.model", also=("required",)),
    Case("cluster-list", {"tpu-stacks:cluster": [CLUSTER]}, "tpu-stacks:cluster"),
    Case("section-list", {**vllm(), "tpu-stacks:vllm": [QWEN]}, "tpu-stacks:vllm"),
    Case("slices-mapping", cluster(slices={"generation": "v6e"}), "tpu-stacks:cluster.slices"),
    Case("models-scalar", saxml(models="all"), "tpu-stacks:saxml.models"),
]

# --- Silent accepts, now refused in the spec phase ---------------------------------------------------
SILENT_ACCEPTS = [
    # Cloud Storage bucket names (https://cloud.google.com/storage/docs/buckets#naming)
    Case(
        "bucket-goog",
        saxml(checkpointBuckets=["goog-weights"]),
        "tpu-stacks:saxml.checkpointBuckets[0]",
        also=("goog",),
    ),
    Case("bucket-google", saxml(checkpointBuckets=["my-google-weights"]), "tpu-stacks:saxml.checkpointBuckets[0]"),
    # monitoring: (every workload) is a section spec like the others: `on` is text, not a boolean
    Case("monitoring-enabled-on", vllm(monitoring={"enabled": "on"}), "tpu-stacks:vllm.monitoring.enabled"),
    Case("bucket-g00gle", saxml(checkpointBuckets=["g00gle-ckpt"]), "tpu-stacks:saxml.checkpointBuckets[0]"),
    Case("bucket-short", saxml(checkpointBuckets=["ab"]), "tpu-stacks:saxml.checkpointBuckets[0]"),
    Case("bucket-long", saxml(checkpointBuckets=["b" * 64]), "tpu-stacks:saxml.checkpointBuckets[0]"),
    Case("bucket-upper", saxml(checkpointBuckets=["Weights"]), "tpu-stacks:saxml.checkpointBuckets[0]"),
    Case("bucket-ip", saxml(checkpointBuckets=["192.168.5.4"]), "tpu-stacks:saxml.checkpointBuckets[0]"),
    Case("bucket-dotdot", saxml(checkpointBuckets=["a..b"]), "tpu-stacks:saxml.checkpointBuckets[0]"),
    Case("bucket-dash-dot", saxml(checkpointBuckets=["a-.b"]), "tpu-stacks:saxml.checkpointBuckets[0]"),
    Case("bucket-gs", saxml(checkpointBuckets=["gs://weights"]), "tpu-stacks:saxml.checkpointBuckets[0]"),
    Case("bucket-second", saxml(checkpointBuckets=["ok-bucket", "_bad"]), "tpu-stacks:saxml.checkpointBuckets[1]"),
    Case(
        "bucket-dotted-part",
        saxml(checkpointBuckets=["a." + "p" * 64 + ".com"]),
        "tpu-stacks:saxml.checkpointBuckets[0]",
    ),
    # Artifact Registry repository ids and image names
    Case("repo-upper", vllm(registry={"mode": "remote", "repository": "VLLM"}), "tpu-stacks:vllm.registry.repository"),
    Case("repo-digit", vllm(registry={"mode": "remote", "repository": "1vllm"}), "tpu-stacks:vllm.registry.repository"),
    Case("repo-long", vllm(registry={"mode": "remote", "repository": "r" * 64}), "tpu-stacks:vllm.registry.repository"),
    Case(
        "repo-dash-end", vllm(registry={"mode": "remote", "repository": "vllm-"}), "tpu-stacks:vllm.registry.repository"
    ),
    Case(
        "registry-image-latest",
        vllm(registry={"mode": "standard", "image": "vllm-tpu:latest"}),
        "tpu-stacks:vllm.registry.image",
    ),
    Case(
        "registry-image-upper",
        vllm(registry={"mode": "standard", "image": "VLLM:v1"}),
        "tpu-stacks:vllm.registry.image",
    ),
    Case(
        "registry-image-space",
        vllm(registry={"mode": "standard", "image": "vllm tpu:v1"}),
        "tpu-stacks:vllm.registry.image",
    ),
    Case("registry-image-missing", vllm(registry={"mode": "standard"}), "tpu-stacks:vllm.registry.image"),
    Case("registry-mode", vllm(registry={"mode": "mirror"}), "tpu-stacks:vllm.registry.mode"),
    Case(
        "raytrain-repo",
        raytrain(image={"build": "submit", "repository": "Ray_MaxText"}),
        "tpu-stacks:raytrain.image.repository",
    ),
    Case(
        "raytrain-image-name",
        raytrain(image={"build": "submit", "name": "Ray MaxText"}),
        "tpu-stacks:raytrain.image.name",
    ),
    Case("raytrain-image-tag", raytrain(image={"build": "submit", "tag": "latest"}), "tpu-stacks:raytrain.image.tag"),
    Case("raytrain-image-build", raytrain(image={"build": "docker"}), "tpu-stacks:raytrain.image.build"),
    # Kubernetes quantities
    Case("memory-lots", vllm(resources={"memory": "lots"}), "tpu-stacks:vllm.resources.memory"),
    Case("cpu-negative", vllm(resources={"cpu": "-2"}), "tpu-stacks:vllm.resources.cpu"),
    Case("cpu-zero-width", vllm(resources={"cpu": "8\u200b"}), "tpu-stacks:vllm.resources.cpu", also=("\\u200b",)),
    Case("memory-unit", vllm(resources={"memory": "64GB"}), "tpu-stacks:vllm.resources.memory"),
    Case("memory-space", vllm(resources={"memory": "64 Gi"}), "tpu-stacks:vllm.resources.memory"),
    Case("memory-number", vllm(resources={"memory": 64}), "tpu-stacks:vllm.resources.memory"),
    Case("cpu-words", saxml(resources={"modelServer": {"cpu": "all"}}), "tpu-stacks:saxml.resources.modelServer.cpu"),
    Case(
        "memory-fullwidth",
        saxml(resources={"httpServer": {"memory": "１Gi"}}),
        "tpu-stacks:saxml.resources.httpServer.memory",
        also=("\\uff11",),
    ),
    Case("jetstream-memory", jetstream(resources={"memory": "64Gb"}), "tpu-stacks:jetstream.resources.memory"),
    Case("jetstream-converter-cpu", jetstream(converter={"cpu": "eight"}), "tpu-stacks:jetstream.converter.cpu"),
    Case("raytrain-head-memory", raytrain(head={"memory": "16 GiB"}), "tpu-stacks:raytrain.head.memory"),
    Case("raytrain-worker-cpu", raytrain(worker={"cpu": "-1"}), "tpu-stacks:raytrain.worker.cpu"),
    Case("memory-zero", vllm(resources={"memory": "0"}), "tpu-stacks:vllm.resources.memory"),
    # Free-form enumerations closed to their values
    Case("dataset-type", raytrain(datasetType="imagenet"), "tpu-stacks:raytrain.datasetType", also=("'tfds'",)),
    Case(
        "storage-class",
        jetstream(converter={"storageClass": "fast ssd"}),
        "tpu-stacks:jetstream.converter.storageClass",
    ),
    Case("exposure", vllm(exposure="open"), "tpu-stacks:vllm.exposure"),
    Case("autoscaling-metric", vllm(autoscaling={"metric": "cpu"}), "tpu-stacks:vllm.autoscaling.metric"),
    Case(
        "autoscaling-metric-renamed",
        vllm(autoscaling={"metric": "gpu_cache_usage_perc"}),
        "tpu-stacks:vllm.autoscaling.metric",
        also=("'gpu_cache_usage_perc'", "renamed kv_cache_usage_perc", "write kv_cache_usage_perc"),
    ),
    Case("jetstream-flow", jetstream(flow="convert"), "tpu-stacks:jetstream.flow"),
    Case("release-channel-case", cluster(releaseChannel="rapid"), "tpu-stacks:cluster.releaseChannel"),
    Case("cluster-mode", cluster(mode="Autopilot"), "tpu-stacks:cluster.mode"),
    Case("universe", cluster(universe="aws"), "tpu-stacks:cluster.universe"),
    Case("parallelism-axis", raytrain(parallelism={"fsdp": 4, "tensr": 4}), "tpu-stacks:raytrain.parallelism"),
    Case(
        "repo-type",
        raytrain(image={"build": "trigger", "source": {"uri": "https://github.com/a/b", "repoType": "github"}}),
        "tpu-stacks:raytrain.image.source.repoType",
    ),
    # Infinite, absurd and boolean numbers
    Case("replicas-bool", saxml(replicas=True), "tpu-stacks:saxml.replicas"),
    Case("max-model-len-bool", vllm(maxModelLen=True), "tpu-stacks:vllm.maxModelLen"),
    Case("steps-huge", raytrain(steps=10**20), "tpu-stacks:raytrain.steps"),
    Case("max-model-len-huge", vllm(maxModelLen=10**12), "tpu-stacks:vllm.maxModelLen"),
    Case("target-1e20", vllm(autoscaling={"target": 1e20}), "tpu-stacks:vllm.autoscaling.target"),
    Case("batch-float", raytrain(perDeviceBatchSize=1e20), "tpu-stacks:raytrain.perDeviceBatchSize"),
    Case("replicas-float", saxml(replicas=1.5), "tpu-stacks:saxml.replicas"),
    Case("nodes-bool", cluster(systemPool={"nodes": True}), "tpu-stacks:cluster.systemPool.nodes"),
    Case(
        "count-string",
        cluster(slices=[{"generation": "v6e", "topology": "2x4", "count": "two"}]),
        "tpu-stacks:cluster.slices[0].count",
    ),
    Case("target-bool", vllm(autoscaling={"target": True}), "tpu-stacks:vllm.autoscaling.target"),
    Case("max-seqs-negative", vllm(maxNumSeqs=-1), "tpu-stacks:vllm.maxNumSeqs"),
    # extraArgs come last and the server keeps a flag's last value: one the stack writes from a key would replace it
    Case(
        "extra-args-context",
        vllm(extraArgs=["--max-model-len=131072"]),
        "tpu-stacks:vllm.extraArgs[0]",
        also=("vllm.maxModelLen",),
    ),
    Case("extra-args-port", vllm(extraArgs=["--port", "9000"]), "tpu-stacks:vllm.extraArgs[0]", also=("8000",)),
    Case("extra-args-quantization", vllm(extraArgs=["-q", "awq"]), "tpu-stacks:vllm.extraArgs[0]", also=("awq",)),
    Case("checkpoint-period-huge", raytrain(checkpointPeriod=10**15), "tpu-stacks:raytrain.checkpointPeriod"),
    Case(
        "parallelism-bool",
        raytrain(parallelism={"fsdp": True, "tensor": 4}),
        "tpu-stacks:raytrain.parallelism.fsdp",
        also=("boolean",),
    ),
]

# --- Public exposure in pieces -------------------------------------------------------------------------
EXPOSURE = [
    Case("halves", vllm(exposure="public", sourceRanges=["0.0.0.0/1", "128.0.0.0/1"]), "tpu-stacks:vllm.sourceRanges"),
    Case(
        "quarters",
        vllm(exposure="public", sourceRanges=["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"]),
        "tpu-stacks:vllm.sourceRanges",
    ),
    Case("v6-halves", vllm(exposure="public", sourceRanges=["::/1", "8000::/1"]), "tpu-stacks:vllm.sourceRanges"),
    Case("whole", vllm(exposure="public", sourceRanges=["0.0.0.0/0"]), "tpu-stacks:vllm.sourceRanges[0]"),
    Case("whole-v6", vllm(exposure="public", sourceRanges=["::/0"]), "tpu-stacks:vllm.sourceRanges[0]"),
    # A range with host bits: refused with its network address (it becomes a firewall range and an ipBlock).
    Case("vllm-host-bits", vllm(exposure="public", sourceRanges=["203.0.113.7/24"]), "tpu-stacks:vllm.sourceRanges[0]"),
    Case("saxml-host-bits", saxml(sourceRanges=["10.1.2.3/8"]), "tpu-stacks:saxml.sourceRanges[0]"),
    Case(
        "saxml-halves",
        saxml(exposure="public", sourceRanges=["128.0.0.0/1", "0.0.0.0/1"]),
        "tpu-stacks:saxml.sourceRanges",
    ),
    Case(
        "overlapping",
        vllm(exposure="public", sourceRanges=["0.0.0.0/1", "10.0.0.0/8", "128.0.0.0/1"]),
        "tpu-stacks:vllm.sourceRanges",
    ),
    Case("not-a-cidr", vllm(exposure="public", sourceRanges=["everyone"]), "tpu-stacks:vllm.sourceRanges[0]"),
    Case("no-prefix", vllm(exposure="public", sourceRanges=["203.0.113.7"]), "tpu-stacks:vllm.sourceRanges[0]"),
    Case("empty", vllm(exposure="public", sourceRanges=None), "tpu-stacks:vllm.sourceRanges"),
    # An internal load balancer without clients answers the whole VPC (and what is connected to it).
    Case("internal-open", vllm(sourceRanges=None), "tpu-stacks:vllm.sourceRanges", also=("every address of the VPC",)),
    Case(
        "internal-open-api-key",
        vllm(sourceRanges=None, apiKey=True),
        "tpu-stacks:vllm.sourceRanges",
        also=("/invocations",),
    ),
    Case(
        "internal-open-multihost",
        section("vllm-405b", "vllm", sourceRanges=None),
        "tpu-stacks:vllm.sourceRanges",
        also=("Ray Serve LLM",),
    ),
    Case("internal-open-saxml", saxml(sourceRanges=None), "tpu-stacks:saxml.sourceRanges"),
    Case("internal-empty", vllm(sourceRanges=[]), "tpu-stacks:vllm.sourceRanges"),
    Case("host-bits", saxml(exposure="public", sourceRanges=["300.0.0.0/8"]), "tpu-stacks:saxml.sourceRanges[0]"),
    # Inference Gateway (vllm.gateway): an L7 load balancer, a documented class per exposure, GKE's CRD floor.
    Case("gateway-cluster", section("vllm-gateway", "vllm", exposure="cluster"), "tpu-stacks:vllm.exposure"),
    Case(
        "gateway-class",
        section("vllm-gateway", "vllm", gateway={"enabled": True, "className": "gke-l7-regional-external-managed"}),
        "tpu-stacks:vllm.gateway.className",
    ),
    Case("gateway-public-open", section("vllm-gateway", "vllm", exposure="public"), "tpu-stacks:vllm.sourceRanges"),
    Case("gateway-internal-keyless", section("vllm-gateway", "vllm", apiKey=False), "tpu-stacks:vllm.apiKey"),
    Case(  # the internal class has no documented Cloud Armor: the ranges would be ignored
        "gateway-internal-ranges",
        section("vllm-gateway", "vllm", sourceRanges=["10.0.0.0/8"]),
        "tpu-stacks:vllm.sourceRanges",
    ),
    Case(
        "gateway-public-internal-class",
        section(
            "vllm-gateway",
            "vllm",
            exposure="public",
            sourceRanges=["203.0.113.0/24"],
            gateway={"enabled": True, "className": "gke-l7-rilb"},
        ),
        "tpu-stacks:vllm.gateway.className",
    ),
    Case(
        "gateway-workload-unknown",
        section("vllm-gateway", "vllm", gateway={"enabled": True, "workload": "agentic"}),
        "tpu-stacks:vllm.gateway.workload",
    ),
    Case(
        "vllm-disaggregation",
        section("vllm-gateway", "vllm", disaggregation={"prefill": {"replicas": 1}, "decode": {"replicas": 2}}),
        "tpu-stacks:vllm.disaggregation",
    ),
    Case(
        "gateway-proxy-range",
        section("vllm-gateway", "cluster", gatewayApi={"proxyOnlySubnet": {"range": "8.8.8.0/24"}}),
        "tpu-stacks:cluster.gatewayApi.proxyOnlySubnet.range",
    ),
    Case(
        "gateway-proxy-existing-no-range",
        section("vllm-gateway", "cluster", gatewayApi={"proxyOnlySubnet": {"existing": "my-proxy-subnet"}}),
        "tpu-stacks:cluster.gatewayApi.proxyOnlySubnet",
    ),
    Case(
        "gateway-proxy-existing-name",
        section(
            "vllm-gateway",
            "cluster",
            gatewayApi={"proxyOnlySubnet": {"existing": "My Subnet!", "range": "10.129.0.0/23"}},
        ),
        "tpu-stacks:cluster.gatewayApi.proxyOnlySubnet.existing",
    ),
    Case(
        "gateway-floor",
        section("vllm-gateway", "cluster", minVersion="1.33.3-gke.1136000"),
        "tpu-stacks:cluster.minVersion",
    ),
    Case("gateway-off-class", vllm(gateway={"className": "gke-l7-rilb"}), "tpu-stacks:vllm.gateway.enabled"),
]

# --- Secrets: never echoed, never written --------------------------------------------------------------
SECRETS = [
    Case("vllm-extra-args-token", vllm(extraArgs=[f"--hf-token={HF}"]), "tpu-stacks:vllm.extraArgs[0]", secret=HF),
    Case("vllm-extra-args-split", vllm(extraArgs=["--hf-token", HF]), "tpu-stacks:vllm.extraArgs[1]", secret=HF),
    Case(
        "vllm-extra-args-api-key",
        vllm(extraArgs=[f"--api-key={GOOGLE_KEY}"]),
        "tpu-stacks:vllm.extraArgs[0]",
        secret=GOOGLE_KEY,
    ),
    Case(
        "raytrain-extra-args",
        raytrain(extraArgs=[f"hf_access_token={HF}"]),
        "tpu-stacks:raytrain.extraArgs[0]",
        secret=HF,
    ),
    Case("unknown-key-token", vllm(hfToken=HF), "tpu-stacks:vllm.hfToken", secret=HF),
    Case("unknown-key-typo-token", vllm(tokn=HF), "tpu-stacks:vllm.tokn", secret=HF),
    Case(
        "unknown-password",
        vllm(password="hunter2-correct-horse"),
        "tpu-stacks:vllm.password",
        secret="hunter2-correct-horse",
    ),
    Case("unknown-google-key", saxml(apiKey=GOOGLE_KEY), "tpu-stacks:saxml.apiKey", secret=GOOGLE_KEY),
    Case(
        "private-key",
        jetstream(serviceAccountKey=PRIVATE_KEY),
        "tpu-stacks:jetstream.serviceAccountKey",
        secret="MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ),
    Case("token-as-model", vllm(model=HF), "tpu-stacks:vllm.model", secret=HF),
    Case("token-as-namespace", vllm(namespace=HF), "tpu-stacks:vllm.namespace", secret=HF),
    Case("plain-hf-token", {**vllm(), "tpu-stacks:hfToken": HF}, "tpu-stacks:hfToken", secret=HF),
    Case(
        "top-level-unknown-token",
        {**vllm(), "tpu-stacks:huggingfaceToken": HF},
        "tpu-stacks:huggingfaceToken",
        secret=HF,
    ),
    Case("token-in-cluster", cluster(token=HF), "tpu-stacks:cluster.token", secret=HF),
    Case("token-in-identity", identity(secret=GOOGLE_KEY), "tpu-stacks:identity.secret", secret=GOOGLE_KEY),
    Case("token-in-image", vllm(image=f"docker.io/vllm/vllm-tpu:{HF}"), "tpu-stacks:vllm.image", secret=HF),
]

# --- Unreadable values: long, invisible, look-alike ------------------------------------------------------
UNREADABLE = [
    Case("long-name", cluster(name="c" * 10_000), "tpu-stacks:cluster.name", also=("10000 characters",)),
    Case("long-model", vllm(model="acme/" + "m" * 5000), "tpu-stacks:vllm.model", also=("5005 characters",)),
    Case("long-namespace", vllm(namespace="n" * 300), "tpu-stacks:vllm.namespace", also=("300 characters",)),
    Case("nb-hyphen-zone", jetstream(zone="us\u2011west4\u2011a"), "tpu-stacks:jetstream.zone", also=("\\u2011",)),
    Case("zero-width-name", cluster(name="serv\u200bing"), "tpu-stacks:cluster.name", also=("\\u200b",)),
    Case("cyrillic-a", vllm(namespace="v\u0430llm"), "tpu-stacks:vllm.namespace", also=("\\u0430",)),
    Case("nbsp-topology", vllm(topology="2x4\u00a0"), "tpu-stacks:vllm.topology", also=("\\xa0",)),
    Case("rtl-override", saxml(ksaName="sax\u202e-as"), "tpu-stacks:saxml.ksaName", also=("\\u202e",)),
    Case(
        "en-dash-channel", cluster(releaseChannel="RAPID\u2013"), "tpu-stacks:cluster.releaseChannel", also=("\\u2013",)
    ),
    Case("newline-name", cluster(name="a\nb"), "tpu-stacks:cluster.name"),
    Case(
        "long-source-range",
        vllm(exposure="public", sourceRanges=["1" * 500]),
        "tpu-stacks:vllm.sourceRanges[0]",
        also=("500 characters",),
    ),
]

# --- `tpu-stacks size`: exit 2, one line ----------------------------------------------------------------
SIZE = [
    Case("params-with-catalogue-model", ["meta-llama/Llama-3.1-8B", "--tpu", "v6e", "--params", "8B"], "--params"),
    Case("params-with-alias", ["llama3-8b", "--tpu", "v6e", "--params", "7B"], "--params"),
    Case("unknown-model", ["acme/nope", "--tpu", "v6e"], "MODEL"),
    Case("no-model", ["--tpu", "v6e"], "MODEL"),
    Case("bad-tpu", ["meta-llama/Llama-3.1-8B", "--tpu", "v9"], "--tpu"),
    Case("params-words", ["--tpu", "v6e", "--params", "lots"], "--params"),
    Case("params-negative", ["--tpu", "v6e", "--params", "-7B"], "--params"),
    Case("params-inf", ["--tpu", "v6e", "--params", "inf"], "--params"),
    Case("params-nan", ["--tpu", "v6e", "--params", "nan"], "--params"),
    Case("params-absurd", ["--tpu", "v6e", "--params", "1e30"], "--params"),
    Case("params-zero", ["--tpu", "v6e", "--params", "0B"], "--params"),
    Case("params-below-one", ["--tpu", "v6e", "--params", "0.5"], "--params", also=("--params: '0.5' is less",)),
    Case("params-shape-incomplete", ["--tpu", "v6e", "--params", "7B", "--layers", "4"], "--layers/--kv-heads"),
    Case("context-zero", ["meta-llama/Llama-3.1-8B", "--tpu", "v6e", "--context", "0"], "--context"),
    Case("context-words", ["meta-llama/Llama-3.1-8B", "--tpu", "v6e", "--context", "long"], "--context"),
    Case("batch-negative", ["meta-llama/Llama-3.1-8B", "--tpu", "v6e", "--batch", "-1"], "--batch"),
    Case("dtype", ["meta-llama/Llama-3.1-8B", "--tpu", "v6e", "--dtype", "fp4"], "--dtype"),
    Case("workload", ["meta-llama/Llama-3.1-8B", "--tpu", "v6e", "--workload", "finetune"], "--workload"),
    Case("engine", ["meta-llama/Llama-3.1-8B", "--tpu", "v6e", "--engine", "tgi"], "--engine"),
    Case("size-token-as-model", [HF, "--tpu", "v6e"], "MODEL", secret=HF),
    Case("nb-hyphen-tpu", ["meta-llama/Llama-3.1-8B", "--tpu", "v6\u2011e"], "--tpu", also=("\\u2011",)),
    Case("size-long-model", ["m" * 3000, "--tpu", "v6e"], "MODEL", also=("3000 characters",)),
    Case("unknown-flag", ["meta-llama/Llama-3.1-8B", "--tpu", "v6e", "--tokens", "5"], "--tokens"),
    Case("layers-with-catalogue-model", ["meta-llama/Llama-3.1-8B", "--tpu", "v6e", "--layers", "4"], "--layers"),
]

PLAN_KINDS: dict[str, list[Case]] = {
    "resources declared before the refusal": BEFORE_ANY_RESOURCE,
    "the key in the user's spelling": USER_SPELLING,
    "loader (stack files read as the Pulumi CLI does)": LOADER,
    "missing values and numbers said well": MESSAGES,
    "silent accepts": SILENT_ACCEPTS,
    "public exposure in pieces": EXPOSURE,
    "secrets": SECRETS,
    "unreadable values": UNREADABLE,
}
SIZE_KINDS: dict[str, list[Case]] = {"size calls": SIZE}
ALL_KINDS = {**PLAN_KINDS, **SIZE_KINDS}
_ = Path
