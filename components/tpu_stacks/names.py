"""Every name and ID rule of the APIs we call, the one region parser and the one zone-in-region rule.

Each rule says what the API accepts (with its source) and how to say so in one line. Checks run in
the spec/plan phase, so a bad name is refused before any resource is declared. Names derived from
users' names (node service accounts, tpu7x resource policies) are kept when they fit and otherwise
cut with a hash of the whole name, so two long names never collide and a rerun gives the same name.
Sources: Kubernetes object names (DNS-1123 label / DNS-1035 label, kubernetes.io "Object Names and
IDs"); GKE cluster and node-pool names (`gcloud container clusters create` reference: at most 40
characters); Compute Engine resource names (RFC 1035, at most 63); IAM service-account IDs (6-30
characters); Cloud Storage bucket names (3-63 per dot-separated part, 222 in all); Artifact
Registry repository IDs. Regions and zones are `<area>-<direction><n>` and `<region>-<letter>`; the
sovereign S3NS universe names its region `u-france-east1` (zones `u-france-east1-a`...). Which
regions and zones a universe has is gcp/universe.py; which exist and offer a TPU generation is
catalog/locations.py; both parse locations with the functions here.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from tpu_stacks.errors import UserError


@dataclass(frozen=True)
class NameRule:
    """A naming rule of one API: its pattern, its length limit and the words that explain it."""

    what: str
    pattern: re.Pattern[str]
    rule: str
    max_length: int | None = None

    def matches(self, value: Any) -> bool:
        if not isinstance(value, str) or not self.pattern.fullmatch(value):  # `$` alone lets a final newline by
            return False
        return self.max_length is None or len(value) <= self.max_length

    def check(self, key: str, value: Any, fix: str | None = None) -> str:
        """The value, or a one-line refusal naming `key` (the user's spelling)."""
        if not self.matches(value):
            raise UserError(key, value, f"is not a valid {self.what}", fix or f"use {self.rule}")
        return value


K8S_NAME = NameRule(
    "Kubernetes name",
    re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"),
    "lowercase letters, digits and '-'",
)
"""DNS-1123 label: namespaces, ServiceAccounts, Services, most objects."""

DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
"""DNS-1035 label (starts with a letter): names that become Service names, such as KubeRay's."""

SERVICE_ACCOUNT_ID = NameRule(
    "service account id",
    re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$"),
    "6-30 lowercase letters, digits and '-'",
    max_length=30,
)

SERVICE_ACCOUNT_EMAIL = NameRule(
    "service account email",
    re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z0-9.-]+\.gserviceaccount\.com$"),
    "NAME@PROJECT.iam.gserviceaccount.com",
)

# The Compute Engine default account, `PROJECT_NUMBER-compute@developer.gserviceaccount.com`
# (https://cloud.google.com/compute/docs/access/service-accounts#default_service_account): unless the
# organization enforces iam.automaticIamGrantsForDefaultServiceAccounts it is granted project Editor, and
# GKE's hardening guide says to run nodes as a least-privilege account instead
# (https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa).
DEFAULT_COMPUTE_ACCOUNT = re.compile(r"^[1-9][0-9]{0,18}-compute@developer\.[a-z0-9.-]*gserviceaccount\.com$")


def check_node_service_account(email: str, key: str, existing: bool) -> str:
    """`email`, the account nodes run as, or a one-line refusal. The Compute Engine default account is
    refused for nodes this stack creates (GKE's hardening guide: it often holds project Editor, which every
    host-network pod would then hold; the stack's own `<name>-nodes` account has only GKE's node role) and
    accepted for an existing cluster's nodes, where it states a fact the stack cannot change."""
    if DEFAULT_COMPUTE_ACCOUNT.fullmatch(email):
        if existing:
            return email
        raise UserError(
            key,
            email,
            "is the Compute Engine default account, which often holds project Editor; GKE advises a "
            "least-privilege node account (cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster)",
            "leave it unset (the stack creates one with only GKE's node role) or name such an account",
        )
    if not SERVICE_ACCOUNT_EMAIL.matches(email):
        raise UserError(
            key, email, "is not a service account email", "write it as NAME@PROJECT.iam.gserviceaccount.com"
        )
    return email


GKE_NAME = NameRule(
    "GKE name",
    re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$"),
    "lowercase letters, digits and '-', at most 40 characters",
)
"""Cluster and node-pool names."""

RESOURCE_NAME = NameRule(
    "Compute Engine resource name",
    re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"),
    "lowercase letters, digits and '-'",
    max_length=63,
)
"""RFC 1035 names of Compute Engine resources (reservations, resource policies)."""


