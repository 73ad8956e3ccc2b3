"""The `saxml` scenario: the Saxml tutorial (a 175B test model on two v5e 4x8 slices) as one
SaxmlStack; the sovereign-cloud edition differs only in the identity domains (`gcp:universeDomain`)."""

from __future__ import annotations

from typing import cast

import pulumi

from stacks.config import LoadedStack, Secrets
from tpu_stacks.saxml.args import SaxmlStackArgs
from tpu_stacks.saxml.component import SaxmlStack


def build(stack: LoadedStack, secrets: Secrets) -> None:
    saxml = SaxmlStack("saxml", cast(SaxmlStackArgs, stack.component_args()))
    pulumi.export("clusterName", saxml.cluster.cluster_name)
    pulumi.export("kubeconfig", saxml.cluster.kubeconfig)
    pulumi.export("httpEndpoint", saxml.http_endpoint)
    pulumi.export("adminBucket", saxml.admin_bucket)
    pulumi.export("serviceAccount", saxml.gsa_email)
    pulumi.export("publishedModels", saxml.published_models)
    pulumi.export("slice", saxml.served_slice)
    for request in ("publish", "listcell", "generate", "unpublish"):
        pulumi.export(f"curl{request.capitalize()}", saxml.curl.apply(lambda curl, request=request: curl[request]))
    pulumi.export("monitoring", saxml.monitoring)
