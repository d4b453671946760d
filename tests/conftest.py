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
import ctypes
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "guest"))
from harness import Guest, GuestDied, LIVE_GUESTS  # noqa: E402
from hostshare import ALONE, NO_OTHER_GUEST, SHARED, HostShare, LOCKS_ENV  # noqa: E402
import schedule  # noqa: E402


RELEASES = schedule.RELEASES


def pytest_addoption(parser):
    parser.addoption("--distro", default=None, choices=RELEASES + schedule.KERNEL_SUITES,
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


def _is_worker(config):
    return hasattr(config, "workerinput")


def pytest_configure(config):
    config._sroce_guests = GuestPool()
    if not os.environ.get(LOCKS_ENV):
        # One folder per run, for every worker and scripts/test's builds.
        os.environ[LOCKS_ENV] = tempfile.mkdtemp(prefix="sroce-host-")
        config._sroce_own_locks = os.environ[LOCKS_ENV]
    if _is_worker(config):
        # A worker whose controller dies (killed outright) goes too, and
        # takes its guests with it (_stop_on_signal).
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _stop_on_signal)
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
    has no kmemleak, KASAN...): deselected without --kernel debug.  A
    module that boots several releases at once (NEEDS_RELEASES) is
    deselected from a run that does not build them all, and from a run
    on the debug kernel."""
    keep, drop = [], []
    debug = config.getoption("kernel") == "debug"
    wanted = (config.getoption("releases") or "").replace("all", ",".join(RELEASES))
    built = set(filter(None, wanted.split(","))) | {config.getoption("distro") or "bookworm"}
    for item in items:
        needs = set(getattr(item.module, "NEEDS_RELEASES", ()))
        if needs and (debug or not needs <= built):
            drop.append(item)
            continue
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
    if _is_worker(config):
        describe_units(items, config.getoption("kernel"))


def describe_units(items, kernel):
    """What tests/schedule.py needs to know of each unit (a module on a
    release), which the controller of a parallel run cannot collect:
    the kind of guest it boots, and whether it needs the host alone."""
    units = {}
    for item in items:
        rel = _group(item)[1]
        unit = schedule.unit_of(item.nodeid)
        # A unit with one test that needs the host alone is scheduled as
        # one that does: early in a cold run that test waited for the
        # background builds, and through the lock's gate the other worker
        # with it (lossy_links 232 s at ed55a80, two 1-vCPU guests).
        alone = units.get(unit, {}).get("alone", False) or host_level(item) != SHARED
        units[unit] = {
            "kind": guest_kind(item.module, rel, kernel)[1]
            if rel is not None and "guest" in item.fixturenames else "",
            "alone": alone}
    path = os.path.join(os.environ[LOCKS_ENV], schedule.UNITS_FILE)
    tmp = "%s.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(units, f)
    os.replace(tmp, path)


def in_guest_order(items, kernel):
    """Each module's tests run together per release, one guest each, and
    its test_zz_* then test_zzz_* tests after its others (they unload
    what the module's fixtures set up and check what is left).  pytest's
    own order interleaves releases and puts those tests mid-module when
    tests are parametrized both by the module-scoped release and by the
    function: every change of release is another guest boot.  Host tests
    come first (but for runs_last ones, after everything); then the guest
    modules release by release, those that ask for the same kind of guest
    side by side, so one guest can serve them in turn (GuestPool)."""
    groups = {}
    for item in items:
        path, rel = _group(item)
        if (path, rel) not in groups:
            kind = "" if rel is None else guest_kind(item.module, rel, kernel)[1]
            groups[(path, rel)] = (item.get_closest_marker("runs_last") is not None,
                                   rel is not None,
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
    differs from the state it had after its boot (Guest.differs).  A
    pool is one pytest process's: with guests side by side (scripts/test,
    pytest-xdist) each worker has its own, and never runs more than one
    guest at a time."""

    def __init__(self):
        self.idle = None		# (kind, module, Guest)
        self.boots = 0
        self.reuses = 0
        self.not_kept = []	# (module, why)
        self.boot_seconds = None	# of the last boot, for its unit's report

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


def cpu_share():
    """The vCPUs each guest of this run has: scripts/test's share of the
    host's cores for each guest it runs side by side (SROCE_GUEST_CPUS:
    one with two guests on two cores), or two, as vm-run gives."""
    try:
        return max(1, int(os.environ.get("SROCE_GUEST_CPUS", "2")))
    except ValueError:
        return 2


def guest_cpus(module):
    """A module's guest has the run's share of vCPUs, or the two it says it
    needs (GUEST_CPUS = 2): tests that need a second CPU to mean what they
    say (a poller beside its client, a race between CPUs, a queue per
    CPU), or whose two ends each spin a vCPU and take turns on one."""
    return max(cpu_share(), getattr(module, "GUEST_CPUS", 1))


def module_host_level(module):
    """How a module's tests share the host (tests/hostshare.py): ALONE if
    they measure time (HOST_ALONE); NO_OTHER_GUEST if its guest has more
    vCPUs than the run's share of the host's cores, which beside another
    guest would outnumber the cores; else SHARED."""
    if getattr(module, "HOST_ALONE", False):
        return ALONE
    return NO_OTHER_GUEST if guest_cpus(module) > cpu_share() else SHARED


def guest_kind(module, release, kernel):
    options = dict(getattr(module, "GUEST_OPTIONS", {}))
    options["distro"] = release
    options["kernel"] = kernel
    options["smp"] = guest_cpus(module)
    return options, repr(sorted(options.items()))


@pytest.fixture(scope="module")
def guest(request, release, tmp_path_factory):
    pool = request.config._sroce_guests
    options, kind = guest_kind(request.module, release,
                               request.config.getoption("kernel"))
    name = request.module.__name__.split(".")[-1]
    g = pool.take(kind) if request.config.getoption("reuse_guests") else None
    if g is None:
        wait_for_release_build(release)
        out = tmp_path_factory.mktemp("guest-%s-%s" % (name, release))
        GUEST_DIRS.append(str(out))
        g = Guest(out, timeout=GUEST_LIFETIME, **options)
        try:
            g.start()
            g.snapshot_state()
        except GuestDied as e:
            g.stop()
            pytest.fail(str(e), pytrace=False)
        pool.boots += 1
        pool.boot_seconds = g.boot_seconds
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


def wait_for_release_build(release):
    """scripts/test builds trixie and sid in the background while the
    first guests run (SROCE_PENDING_BUILDS): a guest of theirs waits for
    that build, and fails with its log if it failed."""
    if schedule.build_ready(release):
        return
    status = schedule.build_status_file(release)
    while not os.path.exists(status):
        time.sleep(1)
    with open(status) as f:
        rc = f.read().strip()
    if rc != "0":
        log = os.path.join(os.path.dirname(status), "test-build.log")
        with open(log, errors="replace") as f:
            tail = "".join(f.readlines()[-40:])
        pytest.fail("scripts/build --distro %s failed (status %s; %s):\n%s" %
                    (release, rc, log, tail), pytrace=False)


def host_level(item):
    """A test that measures time (a rate, a latency, the order of timer
    events) runs with no other guest or build of the suite beside it:
    marked host_alone, or in a module that says HOST_ALONE = True.  A
    test whose guest has more vCPUs than the run's share runs with no
    other guest beside it (module_host_level)."""
    if item.get_closest_marker("host_alone"):
        return ALONE
    return module_host_level(item.module)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Each test shares the host with the guests beside it, or has it
    alone (tests/hostshare.py) for the whole of its protocol: setup,
    with the guest boot of a module's first test, the test, and its
    teardown, with the module's at its last.  Held per test, not per
    module: a test that needs the host alone waits for the test running
    beside it, not for the rest of that module."""
    with HostShare(os.environ[LOCKS_ENV], host_level(item)) as share:
        if share.waited >= 1:
            item.user_properties.append(("host_wait_seconds", round(share.waited, 1)))
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A unit's first setup report carries the boot of its guest, for the
    time table in the summary."""
    outcome = yield
    pool = getattr(item.config, "_sroce_guests", None)
    if call.when == "setup" and pool is not None and pool.boot_seconds is not None:
        outcome.get_result().user_properties.append(("guest_boot_seconds",
                                                     round(pool.boot_seconds, 1)))
        pool.boot_seconds = None


# Every guest folder this process made (the guest fixture).
GUEST_DIRS = []


def remove_numbered_dir(path):
    """Removes a folder of tmp_path_factory.mktemp and the "...current"
    link pytest keeps beside it."""
    shutil.rmtree(path, ignore_errors=True)
    parent = os.path.dirname(path)
    for name in os.listdir(parent) if os.path.isdir(parent) else ():
        link = os.path.join(parent, name)
        if os.path.islink(link) and os.path.join(parent, os.readlink(link)) == path:
            os.unlink(link)


def _stop_on_signal(signum, frame):
    """SIGTERM, SIGINT or SIGHUP (a killed run, a CI limit): every guest of
    this process is killed and its folder removed before pytest stops, and
    a controller passes the signal on to its workers, which do the same."""
    signal.signal(signum, signal.SIG_IGN)
    for g in list(LIVE_GUESTS):
        g.kill()
    # The folders of the guests that ended before too: a stopped run
    # leaves none (a run that ends keeps them, with pytest's folders).
    for out in GUEST_DIRS:
        remove_numbered_dir(out)
    me = str(os.getpid())
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % pid) as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            if ppid == me:
                os.kill(int(pid), signal.SIGTERM)
        except (OSError, IndexError):
            pass
    raise KeyboardInterrupt("stopped by signal %d" % signum)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    return schedule.GuestUnitScheduling(config, log)


