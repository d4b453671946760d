"""Which guest runs which test module next, when guests run side by side.

scripts/test runs the suite with pytest-xdist: each worker is one guest at
a time (its GuestPool, tests/conftest.py), and this scheduler hands the
workers whole *units*: one test module on one Debian release, the tests
that share one guest boot.  The order is the classic longest-first, by
each unit's cost in the last measured run (docs/test-time.json), with
three twists:
- a unit whose release is still being built (scripts/test builds trixie
  and sid in the background) waits behind every unit that can start now;
- a unit that needs the host alone (HOST_ALONE, or a guest of more vCPUs
  than the run's share: tests/conftest.py module_host_level,
  tests/hostshare.py) comes last, when waiting for the others costs least;
- a worker whose idle guest is of the unit's kind (release, kernel,
  options, vCPUs) can run it without a boot, which counts as BOOT_SECONDS
  less; a unit of a kind another worker's guest is, counts as
  BOOT_SECONDS more, so that each kind tends to stay with one worker (two
  1-vCPU guests side by side booted 29 times where one guest at a time
  booted 11, ~12 s a boot) and the units that run alone go to the worker
  that has their guest.
The workers describe the units (kind, alone) in SROCE_HOST_LOCKS/units.json
at collection: the controller collects nothing itself.
"""
import json
import os
import re

from xdist.scheduler import LoadScopeScheduling

from hostshare import LOCKS_ENV

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COSTS = os.path.join(ROOT, "docs", "test-time.json")
RELEASES = ("bookworm", "trixie", "sid")
# A release's user space with the newer kernel Debian offers it
# (scripts/distro-root): run by name (--releases, --distro), never in "all".
KERNEL_SUITES = ("bookworm-backports", "trixie-backports", "experimental")
# What a unit that is in no measured run is taken to cost.
DEFAULT_COST = 60.0
# A guest boot and its state snapshot under TCG, with another guest
# beside it (25-30 s alone, up to 47 s on a busy host at 2d1ccb3).
BOOT_SECONDS = 40.0
UNITS_FILE = "units.json"
# Longest first: "bookworm-backports" before "bookworm".
_RELEASE_IN_ID = re.compile(r"[\[-](%s)[\]-]" % "|".join(
    sorted(RELEASES + KERNEL_SUITES, key=len, reverse=True)))


def release_of(nodeid):
    """The release a test runs on (its `release` parameter), or None for
    a test that boots no guest of the suite's."""
    _, _, name = nodeid.partition("::")
    m = _RELEASE_IN_ID.search(name)
    return m.group(1) if m else None


def unit_of(nodeid):
    """The unit a test belongs to: "path" or "path[release]"."""
    path = nodeid.split("::")[0]
    rel = release_of(nodeid)
    return "%s[%s]" % (path, rel) if rel else path


def unit_release(unit):
    """The release of a unit (unit_of), or None for a host test module."""
    m = re.search(r"\[([\w-]+)\]$", unit)
    return m.group(1) if m else None


def build_dir():
    return os.environ.get("SROCE_BUILD") or os.path.join(ROOT, "build")


def load_costs(path=COSTS):
    try:
        with open(path) as f:
            return {u: float(c["seconds"]) for u, c in json.load(f)["units"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def build_ready(release):
    """Whether the guests of `release` can boot now: bookworm always; the
    others once scripts/test's background build of them has ended (see
    there: SROCE_PENDING_BUILDS names the releases still building)."""
    if release is None or release not in os.environ.get("SROCE_PENDING_BUILDS", "").split():
        return True
    return os.path.exists(build_status_file(release))


def build_status_file(release):
    return os.path.join(build_dir(), release, "test-build.status")


class GuestUnitScheduling(LoadScopeScheduling):
    def __init__(self, config, log=None):
        super().__init__(config, log)
        self.costs = load_costs()
        self.units = None
        self.last_kind = {}

    def _split_scope(self, nodeid):
        return unit_of(nodeid)

    def _describe(self, unit):
        if self.units is None:
            try:
                with open(os.path.join(os.environ[LOCKS_ENV], UNITS_FILE)) as f:
                    self.units = json.load(f)
            except (KeyError, OSError, ValueError):
                self.units = {}
        return self.units.get(unit, {"kind": "", "alone": False})

    def priority(self, unit, node):
        info = self._describe(unit)
        cost = self.costs.get(unit, DEFAULT_COST)
        kind = info["kind"]
        if kind and self.last_kind.get(node) == kind:
            cost += BOOT_SECONDS
        elif kind and any(k == kind for n, k in self.last_kind.items() if n is not node):
            cost -= BOOT_SECONDS
        return (build_ready(unit_release(unit)), not info["alone"], cost)

    def _assign_work_unit(self, node):
        best = max(self.workqueue, key=lambda u: self.priority(u, node))
        self.workqueue.move_to_end(best, last=False)
        self.last_kind[node] = self._describe(best)["kind"]
        super()._assign_work_unit(node)
