"""`WorkloadComponent`: the lifecycle every workload component shares, written once; a workload implements hooks.

The model is Kubernetes' job framework in kueue (pkg/controller/jobframework; its interfaces in
https://github.com/kubernetes-sigs/kueue/blob/main/pkg/controller/jobframework/interface.go): one generic reconciler
runs every integration, each integration implements one small interface (`GenericJob`), and the reconciler asks for
optional interfaces where an integration has more to say (`JobWithCustomStop`, `JobWithReclaimablePods`). Here
`WorkloadComponent.__init__` is the one reconciler and the hooks below are the interface. The constructor of a
workload (`VllmStack`, ...) only hands over its typed `args` (the schema inference reads that annotation, and a
Python user's editor the signature): `super().__init__(name, args, opts)`, nothing else
(tests/test_workload_lifecycle.py holds every registered workload to that).

The lifecycle, in order; every refusal is made in steps 1-4, before the first resource:
1. the inputs: the component's own (cluster, secrets) under their Python names (validation.component_inputs), its
   section parsed as the descriptor's spec model, the cluster as `ClusterSpec`;
2. `plan_workload`: the plan, every decision and refusal;
3. `monitoring_target`, planned by `plan_monitoring` (refuses a malformed notification channel);
4. `smoke_test`: what the first `up` checks on the running server (its ports are in the network contract);
5. the component itself (the type token and descriptor the class names: `token=`, `workload=`);
6. `advisories`: lines warned on the component (what the universe does not offer);
7. `foundation`: the cluster exactly as planned, the namespace, the bucket and the Workload Identity
   (workload.declare_foundation);
8. `declare_objects`: the workload's own objects (secrets, servers, Services, Jobs), returned as `Declared`;
9. the namespace's network policies: `network`'s contract and the smoke-test pod's;
10. `scrape`: Managed Prometheus's PodMonitoring of the servers' metrics endpoint;
11. the smoke-test Job, after `Declared.smoke_after`, and its wait;
12. the dashboard, the alerts and a training job's log metric (gcp/monitoring/component.declare_monitoring);
13. the outputs: the cluster's, the monitoring links, `Declared.outputs`, and `record_first_up`'s record.

The hooks (P: the workload's plan):
- required: `monitoring_target(plan)`, `foundation(plan)`, `declare_objects(name, plan, base, inputs)`,
  `network(plan, smoke_ports)`, `record_first_up(plan, waits)`;
- optional, with their default: `plan_workload(spec, cluster, inputs)` (the descriptor's plan function, called
  with the spec and the cluster), `smoke_test(plan, monitoring)` (None: no smoke test, a training job),
  `advisories(plan)` (none), `scrape(plan, base)` (None: nothing scraped).
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import pulumi

from tpu_stacks import first_up
from tpu_stacks.cluster.plan import ClusterPlan
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.gcp.monitoring.component import declare_monitoring, declare_pod_monitoring
from tpu_stacks.gcp.monitoring.plan import MonitoringPlan, plan_monitoring
from tpu_stacks.gcp.monitoring.targets import Target
from tpu_stacks.inputs.validation import cluster_of, component_inputs, parse, parse_section
from tpu_stacks.k8s.connectivity import Flow, Group
from tpu_stacks.k8s.namespace import PodSecurityLevel
from tpu_stacks.k8s.network_policy import declare_network_policies
from tpu_stacks.k8s.platform_flows import smoke_test_group
from tpu_stacks.k8s.smoke import smoke_test_job
from tpu_stacks.registry import Workload
from tpu_stacks.serving.smoke_plan import SmokeTest
from tpu_stacks.workload import BucketGrants, Foundation, declare_foundation


class WorkloadPlan(Protocol):
    """What the lifecycle reads of a workload's plan: the cluster it runs on, decided."""

    @property
    def cluster(self) -> ClusterPlan: ...


P = TypeVar("P", bound=WorkloadPlan)


