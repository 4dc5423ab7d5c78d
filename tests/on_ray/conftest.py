"""The Ray tests' local instance."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def cluster() -> Iterator[int]:
    """A local Ray instance for the module (2 CPUs, no dashboard), used through
    ``ray_session`` as ``--ray local`` uses it; its CPUs. Skipped without the ray extra."""
    ray = pytest.importorskip("ray", reason="needs the ray extra (pip install 'heka[ray]'; make ray-check)")
    from service.ray_runner import ray_session

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with ray_session("local") as cpus:  # the instance above, used as it is
            yield cpus
    finally:
        ray.shutdown()
