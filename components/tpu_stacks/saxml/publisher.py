"""Declarative publishing: the publisher Job, and the tutorial's requests as ready-to-paste curl.

The Job runs `reconcile.py` (mounted from a ConfigMap) once the model servers and the HTTP
server are up. It receives the whole desired list, so it is idempotent and can unpublish models
removed from config: its record of what it published lives in the admin bucket
(docs/saxml.md: publishing). Any change of the list, the script or the image replaces the Job
(its template changes), which runs it again; `pulumi up` waits for it to complete.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.image_users import PYTHON
from tpu_stacks.gcp.universe import Universe
from tpu_stacks.k8s.security import harden
from tpu_stacks.objects.annotations import PREFIX
from tpu_stacks.objects.awaits import job_budget
from tpu_stacks.saxml import reconcile
from tpu_stacks.saxml.outputs import SaxmlCurl
from tpu_stacks.saxml.plan import PublishedModel, SaxmlPlan
from tpu_stacks.saxml.servers import MANAGED, in_cluster_url
from tpu_stacks.saxml.spec import SAMPLE_QUERY, TUTORIAL_MODEL_NAME

PUBLISHER = "sax-publisher"
STATE_OBJECT = "tpu-stacks/published-models.json"
SCRIPT = "saxml_reconcile.py"  # its name inside the publisher pod (the ConfigMap key)
MOUNT = "/opt/sax-publisher"
READY_MINUTES = 15
SCRIPT_ANNOTATION = f"{PREFIX}/publisher-script"
POD_LABELS = {"app": PUBLISHER}  # its pod's labels (its network policy selects these)


def script_source() -> str:
    return Path(reconcile.__file__).read_text(encoding="utf-8")


def desired_json(plan: SaxmlPlan) -> str:
    return json.dumps([model.body() for model in plan.models], separators=(",", ":"))


def script_config(resource: str, plan: SaxmlPlan, opts: pulumi.ResourceOptions) -> k8s.core.v1.ConfigMap:
    return k8s.core.v1.ConfigMap(
        resource,
        metadata=k8s.meta.v1.ObjectMetaArgs(name=PUBLISHER, namespace=plan.spec.namespace, labels=MANAGED),
        data={SCRIPT: script_source()},
        opts=opts,
    )


def _env(plan: SaxmlPlan, bucket: pulumi.Input[str], universe: Universe) -> list[k8s.core.v1.EnvVarArgs]:
    values: dict[str, pulumi.Input[str]] = {
        "SAX_HTTP": in_cluster_url(plan),
        "SAX_MODELS": desired_json(plan),
        "STATE_URL": pulumi.Output.concat("gs://", bucket, "/", STATE_OBJECT),
        "STORAGE_API": f"https://storage.{universe.api_domain}",  # the universe's GCS endpoint [I for s3ns]
        "READY_SECONDS": str(READY_MINUTES * 60),
        "WAIT_SECONDS": str(plan.spec.publish_wait_minutes * 60),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    return [k8s.core.v1.EnvVarArgs(name=name, value=value) for name, value in values.items()]


def deadline_minutes(plan: SaxmlPlan) -> int:
    """The publisher Job's deadline: sax-http ready, the models' load (`publishWaitMinutes`), ten minutes more."""
    return READY_MINUTES + plan.spec.publish_wait_minutes + 10


def publisher_job(
    resource: str, plan: SaxmlPlan, bucket: pulumi.Input[str], universe: Universe, opts: pulumi.ResourceOptions
) -> k8s.batch.v1.Job:
    """A run-to-completion Job that makes the published models match `plan.models`."""
    minutes = deadline_minutes(plan)
    script_hash = hashlib.sha256(script_source().encode()).hexdigest()[:16]
    container = k8s.core.v1.ContainerArgs(
        name="publisher",
        image=plan.spec.images.publisher,
        command=["python3", f"{MOUNT}/{SCRIPT}"],
        env=_env(plan, bucket, universe),
        resources=k8s.core.v1.ResourceRequirementsArgs(
            requests={"cpu": "50m", "memory": "64Mi"}, limits={"cpu": "500m", "memory": "128Mi"}
        ),
        volume_mounts=[k8s.core.v1.VolumeMountArgs(name="script", mount_path=MOUNT, read_only=True)],
    )
    return k8s.batch.v1.Job(
        resource,
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=PUBLISHER,
            namespace=plan.spec.namespace,
            labels=MANAGED,
            # No pulumi.com/waitFor: the provider's own Job awaiter waits for Complete and, unlike a
            # waitFor condition (which replaces it), fails at once when the Job fails
            # (pulumi-kubernetes provider/pkg/await/job.go, metadata/overrides.go ReadyCondition).
        ),
        spec=k8s.batch.v1.JobSpecArgs(
            backoff_limit=3,
            active_deadline_seconds=minutes * 60,
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    labels=dict(POD_LABELS), annotations={SCRIPT_ANNOTATION: script_hash}
                ),
                # Hardened (k8s.security); no Kubernetes API token: it never calls the API.
                spec=harden(
                    k8s.core.v1.PodSpecArgs(
                        service_account_name=plan.spec.ksa_name,  # Workload Identity: the record in the admin bucket
                        restart_policy="Never",
                        containers=[container],
                        volumes=[
                            k8s.core.v1.VolumeArgs(
                                name="script",
                                config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(name=PUBLISHER, default_mode=0o444),
                            )
                        ],
                    ),
                    PYTHON,
                ),
            ),
        ),
        opts=pulumi.ResourceOptions.merge(
            opts,
            pulumi.ResourceOptions(
                delete_before_replace=True,  # a Job's template is immutable and its name fixed
                # Pulumi waits for Complete until just after the Job's own deadline (k8s/probes.py).
                custom_timeouts=job_budget(minutes * 60).custom_timeouts(),
            ),
        ),
    )


def example_model(plan: SaxmlPlan) -> PublishedModel:
    """The model the curl commands name: the first published one, else the tutorial's body."""
    if plan.models:
        return plan.models[0]
    return PublishedModel(model=TUTORIAL_MODEL_NAME, model_path=plan.model.id, checkpoint="None", replicas=plan.slices)


def curl_commands(address: str, plan: SaxmlPlan) -> SaxmlCurl:
    """The tutorial's four requests against `address` (host:port)."""
    model = example_model(plan)

    def curl(method: str, path: str, body: dict[str, object]) -> str:
        return (
            f'curl --request {method} --header "Content-type: application/json" -s {address}/{path} '
            f"--data '{json.dumps(body)}'"
        )

    return SaxmlCurl(
        publish=curl("POST", "publish", model.body()),
        listcell=curl("GET", "listcell", {"model": model.model}),
        generate=curl("POST", "generate", {"model": model.model, "query": SAMPLE_QUERY}),
        unpublish=curl("POST", "unpublish", {"model": model.model}),
    )
