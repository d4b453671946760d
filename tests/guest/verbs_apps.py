"""Helpers to run unmodified verbs applications between the guest's two
RDMA devices: server in namespace `peer` on sroce1 (veth1, 198.51.100.2),
client in the initial namespace on sroce0 or rxe0 (veth0, 198.51.100.1),
or both ends on one device (loopback)."""
import contextlib
import ipaddress
import os
import re
import shlex

SERVER_IP = "198.51.100.2"
CLIENT_IP = "198.51.100.1"


SERVER_IP6 = "2001:db8:5100::2"
CLIENT_IP6 = "2001:db8:5100::1"
# Bringing the test topology's devices back after a test removed them
# (`rdma link delete`, `rmmod sroce`), as scripts/vm-run made them.
ADD_SROCE0 = "rdma link add sroce0 type sroce netdev veth0"
ADD_SROCE1 = "ip netns exec peer rdma link add sroce1 type sroce netdev veth1"
RELOAD_SROCE = "modprobe sroce && %s && %s" % (ADD_SROCE0, ADD_SROCE1)
# veth0 taken down loses its IPv6 address (keep_addr_on_down is 0, the
# default) and does not get it back when up: a test that takes it down
# runs this after, so the guest is as it booted and serves the next test
# module (conftest.py's guest reuse).
VETH0_IPV6_BACK = "ip addr replace %s/64 dev veth0 nodad" % CLIENT_IP6
# Runs what follows as user nobody: an unprivileged local user.
NOBODY = "setpriv --reuid 65534 --regid 65534 --clear-groups "


def gid_index(guest, dev, ip):
    """Index of the RoCE v2 GID that carries address `ip`, IPv4 or IPv6
    (one grep: every process costs ~0.1 s under TCG)."""
    addr = ipaddress.ip_address(ip)
    if addr.version == 4:
        addr = ipaddress.IPv6Address("::ffff:" + ip)
    want = addr.exploded
    out = guest.run("cd /sys/class/infiniband/%s/ports/1 && grep -l %s gids/* "
                    "2>/dev/null | sed 's|gids/||' | while read i; do "
                    "echo $i $(cat gid_attrs/types/$i); done" % (dev, want),
                    check=True).stdout
    for line in out.splitlines():
        idx, _, kind = line.partition(" ")
        if "v2" in kind:
            return int(idx)
    raise AssertionError("no RoCE v2 GID for %s on %s: %r" % (ip, dev, out))


def until_sent(dev, nbytes=1 << 20):
    """Shell: waits, 60 s at most, until @dev has sent @nbytes more than
    when it started waiting: an action meant to strike a running transfer
    waits for the transfer, not for a fixed time that a slow host could
    outlast or a fast one waste."""
    tx = "/sys/class/infiniband/%s/ports/1/hw_counters/tx_bytes" % dev
    return ("b0=$(cat %s); for i in $(seq 600); do "
            "[ $(cat %s) -gt $((b0 + %d)) ] && break; sleep 0.1; done" % (tx, tx, nbytes))


def until_cm_listens(prefix="", comm=""):
    """Shell: waits, 30 s at most, until an rdma_cm ID (of process @comm,
    if given) listens: rdma_cm and rsockets listen without a TCP socket.
    @prefix runs `rdma` in the server's namespace."""
    return ("for i in $(seq 150); do %srdma resource show cm_id | grep -q 'LISTEN.*%s' "
            "&& break; sleep 0.2; done" % (prefix, comm))


def run_pair(guest, server, client, timeout=120, server_ns="peer", port=18515):
    """Starts `server` (in namespace `server_ns`, or here if None), waits
    until it listens on TCP `port`, runs `client` here; returns (rc,
    output) with both outputs."""
    prefix = "ip netns exec %s " % server_ns if server_ns else ""
    if port:
        wait = ("for i in $(seq 100); do %sss -Hltn 'sport = :%d' | grep -q . "
                "&& break; sleep 0.2; done; " % (prefix, port))
    else:
        wait = until_cm_listens(prefix) + "; "
    script = (
        "%(p)s%(server)s >/tmp/server.log 2>&1 & srv=$!; %(wait)s"
        "timeout %(t)d %(client)s >/tmp/client.log 2>&1; crc=$?; "
        "timeout 20 tail --pid=$srv -f /dev/null || kill -9 $srv; wait $srv; src=$?; "
        "echo '--- server'; cat /tmp/server.log; echo '--- client'; cat /tmp/client.log; "
        "echo \"server=$src client=$crc\"; [ $src = 0 ] && [ $crc = 0 ]"
        % dict(p=prefix, server=server, wait=wait, t=timeout, client=client))
    r = guest.run(script, timeout=timeout + 60)
    return r.rc, r.output


# A device's setting: 1 (default) sends to this host's own addresses
# without the IP stack (kernel/localrx.c), 0 through lo.
LOOPBACK_BYPASS = "/sys/class/infiniband/sroce0/loopback_bypass"


@contextlib.contextmanager
def loopback_bypass(guest, value):
    """sroce0's loopback_bypass set to VALUE ("1" or "0") for the block,
    back to the default 1 after it, whatever the block did."""
    guest.run("echo %s > %s" % (value, LOOPBACK_BYPASS), check=True)
    try:
        yield
    finally:
        guest.run("echo 1 > %s" % LOOPBACK_BYPASS, check=True)


def guest_tool(guest, name):
    """Path of tests/guest/tools' NAME as built for the guest's release."""
    return os.path.join(guest.build, "cmake", "tests", "guest", "tools", name)


