"""The numeric users of the helper images (catalog/image_users.py), against the images' own user databases.

- The Python helper image is Debian 12 (bookworm): `images.PYTHON_IMAGE` is a `-slim-bookworm` tag. Debian's
  static users come from the base-passwd package (bookworm ships 3.6.1), whose `passwd.master` gives `nobody` uid
  and gid 65534 (https://salsa.debian.org/debian/base-passwd/-/blob/3.6.1/passwd.master; installed as
  /usr/share/base-passwd/passwd.master: `nobody:*:65534:65534:nobody:/nonexistent:/usr/sbin/nologin`).
- Distroless images have `nonroot` at uid 65532 (GoogleContainerTools/distroless, common/variables.bzl:
  `NONROOT = 65532`; the same file gives `NOBODY = 65534`).
"""

from tpu_stacks.catalog.image_users import HELPER_IMAGE_USERS, NONROOT_UID, PYTHON
from tpu_stacks.images import PYTHON_IMAGE

DEBIAN_NOBODY = ("nobody", 65534)
DISTROLESS_NONROOT = ("nonroot", 65532)


def test_the_python_helper_runs_as_debian_s_nobody():
    assert PYTHON_IMAGE.endswith("-bookworm")  # the Debian release whose base-passwd is read above
    assert (PYTHON.login, PYTHON.uid) == DEBIAN_NOBODY
    assert HELPER_IMAGE_USERS["python"] is PYTHON


def test_images_without_a_user_run_as_distroless_s_nonroot():
    assert NONROOT_UID == DISTROLESS_NONROOT[1]
    metrics = HELPER_IMAGE_USERS["metrics-adapter"]
    assert (metrics.login, metrics.uid) == DISTROLESS_NONROOT
