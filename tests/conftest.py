"""pytest configuration shared by every sroce test.

Guest tests ask for the `guest` fixture (one guest per test module, booted
through scripts/vm-run); a module can choose the guest's options with
`GUEST_OPTIONS = {...}` (see harness.Guest).  `pytest --distro trixie` (or
sid) boots every guest on that Debian release instead of this machine's;
`--releases all` runs the core modules (ALL_RELEASES = True) once on each
of bookworm, trixie and sid and the rest on --distro (scripts/build
--distro R first; scripts/test does all of that).  `--kernel debug` boots
every guest (bookworm only) on the debug kernel: KASAN, KFENCE, lockdep,
UBSAN, kmemleak (scripts/build --kernel debug first; `scripts/test --kernel
debug` does it).  After each test the guest's kernel log is checked, and
the test fails if it shows a warning, oops or detector report; on the
debug kernel a kmemleak scan before the guest stops fails the module's
last test if sroce or the RDMA core leaked.  Tests marked `debug_kernel`
check the debug kernel's detectors themselves: they run with `--kernel
debug` only and are deselected (so counted, not hidden) on Debian's kernel.
"""
import os
import re
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "guest"))
from harness import Guest, GuestDied  # noqa: E402


RELEASES = ("bookworm", "trixie", "sid")


def pytest_addoption(parser):
    parser.addoption("--distro", default=None, choices=RELEASES,
                     help="Debian release every guest boots (default: this "
                          "machine's, bookworm)")
    parser.addoption("--packages", action="store_true",
                     help="also run the package test (tests/test_packages.py)")
    parser.addoption("--releases", default=None,
                     help="comma-separated releases (or 'all') for the core "
                          "modules, those that set ALL_RELEASES = True: each "
                          "runs once per release, the others on --distro only "
                          "(scripts/build --distro R first)")
    parser.addoption("--kernel", default=None, choices=("debian", "debug"),
                     help="kernel every guest boots: Debian's (default) or "
                          "the debug kernel (KASAN, lockdep, kmemleak, UBSAN; "
                          "bookworm only; scripts/build --kernel debug first)")
    parser.addoption("--fresh-guests", dest="reuse_guests", action="store_false",
                     help="boot a guest for every test module, never reuse "
                          "the one an earlier module left (see GuestPool)")


def pytest_configure(config):
    config._sroce_guests = GuestPool()
    if config.getoption("kernel") != "debug":
        return
    others = [r for r in [config.getoption("distro")] +
              (config.getoption("releases") or "").replace("all", ",".join(RELEASES)).split(",")
              if r and r != "bookworm"]
    if others:
        raise pytest.UsageError(
            "--kernel debug boots bookworm only; it has no debug kernel for %s "
            "(use --releases bookworm)" % ", ".join(sorted(set(others))))


def _releases(config, module):
    """The releases a test module runs on."""
    wanted = config.getoption("releases")
    if wanted and getattr(module, "ALL_RELEASES", False):
        return list(RELEASES) if wanted == "all" else wanted.split(",")
    return [config.getoption("distro") or "bookworm"]


def pytest_generate_tests(metafunc):
    if "release" in metafunc.fixturenames:
        metafunc.parametrize("release", _releases(metafunc.config, metafunc.module),
                             scope="module")


def pytest_collection_modifyitems(config, items):
    """first_release_only tests of an ALL_RELEASES module run once, on the
    first release of the run: they repeat a path another test covers on
    every release, and CI's 90 minutes are shared by three releases.
    debug_kernel tests need the debug kernel's detectors (Debian's kernel
    has no kmemleak, KASAN...): deselected without --kernel debug."""
    keep, drop = [], []
    debug = config.getoption("kernel") == "debug"
    for item in items:
        if item.get_closest_marker("packages") and not config.getoption("packages"):
            drop.append(item)
            continue
        if item.get_closest_marker("debug_kernel") and not debug:
            drop.append(item)
            continue
        spec = getattr(item, "callspec", None)
        rel = spec.params.get("release") if spec else None
        first = _releases(config, item.module)[0]
        if (item.get_closest_marker("first_release_only") and rel is not None
                and rel != first):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = in_guest_order(keep, config.getoption("kernel"))


def in_guest_order(items, kernel):
    """Each module's tests run together per release, one guest each, and
    its test_zz_* then test_zzz_* tests after its others (they unload
    what the module's fixtures set up and check what is left).  pytest's
    own order interleaves releases and puts those tests mid-module when
    tests are parametrized both by the module-scoped release and by the
    function: every change of release is another guest boot.  Host tests
    come first; then the guest modules release by release, those that ask
    for the same kind of guest side by side, so one guest can serve them
    in turn (GuestPool)."""
    groups = {}
    for item in items:
        path, rel = _group(item)
        if (path, rel) not in groups:
            kind = "" if rel is None else guest_kind(item.module, rel, kernel)[1]
            groups[(path, rel)] = (rel is not None,
                                   RELEASES.index(rel) if rel in RELEASES else -1,
                                   kind, len(groups))
    return sorted(items, key=lambda item: (groups[_group(item)], _lateness(item)))


def _lateness(item):
    m = re.match(r"test_(z{2,})_", item.originalname)
    return len(m.group(1)) if m else 0


def _group(item):
    spec = getattr(item, "callspec", None)
    return item.nodeid.split("::")[0], spec.params.get("release") if spec else None


@pytest.fixture(scope="module")
def release(request):
    """Overridden by the parametrization above; never used bare."""
    return request.param


# A guest's life: vm-run stops it then (its guard against a guest a killed
# run left behind), and a module starts on a guest kept from an earlier
# one only while it has REUSE_MARGIN of that left.
GUEST_LIFETIME = 7200
REUSE_MARGIN = 3600


