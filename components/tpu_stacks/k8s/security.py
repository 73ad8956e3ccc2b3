"""The hardening every pod of every workload gets, and who each pinned image runs as.

One function, `harden`, applied last by each pod builder, so no container can be added without it:
- the pod: seccomp `RuntimeDefault`, the image's non-root numeric user (`runAsNonRoot`), an fsGroup
  so mounted volumes are writable by that user, and no Kubernetes API token unless it is used;
- every container (init and sidecar containers too): `imagePullPolicy: Always` (a re-pushed tag is
  noticed; the kubelet only fetches the manifest when the layers are cached), no privilege, no privilege escalation, all
  capabilities dropped (none added back: nothing here binds a port below 1024 or needs raw sockets),
  a read-only root filesystem, with an `emptyDir` for each path the process must write (`/tmp`, a
  `HOME` for caches and configs), and a CPU limit where it does not slow a TPU host (below).

Which user. Each pinned image's user is catalogued with its source: the engines' on their records
(catalog/engines/, `EngineVersion.user`), the helper images' in catalog/image_users.py. Where the
image sets no USER (root by default), it is the numeric user we run it as and why that works. Such a
numeric user has no /etc/passwd entry, so `USER` and `LOGNAME` name it: Python's `getpass.getuser()` reads LOGNAME,
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

from tpu_stacks.catalog.image_users import ImageUser
from tpu_stacks.objects.annotations import API_TOKEN_REASON

__all__ = ["API_TOKEN_REASON", "ImageUser", "harden"]
SECCOMP = "RuntimeDefault"
TMP_VOLUME = "tmp"
HOME_VOLUME = "home"
HOME = "/home/app"
LOGIN = "app"
"""The name USER and LOGNAME give a numeric user that has no /etc/passwd entry (module docstring)."""
TMP_GIB = 2


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
