"""Zero-copy transmit (kernel/zcopy.c): RC requests' payloads leave as
fragments of the registered memory, never copied into a packet buffer;
UC and UD, which complete before the peer has the data, copy, and so do
READ responses, whose data must be taken before the requests behind the
READ run.  The counters tx_zero_copy_bytes and tx_copied_bytes say which
path each payload byte took.  Data must still verify when packets are
lost (a retransmission reads the MR again) and when the application
rewrites its buffer after each completion (ibv_rc_pingpong -c does,
every iteration)."""

import pytest

from verbs_apps import (CLIENT_IP, NOBODY, SERVER_IP,
                        gid_index, guest_tool, impair_data_packets,
                        link_counters, loopback_bypass, rc_pingpong, run_pair)

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True

MIB = 1 << 20


@pytest.fixture(scope="module")
def gids(guest):
    return (gid_index(guest, "sroce0", CLIENT_IP),
            gid_index(guest, "sroce1", SERVER_IP))


def deltas(guest, action):
    """Runs action(); returns its result and each device's counter growth."""
    before = {d: link_counters(guest, d) for d in ("sroce0", "sroce1")}
    result = action()
    after = {d: link_counters(guest, d) for d in ("sroce0", "sroce1")}
    return result, {d: {k: after[d][k] - before[d].get(k, 0) for k in after[d]}
                    for d in after}


def perftest(guest, gids, app, args):
    return run_pair(
        guest,
        "%s -d sroce1 -x %d %s" % (app, gids[1], args),
        "%s -d sroce0 -x %d %s %s" % (app, gids[0], args, SERVER_IP),
        timeout=300)


def test_1mib_writes_reference_the_mr(guest, gids):
    """50 WRITEs of 1 MiB: every payload byte sroce0 sends is attached,
    none copied (a copy would count here byte for byte)."""
    (rc, out), d = deltas(guest, lambda: perftest(
        guest, gids, "ib_write_bw", "-F -s %d -n 50" % MIB))
    assert rc == 0, out
    print(d["sroce0"])
    assert d["sroce0"]["tx_zero_copy_bytes"] >= 50 * MIB, d
    assert d["sroce0"]["tx_copied_bytes"] == 0, d


def test_read_responses_copy_the_data(guest, gids):
    """The responder's side: READ response data is copied into the packet
    as it is built, never referenced in the MR, because the requests
    behind the READ may overwrite those bytes as soon as it has gone
    (test_read_returns_the_bytes_from_before_a_later_write)."""
    (rc, out), d = deltas(guest, lambda: perftest(
        guest, gids, "ib_read_bw", "-F -s %d -n 20" % MIB))
    assert rc == 0, out
    assert d["sroce1"]["tx_copied_bytes"] >= 20 * MIB, d
    assert d["sroce1"]["tx_zero_copy_bytes"] == 0, d



@pytest.mark.parametrize("bypass", ["1", "0"], ids=["localrx", "through-lo"])
def test_read_returns_the_bytes_from_before_a_later_write(guest, bypass):
    """tests/guest/tools/read_then_write: 20 rounds of a 64 KiB READ and,
    right behind it on the same QP with no fence, a 64 KiB WRITE over the
    same bytes.  Every READ must return the bytes from before the WRITE,
    as on rxe and ConnectX (software relies on it: docs/peers.md).  Both
    ways a device reaches itself: localrx.c's queue (no ICRC) and the IP
    stack through lo (ICRC checked)."""
    g = gid_index(guest, "sroce0", CLIENT_IP)
    tool = guest_tool(guest, "read_then_write")
    before = link_counters(guest, "sroce0")
    with loopback_bypass(guest, bypass):
        r = guest.run("%s%s sroce0 %d 20" % (NOBODY, tool, g), timeout=120)
    print(r.output)
    assert not r.timed_out, r
    assert r.rc == 0, r
    assert "0 checks failed" in r.stdout, r
    after = link_counters(guest, "sroce0")
    print("requests held behind a READ:",
          after["rx_held_for_read"] - before["rx_held_for_read"])


def test_verified_under_loss_with_buffer_rewritten(guest, gids):
    """1% of data packets lost on both ends; ibv_rc_pingpong -c writes a
    new pattern into its buffer after every completion and checks every
    received one.  Retransmissions read the MR again: all must verify."""
    def run():
        for ns, dev in (("", "veth0"), ("ip netns exec peer ", "veth1")):
            impair_data_packets(guest, dev, "loss 1%", ns)
        try:
            return rc_pingpong(guest, gids, "-s %d -n 40 -c" % MIB, timeout=600)
        finally:
            guest.run("tc qdisc del dev veth0 root; "
                      "ip netns exec peer tc qdisc del dev veth1 root")
    (rc, out), d = deltas(guest, run)
    assert rc == 0, out
    assert "40 iters in" in out, out
    both = {k: d["sroce0"][k] + d["sroce1"][k] for k in d["sroce0"]}
    print(both)
    assert both["retransmits"] > 0, both
    assert both["completion_errors"] == 0, both
    for dev in ("sroce0", "sroce1"):
        assert d[dev]["tx_zero_copy_bytes"] >= 40 * MIB, d
        assert d[dev]["tx_copied_bytes"] == 0, d


@pytest.mark.parametrize("app", ["ibv_uc_pingpong", "ibv_ud_pingpong"])
def test_unreliable_transports_copy(guest, gids, app):
    """UC and UD complete once the packet is handed on, before the peer
    has it: their payload must be copied, or the application's next write
    into the buffer would change a packet still queued."""
    size = 1024 if app == "ibv_ud_pingpong" else 16384
    (rc, out), d = deltas(guest, lambda: run_pair(
        guest,
        "%s -d sroce1 -g %d -s %d -n 50 -c" % (app, gids[1], size),
        "%s -d sroce0 -g %d -s %d -n 50 -c %s" % (app, gids[0], size, SERVER_IP)))
    assert rc == 0, out
    assert d["sroce0"]["tx_zero_copy_bytes"] == 0, d
    assert d["sroce0"]["tx_copied_bytes"] >= 50 * size, d
