"""The hardening every pod of every workload gets, and who each pinned image runs as.

One function, `harden`, applied last by each pod builder, so no container can be added without it:
- the pod: seccomp `RuntimeDefault`, the image's non-root numeric user (`runAsNonRoot`), an fsGroup
  so mounted volumes are writable by that user, and no Kubernetes API token unless it is used;
- every container (init and sidecar containers too): `imagePullPolicy: Always` (a re-pushed tag is
  noticed; the kubelet only fetches the manifest when the layers are cached), no privilege, no privilege escalation, all
  capabilities dropped (none added back: nothing here binds a port below 1024 or needs raw sockets),
  a read-only root filesystem, with an `emptyDir` for each path the process must write (`/tmp`, a
  `HOME` for caches and configs), and a CPU limit where it does not slow a TPU host (below).

Which user. `IMAGE_USERS` lists each pinned image family: the user its Dockerfile sets, or, where it
sets none (root by default), the numeric user we run it as and why that works. Such a numeric user has
no /etc/passwd entry, so `USER` and `LOGNAME` name it: Python's `getpass.getuser()` reads LOGNAME,
USER, LNAME and USERNAME and only then asks `pwd.getpwuid`, which raises KeyError (OSError from Python
3.13) for a uid without an entry (docs.python.org/3/library/getpass.html#getpass.getuser). Callers in
the images' stacks: torch's Inductor names its default cache `/tmp/torchinductor_<user>`
(pytorch/pytorch torch/_inductor/runtime/cache_dir_utils.py, `default_cache_dir`, reached by any
`torch.compile` that uses Inductor without TORCHINDUCTOR_CACHE_DIR); absl's logging asks for the user
to name log files but catches KeyError (abseil-py absl/logging/__init__.py, `find_log_dir_and_names`).
JAX (jax-ml/jax) and torch_xla (pytorch/xla, outside scripts/debug_run.py) never call it. Pod Security
`restricted` requires `runAsNonRoot` and forbids added capabilities other than NET_BIND_SERVICE
(kubernetes.io/docs/concepts/security/pod-security-standards).

CPU limits. A CPU limit is a CFS quota: the kernel throttles the container when it used its share of
a 100 ms period. Our small helpers (compile-cache sync, checkpoint wait, HTTP gateways, Saxml's CPU
servers, the publisher) get one. The TPU containers do not: the host process feeds the chips
(input pipeline, tokenisation, XLA compilation at start, host offload), each pod already owns its
whole TPU VM (it takes every chip, so nothing else shares the node's CPUs), and throttling it would
only slow the accelerator it pays for. docs/security.md lists these as remaining findings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pulumi_kubernetes as k8s

from tpu_stacks.annotations import API_TOKEN_REASON
from tpu_stacks.raytrain.spec import RAY_USER_ID

__all__ = ["API_TOKEN_REASON", "IMAGE_USERS", "ImageUser", "harden"]
SECCOMP = "RuntimeDefault"
NONROOT_UID = 65532
"""The user we run images that set no USER as: distroless's `nonroot` (65532), above 10000 so it
matches no user of the node; files the process needs are on emptyDirs it owns through fsGroup."""
TMP_VOLUME = "tmp"
HOME_VOLUME = "home"
HOME = "/home/app"
LOGIN = "app"
"""The name USER and LOGNAME give a numeric user that has no /etc/passwd entry (module docstring)."""
TMP_GIB = 2


@dataclass(frozen=True)
class ImageUser:
    """Who a pinned image runs as, and the source of that fact."""

    uid: int
    source: str
    home: str | None = None
    """A HOME the image owns (kept, not replaced by an emptyDir); None: HOME is an emptyDir at `HOME`."""
    login: str | None = None
    """The name of `uid` in the image's /etc/passwd; None: it has none, so USER and LOGNAME name it."""


IMAGE_USERS: dict[str, ImageUser] = {
    "vllm": ImageUser(
        NONROOT_UID,
        "vllm-project/vllm docker/Dockerfile.tpu sets no USER (root by default); the server only writes "
        "HOME (~/.cache, ~/.config/vllm), /tmp (libtpu logs and lock), /dev/shm and the XLA cache, all "
        "emptyDirs here, and the weights mount, which GCS FUSE mounts as this uid",
    ),
    "cloud-sdk": ImageUser(
        NONROOT_UID,
        "google-cloud-cli images set no USER; gcloud writes only its config directory, moved to /tmp "
        "(CLOUDSDK_CONFIG, cloud.google.com/sdk/docs/configurations)",
    ),
    "jetstream": ImageUser(
        NONROOT_UID,
        "AI-Hypercomputer/jetstream-pytorch docker files set no USER; the server writes HOME, /tmp, the "
        "compile cache and (download flow) the weights directory, all emptyDirs here [I: not run here]",
    ),
    "jetstream-converter": ImageUser(
        NONROOT_UID,
        "the inference-checkpoint image sets no USER; the converter writes /base, /pt-ckpt, /tmp, the "
        "jetstream-pytorch clone and HOME (gcloud's config, the Hugging Face cache, the packages its script "
        "pip-installs as a user), all on its scratch volume, made writable by fsGroup [I: not run here]",
    ),
    "saxml": ImageUser(
        NONROOT_UID,
        "google/saxml saxml/tools/docker/Dockerfile.* set no USER; the servers write only /tmp and HOME "
        "(the sax root and checkpoints are on GCS, through the API) [I: not run here]",
    ),
    "python": ImageUser(
        65534, "the publisher needs no writable path; nobody (65534) exists in Debian images", login="nobody"
    ),
    "ray": ImageUser(
        RAY_USER_ID,
        "rayproject/ray images run as USER ray (uid 1000, [K-RAY] Dockerfile); below 10000, but the "
        "image's conda lives in /home/ray, owned by that uid",
        home="/home/ray",
        login="ray",
    ),
    "metrics-adapter": ImageUser(
        NONROOT_UID,
        "distroless, no USER; it only needs a port (6443 here, not 443, so no NET_BIND_SERVICE) and its "
        "self-signed certificate directory (--cert-dir on /tmp)",
        login="nonroot",  # distroless's /etc/passwd has nonroot (65532)
    ),
}


