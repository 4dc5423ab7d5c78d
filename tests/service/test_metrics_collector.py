"""The metrics endpoint's aggregation survives a metrics file caught mid-creation.

A process creates its ``.db`` file before sizing it (prometheus/client_python#1199), so a
scrape can find an empty file; a dead worker's file can vanish between listing and reading.
``prometheus_client``'s own collector then raises and the scrape answers HTTP 500 (seen in
this suite under load while search workers started)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("prometheus_client")

from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.multiprocess import MultiProcessCollector

from service.metrics import TolerantMultiProcessCollector


def write_counter(path: Path, value: float) -> None:
    d = MmapedDict(str(path))
    d.write_value(mmap_key("heka_test", "heka_test_total", ["method"], ["ApplyAction"], "a test"), value, 0.0)
    d.close()


def samples(collector_output: object) -> dict[str, float]:
    return {s.name: s.value for metric in collector_output for s in metric.samples}  # type: ignore[attr-defined]


def test_an_empty_or_corrupt_file_is_left_out_and_the_rest_is_served(tmp_path: Path) -> None:
    write_counter(tmp_path / "counter_101.db", 3.0)
    write_counter(tmp_path / "counter_102.db", 4.0)
    (tmp_path / "counter_103.db").write_bytes(b"")  # created, not yet sized
    (tmp_path / "counter_104.db").write_bytes(b"\xff\xff\x00\x00" + b"\x00" * 60)  # claims more than it holds

    files = sorted(str(p) for p in tmp_path.glob("*.db"))
    with pytest.raises(Exception):  # noqa: B017 — what the library's own collector does
        MultiProcessCollector.merge(files, accumulate=True)

    got = samples(TolerantMultiProcessCollector(str(tmp_path)).collect())
    assert got == {"heka_test_total": 7.0}


def test_with_every_file_readable_it_serves_what_the_library_serves(tmp_path: Path) -> None:
    write_counter(tmp_path / "counter_201.db", 1.0)
    write_counter(tmp_path / "counter_202.db", 2.5)
    files = sorted(str(p) for p in tmp_path.glob("*.db"))
    assert samples(TolerantMultiProcessCollector(str(tmp_path)).collect()) == samples(
        MultiProcessCollector.merge(files, accumulate=True)
    )
