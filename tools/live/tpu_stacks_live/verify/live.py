"""The readers over the real APIs: the Kubernetes Python client for the cluster, Google's client libraries for
Compute Engine and Managed Prometheus, the Pulumi CLI for drift. Every call here reads: GET on the Kubernetes API,
`list`/`get`/`getHealth` on Compute Engine, an instant query on Managed Prometheus.

Managed Prometheus answers PromQL on the Prometheus HTTP API at
https://monitoring.googleapis.com/v1/projects/PROJECT/location/global/prometheus/api/v1/query
(https://cloud.google.com/stackdriver/docs/managed-prometheus/query-api-ui); it is called through google-auth's
AuthorizedSession with the caller's Application Default Credentials. Drift runs `pulumi preview
--expect-no-changes`, which exits non-zero on any proposed change
(https://www.pulumi.com/docs/iac/cli/commands/pulumi_preview/).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

from tpu_stacks.errors import UserError
from tpu_stacks_live.verify.readers import Unreadable

_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
_PROMQL = "https://monitoring.googleapis.com/v1/projects/{project}/location/global/prometheus/api/v1/query"
PREVIEW_TIMEOUT_SECONDS = 900
REQUEST_TIMEOUT = 60
"""Seconds one Kubernetes GET may take."""
READ_VERBS = ("list", "get", "getHealth")


def _snake(name: str) -> str:
    """`backendService` -> `backend_service`."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


class LiveCluster:
    """GET on the Kubernetes API through the kubeconfig's credentials; no other verb is ever sent."""

    def __init__(self, kubeconfig: str | None, context: str | None) -> None:
        from kubernetes import config
        from kubernetes.config.config_exception import ConfigException

        try:
            self.api_client = config.new_client_from_config(config_file=kubeconfig, context=context)
        except (ConfigException, OSError, TypeError) as error:
            where = kubeconfig or "$KUBECONFIG or ~/.kube/config"
            raise UserError(
                "--kubeconfig",
                where,
                f"gives no cluster ({' '.join(str(error).split())[:120]})",
                "pulumi stack output kubeconfig --show-secrets > kubeconfig, then pass --kubeconfig kubeconfig",
            ) from error

    def _call(self, path: str, query: dict[str, str], response_type: str) -> Any:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        # kubernetes 37.0.2's ApiClient: param_serialize builds the GET (query, bearer token), call_api sends it,
        # response_deserialize turns a 200 into `response_type` and raises ApiException otherwise
        # (kubernetes/client/api_client.py:246, :354, :389).
        client = self.api_client
        try:
            method, url, headers, body, post = client.param_serialize(
                "GET", path, query_params=list(query.items()), auth_settings=["BearerToken"]
            )
            response = client.call_api(
                method, url, header_params=headers, body=body, post_params=post, _request_timeout=REQUEST_TIMEOUT
            )
            response.read()
            return client.response_deserialize(response, {"200": response_type}).data
        except ApiException as error:
            if error.status == 404:
                return None
            if error.status == 401:
                # the kubeconfig's exec plugin (gke-gcloud-auth-plugin) failed: the loader logs it and sends no
                # token (kubernetes/config/kube_config.py), so the server sees no one
                raise Unreadable(
                    f"GET {path} answered 401", "gcloud auth login, and install gke-gcloud-auth-plugin"
                ) from error
            if error.status == 403:
                raise Unreadable(f"GET {path} answered 403", "give your account read access (view)") from error
            if not error.status:  # the client's own status 0: no answer at all (TLS, connection)
                raise Unreadable(f"GET {path}: {error.reason}", "check the kubeconfig reaches the cluster") from error
            raise Unreadable(f"GET {path} answered {error.status}", "retry; check the API server") from error
        except HTTPError as error:
            raise Unreadable(f"GET {path}: {error}", "check the kubeconfig reaches the cluster") from error

    def get(self, path: str, **query: str) -> dict[str, Any] | None:
        return self._call(path, query, "object")

    def log(self, path: str, **query: str) -> str | None:
        return self._call(path, query, "str")


