"""Reliability under a bad link: tc netem on both veth ends, one
impairment at a time, on every packet that carries data; a
data-verifying RC transfer of 64 MiB between sroce0 and sroce1 must
finish with every byte right and no completion error, and the counters
must show the recovery.  And a peer that stops answering altogether: the
retransmit timer backs off until the retries run out."""
import re

import pytest

from verbs_apps import (CLIENT_IP, SERVER_IP, gid_index, impair_data_packets,
                        link_counters, rc_pingpong, traced)

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True

IMPAIRMENTS = {
    "loss": "loss 1%",
    "reorder": "delay 10ms reorder 99%",   # 1% of packets held back 10 ms
    "duplicate": "duplicate 1%",
    "corrupt": "corrupt 0.1%",
}


@pytest.fixture(scope="module")
def gids(guest):
    return (gid_index(guest, "sroce0", CLIENT_IP),
            gid_index(guest, "sroce1", SERVER_IP))


@pytest.mark.parametrize("name", sorted(IMPAIRMENTS))
def test_verified_64mib_transfer(guest, gids, name):
    qdisc = IMPAIRMENTS[name]
    for ns in ("", "ip netns exec peer "):
        impair_data_packets(guest, "veth1" if ns else "veth0", qdisc, ns)
    before = {d: link_counters(guest, d) for d in ("sroce0", "sroce1")}
    try:
        # 1024 round trips of 64 KiB, every buffer checked by the app (-c).
        args = "-s 65536 -n 1024 -c"
        rc, out = rc_pingpong(guest, gids, args, timeout=600)
    finally:
        guest.run("tc qdisc del dev veth0 root; "
                  "ip netns exec peer tc qdisc del dev veth1 root")
    after = {d: link_counters(guest, d) for d in ("sroce0", "sroce1")}
    delta = {d: {k: after[d][k] - before[d].get(k, 0) for k in after[d]}
             for d in after}
    print(name, delta)
    assert rc == 0, out
    assert "1024 iters in" in out, out
    both = {k: delta["sroce0"][k] + delta["sroce1"][k] for k in delta["sroce0"]}
    assert both["completion_errors"] == 0
    if name == "loss":
        assert both["retransmits"] > 0
    if name == "corrupt":
        assert both["rx_icrc_errors"] > 0
    if name == "duplicate":
        assert both["dup_requests"] > 0


TIMEOUT_EVENT = re.compile(
    r" (\d+)\.(\d{6}): retrans_timeout: dev=(\S+) qpn=(\d+) psn=\d+ "
    r"in_row=(\d+) retry_left=(\d+) next_ns=(\d+)")


# The gaps between timeouts are compared: another guest that holds the
# host's CPUs stretches a gap as much as the back-off does.
@pytest.mark.host_alone
def test_retransmit_timer_backs_off(guest, gids):
    """Everything sroce1 sends is dropped on veth0's ingress, so sroce0's
    first SEND is never acknowledged.  ibv_rc_pingpong's QP (timeout 14,
    ~67 ms; retry_cnt 7) times out 8 times (7 retries, then
    RETRY_EXC_ERR, as IBTA counts them), and the wait doubles after each
    timeout up to 8x.  Checked by the order of things, not by how
    punctual a TCG guest is: an hrtimer never fires early, so each gap
    is at least the wait the previous timeout announced."""
    guest.run("tc qdisc add dev veth0 ingress && tc filter add dev veth0 "
              "parent ffff: protocol ip prio 1 u32 match ip protocol 17 0xff "
              "match ip dport 4791 0xffff action drop", check=True)
    run = {}
    try:
        out = traced(guest, "sroce/retrans_timeout", lambda: run.update(
            result=rc_pingpong(guest, gids, "-s 64 -n 1", timeout=60)))
    finally:
        guest.run("tc qdisc del dev veth0 ingress", check=True)
    rc, app_out = run["result"]
    assert rc != 0 and "transport retry counter exceeded" in app_out, app_out
    events = [dict(t=int(m[1]) * 10**6 + int(m[2]), qpn=int(m[4]),
                   in_row=int(m[5]), left=int(m[6]), next=int(m[7]))
              for m in TIMEOUT_EVENT.finditer(out) if m[3] == "sroce0"]
    print("timeouts on sroce0", events)
    assert len({e["qpn"] for e in events}) == 1, events
    assert [e["in_row"] for e in events] == list(range(1, 9)), events
    assert [e["left"] for e in events] == list(range(7, -1, -1)), events
    base_ns = 4096 << 14
    assert [e["next"] for e in events] == [
        base_ns << min(n, 3) for n in range(1, 9)], events
    gaps = [b["t"] - a["t"] for a, b in zip(events, events[1:])]
    print("gaps us", gaps)
    assert all(g * 1000 >= e["next"] for g, e in zip(gaps, events)), (gaps, events)
    # Without the back-off every gap would be about the first one.
    assert gaps[-1] >= 3 * gaps[0], gaps
