"""The building blocks of k8s.security and k8s.namespace, on their own (network policies: test_connectivity.py)."""

import subprocess
import sys

import pulumi_kubernetes as k8s
import pytest

from tpu_stacks.catalog.engines import image_users
from tpu_stacks.k8s.namespace import pod_security_labels
from tpu_stacks.k8s.security import harden

IMAGE_USERS = image_users()


def test_pod_security_labels_enforce_the_level_and_keep_warning_at_restricted():
    assert pod_security_labels("privileged") == {
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/enforce-version": "v1.33",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": "v1.33",
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": "v1.33",
    }


def test_harden_covers_init_containers_and_adds_only_the_writable_volumes_used():
    spec = k8s.core.v1.PodSpecArgs(
        init_containers=[k8s.core.v1.ContainerArgs(name="init", image="i:1")],
        containers=[
            k8s.core.v1.ContainerArgs(
                name="main",
                image="m:1",
                volume_mounts=[k8s.core.v1.VolumeMountArgs(name="scratch", mount_path="/tmp")],
            )
        ],
        volumes=[k8s.core.v1.VolumeArgs(name="scratch", empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs())],
    )
    user = IMAGE_USERS["vllm"]
    harden(spec, user)
    assert spec.automount_service_account_token is False
    assert spec.security_context.seccomp_profile.type == "RuntimeDefault" and spec.security_context.fs_group == user.uid
    for container in (*spec.init_containers, *spec.containers):
        context = container.security_context
        assert context.allow_privilege_escalation is False and context.read_only_root_filesystem is True
        assert context.capabilities.drop == ["ALL"] and context.run_as_user == user.uid
        assert container.image_pull_policy == "Always"
    main = spec.containers[0]
    # The container's own /tmp mount is kept (not shadowed); HOME gets its emptyDir.
    assert [(m.name, m.mount_path) for m in main.volume_mounts] == [("scratch", "/tmp"), ("home", "/home/app")]
    assert sorted(v.name for v in spec.volumes) == ["home", "scratch", "tmp"]  # tmp: the init container's
    assert [(e.name, e.value) for e in main.env] == [("HOME", "/home/app"), ("USER", "app"), ("LOGNAME", "app")]


# CPython's getpass.getuser() as the image's Python runs it for a uid with no /etc/passwd entry: pwd raises.
GETUSER = """
import getpass, pwd
def no_entry(uid):
    raise KeyError(f"getpwuid(): uid not found: {uid}")
pwd.getpwuid = no_entry
print(getpass.getuser())
"""


def _getuser(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", GETUSER], env=env, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("family", [name for name, user in IMAGE_USERS.items() if user.login is None])
def test_a_uid_without_a_passwd_entry_gets_a_name_getpass_reads_first(family):
    spec = harden(
        k8s.core.v1.PodSpecArgs(containers=[k8s.core.v1.ContainerArgs(name="c", image="c:1")]), IMAGE_USERS[family]
    )
    env = {e.name: e.value for e in spec.containers[0].env}
    assert _getuser(env).stdout.strip() == "app"
    # Without those variables the same lookup fails: what torch's Inductor cache directory would hit.
    failed = _getuser({k: v for k, v in env.items() if k not in ("USER", "LOGNAME")})
    assert failed.returncode != 0 and "uid not found" in failed.stderr


def test_images_whose_user_has_a_passwd_entry_keep_their_own_name():
    for family in ("ray", "python", "metrics-adapter"):
        spec = harden(
            k8s.core.v1.PodSpecArgs(containers=[k8s.core.v1.ContainerArgs(name="c", image="c:1")]), IMAGE_USERS[family]
        )
        assert not {"USER", "LOGNAME"} & {e.name for e in spec.containers[0].env or []}, family


def test_an_image_with_its_own_home_keeps_it_and_gets_a_writable_cache():
    spec = harden(
        k8s.core.v1.PodSpecArgs(containers=[k8s.core.v1.ContainerArgs(name="ray", image="r:1")]), IMAGE_USERS["ray"]
    )
    assert [m.mount_path for m in spec.containers[0].volume_mounts] == ["/tmp", "/home/ray/.cache"]
    assert spec.containers[0].env is None and spec.security_context.run_as_user == 1000


def test_harden_keeps_the_api_token_only_when_asked():
    spec = k8s.core.v1.PodSpecArgs(containers=[k8s.core.v1.ContainerArgs(name="a", image="a:1")])
    assert harden(spec, IMAGE_USERS["metrics-adapter"], api_token=True).automount_service_account_token is True
