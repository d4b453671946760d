"""Open MPI over UCX over sroce, the most used RDMA application stack:
mpirun starts mpi_check (tools/mpi_check.c: allreduce and a ring, 8 B to
4 MiB, every byte checked) with UCX's point-to-point layer (pml ucx) on
UCX's verbs transports only (RC for data, UD for wire-up; no shared
memory), so every message between ranks goes through sroce, which the
device counters show.

Two ranks on sroce0 (loopback), and four ranks across the veth pair:
even ranks on sroce0, odd ranks on sroce1, whose netdev (veth1) is in
namespace `peer`, so each rank's neighbours in the ring are across the
veth pair as between two hosts.  The ranks themselves stay in the initial
namespace: Open MPI's launcher reaches its ranks over TCP on 127.0.0.1
(PMIx), which a rank in another namespace cannot reach; sroce1 serves
verbs from any namespace.  Debian 12's Open MPI 4.1 and UCX 1.13;
scripts/setup installs them (the Debian 13 and sid roots have no MPI)."""
import os

import pytest

from verbs_apps import guest_tool, link_counters

# Two vCPUs (tests/conftest.py guest_cpus): its ranks busy-poll; on one
# vCPU beside another guest the unit took 2.2x as long.
GUEST_CPUS = 2

MPIRUN = ("mpirun --allow-run-as-root --oversubscribe --mca pml ucx --mca btl self "
          # One-sided MPI is not exercised; its UCX component would open
          # its own workers on every device.
          "--mca osc ^ucx -x UCX_TLS=self,rc_verbs,ud_verbs ")
SIZES = 5  # lines mpi_check prints, one per message size


def device_per_rank(guest):
    """A launcher: even ranks on sroce0, odd ranks on sroce1."""
    path = "/tmp/mpi-rank-device"
    guest.run("cat > %s <<'EOF'\n"
              "#!/bin/bash\n"
              "export UCX_NET_DEVICES=sroce$((OMPI_COMM_WORLD_RANK %% 2)):1\n"
              "exec \"$@\"\n"
              "EOF\n"
              "chmod +x %s" % (path, path), check=True)
    return path


def run_mpi(guest, np, launch, devices):
    before = {d: link_counters(guest, d)["tx_bytes"] for d in devices}
    r = guest.run("%s -np %d %s" % (MPIRUN, np, launch), timeout=600)
    print(r.output[-4000:])
    assert r.rc == 0, r
    assert r.stdout.count("allreduce and ring verified") == SIZES, r.stdout
    assert "ranks %d size 4194304" % np in r.stdout, r.stdout
    sent = {d: link_counters(guest, d)["tx_bytes"] - before[d] for d in devices}
    print("bytes sent per device:", sent)
    # Each rank sends at least its ring messages (5 rounds of each size)
    # through its device.
    ring_bytes = 5 * (8 + 4096 + 65536 + (1 << 20) + (4 << 20))
    for d, n in sent.items():
        assert n >= ring_bytes, (d, n, ring_bytes)


@pytest.fixture(scope="module")
def tool(guest):
    path = guest_tool(guest, "mpi_check")
    if not os.path.exists(path):
        pytest.fail("%s is not built: Open MPI's development files are missing "
                    "(scripts/setup installs libopenmpi-dev)" % path)
    return path


def test_two_ranks_loopback(guest, tool):
    run_mpi(guest, 2, "-x UCX_NET_DEVICES=sroce0:1 " + tool, ["sroce0"])


def test_four_ranks_across_the_veth_pair(guest, tool):
    run_mpi(guest, 4, "%s %s" % (device_per_rank(guest), tool), ["sroce0", "sroce1"])
