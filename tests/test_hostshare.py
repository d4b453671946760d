"""tests/hostshare.py, the host's share between the guests side by side and
the background builds, and conftest's choice of share for a module."""
import fcntl
import json
import os
import threading
import types

import pytest

import conftest
from hostshare import ALONE, NO_OTHER_GUEST, SHARED, HostShare

# Long enough for a thread that is not blocked to take a free flock.
BLOCKED_FOR = 0.5
# How long a thread may take to get a lock once it is free.
ENTERS_WITHIN = 10


class Taker(threading.Thread):
    """Takes HostShare(folder, level) and holds it until released."""

    def __init__(self, folder, level):
        super().__init__(daemon=True)
        self.folder, self.level = folder, level
        self.entered = threading.Event()
        self.release = threading.Event()

    @classmethod
    def begin(cls, folder, level):
        t = cls(folder, level)
        t.start()
        return t

    def run(self):
        with HostShare(self.folder, self.level):
            self.entered.set()
            self.release.wait(60)

    def done(self):
        self.release.set()
        self.join(ENTERS_WITHIN)


def background_build(folder):
    """What scripts/test's background builds hold: the host lock, shared."""
    fd = os.open(os.path.join(folder, "lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def test_guests_share_the_host_with_each_other_and_the_builds(tmp_path):
    build = background_build(tmp_path)
    a, b = Taker.begin(tmp_path, SHARED), Taker.begin(tmp_path, SHARED)
    assert a.entered.wait(ENTERS_WITHIN) and b.entered.wait(ENTERS_WITHIN)
    a.done()
    b.done()
    os.close(build)


def test_a_guest_of_more_vcpus_waits_for_the_other_guest_not_for_builds(tmp_path):
    build = background_build(tmp_path)
    other = Taker.begin(tmp_path, SHARED)
    assert other.entered.wait(ENTERS_WITHIN)
    big = Taker.begin(tmp_path, NO_OTHER_GUEST)
    assert not big.entered.wait(BLOCKED_FOR), "ran beside another guest"
    # A guest that comes while it waits gets in behind it (the gate).
    late = Taker.begin(tmp_path, SHARED)
    other.done()
    assert big.entered.wait(ENTERS_WITHIN), "waited for the build"
    assert not late.entered.wait(BLOCKED_FOR), "a guest ran beside it"
    big.done()
    assert late.entered.wait(ENTERS_WITHIN)
    late.done()
    os.close(build)


def test_a_timing_test_waits_for_the_builds_and_every_guest(tmp_path):
    build = background_build(tmp_path)
    timing = Taker.begin(tmp_path, ALONE)
    assert not timing.entered.wait(BLOCKED_FOR), "ran beside a build"
    os.close(build)
    assert timing.entered.wait(ENTERS_WITHIN)
    guest = Taker.begin(tmp_path, SHARED)
    big = Taker.begin(tmp_path, NO_OTHER_GUEST)
    assert not guest.entered.wait(BLOCKED_FOR), "a guest ran beside it"
    assert not big.entered.wait(0), "a guest ran beside it"
    timing.done()
    # The two behind it do not run side by side either: one, then the other.
    first = next((t for t in (guest, big) if t.entered.wait(ENTERS_WITHIN / 2)), None)
    assert first is not None
    second = big if first is guest else guest
    assert not second.entered.wait(BLOCKED_FOR), "the two ran side by side"
    first.done()
    assert second.entered.wait(ENTERS_WITHIN)
    second.done()


@pytest.mark.parametrize("share, module, cpus, level", [
    ("1", {}, 1, SHARED),
    ("1", {"GUEST_CPUS": 2}, 2, NO_OTHER_GUEST),
    ("1", {"HOST_ALONE": True}, 1, ALONE),
    ("1", {"HOST_ALONE": True, "GUEST_CPUS": 2}, 2, ALONE),
    # One guest at a time on two cores: every guest has two vCPUs.
    ("2", {}, 2, SHARED),
    ("2", {"GUEST_CPUS": 2}, 2, SHARED),
    (None, {}, 2, SHARED),
])
def test_a_module_gets_its_vcpus_and_its_share(monkeypatch, share, module, cpus, level):
    if share is None:
        monkeypatch.delenv("SROCE_GUEST_CPUS", raising=False)
    else:
        monkeypatch.setenv("SROCE_GUEST_CPUS", share)
    m = types.SimpleNamespace(**module)
    assert conftest.guest_cpus(m) == cpus
    assert conftest.module_host_level(m) == level
    assert conftest.guest_kind(m, "bookworm", None)[0]["smp"] == cpus


class FakeItem:
    """What conftest.describe_units reads of a collected host test."""

    def __init__(self, nodeid, module, marks=()):
        self.nodeid, self.module, self.marks = nodeid, module, marks
        self.fixturenames = []

    def get_closest_marker(self, name):
        return name if name in self.marks else None


def test_a_unit_with_one_test_that_needs_the_host_alone_is_described_alone(
        monkeypatch, tmp_path):
    monkeypatch.setenv(conftest.LOCKS_ENV, str(tmp_path))
    monkeypatch.setenv("SROCE_GUEST_CPUS", "1")
    shared = types.SimpleNamespace(__name__="test_m")
    conftest.describe_units([
        FakeItem("test_m.py::test_a", shared),
        FakeItem("test_m.py::test_gaps", shared, marks=("host_alone",)),
        FakeItem("test_m.py::test_b", shared),
        FakeItem("test_n.py::test_c", shared)], kernel=None)
    with open(tmp_path / "units.json") as f:
        units = json.load(f)
    assert units["test_m.py"]["alone"] is True
    assert units["test_n.py"]["alone"] is False