@dataclass(frozen=True)
class FoundationSettings:
    """The workload's side of its foundation (workload.declare_foundation says what each one does)."""

    bucket_suffix: str
    """The bucket's resource name is `<name>-<bucket_suffix>`."""
    purpose: str
    """The bucket's `purpose` label."""
    force_destroy: bool
    namespace: str
    """The workload's namespace: its objects', its network policies' and its smoke test's."""
    ksa_name: str
    gsa_name: str | None = None
    read_buckets: Sequence[str] = ()
    pod_security: PodSecurityLevel = "restricted"
    bucket_grants: BucketGrants | None = None


@dataclass(frozen=True)
class Scrape:
    """The servers' metrics endpoint Managed Prometheus scrapes (the port is the monitoring target's)."""

    labels: dict[str, str]
    """The pods scraped."""
    interval: str = "30s"
    always: bool = False
    """Scraped even where the stack's monitoring is off or its target exports nothing it charts: an autoscaler
    reads these metrics."""
    after: Sequence[pulumi.Resource] = ()
    """What the PodMonitoring waits for besides the namespace."""


@dataclass(frozen=True)
class Declared:
    """What `declare_objects` hands back to the lifecycle."""

    outputs: dict[str, Any]
    """The component's own outputs by attribute name, in its schema's order (the lifecycle sets each attribute and
    registers them after the monitoring links and the cluster's)."""
    waits: Sequence[first_up.Wait]
    """What the first `up` waits for, in order (the lifecycle appends the smoke test's)."""
    smoke_after: Sequence[pulumi.Resource] = ()
    """What the smoke-test Job waits for: the servers, their Service, what the request goes through."""
    smoke_pods: dict[str, str] = field(default_factory=dict)
    """The labels of the pods the smoke test calls: the smoke-test pod's network contract reaches them."""
    smoke_flows: Sequence[Flow] = ()
    """What else the smoke-test pod calls (behind a gateway: the Gateway and its picker)."""
    policies_after: Sequence[pulumi.Resource] = ()
    """What the network policies wait for besides the namespace."""


