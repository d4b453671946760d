"""XRC (eXtended Reliable Connection, IBTA 1.2.1 A14), which no kernel
software device had before: domains, XRC SRQs, send and receive QPs,
ibv_open_qp, and the XRCETH on the wire.

tests/guest/tools/xrc.cpp checks it as an application sees it (data,
completions, a domain shared through its file, the refusals); this file
runs it in loopback on sroce0 and from sroce0 to sroce1 across the veth
pair, where it also looks at what went over the wire: XRC opcodes, the
SRQ numbers in the XRCETHs, and an ICRC computed here from each frame.
The refusals are counted: an XRCETH that names no SRQ of the receive
QP's domain in rx_xrc_bad_srq.  Then the applications that speak XRC:
perftest's `-c XRC` and ibverbs-utils' ibv_xsrq_pingpong (two clients on
one server's shared SRQs), across the veth pair.
"""
import json
import os

import pytest

from verbs_apps import (CLIENT_IP, NOBODY, SERVER_IP, gid_index, guest_tool,
                        link_counters, run_pair)

ALL_RELEASES = True
# Two vCPUs (tests/conftest.py guest_cpus): ping-pongs whose two ends
# each spin a vCPU; 1.8x as long on one beside another guest
# (docs/test-time.md).
GUEST_CPUS = 2

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SNIFF = "python3 %s/tests/guest/sniff_roce.py" % ROOT
# The hostile cases the tool sends, each refused once by the target: a
# number that names nothing, another domain's SRQ, a destroyed SRQ.
REFUSED_SRQ_NUMBERS = 3


def run_tool(guest, ini, ini_gid, tgt, tgt_gid):
    tool = guest_tool(guest, "xrc")
    guest.run("rm -rf /tmp/xrc && mkdir -m 777 /tmp/xrc", check=True)
    r = guest.run("%s%s %s %d %s %d /tmp/xrc/domain"
                  % (NOBODY, tool, ini, ini_gid, tgt, tgt_gid), timeout=300)
    print(r.output)
    assert not r.timed_out, r
    assert r.rc == 0, r
    assert "0 checks failed" in r.stdout, r
    return r


def test_xrc_in_loopback(guest):
    g = gid_index(guest, "sroce0", CLIENT_IP)
    before = link_counters(guest, "sroce0")
    run_tool(guest, "sroce0", g, "sroce0", g)
    after = link_counters(guest, "sroce0")
    assert after["rx_xrc_bad_srq"] - before["rx_xrc_bad_srq"] == REFUSED_SRQ_NUMBERS


def test_xrc_across_the_wire(guest):
    """sroce0's send QPs, sroce1's domain: every request that reaches veth1
    is an XRC opcode with an XRCETH naming an SRQ, and every frame's ICRC
    is right by the formula, not only by sroce's own check."""
    g0 = gid_index(guest, "sroce0", CLIENT_IP)
    g1 = gid_index(guest, "sroce1", SERVER_IP)
    before = link_counters(guest, "sroce1")
    guest.run_peer("%s veth1 240 >/tmp/sniff-xrc.json 2>/tmp/sniff-xrc.err & "
                   "for i in $(seq 100); do grep -q ready /tmp/sniff-xrc.err && "
                   "break; sleep 0.1; done" % SNIFF, check=True)
    try:
        run_tool(guest, "sroce0", g0, "sroce1", g1)
    finally:
        guest.run("pkill -f sniff_roce.py; sleep 0.5")
    after = link_counters(guest, "sroce1")
    assert after["rx_xrc_bad_srq"] - before["rx_xrc_bad_srq"] == REFUSED_SRQ_NUMBERS

    packets = [json.loads(l) for l in
               guest.run("cat /tmp/sniff-xrc.json", check=True).stdout.splitlines()]
    requests = [p for p in packets if 0xA0 <= p["opcode"] <= 0xB7 and
                not 0xAD <= p["opcode"] <= 0xB2]
    # 64 + 256 + 2 + ... packets of requests: far more than a handful.
    assert len(requests) > 300, len(requests)
    assert all(p["xrc_srqn"] for p in requests), [p for p in requests
                                                  if not p["xrc_srqn"]][:5]
    assert not [p for p in packets if 0 <= p["opcode"] <= 0x1F], \
        "RC opcodes between XRC QPs"
    seen = {p["opcode"] for p in requests}
    # SEND FIRST/MIDDLE/LAST, SEND ONLY (with immediate), WRITE FIRST/
    # MIDDLE/LAST, WRITE ONLY with immediate, READ request, both atomics.
    for op in (0xA0, 0xA1, 0xA2, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xAB, 0xAC,
               0xB3, 0xB4):
        assert op in seen, (hex(op), sorted(map(hex, seen)))
    bad = [p for p in packets if not p["icrc_ok"]]
    assert not bad, bad[:5]
    # The two SRQs the traffic went to, and the refused numbers.
    assert len({p["xrc_srqn"] for p in requests}) >= 2


PERFTESTS = [
    "ib_send_bw -c XRC -s 65536 -D 2",
    "ib_write_bw -c XRC -s 65536 -D 2",
    "ib_read_bw -c XRC -s 65536 -D 2",
    "ib_atomic_bw -c XRC -D 2",
    "ib_send_lat -c XRC -s 2 -n 500",
    "ib_write_bw -c XRC -q 4 -s 65536 -D 2",
]


@pytest.mark.parametrize("cmd", PERFTESTS)
def test_perftest_xrc_across_namespaces(guest, cmd):
    g0 = gid_index(guest, "sroce0", CLIENT_IP)
    g1 = gid_index(guest, "sroce1", SERVER_IP)
    rc, out = run_pair(guest, "%s -d sroce1 -x %d -F" % (cmd, g1),
                       "%s -d sroce0 -x %d -F %s" % (cmd, g0, SERVER_IP),
                       timeout=90)
    assert rc == 0, out


def test_xsrq_pingpong_two_clients(guest):
    """ibv_xsrq_pingpong: the server's XRC SRQs take both clients'
    messages, each client's receive QP its replies; 8 KiB (8 packets at
    MTU 1024) back and forth, 20 times per client."""
    g0 = gid_index(guest, "sroce0", CLIENT_IP)
    g1 = gid_index(guest, "sroce1", SERVER_IP)
    args = "-s 8192 -m 1024 -n 20"
    client = "ibv_xsrq_pingpong -d sroce0 -g %d %s %s" % (g0, args, SERVER_IP)
    rc, out = run_pair(guest, "ibv_xsrq_pingpong -d sroce1 -g %d -c 2 %s" % (g1, args),
                       "sh -c '%s & p=$!; %s; r=$?; wait $p && [ $r = 0 ]'"
                       % (client, client),
                       timeout=120)
    assert rc == 0, out
