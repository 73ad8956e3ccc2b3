"""Stand-ins for the providers: what a resource's outputs and a data source's result would be.

In preview mode a resource returns only its inputs, so the SDK marks every computed output
unknown, exactly as a real preview of a new stack does. In up mode the resources this project
uses return plausible computed values (cluster endpoint and CA, service-account email, bucket
name), so `apply()` code such as kubeconfig building runs too. Invokes without a mock raise:
silently returning {} would hide a data source the offline plan cannot answer.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import yaml
from pulumi.runtime.mocks import MockCallArgs, MockResourceArgs, Mocks

from tpu_stacks.errors import UserError
from tpu_stacks.gcp.universe import Universe, universe
from tpu_stacks_preview.config import StackConfig
from tpu_stacks_preview.wire import unwrap

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
    # channel: (default, valid versions newest first). REGULAR's default sits below a 1.34.3 floor and
    # STABLE's below a 1.33.6 one: a floor there picks the channel's newest.
    "RAPID": ("1.35.0-gke.2398000", OFFERED_MASTER_VERSIONS[:4]),
    "REGULAR": ("1.34.1-gke.3971000", OFFERED_MASTER_VERSIONS[2:7]),
    "STABLE": ("1.33.5-gke.1308000", OFFERED_MASTER_VERSIONS[5:9]),
    "EXTENDED": ("1.32.9-gke.1010000", OFFERED_MASTER_VERSIONS[4:]),
}


class _YamlLoader(yaml.SafeLoader):
    """YAML as the Kubernetes provider decodes it: timestamps stay strings (JSON has no dates)."""


_YamlLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))


def short_hash(text: str) -> str:
    """A stable 7-character suffix where a provider would autoname with a random one."""
    return hashlib.sha256(text.encode()).hexdigest()[:7]


class OfflineMocks(Mocks):
    """Computed values for the GCP and Kubernetes types the project uses; everything else echoes."""

    def __init__(self, config: StackConfig, *, preview: bool) -> None:
        self.config = config
        self.preview = preview

    @property
    def gcp_project(self) -> str:
        return self.config.get("gcp:project") or "offline-project"

    def _location(self, inputs: dict[str, Any]) -> str:
        return str(
            inputs.get("location") or self.config.get("gcp:region") or self.config.get("gcp:zone") or "us-central1"
        )

    def new_resource(self, args: MockResourceArgs) -> tuple[str, dict[str, Any]]:
        """(id, outputs) for a registration; `args.inputs` are wire values (secrets still tagged)."""
        wire = dict(args.inputs)
        if self.preview:
            return "", wire  # a new resource's id and computed outputs are unknown in preview
        inputs = unwrap(wire)
        computed = {
            "gcp:container/cluster:Cluster": self._cluster,
            "gcp:serviceaccount/account:Account": self._service_account,
            "gcp:storage/bucket:Bucket": self._bucket,
            "gcp:artifactregistry/repository:Repository": self._repository,
        }.get(args.typ)
        if computed is None:
            return f"{args.name}-id", wire
        resource_id, outputs = computed(args.name, inputs)
        return resource_id, {**wire, **outputs}

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
            return universe(self.config.get("gcp:universeDomain") or "google")
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
        bucket = inputs.get("name") or f"{name}-{short_hash(self.config.project + name)}"
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

    def call(self, args: MockCallArgs) -> dict[str, Any]:
        """Results for the invokes the project makes; any other token is an error naming it."""
        params = unwrap(dict(args.args))
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
                "region": self.config.get("gcp:region") or "",
                "zone": self.config.get("gcp:zone") or "",
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
                "masterAuths": [{"clusterCaCertificate": "T0ZGTElORS1DQQ=="}],
                "workloadIdentityConfigs": [{"workloadPool": f"{project}.svc.id.goog"}],
            }
        if args.token == "gcp:container/getEngineVersions:getEngineVersions":
            return self._engine_versions(params)
        if args.token == "kubernetes:yaml:decode":
            documents = yaml.load_all(params.get("text") or "", Loader=_YamlLoader)
            return {"result": [doc for doc in documents if doc is not None]}
        raise NotImplementedError(
            f"no mock for invoke {args.token}: the offline plan cannot call providers; "
            "pass the value in through stack config instead"
        )
