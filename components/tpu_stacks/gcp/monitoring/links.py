"""The Cloud Console pages a user opens first, in the stack's universe.

Console hosts: Google Cloud's is console.cloud.google.com; Cloud de Confiance by S3NS's is
console.cloud.s3nscloud.fr (its documentation's "Interacting with Cloud de Confiance" and
"Go to ..." links on documentation.s3ns.fr, read 2026-11-23). Paths are the console's own
(`monitoring/dashboards/builder/ID`, `monitoring/alerting/policies`, `kubernetes/workload/overview`,
`logs/query`), the same in both universes.
"""

from __future__ import annotations

from urllib.parse import quote

CONSOLE_HOSTS = {"google": "console.cloud.google.com", "s3ns": "console.cloud.s3nscloud.fr"}


def console(universe: str) -> str:
    return f"https://{CONSOLE_HOSTS[universe]}"


def dashboard_url(universe: str, project: str, dashboard_name: str) -> str:
    """`dashboard_name` is the resource's id, `projects/NUMBER/dashboards/ID`."""
    return f"{console(universe)}/monitoring/dashboards/builder/{dashboard_name.rsplit('/', 1)[-1]}?project={project}"


def first_links(universe: str, project: str, location: str, cluster: str, namespace: str) -> dict[str, str]:
    """The pages besides the dashboard, by what they answer."""
    base, p = console(universe), f"project={project}"
    logs = quote(
        f'resource.type="k8s_container"\nresource.labels.cluster_name="{cluster}"\n'
        f'resource.labels.namespace_name="{namespace}"',
        safe="",
    )
    return {
        "workloads": f"{base}/kubernetes/workload/overview?{p}",
        "cluster": f"{base}/kubernetes/clusters/details/{location}/{cluster}/details?{p}",
        "alerts": f"{base}/monitoring/alerting/policies?{p}",
        "logs": f"{base}/logs/query;query={logs}?{p}",
    }