REPOSITORY_ID = NameRule(
    "Artifact Registry repository id",
    re.compile(r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$"),
    "lowercase letters, digits and '-'",
)

IMAGE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
"""An OCI image tag (distribution spec)."""

REGION = re.compile(r"^[a-z]+(?:-[a-z]+)+\d+$")
"""us-central1, europe-west9, and the sovereign form u-france-east1."""
ZONE = re.compile(r"^[a-z]+(?:-[a-z]+)+\d+-[a-z][a-z0-9]*$")
"""A region plus -a, -b, ... (us-central1-b, u-france-east1-a)."""


def is_zone(location: str) -> bool:
    return bool(ZONE.fullmatch(location))


def is_region(location: str) -> bool:
    return bool(REGION.fullmatch(location))


def region_of(location: str) -> str:
    """The region of a zone (`us-central1-b` -> `us-central1`, `u-france-east1-a` -> `u-france-east1`),
    or the region itself (`u-france-east1` stays whole: it has three parts and is still a region)."""
    if is_zone(location):
        return location.rsplit("-", 1)[0]
    return location


def is_zone_of(zone: str, region: str) -> bool:
    """Whether `zone` is a zone (not a region) of `region`: the one zone-in-region rule of the cluster's
    node locations, a slice's zone, the provider's gcp:zone and the TPU zone catalogue."""
    return is_zone(zone) and region_of(zone) == region


def check_zone_of(key: str, zone: str, region: str, fix: str = "") -> str:
    """`zone`, or a one-line refusal naming `key` when it is not a zone of `region`."""
    if not is_zone_of(zone, region):
        raise UserError(key, zone, f"is not a zone of {region}", fix or f"use a zone like {region}-a")
    return zone


# -- Cloud Storage buckets ------------------------------------------------------------------------

# Cloud Storage bucket naming rules, https://cloud.google.com/storage/docs/buckets#naming (checked
# 2026-11): lowercase letters, digits, '-', '_' and '.'; start and end with a letter or digit; 3-63
# characters, or up to 222 with dots when no dot-separated part is longer than 63; not an IP address
# in dotted-decimal notation; not starting with "goog"; not containing "google" or a close misspelling
# such as "g00gle".
_BUCKET_CHARS = re.compile(r"^[a-z0-9][a-z0-9._-]*[a-z0-9]$")
_BUCKET_PART = re.compile(r"^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$")
_DOTTED_DECIMAL = re.compile(r"^[0-9]{1,3}(\.[0-9]{1,3}){3}$")
_LOOK_ALIKES = str.maketrans({"0": "o", "1": "l", "3": "e", "i": "l"})


def check_bucket_name(name: str, key: str = "") -> str:
    """`name`, or a one-line refusal citing the Cloud Storage rule it breaks (before any resource)."""
    rules = "https://cloud.google.com/storage/docs/buckets#naming"
    if name.startswith("gs://"):
        raise UserError(key, name, "is a URL, not a bucket name", f"write the name alone: {name[5:].split('/')[0]}")
    longest = 222 if "." in name else 63
    if not 3 <= len(name) <= longest:
        raise UserError(key, name, f"is not 3-{longest} characters long", f"bucket naming rules: {rules}")
    if not _BUCKET_CHARS.fullmatch(name):
        raise UserError(
            key,
            name,
            "is not a bucket name",
            f"use lowercase letters, digits, '-', '_' and '.', starting and ending with a letter or digit ({rules})",
        )
    if "." in name and not all(_BUCKET_PART.fullmatch(part) and len(part) <= 63 for part in name.split(".")):
        raise UserError(
            key, name, "has a dot-separated part that is empty, too long or starts or ends with '-' or '_'", rules
        )
    if _DOTTED_DECIMAL.fullmatch(name):
        raise UserError(key, name, "looks like an IP address, which a bucket name may not", rules)
    if name.startswith("goog"):
        raise UserError(key, name, "starts with 'goog', which Cloud Storage reserves", rules)
    if "google" in name.translate(_LOOK_ALIKES).replace("googie", "google"):
        raise UserError(key, name, "contains 'google' or a look-alike, which Cloud Storage refuses", rules)
    return name


def is_bucket_name(value: Any) -> bool:
    """Whether Cloud Storage accepts `value` as a bucket name (check_bucket_name's rule, as a test)."""
    try:
        return isinstance(value, str) and check_bucket_name(value) == value
    except UserError:
        return False


def check_gcs_path(path: str, key: str = "") -> str:
    """`path` (`gs://BUCKET` or `gs://BUCKET/PATH`), or a one-line refusal that shows the path as written
    and gives the bucket rule it breaks (check_bucket_name's), not a vaguer "not a gs:// path"."""
    if not path.startswith("gs://"):
        raise UserError(key, path, "is not a gs:// path", "write gs://BUCKET/PATH")
    bucket = path[5:].split("/", 1)[0]
    try:
        check_bucket_name(bucket, key)
    except UserError as error:
        raise UserError(key, path, f"names bucket '{bucket}', which {error.problem}", error.fix) from None
    return path


def is_gcs_path(value: Any) -> bool:
    """`gs://BUCKET` or `gs://BUCKET/PATH` with a valid bucket name."""
    try:
        return isinstance(value, str) and check_gcs_path(value) == value
    except UserError:
        return False


# -- names derived from user names: deterministic, within the API's limit ---------------------------

HASH_LENGTH = 6
"""Hex digits of the suffix that keeps two truncated names apart (16.7 million values)."""


def short_hash(text: str) -> str:
    """A stable short digest of `text` (same input, same name on every run and machine)."""
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_LENGTH]


