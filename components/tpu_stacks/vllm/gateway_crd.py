"""The InferenceObjective CRD a gateway with objectives declares (GKE installs no alpha Inference Extension kind),
built from the chosen picker's vendored upstream file (tpu_stacks/k8s/crds). Apart from vllm/gateway.py, which
declares everything else, so each module keeps to one job.
(No `from __future__ import annotations`: the module is loaded with the component.)
"""

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.k8s.crd_files import crd_document


def objective_crd(name: str, file: str, opts: pulumi.ResourceOptions) -> k8s.apiextensions.v1.CustomResourceDefinition:
    """InferenceObjective's CRD of the chosen picker, its upstream file (tpu_stacks/k8s/crds: llm-d.ai's at router
    v0.10.0, inference.networking.x-k8s.io's at v1.5.0): GKE installs neither alpha kind. Kept on destroy:
    deleting a CRD deletes every object of its kind in the whole cluster, other stacks' and teams' included, so
    removing it is a person's decision, not a side effect of `pulumi destroy`."""
    document = crd_document(file)
    spec = document["spec"]
    names = spec["names"]
    versions = [
        k8s.apiextensions.v1.CustomResourceDefinitionVersionArgs(
            name=version["name"],
            served=version["served"],
            storage=version["storage"],
            schema=k8s.apiextensions.v1.CustomResourceValidationArgs(
                open_apiv3_schema=version["schema"]["openAPIV3Schema"]
            ),
            subresources=version.get("subresources"),
            additional_printer_columns=[
                k8s.apiextensions.v1.CustomResourceColumnDefinitionArgs(
                    name=column["name"], type=column["type"], json_path=column["jsonPath"]
                )
                for column in version.get("additionalPrinterColumns", [])
            ],
        )
        for version in spec["versions"]
    ]
    return k8s.apiextensions.v1.CustomResourceDefinition(
        f"{name}-inference-objective-crd",
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=document["metadata"]["name"], annotations=document["metadata"].get("annotations")
        ),
        spec=k8s.apiextensions.v1.CustomResourceDefinitionSpecArgs(
            group=spec["group"],
            scope=spec["scope"],
            names=k8s.apiextensions.v1.CustomResourceDefinitionNamesArgs(
                kind=names["kind"], list_kind=names["listKind"], plural=names["plural"], singular=names["singular"]
            ),
            versions=versions,
        ),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=True)),
    )