class LiveGoogle:
    """Compute Engine's read calls and PromQL, with Application Default Credentials."""

    def __init__(self, project: str | None) -> None:
        self.project = project
        self._credentials: Any = None

    def _creds(self) -> Any:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError

        if self._credentials is None:
            try:
                self._credentials, _ = google.auth.default(scopes=_SCOPES)
            except DefaultCredentialsError as error:
                raise Unreadable("no Google credentials", "gcloud auth application-default login") from error
        return self._credentials

    def _need_project(self) -> str:
        if not self.project:
            raise Unreadable("no project", "pass --project or set gcp:project in the stack")
        return self.project

    def compute(self, method: str, **params: str) -> Any:
        resource, verb = method.split(".")
        if verb not in READ_VERBS:  # refused before the client library is even loaded
            raise ValueError(f"not a read-only call: {method}")
        with warnings.catch_warnings():
            # google-api-core warns on every import under Python 3.11 that its future releases will drop 3.11
            # (google/api_core/_python_version_support.py): true, and nothing a verify run can act on.
            warnings.simplefilter("ignore", FutureWarning)
            from google.api_core.exceptions import GoogleAPICallError
            from google.cloud import compute_v1

        clients = {
            "regionBackendServices": compute_v1.RegionBackendServicesClient,
            "backendServices": compute_v1.BackendServicesClient,
            "subnetworks": compute_v1.SubnetworksClient,
            "firewalls": compute_v1.FirewallsClient,
            "regionHealthChecks": compute_v1.RegionHealthChecksClient,
        }
        client = clients[resource](credentials=self._creds())
        # The checks name parameters as the REST API does (`backendService`, `healthCheck`, `filter`); the client
        # 1.48.0 takes them snake_case, and `filter` only inside the request (compute_v1 subnetworks/client.py
        # `list(request=...)`): every call goes as a request dict.
        request: dict[str, Any] = {"project": self._need_project(), **{_snake(k): v for k, v in params.items()}}
        try:
            if verb == "list":
                return [_rest(item) for item in client.list(request=request)]
            if verb == "getHealth":
                request["resource_group_reference_resource"] = {"group": request.pop("group")}
                return _rest(client.get_health(request=request))
            if verb == "get":
                return _rest(client.get(request=request))
        except GoogleAPICallError as error:
            if getattr(error, "code", None) == 404:
                return None
            raise Unreadable(f"{method}: {error.message}", "grant roles/compute.viewer on the project") from error
        raise AssertionError(verb)  # READ_VERBS and the branches above name the same verbs

    def promql(self, query: str) -> list[dict[str, Any]]:
        from google.auth.transport.requests import AuthorizedSession

        session = AuthorizedSession(self._creds())
        response = session.get(_PROMQL.format(project=self._need_project()), params={"query": query}, timeout=60)
        if response.status_code in (401, 403):
            raise Unreadable(f"PromQL answered {response.status_code}", "grant roles/monitoring.viewer on the project")
        if response.status_code != 200:
            raise Unreadable(f"PromQL answered {response.status_code}: {response.text[:200]}", "check the query")
        return list(response.json().get("data", {}).get("result", []))


def _rest(message: Any) -> dict[str, Any]:
    """A proto-plus message as the REST API's JSON (camelCase names, enums as names)."""
    return json.loads(type(message).to_json(message, preserving_proto_field_name=False, use_integers_for_enums=False))


class LivePulumi:
    def preview(self, stack: str, cwd: str) -> tuple[int, str] | None:
        binary = shutil.which("pulumi")
        if binary is None:
            return None
        command = [binary, "preview", "--expect-no-changes", "--non-interactive", "--diff", "--stack", stack]
        try:
            done = subprocess.run(
                command,
                cwd=Path(cwd),
                capture_output=True,
                text=True,
                timeout=PREVIEW_TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return -1, f"error: the preview took over {PREVIEW_TIMEOUT_SECONDS} s"
        return done.returncode, done.stdout + done.stderr
