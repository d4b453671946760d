"""UD multicast through rdma_cm, as rdmacm-utils' mckey does it: the
receiver joins the group (librdmacm attaches its QP with ibv_attach_mcast
after the kernel's JOIN event), the sender joins send-only and sends; the
receiver must get every message.  IPv4 groups: the kernel's rdma_cm
refuses IPv6 groups on RoCE v2 for every device (ENOTSUPP in
cma_iboe_join_multicast), rxe and ConnectX alike."""
import pytest

from verbs_apps import CLIENT_IP, SERVER_IP, link_counters

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True

MESSAGES = 10


def mckey_receivers(guest, group, receivers, sender):
    """Starts one mckey receiver per (namespace or None, bind address) in
    `receivers`, then the sender from `sender`; returns the outputs."""
    script = ["rm -f /tmp/mc-*.log"]
    for i, (ns, addr) in enumerate(receivers):
        prefix = "ip netns exec %s " % ns if ns else ""
        script.append("(%stimeout 60 stdbuf -oL mckey -m %s -b %s -C %d >/tmp/mc-%d.log 2>&1; "
                      "echo rc=$? >>/tmp/mc-%d.log) &" % (prefix, group, addr, MESSAGES, i, i))
    # mckey has no "ready" signal: wait until every receiver has joined
    # (stdbuf: its progress lines reach the log as they are printed).
    script.append("for t in $(seq 100); do [ $(cat /tmp/mc-*.log 2>/dev/null | "
                  "grep -c joined) -ge %d ] && break; sleep 0.2; done" % len(receivers))
    script.append("timeout 60 mckey -m %s -s -b %s -C %d; echo sender rc=$?; wait"
                  % (group, sender, MESSAGES))
    script.append("for f in /tmp/mc-*.log; do echo \"=== $f\"; cat $f; done")
    r = guest.run("\n".join(script), timeout=180)
    print(r.output)
    return r.stdout


def assert_all_received(out, receivers):
    assert "sender rc=0" in out, out
    logs = out.split("=== ")[1:]
    assert len(logs) == receivers, out
    for log in logs:
        assert "joined dgid: ::ffff:" in log and "rc=0" in log, log
        assert "data transfers complete" in log, log
        assert "MULTICAST_ERROR" not in log, log


def test_mckey_loopback(guest):
    """Sender and receiver on sroce0."""
    assert_all_received(mckey_receivers(guest, "239.1.2.3", [(None, CLIENT_IP)],
                                        CLIENT_IP), 1)


def test_mckey_across_namespaces(guest):
    """A receiver on sroce1 (namespace peer), the sender on sroce0; the
    ports count the messages as multicast packets (the PMA's
    multicast_xmit/rcv_packets read these counters: test_device)."""
    before = {d: link_counters(guest, d) for d in ("sroce0", "sroce1")}
    assert_all_received(mckey_receivers(guest, "239.1.2.4", [("peer", SERVER_IP)],
                                        CLIENT_IP), 1)
    after = {d: link_counters(guest, d) for d in ("sroce0", "sroce1")}
    sent = after["sroce0"]["tx_multicast_packets"] - before["sroce0"]["tx_multicast_packets"]
    got = after["sroce1"]["rx_multicast_packets"] - before["sroce1"]["rx_multicast_packets"]
    assert sent == MESSAGES and got == MESSAGES, (before, after)


def test_mckey_two_receivers_one_group(guest):
    """Receivers on sroce0 and sroce1 in one group: each gets every message."""
    assert_all_received(mckey_receivers(
        guest, "239.1.2.5", [(None, CLIENT_IP), ("peer", SERVER_IP)], CLIENT_IP), 2)


@pytest.mark.parametrize("rounds", [3])
def test_mckey_leave_and_rejoin(guest, rounds):
    """The same group joined, used and left again, several times: leaving
    detaches the QP and the next join works."""
    for _ in range(rounds):
        assert_all_received(mckey_receivers(guest, "239.1.2.6", [("peer", SERVER_IP)],
                                            CLIENT_IP), 1)
