"""The cloud universes a stack can deploy to, as their own documentation describes them, with sources.

Google Cloud and a sovereign universe such as Cloud de Confiance by S3NS run the same APIs, but
differ in facts a program must get right before it declares anything: the API domain (the
provider's `universeDomain`), how a project id is written (`s3ns:PROJECT`), the identity strings
derived from it (workload pool `PROJECT.s3ns.svc.id.goog`, e-mails
`NAME@PROJECT.s3ns.iam.gserviceaccount.com`: the bare id, never the prefix), the regions and zones
that exist, and what the universe documents as unavailable (S3NS: GKE Standard, machine series
other than C3 and A3, multi-region storage...). Each fact below names the page it comes from and the
date it was read. Identity strings are built from `Universe.bare_project`, the one project-id parser;
a service account's e-mail is taken from the Account resource's `email` output wherever the account
is a resource (`WorkloadIdentity`), so the universe's real domain is used. `advisories` turns what a
stack plans into one line per documented unavailability, for a warning at preview.
Pure: no provider SDK (tests/test_pure_decisions.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from tpu_stacks.errors import UserError
from tpu_stacks.names import PROJECT_ID, is_zone, region_of


class Source(BaseModel):
    """Where a fact comes from: the page's title and address, and when it was read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    url: str
    checked: str
    """ISO date the page was read."""

    def cite(self) -> str:
        return f"{self.title} <{self.url}>, read {self.checked}"


class Limit(BaseModel):
    """What a universe offers of one kind of thing (GKE modes, machine series...): anything else is
    documented as unavailable there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    """A feature kind (`GKE_MODE`, `MACHINE_SERIES`, `DISK_TYPE`, `BUCKET_LOCATION`)."""
    offered: tuple[str, ...]
    what: str
    """What is limited, as the advisory names it (`GKE mode`)."""
    says: str
    """What the source says, in a few words."""
    source: Source


class Note(BaseModel):
    """A documented difference that no stack plans today (kept so the catalogue is the whole page)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    says: str
    source: Source