def bounded(name: str, limit: int, suffix: str = "") -> str:
    """`name + suffix` when it fits in `limit` characters (names that fit never change); otherwise
    the name cut short, a hash of the whole name and the suffix: `averylongclus-3f9a1c-nodes`.

    Cutting alone made two long names that share a prefix collide (two clusters
    `averylongclustername-a...` gave one node account id); the hash of the full name keeps them apart.
    """
    if len(name) + len(suffix) <= limit:
        return name + suffix
    keep = limit - len(suffix) - HASH_LENGTH - 1
    if keep < 1:
        raise ValueError(f"no room for {name!r} in {limit} characters with suffix {suffix!r}")
    return f"{name[:keep].rstrip('-')}-{short_hash(name + suffix)}{suffix}"


NODE_ACCOUNT_SUFFIX = "-nodes"


def node_account_id(cluster: str) -> str:
    """The nodes' service account id: `<cluster>-nodes`, within the 30 characters of an account id."""
    assert SERVICE_ACCOUNT_ID.max_length is not None
    return bounded(cluster, SERVICE_ACCOUNT_ID.max_length, NODE_ACCOUNT_SUFFIX)


def workload_policy_name(cluster: str, pool: str) -> str:
    """The tpu7x workload resource policy of a pool: `<cluster>-<pool>`, at most 63 characters (a
    cluster and a pool may each have 40)."""
    assert RESOURCE_NAME.max_length is not None
    return bounded(f"{cluster}-{pool}", RESOURCE_NAME.max_length)


SYSTEM_POOL_NAME = "system"
"""The CPU node pool every Standard cluster of ours has; no TPU slice may take its name."""
JOBS_POOL_NAME = "jobs"
"""The CPU node pool for Jobs too large for the system pool (a checkpoint conversion), from 0 nodes; no TPU slice may
take its name either."""


# -- projects: Resource Manager "Creating and managing projects" (cloud.google.com/resource-manager/docs/
# creating-managing-projects) and the v1 Project resource (projectId: "6 to 30 lowercase letters, digits,
# or hyphens. It must start with a letter. Trailing hyphens are prohibited."; projectNumber: int64), read
# 2026-11-23. The page also names restricted strings ("such as google and ssl") without saying whether
# they are substrings or words: not checked here, the API says so at create time.
PROJECT_ID = NameRule(
    "project id",
    re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$"),
    "6-30 lowercase letters, digits and '-', starting with a letter, not ending with '-'",
    max_length=30,
)
"""The bare id: a universe's prefix (`s3ns:`) or a legacy domain (`example.com:`) is removed first."""

PROJECT_NUMBER = NameRule(
    "project number",
    re.compile(r"^[1-9][0-9]{0,18}$"),
    "the project's number, digits only (gcloud projects describe PROJECT_ID --format='value(projectNumber)')",
)
"""An int64 written in digits, as the API returns it (`123456789012`)."""


# Image names inside a repository follow the OCI distribution spec's repository-name grammar
# (path components of lowercase letters and digits joined by '.', '_', '__' or '-', separated by '/'),
# and an optional tag of up to 128 characters ([A-Za-z0-9_][A-Za-z0-9_.-]*); Artifact Registry's Docker
# repositories take the same names (https://cloud.google.com/artifact-registry/docs/docker/names).
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
IMAGE_NAME = re.compile(rf"^{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?$")


def check_image_name(name: str, key: str = "") -> str:
    """`name` (`vllm-tpu:v0.9.2`, `team/ray-maxtext`), or a one-line refusal before any resource."""
    if not IMAGE_NAME.fullmatch(name):
        raise UserError(
            key,
            name,
            "is not an image name",
            "use lowercase path parts of letters and digits joined by '.', '_' or '-', and an optional :tag",
        )
    return name


def builder_account_id(repository: str, key: str) -> str:
    """The Cloud Build builder's service account id of an image repository, `<repository>-builder`: unique per
    project like the repository. IAM ids have at most 30 characters; a longer one keeps 23 and adds a hash of the
    whole, so two repositories that share their first characters never share an account. `key`: the setting that
    named the repository, for the error."""
    account = f"{repository}-builder"
    if SERVICE_ACCOUNT_ID.matches(account):
        return account
    digest = hashlib.sha256(account.encode()).hexdigest()[:6]
    return SERVICE_ACCOUNT_ID.check(key, f"{repository[:23].rstrip('-')}-{digest}")
