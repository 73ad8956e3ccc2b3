"""Every name and ID rule of the APIs we call, and the one region parser, written once.

Each rule says what the API accepts (with its source) and how to say so in one line. Checks run in
the spec/plan phase, so a bad name is refused before any resource is declared.
Sources: Kubernetes object names (DNS-1123 label / DNS-1035 label, kubernetes.io "Object Names and
IDs"); GKE cluster and node-pool names (`gcloud container clusters create` reference: at most 40
characters); Compute Engine resource names (RFC 1035, at most 63); IAM service-account IDs (6-30
characters); Cloud Storage bucket names (3-63 per dot-separated part, 222 in all); Artifact
Registry repository IDs. Regions and zones are `<area>-<direction><n>` and `<region>-<letter>`; the
sovereign S3NS universe names its region `u-france-east1` (zones `u-france-east1-a`...).
"""

from __future__ import annotations

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
        if not isinstance(value, str) or not self.pattern.match(value):
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
)

SERVICE_ACCOUNT_EMAIL = NameRule(
    "service account email",
    re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z0-9.-]+\.gserviceaccount\.com$"),
    "NAME@PROJECT.iam.gserviceaccount.com",
)

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
)
"""RFC 1035 names of Compute Engine resources (reservations, resource policies)."""

BUCKET_NAME = NameRule(
    "bucket name",
    re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$"),
    "the name without gs://",
)

GCS_PATH = re.compile(r"^gs://[a-z0-9][a-z0-9._-]{1,220}[a-z0-9](/.*)?$")

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
    return bool(ZONE.match(location))


def is_region(location: str) -> bool:
    return bool(REGION.match(location))


def region_of(location: str) -> str:
    """The region of a zone (`us-central1-b` -> `us-central1`, `u-france-east1-a` -> `u-france-east1`),
    or the region itself (`u-france-east1` stays whole: it has three parts and is still a region)."""
    if is_zone(location):
        return location.rsplit("-", 1)[0]
    return location