class Universe(BaseModel):
    """A cloud universe: API domain, identity and project-id forms, locations and documented limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    title: str = ""
    api_domain: str
    identity_prefix: str = ""
    """Inserted before `svc.id.goog` and `iam.gserviceaccount.com` (`s3ns` for S3NS)."""
    project_prefix: str = ""
    """Project ids are written `PREFIX:PROJECT` in this universe's console and APIs (`s3ns`)."""
    regions: tuple[str, ...] = ()
    """Every region of the universe, when its documentation enumerates them (empty: not checked here)."""
    health_check_ranges: tuple[str, ...] = ()  # ledger: gke.regional-alb-health-check-ranges
    """Where the regional Application Load Balancers' health-check probes come from (IPv4): a NetworkPolicy admits
    them where a check lands (the Inference Gateway's servers and picker, vllm/gateway_network.py)."""
    health_check_source: Source | None = None
    zones: tuple[str, ...] = ()
    limits: tuple[Limit, ...] = ()
    notes: tuple[Note, ...] = ()
    sources: tuple[Source, ...] = ()
    """Sources of the API domain, project-id and identity forms, and locations."""

    @property
    def is_default(self) -> bool:
        return self.api_domain == "googleapis.com"

    # -- project ids ---------------------------------------------------------------------------

    def bare_project(self, project: str, key: str = "project") -> str:
        """The project id without the universe's prefix (`s3ns:my-proj` -> `my-proj`), as pools,
        e-mails and principals name it; `my-proj` is accepted as is. A prefix that contradicts the
        universe (`s3ns:` in Google Cloud) is refused in one line naming `key`."""
        prefix, colon, rest = project.partition(":")
        if not colon:
            return project
        if self.project_prefix and prefix == self.project_prefix:
            if not rest:
                raise UserError(key, project, "has no project id after its prefix", f"write {prefix}:PROJECT_ID")
            if ":" in rest:  # `s3ns:s3ns:my-proj`: the id after the prefix would carry a colon, which no id has
                raise UserError(
                    key, project, "has more than one prefix", f"write {prefix}:{rest.rpartition(':')[2]} (one prefix)"
                )
            return rest
        owner = next((u for u in UNIVERSES if u.project_prefix and u.project_prefix == prefix), None)
        if owner is None and not self.project_prefix and "." in prefix:
            # Google Cloud's legacy domain-scoped ids (`example.com:proj`) are the project's whole id.
            if ":" in rest:
                raise UserError(
                    key, project, "has more than one prefix", f"write {prefix}:{rest.rpartition(':')[2]} (one prefix)"
                )
            return project
        where = f"a project id of universe {owner.name}" if owner else f"not a project id of universe {self.name}"
        form = f"PROJECT_ID or {self.project_prefix}:PROJECT_ID" if self.project_prefix else "PROJECT_ID"
        raise UserError(
            key,
            project,
            f"is {where}, but the stack deploys to universe {self.name} ({self.api_domain})",
            f"write {form}, or set gcp:universeDomain to the project's universe",
        )

    def check_project(self, project: str, key: str = "project") -> str:
        """The bare project id, refused in one line naming `key` unless it follows Resource Manager's
        project-id rule (names.PROJECT_ID); a legacy domain-scoped id is checked after its domain."""
        bare = self.bare_project(project, key)
        if not PROJECT_ID.matches(bare.rpartition(":")[2]):  # the value as written is shown, prefix and all
            raise UserError(key, project, "is not a valid project id", f"use {PROJECT_ID.rule} (the id, not the name)")
        return bare

    # -- identity strings ----------------------------------------------------------------------

    def _prefixed(self, domain: str) -> str:
        return f"{self.identity_prefix}.{domain}" if self.identity_prefix else domain

    def workload_pool(self, project: str) -> str:
        """`PROJECT.svc.id.goog` (`PROJECT.s3ns.svc.id.goog`): the bare id, whatever form was given."""
        return f"{self.bare_project(project)}.{self._prefixed('svc.id.goog')}"

    def service_account_email(self, account_id: str, project: str) -> str:
        """The e-mail a new account will get, formatted. Only for where no Account resource exists to
        read it from: the offline planner's stand-in for the provider, and accounts other programs
        create. A program that declares the account takes its `email` output: the provider knows the
        universe's real domain (S3NS's own pages show both `PROJECT.s3ns.iam.gserviceaccount.com` and,
        in an older edition, `PROJECT.s3ns-system.iam.gserviceaccount.com`; see SERVICE_ACCOUNTS)."""
        return f"{account_id}@{self.bare_project(project)}.{self._prefixed('iam.gserviceaccount.com')}"

    def ksa_member(self, project: str, namespace: str, ksa: str) -> str:
        """The IAM member a Kubernetes ServiceAccount is, for `roles/iam.workloadIdentityUser`."""
        return f"serviceAccount:{self.workload_pool(project)}[{namespace}/{ksa}]"

    def principal_member(self, project_number: str, project: str, namespace: str, ksa: str) -> str:
        """The direct Workload Identity Federation principal of a Kubernetes ServiceAccount. Its host
        stays `iam.googleapis.com` in every universe: S3NS writes its principals so (PRINCIPALS)."""
        return (
            f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
            f"workloadIdentityPools/{self.workload_pool(project)}/subject/ns/{namespace}/sa/{ksa}"
        )

    # -- locations -----------------------------------------------------------------------------

    def check_location(self, location: str, key: str = "cluster.location") -> str:
        """The location's region, or a one-line refusal when the location is not in this universe
        (a region the universe's documentation does not list, or a region of another universe)."""
        region = region_of(location)
        owner = next((u for u in UNIVERSES if u.name != self.name and region in u.regions), None)
        unlisted = bool(self.regions) and region not in self.regions
        if owner is not None or unlisted:
            where = f"is in universe {owner.name}" if owner else f"is not a region of universe {self.name}"
            choices = self.zones if is_zone(location) and self.zones else self.regions
            fix = f"use one of {', '.join(choices)}" if choices else f"use a region of {self.title or self.name}"
            raise UserError(key, location, where, fix)
        if is_zone(location) and self.zones and location not in self.zones:
            zones = ", ".join(self.zones)
            raise UserError(key, location, f"is not a zone of universe {self.name}", f"use one of {zones}")
        return region


