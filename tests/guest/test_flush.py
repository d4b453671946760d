"""RDMA FLUSH (IBTA 1.5 memory placement), the verb rxe gained in Linux
6.2.  On Debian 13 and sid (rdma-core 56.1 and 65.0, ib_core with the
FLUSH access bits) sroce executes it: global visibility of a range or of a
whole MR, refusals with Remote Access Error, and no persistence (no MR
here is persistent memory).  On Debian 12 neither rdma-core 44 nor 6.1's
ib_core can ask for it, and sroce claims no such capability.

tests/guest/tools/flush.cpp checks it as an application sees it; what it
checks depends on the rdma-core it was built against (see its header).
"""
from verbs_apps import CLIENT_IP, NOBODY, gid_index, guest_tool

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True


def test_flush_between_two_qps(guest):
    g = gid_index(guest, "sroce0", CLIENT_IP)
    tool = guest_tool(guest, "flush")
    r = guest.run("%s%s sroce0 %d" % (NOBODY, tool, g), timeout=120)
    print(r.output)
    assert not r.timed_out, r
    assert r.rc == 0, r
    assert "0 checks failed" in r.stdout, r
    flush_verb = guest.userspace != "bookworm"  # rdma-core 45 on
    assert ("IBV_WC_FLUSH" in r.stdout) == flush_verb, r
