"""On-demand paging (IBV_ACCESS_ON_DEMAND): MRs that pin nothing, whose
pages sroce faults in when a transfer needs them and lets go when the
kernel takes them away (kernel/odp.c).

tests/guest/tools/odp.cpp checks it as an application sees it: every RC
operation between MRs whose pages are not present, MADV_DONTNEED between
transfers, fork(), memory that appears after registration, an unmapped
range (a clean protection error), prefetch.  Then the applications that
ask for it: perftest's `--odp` and ibv_rc_pingpong's `-o`, across the
veth pair, with the faults counted.  The kernel log is checked after every
test (conftest); the soak runs ODP under memory pressure and munmap races
(scripts/soak).
"""

import pytest

from verbs_apps import (CLIENT_IP, NOBODY, SERVER_IP, gid_index, guest_tool,
                        link_counters, run_pair)

ALL_RELEASES = True


def test_odp_in_loopback(guest):
    g = gid_index(guest, "sroce0", CLIENT_IP)
    tool = guest_tool(guest, "odp")
    r = guest.run("%s%s sroce0 %d" % (NOBODY, tool, g), timeout=300)
    print(r.output)
    assert not r.timed_out, r
    assert r.rc == 0, r
    assert "0 checks failed" in r.stdout, r


PERFTESTS = [
    "ib_write_bw --odp -s 65536 -n 200",
    "ib_read_bw --odp -s 65536 -n 200",
    "ib_send_bw --odp -s 4096 -n 500",
]   # perftest's ib_atomic_bw refuses --odp itself ("ODP does not support ATOMICS")


@pytest.mark.parametrize("cmd", PERFTESTS)
def test_perftest_odp_across_namespaces(guest, cmd):
    """perftest's own buffers registered on demand on both sides; the
    faults are counted on both devices."""
    g0 = gid_index(guest, "sroce0", CLIENT_IP)
    g1 = gid_index(guest, "sroce1", SERVER_IP)
    before = {d: link_counters(guest, d) for d in ("sroce0", "sroce1")}
    rc, out = run_pair(guest, "%s -d sroce1 -x %d -F" % (cmd, g1),
                       "%s -d sroce0 -x %d -F %s" % (cmd, g0, SERVER_IP),
                       timeout=120)
    assert rc == 0, out
    after = {d: link_counters(guest, d) for d in ("sroce0", "sroce1")}
    faults = {d: after[d]["odp_page_faults"] - before[d]["odp_page_faults"]
              for d in ("sroce0", "sroce1")}
    print(faults)
    assert sum(faults.values()) > 0, faults


def test_rc_pingpong_odp(guest):
    """ibv_rc_pingpong -o: its one buffer registered on demand, data
    checked (-c)."""
    g0 = gid_index(guest, "sroce0", CLIENT_IP)
    g1 = gid_index(guest, "sroce1", SERVER_IP)
    args = "-o -c -s 16384 -m 1024 -n 200"
    rc, out = run_pair(guest, "ibv_rc_pingpong -d sroce1 -g %d %s" % (g1, args),
                       "ibv_rc_pingpong -d sroce0 -g %d %s %s" % (g0, args, SERVER_IP))
    assert rc == 0, out