# -- sources (read 2026-11-23 from documentation.s3ns.fr) -----------------------------------------

READ = "2026-11-23"
KEY_DIFFERENCES = Source(
    title="Cloud de Confiance by S3NS: key differences from Google Cloud",
    url="https://documentation.s3ns.fr/docs/overview/tpc-key-differences",
    checked=READ,
)
"""'only Autopilot mode is available in GKE, older VM types for Compute Engine are unavailable, and you
can't use certain IAM policies. Some services are not available yet'; preview features generally not."""
GKE_DIFFERENCES = Source(
    title="GKE in Cloud de Confiance versus Google Cloud",
    url="https://documentation.s3ns.fr/kubernetes-engine/docs/tpc-differences",
    checked=READ,
)
"""'Only GKE Autopilot clusters are available. GKE Standard clusters are not available'; storage: only
balanced Persistent Disk; 'only the C3 and A3 machine series'; GPUs and TPUs: 'A3 machine types support
GPUs' (no TPU machine type is listed)."""
REGIONS = Source(
    title="Cloud de Confiance regions and zones",
    url="https://documentation.s3ns.fr/kms/docs/locations?hl=ja",
    checked=READ,
)
"""One standalone region `u-france-east1`, zones -a, -b, -c; features that need several regions
(cross-region load balancing, multi-region storage) are unavailable."""
PROJECTS = Source(
    title="Create projects (Cloud de Confiance)",
    url="https://documentation.s3ns.fr/resource-manager/docs/creating-managing-projects?hl=ja",
    checked=READ,
)
"""'Every Cloud de Confiance project id is automatically prefixed with s3ns:'."""
SERVICE_ACCOUNTS = Source(
    title="Service account types (Cloud de Confiance)",
    url="https://documentation.s3ns.fr/iam/help/service-accounts/default",
    checked=READ,
)
"""`service-account-name@project-id.s3ns.iam.gserviceaccount.com` (while the older 'Trusted Cloud' edition
of iam/docs/service-accounts-create writes `...@PROJECT_ID.s3ns-system.iam.gserviceaccount.com`)."""
API_DOMAIN = Source(
    title="Quickstart: write an allow policy by using client libraries (Cloud de Confiance)",
    url="https://documentation.s3ns.fr/iam/docs/write-policy-client-libraries",
    checked=READ,
)
"""'set the GOOGLE_CLOUD_UNIVERSE_DOMAIN environment variable to s3nsapis.fr'."""
PRINCIPALS = Source(
    title="Resources with built-in identities (Cloud de Confiance)",
    url="https://documentation.s3ns.fr/iam/docs/resources-with-built-in-identities",
    checked=READ,
)
"""Principal identifiers are written `principal://iam.googleapis.com/projects/NUMBER/...`."""
IAM_DIFFERENCES = Source(
    title="IAM in Cloud de Confiance versus Google Cloud",
    url="https://documentation.s3ns.fr/iam/docs/tpc-differences",
    checked=READ,
)
LB_FIREWALL_RULES = Source(
    title="Load balancing firewall rules (Google Cloud): regional external and internal Application Load Balancers",
    url="https://cloud.google.com/load-balancing/docs/firewall-rules",
    checked="2026-11-29",
)
"""Health check ranges '35.191.0.0/16 130.211.0.0/22', and the proxy-only subnet, for the regional Application
Load Balancers (the zh-CN copy's rows: '区域级外部应用负载均衡器 | 健康检查范围: 35.191.0.0/16 130.211.0.0/22 -
代理专用子网'; the same for the regional internal one)."""
S3NS_LB_FIREWALL_RULES = Source(
    title="Load balancing firewall rules (Cloud de Confiance)",
    url="https://documentation.s3ns.fr/load-balancing/docs/firewall-rules",
    checked="2026-11-29",
)
"""'Regional external Application Load Balancer: Health check ranges: For IPv4 traffic to the backends:
177.222.80.0/23 ... Proxy-only subnet'; the ?hl=ja copy gives the same range for the regional internal Application
Load Balancer."""
S3NS_INFERENCE_GATEWAY = Source(
    title="Deploy GKE Inference Gateway (Cloud de Confiance edition; also its fr, es-419, pt and it copies)",
    url="https://documentation.s3ns.fr/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway?hl=pt",
    checked="2026-11-29",
)
"""S3NS publishes the GKE Inference Gateway guide (and 'About GKE Inference Gateway',
kubernetes-engine/docs/concepts/about-gke-inference-gateway) in its own documentation."""
SAXML_S3NS_TUTORIAL = Source(
    title="Saxml on multi-host TPU slices, Cloud de Confiance edition (Portuguese)",
    url="https://documentation.s3ns.fr/kubernetes-engine/docs/tutorials/tpu-multihost-saxml?hl=pt-br",
    checked=READ,
)
"""`--workload-pool=${PROJECT_ID}.s3ns.svc.id.goog`, `sax-iam-sa@${PROJECT_ID}.s3ns.iam.gserviceaccount.com`."""