class WorkloadComponent(pulumi.ComponentResource, Generic[P], metaclass=ABCMeta):
    """The lifecycle (this module's docstring) of a workload component; a subclass names its type token and
    descriptor in its class line, `class VllmStack(WorkloadComponent[VllmPlan], token=TYPE, workload=WORKLOAD)`,
    and implements the hooks (a class that misses a required one cannot be instantiated). Every attribute here is
    private: the schema inference reads the public annotations of every class of a component, this one included."""

    _token: ClassVar[str]
    _workload: ClassVar[Workload]
    _plan: P

    def __init_subclass__(cls, *, token: str, workload: Workload, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._token, cls._workload = token, workload

    def __init__(self, name: str, args: Mapping[str, Any], opts: pulumi.ResourceOptions | None = None) -> None:
        workload, spec_model = self._workload, self._workload.spec.load()
        inputs = component_inputs(spec_model, args)  # `hfToken` is `hf_token`, as in other languages
        plan = self.plan_workload(
            parse_section(spec_model, inputs, workload.section),
            parse(ClusterSpec, cluster_of(inputs), "cluster"),
            inputs,
        )  # every refusal happens here, before the first resource
        monitoring = plan_monitoring(self.monitoring_target(plan), workload.section)
        smoke = self.smoke_test(plan, monitoring)  # its ports: network policies
        super().__init__(self._token, name, {}, opts)
        self._plan = plan
        for line in self.advisories(plan):
            pulumi.log.warn(line, resource=self)
        settings = self.foundation(plan)
        base = declare_foundation(self, name, plan.cluster, **vars(settings))
        declared = self.declare_objects(name, plan, base, inputs)
        groups = tuple(self.network(plan, smoke.ports if smoke else ()))
        if smoke is not None:  # the smoke-test pod's own contract: DNS, the server's ports (and what else it calls)
            groups += (smoke_test_group(settings.namespace, declared.smoke_pods, smoke.ports, declared.smoke_flows),)
        declare_network_policies(
            name, settings.namespace, groups, base.kubernetes_options(self, *declared.policies_after)
        )
        scrape = self.scrape(plan, base)
        if scrape is not None:
            opts = base.kubernetes_options(self, *scrape.after)
            declare_pod_monitoring(
                name, monitoring, scrape.labels, opts, interval=scrape.interval, always=scrape.always
            )
        waits = list(declared.waits)
        if smoke is not None:
            smoke_test_job(f"{name}-smoke-test", smoke, base.cluster.provider, self, declared.smoke_after)
            waits.append(first_up.job_wait(f"{name}-smoke-test", "the smoke test", smoke.active_deadline_seconds))
        cluster = self.cluster = base.cluster
        self.monitoring = declare_monitoring(self, name, monitoring, cluster.enabled_apis)
        # The cluster, for other languages' SDKs too (a TypeScript VllmStack user's kubectl or k8s provider).
        self.cluster_name, self.cluster_endpoint, self.kubeconfig = (
            cluster.cluster_name,
            cluster.endpoint,
            cluster.kubeconfig,
        )
        for attribute, value in declared.outputs.items():
            setattr(self, attribute, value)
        common = ("monitoring", "cluster_name", "cluster_endpoint", "kubeconfig")
        self.register_outputs(
            {
                **{attribute: getattr(self, attribute) for attribute in common},
                **declared.outputs,
                # not a typed output (the SDKs' schema does not list it): what `tpu-stacks plan` prints before `up`
                first_up.OUTPUT: self.record_first_up(plan, waits).document(),
            }
        )

    @property
    def plan(self) -> P:
        """Every decision the component was built from."""
        return self._plan

    # The interface: required hooks.

    @abstractmethod
    def monitoring_target(self, plan: P) -> Target:
        """What monitoring watches (gcp/monitoring/targets.py): the dashboard, the alerts and the scrape's port."""
        raise NotImplementedError

    @abstractmethod
    def foundation(self, plan: P) -> FoundationSettings:
        """The bucket, namespace and identity the workload needs."""
        raise NotImplementedError

    @abstractmethod
    def declare_objects(self, name: str, plan: P, base: Foundation, inputs: Mapping[str, Any]) -> Declared:
        """Declare the workload's own objects on `base` (parented to `self`); `inputs` holds the secret inputs."""
        raise NotImplementedError

    @abstractmethod
    def network(self, plan: P, smoke_ports: Sequence[int]) -> Sequence[Group]:
        """The workload's connectivity contract (its `network.py`), admitting the smoke test on `smoke_ports`."""
        raise NotImplementedError

    @abstractmethod
    def record_first_up(self, plan: P, waits: Sequence[first_up.Wait]) -> first_up.FirstUp:
        """The first `up`'s record (first_up.py) from its `waits`, the smoke test's last."""
        raise NotImplementedError

    # Optional hooks, each with what a workload that does not implement it gets.

    def plan_workload(self, spec: Any, cluster: ClusterSpec, inputs: Mapping[str, Any]) -> P:
        """The plan of the parsed section and cluster (`inputs`: which secrets were given). Default: the
        descriptor's plan function, `plan(spec, cluster)`."""
        plan: P = self._workload.plan.load()(spec, cluster)
        return plan

    def smoke_test(self, plan: P, monitoring: MonitoringPlan) -> SmokeTest | None:
        """What the first `up` checks on the running server. Default: nothing (a training job)."""
        return None

    def advisories(self, plan: P) -> Sequence[str]:
        """Lines warned on the component before its first resource. Default: none."""
        return ()

    def scrape(self, plan: P, base: Foundation) -> Scrape | None:
        """The servers' metrics endpoint Managed Prometheus scrapes. Default: none."""
        return None