def link_counters(guest, dev):
    """{counter: value} of `dev`'s port from `rdma statistic show link`."""
    out = guest.run("rdma statistic show link %s/1" % dev, check=True).stdout
    return {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", out)}


def rc_pingpong(guest, gids, args, timeout):
    """ibv_rc_pingpong with `args` from sroce0 (client, gids[0]) to sroce1
    (server in peer, gids[1]); returns run_pair's (rc, output)."""
    return run_pair(
        guest,
        "ibv_rc_pingpong -d sroce1 -g %d %s" % (gids[1], args),
        "ibv_rc_pingpong -d sroce0 -g %d %s %s" % (gids[0], args, SERVER_IP),
        timeout=timeout)


def q(s):
    return shlex.quote(s)


def impair_data_packets(guest, dev, qdisc, ns=""):
    """Puts netem `qdisc` on the egress of `dev` for data packets only
    (see impair_command)."""
    guest.run(impair_command(dev, qdisc, ns), check=True)


def impair_command(dev, qdisc, ns=""):
    """The shell command that puts netem `qdisc` on the egress of `dev`
    for data packets only.  Bare ACKs/NAKs (IP length < 64) bypass it: an
    app's own end-of-run race (the last side to receive exits and
    destroys its QP, so a lost final ACK leaves the peer retrying into
    nothing) would otherwise fail ~1% of runs on any RC device.  `ns`
    prefixes the commands (e.g. "ip netns exec peer ")."""
    return (
        "{ns}tc qdisc replace dev {dev} root handle 1: prio bands 2 "
        "priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 && "
        "{ns}tc qdisc add dev {dev} parent 1:2 handle 20: netem {q} && "
        "{ns}tc filter add dev {dev} parent 1: protocol ip prio 1 u32 "
        "match u16 0x0000 0xffc0 at 2 flowid 1:1".format(ns=ns, dev=dev, q=qdisc))


# Packets a NIC lost: received with errors, dropped or missed, or not sent.
NIC_LOSS_STATS = ("rx_errors", "rx_dropped", "rx_missed_errors", "tx_errors", "tx_dropped")


def nic_losses(guest, dev, ns=""):
    """The packets `dev` has lost since it came up (NIC_LOSS_STATS); `ns`
    prefixes the command (e.g. "ip netns exec peer ")."""
    out = guest.run("%scat %s" % (ns, " ".join("/sys/class/net/%s/statistics/%s" % (dev, s)
                                               for s in NIC_LOSS_STATS)),
                    check=True).stdout
    return sum(int(x) for x in out.split())


# DCQCN's defaults are tuned for a datacenter's ~10 us round trip.  Through
# ecn_bottleneck_command's 10 Mbit/s queue and a TCG guest a round trip is
# ~10-50 ms, so the timers are scaled to it, as an operator would for a
# slow path; every one of them is an ordinary run-time setting (cc/).
SLOW_PATH_DCQCN = {
    "rate_period_ns": 100_000_000,
    "alpha_period_ns": 10_000_000,
    "cnp_interval_ns": 10_000_000,
    "rate_reduce_period_ns": 10_000_000,
    "ai_rate_kbps": 250,
    "hai_rate_kbps": 1000,
    "byte_reset": 512_000,
    "min_rate_kbps": 500,
}


def ecn_bottleneck_command(dev, kbit, ns=""):
    """The shell command that makes `dev`'s egress a bottleneck of `kbit`
    through a RED queue that CE-marks (the congestion tests').  `ns`
    prefixes the commands (e.g. "ip netns exec peer ").
    Only RoCE goes through it: TCP (perftest's out-of-band exchange)
    has a class of its own, as a RoCE fabric gives RoCE a traffic class
    apart.  Through the RED queue, which drops what is not ECN-capable,
    perftest's closing exchange lost segments and waited out TCP's
    retransmission timeouts: a 20 s incast took 22 to 38 s."""
    return (
        "{ns}tc qdisc add dev {dev} root handle 1: htb default 1 && "
        "{ns}tc class add dev {dev} parent 1: classid 1:1 htb rate {b} ceil {b} && "
        "{ns}tc class add dev {dev} parent 1: classid 1:2 htb rate 10gbit && "
        "{ns}tc filter add dev {dev} parent 1: protocol ip prio 1 u32 "
        "match ip protocol 6 0xff flowid 1:2 && "
        "{ns}tc filter add dev {dev} parent 1: protocol ipv6 prio 2 u32 "
        "match ip6 protocol 6 0xff flowid 1:2 && "
        "{ns}tc qdisc add dev {dev} parent 1:1 handle 10: red "
        "limit 200000 min 15000 max 45000 avpkt 1100 burst 15 ecn "
        "bandwidth {b} probability 0.5".format(ns=ns, dev=dev, b="%dkbit" % kbit))


TRACE = "/sys/kernel/tracing"


def traced(guest, event, action):
    """Runs action() with tracepoint `event` (e.g. "sroce/rate_change")
    on; returns the trace buffer's text and leaves it empty."""
    guest.run("echo > {t}/trace && echo 1 > {t}/events/{e}/enable"
              .format(t=TRACE, e=event), check=True)
    try:
        action()
    finally:
        guest.run("echo 0 > %s/events/%s/enable" % (TRACE, event), check=True)
    out = guest.run("cat %s/trace" % TRACE, check=True).stdout
    guest.run("echo > %s/trace" % TRACE, check=True)
    return out