class GuestPool:
    """The guest the last test module left, kept for the next module that
    asks for the same kind (release, kernel, GUEST_OPTIONS): a boot under
    TCG costs 12-20 s, and CI boots one for each module and release.  A
    guest is kept only if its module passed and the modules loaded since
    its boot unload, its RDMA modules reload (Guest.reset, whose kernel
    log counts against the module), and taken only if nothing else
    differs from the state it had after its boot (Guest.differs).  Never
    more than one guest runs."""

    def __init__(self):
        self.idle = None		# (kind, module, Guest)
        self.boots = 0
        self.reuses = 0
        self.not_kept = []	# (module, why)

    def take(self, kind):
        """The idle guest if it is of this kind and nothing its last module
        left behind differs from its boot; else None, and it is stopped."""
        if self.idle is None:
            return None
        (idle_kind, module, g), self.idle = self.idle, None
        if idle_kind == kind and g.proc is not None and g.proc.poll() is None:
            why = g.differs()
            if not why:
                self.reuses += 1
                return g
            self.not_kept.append((module, why))
        g.stop()
        return None

    def keep(self, kind, module, g):
        self.idle = (kind, module, g)

    def close(self):
        if self.idle is not None:
            self.idle[2].stop()
            self.idle = None


def guest_kind(module, release, kernel):
    options = dict(getattr(module, "GUEST_OPTIONS", {}))
    options["distro"] = release
    options["kernel"] = kernel
    return options, repr(sorted(options.items()))


@pytest.fixture(scope="module")
def guest(request, release, tmp_path_factory):
    pool = request.config._sroce_guests
    options, kind = guest_kind(request.module, release,
                               request.config.getoption("kernel"))
    name = request.module.__name__.split(".")[-1]
    g = pool.take(kind) if request.config.getoption("reuse_guests") else None
    if g is None:
        out = tmp_path_factory.mktemp("guest-%s-%s" % (name, release))
        g = Guest(out, timeout=GUEST_LIFETIME, **options)
        try:
            g.start()
            g.snapshot_state()
        except GuestDied as e:
            g.stop()
            pytest.fail(str(e), pytrace=False)
        pool.boots += 1
    failed = request.session.testsfailed
    yield g
    leaks, problems, kept = [], [], False
    try:
        alive = g.proc is not None and g.proc.poll() is None
        if g.kernel == "debug" and alive:
            leaks = g.kmemleak_leaks()
        why = ("reuse is off" if not request.config.getoption("reuse_guests") else
               "the guest is gone" if not alive else
               "a test failed" if request.session.testsfailed != failed or leaks else
               "it is near the end of its life"
               if time.monotonic() - g.started > GUEST_LIFETIME - REUSE_MARGIN else
               g.reset())
        if not why:
            # What the reload of sroce printed counts against this module.
            problems = g.kernel_problems()
            why = "the reload's kernel log shows problems" if problems else ""
        module = name + "[%s]" % release
        if why:
            pool.not_kept.append((module, why))
        else:
            pool.keep(kind, module, g)
            kept = True
    finally:
        # A failed scan (kmemleak off, the guest gone) must not leave the
        # guest running until vm-run's own limit.
        if not kept:
            g.stop()
    if leaks:
        pytest.fail("kmemleak: %d leak(s) through sroce or the RDMA core "
                    "(all reports: %s/kmemleak):\n%s" % (
                        len(leaks), g.out, "".join(leaks)), pytrace=False)
    if problems:
        pytest.fail("guest kernel log shows problems once sroce was "
                    "reloaded after this module:\n" + "\n".join(problems),
                    pytrace=False)


def pytest_sessionfinish(session):
    pool = getattr(session.config, "_sroce_guests", None)
    if pool is not None:
        pool.close()


def pytest_terminal_summary(terminalreporter, config):
    """Test counts per Debian release, just before pytest's own summary,
    and how many guests were booted: after which modules, and why, a
    guest was not kept for the next."""
    pool = getattr(config, "_sroce_guests", None)
    if pool is not None and pool.boots:
        terminalreporter.section("guests")
        terminalreporter.line("%d booted, %d reused by a later test module" %
                              (pool.boots, pool.reuses))
        for module, why in pool.not_kept:
            terminalreporter.line("not kept after %s: %s" % (
                module, why.replace("\n", "\n    ")))
    counts = {}
    for outcome in ("passed", "failed", "error", "skipped"):
        for rep in terminalreporter.stats.get(outcome, []):
            if getattr(rep, "when", "call") != "call" and outcome != "error":
                continue
            rel = next((r for r in RELEASES if "[%s" % r in rep.nodeid or
                        "-%s]" % r in rep.nodeid or "-%s-" % r in rep.nodeid), None)
            if rel:
                counts.setdefault(rel, {}).setdefault(outcome, 0)
                counts[rel][outcome] += 1
    if counts:
        terminalreporter.section("per Debian release")
        for rel in RELEASES:
            if rel in counts:
                terminalreporter.line("%-9s %s" % (rel, ", ".join(
                    "%d %s" % (n, o) for o, n in sorted(counts[rel].items()))))


@pytest.fixture(autouse=True)
def _kernel_log_clean(request):
    """Fails a guest test whose run left warnings or oopses in the kernel log."""
    yield
    if "guest" not in request.fixturenames:
        return
    g = request.getfixturevalue("guest")
    if g.proc is None or g.proc.poll() is not None:
        return  # the guest is gone: the test itself has already failed
    try:
        problems = g.kernel_problems()
    except GuestDied as e:
        pytest.fail(str(e), pytrace=False)
    if problems:
        pytest.fail("guest kernel log shows problems:\n" + "\n".join(problems),
                    pytrace=False)