def pytest_sessionfinish(session):
    pool = getattr(session.config, "_sroce_guests", None)
    if pool is not None:
        pool.close()
        if _is_worker(session.config):
            session.config.workeroutput["sroce_guests"] = {
                "boots": pool.boots, "reuses": pool.reuses,
                "not_kept": pool.not_kept}
    own = getattr(session.config, "_sroce_own_locks", None)
    if own:
        shutil.rmtree(own, ignore_errors=True)


# CI's limit for the whole of .ci/run (scripts/test).
CI_SECONDS = 5400
# Where each unit's time went in this run (pytest_runtest_logreport): unit
# (module[release]) -> seconds of its tests' setup, call and teardown, the
# guest boot among them, the tests it ran and the worker that ran it.
UNIT_TIMES = {}
SESSION_STARTED = time.time()


def pytest_runtest_logreport(report):
    t = UNIT_TIMES.setdefault(schedule.unit_of(report.nodeid), {
        "seconds": 0.0, "boot": 0.0, "wait": 0.0, "tests": 0, "worker": ""})
    t["seconds"] += report.duration
    props = dict(report.user_properties)
    t["boot"] += props.get("guest_boot_seconds", 0.0)
    if report.when == "setup":
        t["wait"] += props.get("host_wait_seconds", 0.0)
    if report.when == "call":
        t["tests"] += 1
    node = getattr(report, "node", None)
    if node is not None:
        t["worker"] = node.gateway.id


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """A worker's guest pool counts towards the run's (the summary)."""
    theirs = getattr(node, "workeroutput", {}).get("sroce_guests")
    pool = getattr(node.config, "_sroce_guests", None)
    if theirs and pool is not None:
        pool.boots += theirs["boots"]
        pool.reuses += theirs["reuses"]
        pool.not_kept += [tuple(x) for x in theirs["not_kept"]]