# -- feature kinds a stack can plan, and the advisories they raise --------------------------------

GKE_MODE = "gke-mode"
MACHINE_SERIES = "machine-series"
DISK_TYPE = "disk-type"
BUCKET_LOCATION = "bucket-location"
KINDS = (GKE_MODE, MACHINE_SERIES, DISK_TYPE, BUCKET_LOCATION)

S3NS_REGION = "u-france-east1"

UNIVERSES: tuple[Universe, ...] = (
    Universe(
        name="google",
        title="Google Cloud",
        api_domain="googleapis.com",
        health_check_ranges=("35.191.0.0/16", "130.211.0.0/22"),
        health_check_source=LB_FIREWALL_RULES,
    ),
    Universe(
        name="s3ns",
        title="Cloud de Confiance by S3NS",
        api_domain="s3nsapis.fr",
        identity_prefix="s3ns",
        project_prefix="s3ns",
        regions=(S3NS_REGION,),
        zones=(f"{S3NS_REGION}-a", f"{S3NS_REGION}-b", f"{S3NS_REGION}-c"),
        health_check_ranges=("177.222.80.0/23",),
        health_check_source=S3NS_LB_FIREWALL_RULES,
        limits=(
            Limit(
                kind=GKE_MODE,
                offered=("autopilot",),
                what="GKE mode",
                says="only GKE Autopilot clusters are available, GKE Standard clusters are not",
                source=GKE_DIFFERENCES,
            ),
            Limit(
                kind=MACHINE_SERIES,
                offered=("c3", "a3"),
                what="machine series",
                says="only the C3 and A3 machine series are available (GPUs on A3); no TPU machine type is listed",
                source=GKE_DIFFERENCES,
            ),
            Limit(
                kind=DISK_TYPE,
                offered=("pd-balanced",),
                what="GKE disk type",
                says="only balanced Persistent Disk is available to GKE",
                source=GKE_DIFFERENCES,
            ),
            Limit(
                kind=BUCKET_LOCATION,
                offered=(S3NS_REGION,),
                what="bucket location",
                says="one region; multi-region storage is unavailable",
                source=REGIONS,
            ),
        ),
        notes=(
            Note(says="older Compute Engine VM types are unavailable; some services not yet", source=KEY_DIFFERENCES),
            Note(says="preview releases of features are generally not available", source=KEY_DIFFERENCES),
            Note(says="cross-region load balancing is unavailable (one region)", source=REGIONS),
            Note(
                says="regional load balancers health-check from 177.222.80.0/23, not Google Cloud's ranges",
                source=S3NS_LB_FIREWALL_RULES,
            ),
            Note(says="GKE Inference Gateway is documented", source=S3NS_INFERENCE_GATEWAY),
            Note(
                says="only Workforce and Workload Identity Federation identities can be principal identifiers; "
                "Policy Intelligence, principal access boundary policies and Privileged Access Manager are unavailable",
                source=IAM_DIFFERENCES,
            ),
        ),
        sources=(API_DOMAIN, PROJECTS, SERVICE_ACCOUNTS, SAXML_S3NS_TUTORIAL, REGIONS, PRINCIPALS),
    ),
)


