"""A kubeconfig for a GKE cluster that authenticates with `gke-gcloud-auth-plugin`.

No static credentials: kubectl and the Pulumi Kubernetes provider run the plugin, which uses the
caller's Google credentials (the same ones `pulumi up` already has).
"""

from __future__ import annotations

import json


def gke_kubeconfig(context: str, endpoint: str, ca_certificate: str) -> str:
    """The kubeconfig document (JSON, which is valid YAML) for one cluster."""
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": context,
                "cluster": {"server": f"https://{endpoint}", "certificate-authority-data": ca_certificate},
            }
        ],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
        "users": [
            {
                "name": context,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "gke-gcloud-auth-plugin",
                        "installHint": (
                            "Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin"
                        ),
                        "provideClusterInfo": True,
                    }
                },
            }
        ],
    }
    return json.dumps(document, indent=2)
