"""Hostile packets: 200,000 malformed, truncated, mis-keyed and mutated
RoCE v2 packets (hostile_gen.py) from namespace `peer` at sroce0, over
IPv4 and IPv6, while ibv_rc_pingpong moves data-checked traffic between
sroce1 and sroce0.  The kernel must stay clean (checked after every guest
test), the transfer must finish with every buffer right, and the device
counters must account for every bad packet.
"""
import json
import os
import re

from verbs_apps import CLIENT_IP, CLIENT_IP6, SERVER_IP, SERVER_IP6, gid_index

GEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostile_gen.py")
PACKETS = 200000
# Counters where a dropped or refused packet shows up.
DROP_COUNTERS = ("rx_icrc_errors", "rx_malformed", "rx_no_qp", "rx_dropped",
                 "dup_requests", "seq_err_sent")


def counters(text):
    return {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", text)}


def softnet_drops(text):
    """Column 2 of /proc/net/softnet_stat: backlog drops, per CPU."""
    return sum(int(line.split()[1], 16) for line in text.splitlines() if line.strip())


def section(out, name):
    return out.split("=== %s\n" % name)[1].split("=== ")[0]


def test_hostile_flood_during_verified_transfer(guest):
    g0 = gid_index(guest, "sroce0", CLIENT_IP)
    g1 = gid_index(guest, "sroce1", SERVER_IP)
    # Transfers back to back until the flood is over; each checks its data.
    # Long ones: the flood must find them live, not between two runs.
    pp = "timeout 300 ibv_rc_pingpong -s 4096 -n 4000 -c"
    r = guest.run(r"""
rm -f /tmp/hostile.stop /tmp/hostile.runs
(while [ ! -e /tmp/hostile.stop ]; do
    ip netns exec peer {pp} -d sroce1 -g {g1} >/tmp/hs.log 2>&1 & srv=$!
    for i in $(seq 100); do ip netns exec peer ss -Hltn 'sport = :18515' | grep -q . && break; sleep 0.2; done
    {pp} -d sroce0 -g {g0} {server} >/tmp/hc.log 2>&1; crc=$?
    wait $srv; src=$?
    echo "server=$src client=$crc $(cat /tmp/hs.log /tmp/hc.log | grep -c '4000 iters in')" >>/tmp/hostile.runs
    if [ $src != 0 ] || [ $crc != 0 ]; then cat /tmp/hs.log /tmp/hc.log >>/tmp/hostile.runs; fi
done) & loop=$!
for i in $(seq 100); do
    rdma resource show qp link sroce0/1 | grep -q 'type RC.*state RTS' && break; sleep 0.2
done
echo "=== before"; rdma statistic show link sroce0/1
echo "=== softnet_before"; cat /proc/net/softnet_stat
echo "=== gen"
ip netns exec peer python3 {gen} --src4 {s4} --dst4 {d4} --src6 {s6} --dst6 {d6} \
    --live-dev sroce0 --count {n}
touch /tmp/hostile.stop; wait $loop
echo "=== after"; rdma statistic show link sroce0/1
echo "=== softnet_after"; cat /proc/net/softnet_stat
echo "=== runs"; cat /tmp/hostile.runs
""".format(pp=pp, g0=g0, g1=g1, server=SERVER_IP, gen=GEN, s4=SERVER_IP,
           d4=CLIENT_IP, s6=SERVER_IP6, d6=CLIENT_IP6, n=PACKETS), timeout=1500)
    out = r.stdout
    print(r.stdout[-3000:], r.stderr[-2000:])
    gen = json.loads(section(out, "gen").strip().splitlines()[-1])
    sent = gen["sent"]
    total = sum(sent.values())
    print("sent", total, "in", gen["seconds"], "s:", sent,
          "at live RC QPs:", gen["at_live_rc_qps"])
    assert total >= PACKETS * 0.99, gen
    assert gen["at_live_rc_qps"] >= PACKETS // 10, gen   # the transfer was live

    runs = section(out, "runs")
    print(runs)
    assert runs.count("server=") >= 2, runs
    assert runs.count("server=0 client=0 2") == runs.count("server="), runs

    before, after = counters(section(out, "before")), counters(section(out, "after"))
    delta = {k: after[k] - before[k] for k in after}
    print("counter deltas", delta)
    lost = softnet_drops(section(out, "softnet_after")) - \
        softnet_drops(section(out, "softnet_before"))
    print("dropped by the stack before sroce:", lost)
    by = lambda cat: sent.get(cat + "4", 0) + sent.get(cat + "6", 0)  # noqa: E731
    assert delta["rx_icrc_errors"] == by("bad_icrc"), (delta, sent)
    assert delta["rx_malformed"] >= by("malformed"), (delta, sent)
    assert delta["rx_no_qp"] >= by("no_qp"), (delta, sent)
    # Every packet lands in exactly one drop counter or is answered; the
    # transfer's own traffic may add a few duplicates but never removes.
    accounted = sum(delta[c] for c in DROP_COUNTERS)
    assert accounted >= total - lost, (accounted, total, delta)
    assert delta["completion_errors"] == 0, delta