def universe(name: str, key: str = "universe") -> Universe:
    for candidate in UNIVERSES:
        if name in (candidate.name, candidate.api_domain):
            return candidate
    valid = ", ".join(u.name for u in UNIVERSES)
    raise UserError(key, name, "is not a known cloud universe", f"valid: {valid}")


def resolve(
    written: object, domain: object, key: str = "cluster.universe", domain_key: str = "gcp:universeDomain"
) -> str:
    """The universe a stack deploys to, from what it writes as `cluster.universe` and the provider's
    `gcp:universeDomain`: they must agree, and a sovereign universe needs its domain (the provider would
    otherwise call googleapis.com), so nothing falls back to Google Cloud without a word."""
    from_domain = None
    if domain is not None:
        from_domain = next((u for u in UNIVERSES if u.api_domain == domain), None)
        if from_domain is None:
            domains = ", ".join(u.api_domain for u in UNIVERSES)
            raise UserError(domain_key, domain, "is not the API domain of a known universe", f"use one of {domains}")
    if written is None:
        return from_domain.name if from_domain else UNIVERSES[0].name
    chosen = universe(str(written), key)
    if from_domain is not None and from_domain.name != chosen.name:
        raise UserError(
            key,
            written,
            f"contradicts {domain_key} {domain!r} (universe {from_domain.name})",
            f"remove {key}, or set both to the same universe",
        )
    if from_domain is None and not chosen.is_default:
        raise UserError(
            key,
            written,
            f"needs {domain_key}: {chosen.api_domain} (without it the provider calls googleapis.com)",
            f"set {domain_key}: {chosen.api_domain} in the stack file",
        )
    return chosen.name


def feature(kind: str, value: str) -> str:
    """One planned feature, `KIND:VALUE` (`gke-mode:standard`, `machine-series:ct5lp`)."""
    if kind not in KINDS:
        raise ValueError(f"unknown feature kind {kind!r}: one of {', '.join(KINDS)}")
    return f"{kind}:{value.lower()}"


def machine_series(machine_type: str) -> str:
    """`e2-standard-4` -> `e2`, `ct5lp-hightpu-4t` -> `ct5lp` (the series is the name's first part)."""
    return machine_type.split("-", 1)[0].lower()


def cluster_features(
    mode: str,
    machine_types: Iterable[str] = (),
    disk_types: Iterable[str] = (),
    bucket_locations: Iterable[str] = (),
) -> set[str]:
    """The features a stack plans, from plain values (so this module needs no plan type):
    the cluster's mode, its pools' machine types, disk types and bucket locations."""
    planned = {feature(GKE_MODE, mode)}
    planned |= {feature(MACHINE_SERIES, machine_series(m)) for m in machine_types}
    planned |= {feature(DISK_TYPE, d) for d in disk_types}
    planned |= {feature(BUCKET_LOCATION, loc) for loc in bucket_locations}
    return planned


def advisories(chosen: Universe, features: Iterable[str]) -> list[str]:
    """One line per limit of `chosen` that the planned `features` exceed: what the stack plans, what
    the universe offers, and the source. Empty when everything planned is offered (and in universes
    without documented limits). The stack is not changed: it keeps the tutorial's design."""
    by_kind: dict[str, set[str]] = {}
    for item in features:
        kind, _, value = item.partition(":")
        by_kind.setdefault(kind, set()).add(value)
    lines = []
    for limit in chosen.limits:
        beyond = sorted(by_kind.get(limit.kind, set()) - set(limit.offered))
        if beyond:
            lines.append(
                f"{chosen.title} ({chosen.name}) does not offer the {limit.what} {', '.join(beyond)} this stack plans "
                f"(offered: {', '.join(limit.offered)}; {limit.says}): kept as the tutorial has it, "
                f"see docs/sovereign.md. Source: {limit.source.cite()}"
            )
    return lines