@dataclass(frozen=True)
class Writable:
    """A path one container writes, as an emptyDir (in the pod's ephemeral storage, hence bounded)."""

    volume: str
    path: str


TMP = Writable(TMP_VOLUME, "/tmp")


def pod_security_context(user: ImageUser) -> k8s.core.v1.PodSecurityContextArgs:
    return k8s.core.v1.PodSecurityContextArgs(
        run_as_non_root=True,
        run_as_user=user.uid,
        run_as_group=user.uid,
        fs_group=user.uid,
        seccomp_profile=k8s.core.v1.SeccompProfileArgs(type=SECCOMP),
    )


def container_security_context(user: ImageUser) -> k8s.core.v1.SecurityContextArgs:
    """The container's own context: restricted, read-only root (repeated per container, as checkers read it)."""
    return k8s.core.v1.SecurityContextArgs(
        privileged=False,
        allow_privilege_escalation=False,
        read_only_root_filesystem=True,
        run_as_non_root=True,
        run_as_user=user.uid,
        run_as_group=user.uid,
        capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"]),
        seccomp_profile=k8s.core.v1.SeccompProfileArgs(type=SECCOMP),
    )


def home_env(user: ImageUser) -> list[k8s.core.v1.EnvVarArgs]:
    """HOME on its emptyDir for images without a home of their own (caches and configs go there), and a
    login name for a uid without a passwd entry (module docstring: `getpass.getuser()`)."""
    env = [] if user.home else [k8s.core.v1.EnvVarArgs(name="HOME", value=HOME)]
    if user.login is None:
        env += [k8s.core.v1.EnvVarArgs(name=name, value=LOGIN) for name in ("USER", "LOGNAME")]
    return env


def writable_paths(user: ImageUser) -> tuple[Writable, ...]:
    """What every container of `user` may write: /tmp, and a HOME (or, where the image owns its HOME,
    that HOME's `.cache`: the image's own files there stay visible)."""
    if user.home:
        return (TMP, Writable("cache", f"{user.home}/.cache"))
    return (TMP, Writable(HOME_VOLUME, HOME))


def _volumes(paths: Iterable[Writable], gib: int) -> list[k8s.core.v1.VolumeArgs]:
    names = sorted({p.volume for p in paths})
    return [
        k8s.core.v1.VolumeArgs(name=n, empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs(size_limit=f"{gib}Gi"))
        for n in names
    ]


def _with_mounts(
    container: k8s.core.v1.ContainerArgs, paths: Sequence[Writable]
) -> list[k8s.core.v1.VolumeMountArgs] | None:
    mounts = list(container.volume_mounts or [])
    taken = {m.mount_path for m in mounts}
    mounts += [k8s.core.v1.VolumeMountArgs(name=p.volume, mount_path=p.path) for p in paths if p.path not in taken]
    return mounts or None


def _with_env(
    container: k8s.core.v1.ContainerArgs, env: Sequence[k8s.core.v1.EnvVarArgs]
) -> list[k8s.core.v1.EnvVarArgs] | None:
    """The container's variables plus `env`, where the container does not set them itself."""
    current = list(container.env or [])
    names = {e.name for e in current}
    return [*current, *(e for e in env if e.name not in names)] or None


def harden(
    spec: k8s.core.v1.PodSpecArgs,
    user: ImageUser,
    *,
    api_token: bool = False,
    gib: int = TMP_GIB,
) -> k8s.core.v1.PodSpecArgs:
    """`spec` with the pod and every container hardened (module docstring); `api_token` keeps the
    Kubernetes API token for pods that call the API. Mutates and returns `spec` (Args are builders)."""
    paths = writable_paths(user)
    env = home_env(user)
    for container in [*(spec.init_containers or []), *(spec.containers or [])]:
        container.security_context = container_security_context(user)
        # Tags are pinned but can be re-pushed: `Always` resolves the tag to its digest at every start
        # (a manifest request; unchanged layers are not downloaded again).
        container.image_pull_policy = "Always"
        container.volume_mounts = _with_mounts(container, paths)
        container.env = _with_env(container, env)
    taken = {v.name for v in spec.volumes or []}
    mounted = {m.name for c in [*(spec.init_containers or []), *spec.containers] for m in c.volume_mounts or []}
    added = [v for v in _volumes(paths, gib) if v.name not in taken and v.name in mounted]
    spec.volumes = [*(spec.volumes or []), *added] or None
    spec.security_context = pod_security_context(user)
    spec.automount_service_account_token = api_token
    return spec
