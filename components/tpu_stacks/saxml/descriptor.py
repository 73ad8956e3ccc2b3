"""The Saxml workload as the registry (tpu_stacks/registry.py) sees it. Pure data: loads no provider SDK."""

from tpu_stacks.registry import Export, Ref, Workload

WORKLOAD = Workload(
    name="saxml",
    section="saxml",
    spec=Ref("tpu_stacks.saxml.spec:SaxmlSpec"),
    args=Ref("tpu_stacks.saxml.args:SaxmlStackArgs"),
    plan=Ref("tpu_stacks.saxml.plan:plan_saxml"),
    component=Ref("tpu_stacks.saxml.component:SaxmlStack"),
    monitoring_target=Ref("tpu_stacks.saxml.monitoring:saxml_target"),
    dashboard_sections=Ref("tpu_stacks.saxml.monitoring:saxml_sections"),
    network=Ref("tpu_stacks.saxml.network:network"),
    smoke_test=Ref("tpu_stacks.saxml.component:smoke_test"),
    smoke_answer="sax-generate",
    # ContainerResourcesArgs is one shape for three specs with different defaults: the defaults are
    # documented on SaxmlResourcesArgs' fields instead.
    args_docs=(
        ("PublishedModelArgs", "PublishedModelSpec"),
        ("SaxmlImagesArgs", "ImagesSpec"),
        ("SaxmlResourcesArgs", "ResourcesSpec"),
        ("JobSetArgs", "JobSetSpec"),
        ("SaxmlStackArgs", "SaxmlSpec"),
    ),
    exports=(
        Export("clusterName", "cluster.cluster_name"),
        Export("kubeconfig", "cluster.kubeconfig"),
        Export("httpEndpoint", "http_endpoint"),
        Export("adminBucket", "admin_bucket"),
        Export("serviceAccount", "gsa_email"),
        Export("publishedModels", "published_models"),
        Export("slice", "served_slice"),
        *(
            Export(f"curl{request.capitalize()}", "curl", request)
            for request in ("publish", "listcell", "generate", "unpublish")
        ),
        Export("monitoring", "monitoring"),
    ),
    engine=Ref("tpu_stacks.saxml.engine:ENGINE"),
    engines=("saxml",),
    sizing_engine="saxml",
    example_stack="saxml",
)
