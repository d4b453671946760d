"""Reliability under a bad link: tc netem on both veth ends, one
impairment at a time, on every packet that carries data; a
data-verifying RC transfer of 64 MiB between sroce0 and sroce1 must
finish with every byte right and no completion error, and the counters
must show the recovery."""
import pytest

from verbs_apps import (CLIENT_IP, SERVER_IP, gid_index, impair_data_packets,
                        link_counters, rc_pingpong)

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
