"""rdma-core's own pyverbs suite (shipped by Debian), run unmodified through
the installed provider on sroce and, in the same guest, on the kernel's
Soft-RoCE: sroce must have no failures or errors, and every test that
passes on rxe must pass on sroce (one skipped there is a missing feature).

One guest booted with rxe (as test_interop_rxe.py): rxe0 on veth0 in the
initial namespace, sroce1 on veth1 in namespace `peer`.  Each device runs
the suite in loopback between its own QPs, the two side by side.

Each test module runs in a process of its own, so a crash costs only its
own module (Debian 13's pyverbs segfaulted in test_fork when the whole
suite ran in one process): a module that crashes on sroce fails unless
it crashes on rxe too.  The processes are forked from one that imported
the suite once (pyverbs_modules.py).

On kernels after 6.1, rxe passes the tests of on-demand paging (6.15),
which sroce does not offer yet: those skip on sroce and are listed, not
failed.  ATOMIC WRITE and FLUSH (6.2) must pass wherever rxe passes them.
The XRC tests, which skip on every rxe, must pass on sroce.
"""
import collections
import os
import re

import pytest

# On every release.  Since rdma-core 45, pyverbs asks for the FLUSH access
# bits on every extended RC QP; sroce takes them as ConnectX and rxe do, so
# those tests run.  FLUSH's own two tests run on Debian 13 and sid (rdma-core
# 44 has none); ATOMIC WRITE passes on sroce everywhere (on Debian 12's rxe
# it fails).  On-demand paging's skip on sroce (LATER_RXE_FEATURES below).
ALL_RELEASES = True

GUEST_OPTIONS = {"rxe": True}
# Two vCPUs (tests/conftest.py guest_cpus): the suite runs on two devices
# side by side, a process each; on one vCPU beside another guest the unit
# took 1.7x as long (docs/test-time.md).
GUEST_CPUS = 2

SUITE = "/usr/share/doc/rdma-core/tests"
COPY = "/tmp/pyverbs"

# unittest -v: "test_x (tests.test_mod.Class.test_x)", then, on the same
# line or after the docstring's first line, " ... <outcome>".
TEST = re.compile(r"^(\w+) \((tests\.[\w.]+)\)")
OUTCOME = re.compile(r" \.\.\. (ok|skipped|ERROR|FAIL|expected failure|"
                     r"unexpected success)\b")
KIND = {"ok": "pass", "expected failure": "pass", "skipped": "skip",
        "ERROR": "fail", "FAIL": "fail", "unexpected success": "fail"}


# The outcome alone on a line: Python 3.13's pyverbs prints ResourceWarnings
# and __dealloc__ tracebacks to the same stream between " ... " and it.
BARE_OUTCOME = re.compile(r"^(ok|skipped|ERROR|FAIL|expected failure|"
                          r"unexpected success)\b(?: '.*')?$")


def parse(output):
    """{test id: 'pass' | 'skip' | 'fail'} from the suite's -v output."""
    outcomes, current = {}, None
    for line in output.splitlines():
        m = TEST.match(line)
        if m:
            current = m.group(2)
            line = line[m.end():]
        o = (OUTCOME.search(line) or BARE_OUTCOME.match(line)) if current else None
        if o:
            outcomes[current] = KIND[o.group(1)]
            current = None
    return outcomes


# XRC: skipped on every rxe ("Create XRCD is not supported"), run on sroce:
# each must pass.  rdma-core 44 has six: two qp_ex SENDs, two atomics, the
# extended CQ, relaxed ordering (later ones add XRC over ODP).
XRC_TEST = re.compile(r"\.test_\w*xrc\w*$")    # not "...DevxRcTraffic..."
MIN_XRC_TESTS = 6


# Printed before each module's process, with the module's name after it.
MODULE_MARK = "=== pyverbs module "
MODULES_RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "pyverbs_modules.py")


def suite_loop(dev, netns, modules):
    """A command running each of @modules of the suite in a process of its
    own on @dev, in namespace @netns (None: the initial one): forked from
    one that imported the suite once (pyverbs_modules.py)."""
    prefix = "ip netns exec %s " % netns if netns else ""
    return ("cd %s && %spython3 %s %s '%s' %s 2>&1"
            % (COPY, prefix, MODULES_RUNNER, dev, MODULE_MARK, " ".join(modules)))


def outcome_of(output):
    """(outcomes, seconds, completed) of one process of the suite."""
    ran = re.search(r"^Ran (\d+) tests? in ([\d.]+)s", output, re.M)
    outcomes = parse(output)
    if ran:
        # The parser must have seen every test, or the comparison means little.
        assert len(outcomes) == int(ran.group(1)), (len(outcomes), ran.group(0))
    return outcomes, float(ran.group(2)) if ran else 0.0, bool(ran)


def run_side_by_side(guest, commands):
    """Runs shell @commands at once, each with its own output file: their
    outputs, in order."""
    out = "%s-out" % COPY
    guest.run(" ".join("( %s ) > %s.%d 2>&1 &" % (c, out, i)
                       for i, c in enumerate(commands)) + " wait",
              timeout=1500, check=True)
    return [guest.run("cat %s.%d" % (out, i), check=True).stdout
            for i in range(len(commands))]


# One vendor's device only (mlx5, EFA, ...; CUDA memory): each of their
# tests skips on any other device, rxe and sroce alike, but importing
# and skipping them took a good part of the suite's time under TCG.
VENDOR_MODULE = re.compile(r"^test_(mlx5|efa|hns|irdma|bnxt|mana|erdma|cuda)")


