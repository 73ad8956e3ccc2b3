"""Mocks for unit tests of a program that uses these components: `pulumi.runtime.set_mocks(Mocks())`.

Pulumi's unit-test mocks echo a resource's inputs as its outputs and answer no invoke. The components
read back what only a provider computes: the cluster's `endpoint` and `masterAuth` (for the kubeconfig of
the Kubernetes provider they build), a service account's `email`, GKE's versions (`getEngineVersions`),
the project number. `Mocks` answers those with plausible values, as the offline planner (`tpu-stacks
plan`) does: it uses this class too, so both answer the same. docs/sdk.md has a complete pytest file.

In preview mode a resource returns only its inputs, so every computed output is unknown, as in a real
preview of a new stack. An invoke without an answer raises: silently returning {} would hide a data
source that no offline run can answer.

Pulumi's testing guide: https://www.pulumi.com/docs/iac/guides/testing/unit/
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import Any

import pulumi
import yaml
from pulumi.runtime.rpc import unwrap_rpc_secret

from tpu_stacks.errors import UserError
from tpu_stacks.gcp.universe import Universe, universe

CLUSTER_ENDPOINT = "203.0.113.10"  # TEST-NET-3: never a real address
PROJECT_NUMBER = "123456789012"
_FAKE_CA = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nb2ZmbGluZSBwbGFuOiBub3QgYSByZWFsIGNlcnRpZmljYXRl\n-----END CERTIFICATE-----\n"
).decode()


OFFERED_MASTER_VERSIONS = (
    "1.35.1-gke.1396000",
    "1.35.0-gke.2398000",
    "1.34.3-gke.1444000",
    "1.34.3-gke.1318000",
    "1.34.1-gke.3971000",
    "1.33.6-gke.1180000",
    "1.33.5-gke.1308000",
    "1.32.10-gke.1088000",
    "1.32.9-gke.1010000",
    "1.31.14-gke.1088000",
)
"""What the offline plan says a location offers (`getEngineVersions`): illustrative, not a snapshot of
any day. Shaped as `projects.locations.getServerConfig` answers (newest first, four minors or so per
channel, GKE release notes' "Available versions", https://cloud.google.com/kubernetes-engine/docs/release-notes),
and reaching every floor the catalogue names (tpu7x's 1.34.3-gke.1318000 the highest), so
`cluster.minVersion` resolves as on a real `up`. The real answer moves every week: that is why `up` asks
GKE instead of the plan deciding the version."""
OFFERED_CHANNELS = {
    # channel: (default, valid versions newest first). Every channel's newest reaches every floor the
    # catalogue names (tests/cluster/test_versions.py checks it), so the offline plan refuses no floor a
    # real channel could serve; REGULAR's, STABLE's and EXTENDED's defaults sit below some floors, so the
    # second rule (the channel's newest) shows up too.
    "RAPID": ("1.35.0-gke.2398000", OFFERED_MASTER_VERSIONS[:4]),
    "REGULAR": ("1.34.1-gke.3971000", OFFERED_MASTER_VERSIONS[2:7]),
    "STABLE": ("1.33.5-gke.1308000", OFFERED_MASTER_VERSIONS[3:9]),
    "EXTENDED": ("1.32.9-gke.1010000", OFFERED_MASTER_VERSIONS[3:]),
}


class _YamlLoader(yaml.SafeLoader):
    """YAML as the Kubernetes provider decodes it: timestamps stay strings (JSON has no dates)."""


_YamlLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))


def short_hash(text: str) -> str:
    """A stable 7-character suffix where a provider would autoname with a random one."""
    return hashlib.sha256(text.encode()).hexdigest()[:7]


class Mocks(pulumi.runtime.Mocks):
    """Computed values for the GCP and Kubernetes types the components use; everything else echoes.

    `config` holds provider settings by full key (`gcp:project`, `gcp:region`, `gcp:zone`,
    `gcp:universeDomain`) where a resource or invoke does not name its own; `seed` varies the suffix
    of autonamed buckets (the planner passes the Pulumi project's name)."""

    def __init__(self, config: Mapping[str, str] | None = None, *, preview: bool = False, seed: str = "") -> None:
        self.settings: Mapping[str, str] = config or {}
        self.preview = preview
        self.seed = seed
        self.resources: list[pulumi.runtime.MockResourceArgs] = []
        """Every resource declared, in order: a test asserts on their types, names and inputs."""
        self.calls: list[pulumi.runtime.MockCallArgs] = []
        """Every invoke made, in order."""
        self.subnetworks: list[dict[str, Any]] = []
        """What `getSubnetworks` answers (wire form: name, ipCidrRange, network, networkName...): none by default,
        a project whose region has no subnet the filter selects; a test sets it to stand in for one that has."""

    def of_type(self, typ: str) -> list[pulumi.runtime.MockResourceArgs]:
        """The resources of one type token (`kubernetes:apps/v1:Deployment`) declared so far."""
        return [resource for resource in self.resources if resource.typ == typ]

    def setting(self, key: str) -> str | None:
        return self.settings.get(key)

    def plain(self, value: Any) -> Any:
        """Inputs as plain values: secrets unwrapped, at any depth (the planner's monitor sends wire form)."""
        value = unwrap_rpc_secret(value)
        if isinstance(value, dict):
            return {key: self.plain(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.plain(item) for item in value]
        return value

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        """(id, outputs) for a registration; `args.inputs` are echoed, with computed outputs added."""
        self.resources.append(args)
        given = dict(args.inputs)
        if self.preview:
            return "", given  # a new resource's id and computed outputs are unknown in preview
        inputs = self.plain(given)
        computed = {
            "gcp:container/cluster:Cluster": self._cluster,
            "gcp:serviceaccount/account:Account": self._service_account,
            "gcp:storage/bucket:Bucket": self._bucket,
            "gcp:artifactregistry/repository:Repository": self._repository,
        }.get(args.typ)
        if computed is None:
            return f"{args.name}-id", given
        resource_id, outputs = computed(args.name, inputs)
        return resource_id, {**given, **outputs}

    @property
    def gcp_project(self) -> str:
        return self.setting("gcp:project") or "offline-project"

    def _location(self, inputs: dict[str, Any]) -> str:
        return str(inputs.get("location") or self.setting("gcp:region") or self.setting("gcp:zone") or "us-central1")

    def _cluster(self, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
        cluster = inputs.get("name") or name
        project = inputs.get("project") or self.gcp_project
        location = self._location(inputs)
        master_auth = dict(inputs.get("masterAuth") or {})
        master_auth["clusterCaCertificate"] = _FAKE_CA
        return f"projects/{project}/locations/{location}/clusters/{cluster}", {
            "name": cluster,
            "project": project,
            "location": location,
            "endpoint": CLUSTER_ENDPOINT,
            "masterAuth": master_auth,
            "selfLink": f"https://container.googleapis.com/v1/projects/{project}/locations/{location}/clusters/{cluster}",
        }

    def _universe(self) -> Universe:
        """The provider's universe (gcp:universeDomain) decides the service-account domain, as GCP does."""
        try:
            return universe(self.setting("gcp:universeDomain") or "google")
        except UserError:
            return universe("google")

    def _service_account(self, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
        project = inputs.get("project") or self.gcp_project
        email = inputs.get("email") or self._universe().service_account_email(inputs.get("accountId") or name, project)
        resource_name = f"projects/{project}/serviceAccounts/{email}"
        return resource_name, {
            "email": email,
            "member": f"serviceAccount:{email}",
            "name": resource_name,
            "project": project,
            "uniqueId": str(10**20 + int(short_hash(email), 16)),
        }

    def _bucket(self, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
        bucket = inputs.get("name") or f"{name}-{short_hash(self.seed + name)}"
        return bucket, {
            "name": bucket,
            "url": f"gs://{bucket}",
            "selfLink": f"https://www.googleapis.com/storage/v1/b/{bucket}",
            "project": inputs.get("project") or self.gcp_project,
        }

    def _repository(self, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
        repository = inputs.get("repositoryId") or name
        project = inputs.get("project") or self.gcp_project
        location = self._location(inputs)
        return f"projects/{project}/locations/{location}/repositories/{repository}", {
            "name": repository,
            "project": project,
            "location": location,
            "registryUri": f"{location}-docker.pkg.dev/{project}/{repository}",
        }

    def _engine_versions(self, params: dict[str, Any]) -> dict[str, Any]:
        """The provider's answer to OFFERED_*: `versionPrefix` filters the lists, a channel's latest is its
        first valid version with the prefix (terraform-provider-google google/services/container/
        data_source_google_container_engine_versions.go)."""
        prefix = params.get("versionPrefix") or ""
        valid = [version for version in OFFERED_MASTER_VERSIONS if version.startswith(prefix)]
        latest = {
            channel: next(version for version in versions if version.startswith(prefix))
            for channel, (_, versions) in OFFERED_CHANNELS.items()
            if any(version.startswith(prefix) for version in versions)
        }
        return {
            "id": "offline-engine-versions",
            "location": self._location(params),
            "project": params.get("project") or self.gcp_project,
            "versionPrefix": prefix,
            "defaultClusterVersion": OFFERED_CHANNELS["REGULAR"][0],
            "latestMasterVersion": valid[0] if valid else "",
            "latestNodeVersion": valid[0] if valid else "",
            "validMasterVersions": valid,
            "validNodeVersions": valid,
            "releaseChannelDefaultVersion": {channel: default for channel, (default, _) in OFFERED_CHANNELS.items()},
            "releaseChannelLatestVersion": latest,
            "releaseChannelUpgradeTargetVersion": {},
        }

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        """Results for the invokes the project makes; any other token is an error naming it."""
        self.calls.append(args)
        params = self.plain(dict(args.args))
        if args.token == "gcp:organizations/getProject:getProject":
            project = params.get("projectId") or self.gcp_project
            return {
                "id": f"projects/{project}",
                "projectId": project,
                "number": PROJECT_NUMBER,
                "name": project,
                "labels": {},
                "effectiveLabels": {},
            }
        if args.token == "gcp:organizations/getClientConfig:getClientConfig":
            return {
                "id": "offline-client-config",
                "project": self.gcp_project,
                "region": self.setting("gcp:region") or "",
                "zone": self.setting("gcp:zone") or "",
                "accessToken": "offline-access-token",
                "defaultLabels": {},
            }
        if args.token == "gcp:container/getCluster:getCluster":
            # An existing cluster (bring your own): what a real look-up returns that programs use.
            name, location = params.get("name") or "existing", params.get("location") or self._location({})
            project = params.get("project") or self.gcp_project
            return {
                "id": f"projects/{project}/locations/{location}/clusters/{name}",
                "name": name,
                "location": location,
                "project": project,
                "endpoint": "198.51.100.20",
                "network": "default",
                "masterAuths": [{"clusterCaCertificate": "T0ZGTElORS1DQQ=="}],
                "workloadIdentityConfigs": [{"workloadPool": f"{project}.svc.id.goog"}],
            }
        if args.token == "gcp:container/getEngineVersions:getEngineVersions":
            return self._engine_versions(params)
        if args.token == "gcp:compute/getSubnetworks:getSubnetworks":
            # The filter is the API's to apply (offline nothing reads it): `subnetworks` is the answer as given.
            region = params.get("region") or self.setting("gcp:region") or ""
            project = params.get("project") or self.gcp_project
            return {
                "id": f"projects/{project}/regions/{region}/subnetworks",
                "filter": params.get("filter"),
                "project": project,
                "region": region,
                "subnetworks": [dict(subnet) for subnet in self.subnetworks],
            }
        if args.token == "kubernetes:yaml:decode":
            documents = yaml.load_all(params.get("text") or "", Loader=_YamlLoader)
            return {"result": [doc for doc in documents if doc is not None]}
        raise NotImplementedError(
            f"no mock for invoke {args.token}: no offline run can call providers; "
            "pass the value in through stack config or the component's args instead"
        )
