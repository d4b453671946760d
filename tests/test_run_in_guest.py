"""scripts/run-in-guest, the entry point for other projects: a command from
a folder outside this project runs in a guest with sroce loaded, writes
back into that folder, keeps artefacts, returns its own exit status; the
topology option makes the devices it names."""
import os
import re
import subprocess
import textwrap

from guest.harness import ROOT

RUN_IN_GUEST = os.path.join(ROOT, "scripts", "run-in-guest")


def run_in_guest(cwd, *args, timeout=300):
    return subprocess.run([RUN_IN_GUEST, "--timeout", str(timeout - 30), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout)


def script(folder, name, body):
    path = folder / name
    path.write_text("#!/bin/bash\nset -u\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return "./" + name


def test_outside_command_writes_back_keeps_artifacts_and_returns_its_status(tmp_path):
    project = tmp_path / "other-project"
    project.mkdir()
    assert not str(project).startswith(ROOT)
    run = script(project, "check.sh", """\
        # What test suites take for granted on an ordinary system.
        echo "host=$(hostname) resolves=$(getent hosts "$(hostname)" | wc -l)"
        echo "procsub=$(cat <(echo works))"
        mountpoint -q /sys/kernel/config && echo configfs=mounted
        rdma link show
        ip netns exec peer rdma link show
        echo "written in the guest" >result.txt
        uname -r >"$SROCE_ARTIFACTS/guest-kernel"
        exit 7
        """)
    artifacts = tmp_path / "artifacts"
    r = run_in_guest(project, "--artifacts", str(artifacts), "--", run)
    out = r.stdout
    assert r.returncode == 7, r.stdout + r.stderr
    assert "host=sroce-guest resolves=1" in out
    assert "procsub=works" in out and "configfs=mounted" in out
    # The default topology: sroce0 here, sroce1 in namespace peer, both up.
    assert "link sroce0/1 state ACTIVE" in out and "netdev veth0" in out
    assert "link sroce1/1 state ACTIVE" in out and "netdev veth1" in out
    assert (project / "result.txt").read_text() == "written in the guest\n"
    assert (artifacts / "guest-kernel").read_text().strip()
    assert "sroce0" in (artifacts / "dmesg").read_text()


def test_pairs_topology_carries_verified_traffic_on_every_pair(tmp_path):
    # pairs:2: sroce2 on veth2 (198.18.1.1) and sroce3 in peer on veth3
    # (198.18.1.2) besides the first pair; rping -V checks every byte, and
    # the new pair's port counters show the traffic went through it.
    run = script(tmp_path, "pairs.sh", """\
        rdma link show; ip netns exec peer rdma link show
        # Both ends need the same size: the server READs the client's buffer.
        rping -s -a 198.18.1.1 -C 20 -S 4096 -V >server.log 2>&1 &
        server=$!
        for i in $(seq 50); do
            rdma resource show cm_id 2>/dev/null | grep -q LISTEN && break
            sleep 0.2
        done
        ip netns exec peer rping -c -a 198.18.1.1 -C 20 -S 4096 -V; rc=$?
        wait $server; echo "server status $?"
        cat server.log
        c=/sys/class/infiniband
        echo "sroce2 sent $(cat $c/sroce2/ports/1/counters/port_xmit_packets)"
        # (Read here: ib_core's sysfs in another namespace has no counters.)
        echo "sroce3 sent $(cat $c/sroce3/ports/1/counters/port_xmit_packets)"
        exit $rc
        """)
    r = run_in_guest(tmp_path, "--topology", "pairs:2", "--", run)
    out = r.stdout
    assert r.returncode == 0, r.stdout + r.stderr
    # rping can end 0 after a failed completion: its messages tell.
    assert "server status 0" in out and "fail" not in out and "mismatch" not in out, out
    for dev, netdev in (("sroce0", "veth0"), ("sroce1", "veth1"),
                        ("sroce2", "veth2"), ("sroce3", "veth3")):
        assert "link %s/1 state ACTIVE" % dev in out and "netdev %s" % netdev in out, out
    sent = {dev: int(n) for dev, n in re.findall(r"^(sroce\d) sent (\d+)$", out, re.M)}
    # 20 round trips of 4 KiB each way: far more than 20 packets per side.
    assert sent["sroce2"] >= 20 and sent["sroce3"] >= 20, sent


def test_single_topology_has_one_device(tmp_path):
    r = run_in_guest(tmp_path, "--topology", "single", "--no-share", "--",
                     "bash", "-c", "rdma link show; ip netns exec peer rdma link show; "
                     "touch not-shared 2>/dev/null; echo done")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "link sroce0/1 state ACTIVE" in r.stdout
    assert "sroce1" not in r.stdout
    assert not (tmp_path / "not-shared").exists()


def test_bad_options_are_refused_before_any_boot(tmp_path):
    for args, why in ((["--topology", "pairs:9"], "unknown topology"),
                      (["--topology", "ring"], "unknown topology"),
                      (["--share", str(tmp_path / "missing")], "not a folder"),
                      (["--release", "buster"], "buster")):
        r = run_in_guest(tmp_path, *args, "--", "true", timeout=120)
        assert r.returncode != 0 and why in r.stderr, (args, r.stderr)
