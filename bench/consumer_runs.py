"""The bench's workloads that go through a library, as applications use
sroce and rxe (issue 42): libfabric (fi_pingpong, msg and ofi_rxm's rdm),
UCX (ucx_perftest's ucp tag and stream tests over rc_verbs and
ud_verbs), rsockets (rstream, riostream), rdma_cm connection set-up
(cmtime) and the kernel's NVMe over Fabrics (nvmet-rdma and nvme-rdma,
read with fio).  Each runner is (workload, pair, settings) -> metrics, like
guest_runner's, and runs the library's own benchmark program unchanged
on both ends of the pair."""
import functools
import os
import re
import subprocess
import sys

import consumer_parsers as cp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "guest"))
import nvmet  # noqa: E402

# ofi_rxm sizes its verbs CQ for FI_UNIVERSE_SIZE peers (1024 by default,
# times 256 entries: 262144), above rxe's max_cqe (32767), and then fails
# on rxe (docs/peers.md).  64 peers fit both devices, and this bench has
# one peer.
FI_ENV = {"FI_UNIVERSE_SIZE": "64"}
FI_ENDPOINTS = {"msg": ["-p", "verbs", "-e", "msg"],
                "rdm": ["-p", "verbs;ofi_rxm", "-e", "rdm"]}
# ucp over RC needs UD to wire up ("rc_v"); "self" for the loopback lane.
UCX_TLS = {"rc_verbs": "self,rc_v", "ud_verbs": "self,ud_v"}


def run_fi_pingpong(w, pair, s):
    """fi_pingpong, data checked (-c) as applications' data is: us per
    round trip (its usec/xfer), the completion channel waited on."""
    p = w.params
    common = FI_ENDPOINTS[p["endpoint"]] + ["-c", "-I", str(s.lat_iters),
                                             "-S", str(p["size"])]
    out, _, _ = pair.run(
        ["fi_pingpong"] + common + ["-d", pair.server.dev, "-B", "{port}"],
        ["fi_pingpong"] + common + ["-d", pair.client.dev, "-P", "{port}", pair.server.ip],
        s.timeout, env=FI_ENV)
    r = cp.fi_pingpong(out)
    r["output"] = out[-400:]
    return r