def run_suites(guest, devices):
    """For each (device, namespace) of @devices, all of them side by side:
    ({test id: outcome}, seconds, output, {modules whose process died}).
    The suite is a Python process importing and waiting on each device:
    two use both vCPUs, and rxe0 and sroce1 share no queue, port or
    namespace.  A process per module: on Debian 13 one process for the
    whole suite dies in test_fork on rxe (a segfault after the modules
    before it), and running the rest again module by module, one device
    at a time, took longer than the suite."""
    modules = ["tests." + m[:-3]
               for m in guest.run("cd %s && ls test_*.py" % COPY,
                                  check=True).stdout.split()
               if not VENDOR_MODULE.match(m)]
    outputs = run_side_by_side(
        guest, [suite_loop(dev, ns, modules) for dev, ns in devices])
    results = []
    for output in outputs:
        outcomes, seconds, crashed = {}, 0.0, set()
        parts = output.split(MODULE_MARK)[1:]
        assert [p.split("\n", 1)[0] for p in parts] == modules, output[-3000:]
        for mod, part in zip(modules, parts):
            o, sec, done = outcome_of(part)
            outcomes.update(o)
            seconds += sec
            if not done:
                crashed.add(mod)
        results.append((outcomes, seconds, output, crashed))
    return results


def table(rxe, sroce):
    """Per module: rxe pass/skip/fail vs sroce pass/skip/fail."""
    count = collections.defaultdict(collections.Counter)
    for side, outcomes in (("rxe", rxe), ("sroce", sroce)):
        for test, kind in outcomes.items():
            count[test.split(".")[1]][side, kind] += 1
            count["total"][side, kind] += 1
    # Modules that skip everything on both (other vendors' features) share a row.
    idle = [m for m, c in count.items() if m != "total" and
            not any(c[s, k] for s in ("rxe", "sroce") for k in ("pass", "fail"))]
    for m in idle:
        count["(%d modules all skipped)" % len(idle)].update(count.pop(m))
    lines = ["%-26s %-20s %-20s" % ("module", "rxe pass/skip/fail",
                                    "sroce pass/skip/fail")]
    for mod in sorted(count, key=lambda m: (m == "total", m.startswith("("), m)):
        c = count[mod]
        lines.append("%-26s %-20s %-20s" % (mod, *(
            "%d/%d/%d" % (c[s, "pass"], c[s, "skip"], c[s, "fail"])
            for s in ("rxe", "sroce"))))
    return "\n".join(lines)


# 2 MiB pages for the suite's huge-page tests (ODP over huge pages among
# them): they skip when none are reserved.  Two per side and test, for
# the two suites running at once.
HUGE_PAGES = "/proc/sys/vm/nr_hugepages"


@pytest.fixture
def huge_pages(guest):
    old = guest.run("cat %s" % HUGE_PAGES, check=True).stdout.strip()
    guest.run("echo 32 > %s" % HUGE_PAGES, check=True)
    yield
    guest.run("echo %s > %s" % (old, HUGE_PAGES), check=True)


def test_pyverbs_suite_sroce_matches_rxe(guest, huge_pages):
    guest.run("rm -rf %s && cp -r %s %s && cd %s && gunzip -f *.gz"
              % (COPY, SUITE, COPY, COPY), check=True)
    (rxe, rxe_s, _, rxe_crashed), (sroce, sroce_s, sroce_out, sroce_crashed) = \
        run_suites(guest, [("rxe0", None), ("sroce1", "peer")])
    report = table(rxe, sroce)
    print("\npyverbs suite: rxe0 %.0f s, sroce1 %.0f s\n%s" % (rxe_s, sroce_s, report))
    if rxe_crashed or sroce_crashed:
        print("modules whose process died: rxe %s, sroce %s"
              % (sorted(rxe_crashed), sorted(sroce_crashed)))

    assert not sroce_crashed - rxe_crashed, "crashed on sroce only: %s\n%s" % (
        sorted(sroce_crashed - rxe_crashed), sroce_out[-6000:])
    if not (rxe_crashed or sroce_crashed):
        assert sorted(rxe) == sorted(sroce), "the two runs ran different tests"
    # rxe must really have passed something, or "matches rxe" is empty.
    assert sum(k == "pass" for k in rxe.values()) >= 80, report
    failed = sorted(t for t, k in sroce.items() if k == "fail")
    assert not failed, "%s\n%s\n%s" % (report, failed, sroce_out[-6000:])
    behind = sorted(t for t, k in rxe.items() if k == "pass" and sroce.get(t) != "pass")
    assert not behind, "passes on rxe, not on sroce: %s\n%s" % (behind, report)
    # For the record: what sroce skips in the modules it runs at all
    # (the others are other vendors' devices).
    ran = {t.split(".")[1] for t, k in sroce.items() if k == "pass"}
    print("skipped on sroce in modules it runs:\n%s" % "\n".join(
        sorted(t for t, k in sroce.items() if k == "skip" and t.split(".")[1] in ran)))
    xrc = {t: k for t, k in sroce.items() if XRC_TEST.search(t)}
    print("XRC on sroce: %s" % xrc)
    assert len(xrc) >= MIN_XRC_TESTS and set(xrc.values()) == {"pass"}, xrc
