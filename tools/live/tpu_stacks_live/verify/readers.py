"""The read-only views of the cluster, the project and Pulumi that checks ask questions of.

Three small interfaces, so a check never holds a client library: `Cluster` answers GET requests on Kubernetes API
paths (a list, an object, a pod's log), `Google` answers read-only Compute Engine calls and Managed Prometheus
PromQL queries, `Pulumi` runs one `pulumi preview --expect-no-changes`. `live.py` implements them with the
Kubernetes Python client and Google's client libraries; `fixtures.py` with recorded (synthetic) answers.

A reader raises `Unreadable` when it cannot answer (no permission, an API this cluster does not serve, no
credentials): the check turns it into UNKNOWN with the reader's fix. "Not found" is an answer (None), not an error.
"""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import urlencode


class Unreadable(Exception):
    """What a reader could not read, and what would let it (`fix`)."""

    def __init__(self, what: str, fix: str) -> None:
        super().__init__(what)
        self.what = what
        self.fix = fix


class Cluster(Protocol):
    api_client: Any
    """The Kubernetes ApiClient behind the reader (None for recorded answers): `--probe` hands it on."""

    def get(self, path: str, **query: str) -> dict[str, Any] | None:
        """The JSON a GET of `path` answers, None on 404."""

    def log(self, path: str, **query: str) -> str | None:
        """A pod's log (`/api/v1/namespaces/NS/pods/NAME/log`), None on 404."""


class Google(Protocol):
    def compute(self, method: str, **params: str) -> Any:
        """A read-only Compute Engine call as the REST API names it (`regionBackendServices.list`,
        `regionBackendServices.getHealth`, `subnetworks.list`, `firewalls.list`), answered as its REST JSON
        (camelCase); a list call answers the list of items."""

    def promql(self, query: str) -> list[dict[str, Any]]:
        """The `data.result` of an instant PromQL query on Managed Prometheus's HTTP API."""


class Pulumi(Protocol):
    def preview(self, stack: str, cwd: str) -> tuple[int, str] | None:
        """`pulumi preview --expect-no-changes --stack S`: its exit code and output; None without the CLI."""


def request_key(path: str, query: dict[str, str]) -> str:
    """One request as recorded answers key it: the path, then the query sorted (`?labelSelector=a%3Db`)."""
    return f"{path}?{urlencode(sorted(query.items()))}" if query else path


def call_key(method: str, params: dict[str, str]) -> str:
    """One Google call as recorded answers key it: `regionBackendServices.list region=us-central1`."""
    return " ".join([method, *(f"{k}={v}" for k, v in sorted(params.items()))])
