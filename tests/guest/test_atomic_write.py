"""RDMA ATOMIC WRITE (IBTA 1.5), the verb rxe gained in Linux 6.2, on
sroce on every release: rdma-core 44 (Debian 12) already has
ibv_wr_atomic_write, and sroce carries the operation in its own rings, so
it works on 6.1's ib_core too.

tests/guest/tools/atomic_write.cpp checks it as an application sees it:
completions, the peer's memory byte for byte, ordering behind a WRITE,
the NAKs for a misaligned address and a missing right, and the two ways
it cannot be asked for (ibv_post_send, a UC QP).
"""
from verbs_apps import CLIENT_IP, NOBODY, gid_index, guest_tool

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True


def test_atomic_write_between_two_qps(guest):
    g = gid_index(guest, "sroce0", CLIENT_IP)
    tool = guest_tool(guest, "atomic_write")
    r = guest.run("%s%s sroce0 %d" % (NOBODY, tool, g), timeout=120)
    print(r.output)
    assert not r.timed_out, r
    assert r.rc == 0, r
    assert "0 checks failed" in r.stdout, r
