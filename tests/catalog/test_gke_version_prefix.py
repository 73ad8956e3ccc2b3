"""catalog/gke_versions: a version prefix (`1.33`, as `cluster.minVersion` or a floor may be written) stands for the
lowest version it covers, 1.33.0-gke.0, so it is no later than any 1.33 release."""

from tpu_stacks.catalog.gke_versions import gke_version


def test_a_prefix_is_the_lowest_version_it_covers():
    assert gke_version("1.33").key == gke_version("1.33.0-gke.0").key == (1, 33, 0, 0)
    assert not gke_version("1.33.0") < gke_version("1.33")
    assert gke_version("1.32.9-gke.99") < gke_version("1.33")


def test_a_versions_minor_alias():
    """GKE's `initialClusterVersion` takes `1.X`, "the highest valid patch+gke.N patch in the 1.X version" (GKE API
    reference, Cluster.initialClusterVersion): 1.33.3-gke.1136000's alias is 1.33."""
    assert gke_version("1.33.3-gke.1136000").minor_alias == "1.33"
