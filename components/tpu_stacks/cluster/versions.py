"""The version a new cluster is created at: a concrete one the location offers now, at or above the floor.

`cluster.minVersion` is a floor the plan checks (TPU generations, flex-start, ComputeClass fallback). The
provider creates the cluster at exactly `min_master_version` (terraform-provider-google
google/services/container/resource_container_cluster.go, `resourceContainerClusterCreate`:
`InitialClusterVersion: d.Get("min_master_version").(string)`), so what is sent must be a version GKE
offers on the day of `up`. Neither the floor itself nor its minor alias is: a channel offers a patch for
weeks and a minor for about 14 months (GKE release schedule,
https://cloud.google.com/kubernetes-engine/docs/release-schedule), and GKE resolves `1.33` to the channel's
highest 1.33 patch, which can be below a `1.33.3-gke.1136000` floor. So `up` asks GKE what the location
offers (the provider's `google_container_engine_versions`, which reads `projects.locations.getServerConfig`:
terraform-provider-google google/services/container/data_source_google_container_engine_versions.go) and
this module chooses from the answer. Pure: the component makes the call, this module only decides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.tpu import GkeVersion, gke_version
from tpu_stacks.cluster.capacity import MIN_VERSION_KEY, min_version_of
from tpu_stacks.errors import UserError


class OfferedVersions(BaseModel):
    """What `getServerConfig` says a location offers, as the provider's data source returns it.

    `valid_master` is the location's list (newest first), `channel_defaults` / `channel_latest` map a
    release channel's name (`RAPID`, ...) to its default and newest version."""

    model_config = ConfigDict(frozen=True)

    location: str
    valid_master: tuple[str, ...] = ()
    channel_defaults: Mapping[str, str] = {}
    channel_latest: Mapping[str, str] = {}


def _parsed(text: str | None) -> GkeVersion | None:
    """A version GKE listed, or None for anything the one GKE-version parse does not read (an empty
    channel entry, a form this project has never seen): skipped rather than guessed at."""
    if not text:
        return None
    try:
        return gke_version(text.strip())
    except UserError:
        return None


def create_version(floor: str, channel: str, offered: OfferedVersions) -> str:
    """The concrete version to create the cluster at, for `cluster.minVersion: floor` in `channel`.

    The channel's default when it meets the floor: the version GKE itself would pick, and the one the
    channel keeps longest. Otherwise the channel's newest when it meets the floor: a version the channel
    certainly offers (the location's list can hold versions outside the channel, which a cluster enrolled
    in it cannot be created at). GKE upgrades the master from there on its own. Neither reaches the
    floor: refused in one line naming `cluster.minVersion`, the floor and the offer.
    """
    minimum = min_version_of(floor)
    default_text = offered.channel_defaults.get(channel)
    newest = _parsed(offered.channel_latest.get(channel))
    for choice in (_parsed(default_text), newest):
        if choice is not None and not choice < minimum:
            return choice.text.strip()
    raise UserError(
        MIN_VERSION_KEY,
        floor,
        f"is above every version {offered.location} offers in the {channel} channel "
        f"({_offer(default_text, newest, offered.valid_master)})",
        "lower cluster.minVersion to a version listed there, or choose a releaseChannel or location that offers it",
    )


def _offer(default: str | None, newest: GkeVersion | None, valid: Sequence[str]) -> str:
    """The offer in a few words: the channel's default and newest, else the location's newest."""
    if default or newest:
        return f"default {default or 'none'}, newest {newest.text if newest else 'none'}"
    listed = [version for version in map(_parsed, valid) if version is not None]
    return f"newest listed {max(listed).text}" if listed else "no versions listed"