def time_table(terminalreporter, config):
    """Each unit's time, longest first, and the run's wall time against
    CI's limit; also written to $SROCE_BUILD/test-time.json (what
    docs/test-time.json, the scheduler's costs, is refreshed from)."""
    if not UNIT_TIMES:
        return
    tr = terminalreporter
    tr.section("time per test module and release")
    tr.line("%-44s %8s %6s %6s %5s %s" % ("unit", "seconds", "boot", "wait",
                                           "tests", "worker"))
    for unit, t in sorted(UNIT_TIMES.items(), key=lambda x: -x[1]["seconds"]):
        tr.line("%-44s %8.1f %6.1f %6.1f %5d %s" % (
            unit, t["seconds"], t["boot"], t["wait"], t["tests"], t["worker"]))
    per_release = {}
    for unit, t in UNIT_TIMES.items():
        key = schedule.unit_release(unit) or "host"
        per_release[key] = per_release.get(key, 0) + t["seconds"]
    tr.line("summed: " + ", ".join("%s %.0f s" % kv for kv in sorted(per_release.items())))
    now = time.time()
    started = float(os.environ.get("SROCE_TEST_STARTED") or SESSION_STARTED)
    wall = now - started
    tr.line("wall time %.0f s (pytest %.0f s) of CI's %d s: %.0f %%, %.0f s left" % (
        wall, now - SESSION_STARTED, CI_SECONDS, 100 * wall / CI_SECONDS, CI_SECONDS - wall))
    try:
        with open(os.path.join(schedule.build_dir(), "test-time.json"), "w") as f:
            json.dump({"wall_seconds": round(wall), "pytest_seconds": round(now - SESSION_STARTED),
                       "workers": int(getattr(config.option, "numprocesses", 0) or 0),
                       "units": {u: dict(t, seconds=round(t["seconds"], 1),
                                         boot=round(t["boot"], 1), wait=round(t["wait"], 1))
                                 for u, t in UNIT_TIMES.items()}},
                      f, indent=1, sort_keys=True)
    except OSError:
        pass


def pytest_terminal_summary(terminalreporter, config):
    """Test counts per Debian release, just before pytest's own summary,
    how many guests were booted: after which modules, and why, a guest was
    not kept for the next; and where the time went."""
    time_table(terminalreporter, config)
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
            rel = schedule.release_of(rep.nodeid)
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
    fail_on_kernel_problems([request.getfixturevalue("guest")])


def fail_on_kernel_problems(guests):
    """Fails the running test if the kernel log of a guest still up shows a
    warning, oops or detector report since the last look (a guest that is
    gone has failed its test already); with several guests each line
    names its guest's release."""
    problems = []
    for g in guests:
        if g.proc is None or g.proc.poll() is not None:
            continue
        try:
            lines = g.kernel_problems()
        except GuestDied as e:
            pytest.fail(str(e), pytrace=False)
        problems += (["%s: %s" % (g.distro or "bookworm", l) for l in lines]
                     if len(guests) > 1 else lines)
    if problems:
        pytest.fail("guest kernel log shows problems:\n" + "\n".join(problems),
                    pytrace=False)
