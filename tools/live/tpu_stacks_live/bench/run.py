"""One `bench` run on the cluster: create the objects (job.py), wait for the Job, read its log, delete everything.

The calls are the Kubernetes Python client's (kubernetes==37.0.2): NetworkingV1Api create/delete of a namespaced
NetworkPolicy, CoreV1Api create/delete of a ConfigMap, list of pods and their log, BatchV1Api create/read/delete
of a Job (deleted with `propagationPolicy: Background`, so its pod goes too). Every object created is deleted in a
`finally`, whatever happened, unless `keep` is set; one that could not be deleted is named with the command that
deletes it (its `ttlSecondsAfterFinished` collects the Job in any case).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tpu_stacks.errors import UserError
from tpu_stacks_live.bench.job import CONTAINER, RUN

POLL_SECONDS = 15.0


class BenchFailed(Exception):
    """The Job ran and failed, or did not finish: the message says what the cluster said."""


@dataclass
class Apis:
    """The three API groups a run calls (tests pass fakes with the same methods)."""

    core: Any
    batch: Any
    networking: Any


def live_apis(kubeconfig: str | None, context: str | None) -> Apis:
    import kubernetes
    from kubernetes.config.config_exception import ConfigException

    try:
        client = kubernetes.config.new_client_from_config(config_file=kubeconfig, context=context)
    except (ConfigException, OSError, TypeError) as error:
        raise UserError(
            "--kubeconfig",
            kubeconfig or "$KUBECONFIG or ~/.kube/config",
            f"gives no cluster ({' '.join(str(error).split())[:120]})",
            "pulumi stack output kubeconfig --show-secrets > kubeconfig, then pass --kubeconfig kubeconfig",
        ) from error
    api = kubernetes.client
    return Apis(api.CoreV1Api(client), api.BatchV1Api(client), api.NetworkingV1Api(client))


def _reason(error: Exception) -> str:
    body = getattr(error, "body", None)
    try:
        return str(json.loads(body)["message"])
    except (TypeError, ValueError, KeyError):
        return f"{getattr(error, 'status', '')} {getattr(error, 'reason', error)}".strip()


def _conditions(job: Any) -> dict[str, str]:
    status = job.get("status") if isinstance(job, dict) else getattr(job, "status", None)
    items = (status.get("conditions") if isinstance(status, dict) else getattr(status, "conditions", None)) or []
    found = {}
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else item.type
        state = item.get("status") if isinstance(item, dict) else item.status
        message = (item.get("message") if isinstance(item, dict) else item.message) or ""
        if state == "True":
            found[kind] = message
    return found


def _name(obj: Any) -> str:
    return obj["metadata"]["name"] if isinstance(obj, dict) else obj.metadata.name


class Run:
    def __init__(
        self,
        apis: Apis,
        manifests: list[dict],
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        say: Callable[[str], None] = print,
        keep: bool = False,
    ) -> None:
        self.apis, self.manifests, self.keep = apis, manifests, keep
        self.clock, self.sleep, self.say = clock, sleep, say
        self.created: list[dict] = []

    def _create(self, obj: dict) -> None:
        namespace, kind = obj["metadata"]["namespace"], obj["kind"]
        calls = {
            "NetworkPolicy": self.apis.networking.create_namespaced_network_policy,
            "ConfigMap": self.apis.core.create_namespaced_config_map,
            "Job": self.apis.batch.create_namespaced_job,
        }
        try:
            calls[kind](namespace, obj)
        except Exception as error:  # the client's ApiException, or no answer at all
            raise BenchFailed(
                f"could not create {kind} {namespace}/{obj['metadata']['name']}: {_reason(error)} "
                "(bench needs create, get, list and delete on jobs, configmaps, networkpolicies and pods/log there)"
            ) from error
        self.created.append(obj)

    def _delete(self) -> list[str]:
        left = []
        for obj in reversed(self.created):
            namespace, name, kind = obj["metadata"]["namespace"], obj["metadata"]["name"], obj["kind"]
            try:
                if kind == "Job":
                    self.apis.batch.delete_namespaced_job(name, namespace, propagation_policy="Background")
                elif kind == "ConfigMap":
                    self.apis.core.delete_namespaced_config_map(name, namespace)
                else:
                    self.apis.networking.delete_namespaced_network_policy(name, namespace)
            except Exception as error:
                if getattr(error, "status", None) != 404:
                    left.append(f"{kind} {namespace}/{name}")
        return left

    @staticmethod
    def _read(what: str, call, *args, **kwargs):  # noqa: ANN001, ANN205 - one of the client's read calls
        """A read the wait makes; a refusal (403 on pods/log, say) or a lost connection is BenchFailed's one line."""
        try:
            return call(*args, **kwargs)
        except Exception as error:  # the client's ApiException, or no answer at all
            raise BenchFailed(
                f"could not read {what}: {_reason(error)} (bench needs get and list on jobs and pods, and pods/log)"
            ) from error

    def _pod(self, namespace: str, run_id: str) -> str | None:
        pods = self._read(
            "the bench pod", self.apis.core.list_namespaced_pod, namespace, label_selector=f"{RUN}={run_id}"
        )
        items = pods.get("items") if isinstance(pods, dict) else pods.items
        return _name(items[0]) if items else None

    def wait(self, job: dict, limit_s: float) -> str:
        """The Job's log once it completed; BenchFailed when it failed or outlived `limit_s`."""
        namespace, name = job["metadata"]["namespace"], job["metadata"]["name"]
        run_id = job["metadata"]["labels"][RUN]
        deadline = self.clock() + limit_s
        while True:
            conditions = _conditions(
                self._read(f"Job {namespace}/{name}", self.apis.batch.read_namespaced_job_status, name, namespace)
            )
            if "Complete" in conditions or "Failed" in conditions:
                break
            if self.clock() >= deadline:
                raise BenchFailed(f"Job {namespace}/{name} did not finish within {limit_s:g} s")
            self.sleep(POLL_SECONDS)
        pod = self._pod(namespace, run_id)
        read_log = self.apis.core.read_namespaced_pod_log
        log = self._read(f"the log of {pod}", read_log, pod, namespace, container=CONTAINER) if pod else ""
        if "Failed" in conditions:
            tail = " | ".join(line for line in (log or "").strip().splitlines()[-3:])
            raise BenchFailed(f"Job {namespace}/{name} failed: {conditions['Failed'] or 'no message'}; log: {tail}")
        return str(log)

    def run(self) -> str:
        job = self.manifests[-1]
        try:
            for obj in self.manifests:
                self._create(obj)
            namespace, name = job["metadata"]["namespace"], job["metadata"]["name"]
            self.say(f"Job {namespace}/{name} created: kubectl -n {namespace} logs -f job/{name}")
            return self.wait(job, job["spec"]["activeDeadlineSeconds"] + 60)
        finally:
            if not self.keep:
                left = self._delete()
                if left:
                    run_id = job["metadata"]["labels"][RUN]
                    self.say(f"could not delete {', '.join(left)}: kubectl delete job,configmap,networkpolicy "
                             f"-n {job['metadata']['namespace']} -l {RUN}={run_id}")  # fmt: skip