@functools.lru_cache(maxsize=None)
def ucx_pairing_args():
    """UCX 1.18 built with MPI takes a lone ucx_perftest for an MPI run
    unless told -P 0; 1.13 (Debian 12) has no -P."""
    help_text = subprocess.run(["ucx_perftest", "-h"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True).stdout
    return ("-P", "0") if "-P <0|1>" in help_text else ()


def run_ucx(w, pair, s):
    """ucx_perftest over ucp on one device: tag_lat (typical us, one
    way; with wait "sleep", in UCX's sleep mode), tag_bw and stream_bw
    (Gb/s).  A minute at most: on rxe UCX up
    to 1.18 times out (it finds a UD sender by the completion's SL, which
    rxe leaves 0; test_transport.py), and a hang costs the whole limit."""
    p = w.params
    iters = s.lat_iters if p["test"].endswith("_lat") else max(
        100, int(s.volume * (32 << 20)) // p["size"])
    extra = list(ucx_pairing_args()) + ["-E", p.get("wait", "poll")]
    # Both ends are on one device here, so one environment serves both.
    assert pair.server.dev == pair.client.dev
    env = {"UCX_NET_DEVICES": "%s:1" % pair.server.dev, "UCX_TLS": UCX_TLS[p["tls"]]}
    out, _, _ = pair.run(
        ["ucx_perftest", "-p", "{port}"] + extra,
        ["ucx_perftest", pair.server.ip, "-p", "{port}", "-t", p["test"],
         "-s", str(p["size"]), "-n", str(iters)] + extra,
        min(s.timeout, 60), env=env)
    r = cp.ucx_perftest(out)
    r["output"] = out[-400:]
    return r


def cm_listening(ep):
    """A readiness test for Pair.run: an rdma_cm ID listens on the port in
    @ep's namespace (rsockets and rdma_cm servers have no TCP socket)."""
    def ready(_pid, port):
        r = subprocess.run(ep.argv(["rdma", "resource", "show", "cm_id"]),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return bool(re.search(r"state LISTEN .*src-addr \S+:%d\b" % port, r.stdout))
    return ready


def run_rsocket_stream(w, pair, s):
    """rstream or riostream (rsockets), blocking calls, 64 KiB messages
    each way: Gb/s."""
    p = w.params
    count = max(20, int(s.volume * 50))
    common = ["-p", "{port}", "-S", str(p["size"]), "-C", str(count), "-I", "2"]
    out, _, _ = pair.run([p["tool"], "-b", pair.server.ip] + common,
                         [p["tool"], "-s", pair.server.ip] + common,
                         s.timeout, ready=cm_listening(pair.server))
    r = cp.rsocket_stream(out)
    r["output"] = out[-400:]
    return r


def run_cmtime(w, pair, s):
    """cmtime: rdma_cm connections set up and torn down at once, us per
    connection over the set-up steps."""
    conns = ["-c", str(w.params["connections"])]
    out, _, _ = pair.run(["cmtime", "-b", pair.server.ip, "-p", "{port}"] + conns,
                         ["cmtime", "-s", pair.server.ip, "-p", "{port}"] + conns,
                         s.timeout, ready=cm_listening(pair.server))
    r = cp.cmtime(out)
    r["output"] = out[-600:]
    return r


NVME_NQN = "nqn.2026-12.org.sroce:bench"
NVME_PORTS = {"ipv4": (1, "198.51.100.1")}
# Kernel consumers open their rdma_cm IDs in the initial namespace, where
# only veth0 (198.51.100.1) is, and rxe0 holds it in this guest: a run has
# its own device alone on veth0, added for the run if it is not there, and
# rdma_rxe is unloaded for sroce's (it holds UDP port 4791 while loaded).
NVME_LINKS = {"rxe": "rxe0", "sroce": "sroce0"}


def nvme_script(device, rw, bs, qd, size):
    """Shell: the other device's link out, nvmet-rdma over a memory-backed
    null_blk on 198.51.100.1 (tests/guest/nvmet.py, as the NVMe-oF tests
    set it up), nvme-rdma connected to it, one fio read job (JSON on
    stdout), then all of it undone whatever fio did."""
    own = NVME_LINKS[device]
    other = NVME_LINKS["sroce" if device == "rxe" else "rxe"]
    return "\n".join([
        "other_gone= own_added=",
        "link() { rdma link show $1/1 >/dev/null 2>&1; }",
        "undo() {",
        "  { %s; } >/dev/null 2>&1" % nvmet.teardown_script(NVME_NQN, NVME_PORTS),
        "  [ -z \"$own_added\" ] || rdma link delete %s" % own,
        "  [ -z \"$other_gone\" ] || { modprobe rdma_%s; rdma link add %s type %s netdev veth0; }"
        % (other[:-1], other, other[:-1]),
        "}",
        "trap undo EXIT",
        "set -e",
        # rxe holds UDP 4791 in the namespace while its module is loaded.
        "if link %s; then rdma link delete %s; other_gone=1; modprobe -r rdma_rxe || true; fi"
        % (other, other),
        "if ! link %s; then rdma link add %s type %s netdev veth0; own_added=1; fi"
        % (own, own, own[:-1]),
        nvmet.target_script(NVME_NQN, NVME_PORTS),
        "nvme connect -t rdma -a %s -s 4420 -n %s >&2" % (NVME_PORTS["ipv4"][1], NVME_NQN),
        "disk=$(%s)" % nvmet.namespace_script(NVME_NQN, 30),
        "fio --name=bench --filename=$disk --direct=1 --ioengine=libaio --rw=%s --bs=%d "
        "--iodepth=%d --size=%d --lat_percentiles=1 --output-format=json" % (rw, bs, qd, size),
    ])


def run_nvmeof(w, pair, s):
    """NVMe over Fabrics on one device (the kernel's target and host, both
    ends on it), read by fio from a memory-backed namespace: 4 KiB random
    reads at queue depth 32 (kIOPS), 128 KiB sequential reads (Gb/s)."""
    p = w.params
    device = "rxe" if pair.server.dev.startswith("rxe") else "sroce"
    size = max(p["bs"] * 256, int(s.volume * (32 << 20)) // p["bs"] * p["bs"])
    r = subprocess.run(["bash", "-c", nvme_script(device, p["rw"], p["bs"], p["qd"], size)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=s.timeout + 60)
    out = r.stdout
    if r.returncode:
        raise cp.ParseError("NVMe-oF run ended with status %d:\n%s"
                            % (r.returncode, cp._tail(out)))
    m = cp.fio_json(out)
    m["output"] = out[-400:]
    return m


RUNNERS = {"fi_pingpong": run_fi_pingpong, "ucx": run_ucx,
           "rsocket_stream": run_rsocket_stream, "cmtime": run_cmtime,
           "nvmeof": run_nvmeof}
