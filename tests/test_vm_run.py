"""scripts/vm-run itself: status, output and timeouts."""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import wait_for_release_build
from guest import harness
from guest.harness import ROOT, VM_RUN
from hostshare import LOCKS_ENV

# test_command_in_a_folder_above_the_tree runs on each release's guest.
ALL_RELEASES = True
# Its guests have two vCPUs, vm-run's own default, and so no other guest
# beside them (tests/conftest.py guest_cpus): a guest whose CPU 0 is held
# must still run its command on the other.
GUEST_CPUS = 2


def vm_run(*args, timeout=180):
    return subprocess.run([VM_RUN, "--smp", str(GUEST_CPUS), *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def plain_run():
    """One plain `vm-run -- cat /proc/version` and its wall time, which the
    three tests below read: each boot costs ~10 s under TCG."""
    started = time.monotonic()
    r = vm_run("--", "cat", "/proc/version")
    return r, time.monotonic() - started


def test_prints_guest_kernel_and_exits_zero(plain_run):
    r, _ = plain_run
    assert r.returncode == 0, r.stderr
    assert "Debian" in r.stdout and r.stdout.startswith("Linux version")


def test_the_accelerator_is_named_on_one_line(plain_run):
    r, _ = plain_run
    assert r.returncode == 0, r.stderr
    said = [l for l in r.stderr.splitlines() if l.startswith("vm-run: accelerator: ")]
    assert len(said) == 1, r.stderr
    assert re.match(r"vm-run: accelerator: (kvm|tcg) \(.+\)$", said[0]), said


def boots_under(seconds, *accel):
    """scripts/lib.sh's sroce_boots_under, the KVM probe's test of a
    working accelerator, with the bookworm guest's kernel and initramfs."""
    script = ('. "$1/scripts/lib.sh"; sroce_qemu >/dev/null; shift; '
              'KVER=$(sroce_kernel_version); '
              'sroce_boots_under "$1" "$SROCE_BUILD/guest/vmlinux-$KVER" '
              '"$SROCE_BUILD/guest/initramfs.cpio.gz" "${@:2}"')
    return subprocess.run(["bash", "-c", script, "probe", ROOT, str(seconds), *accel],
                          capture_output=True, text=True, timeout=seconds + 30)


def test_the_kvm_probe_tells_a_booting_guest_from_a_stalled_one():
    """The probe boots the guest's own kernel and initramfs; only their
    init reaching user space counts (here /dev/kvm opens and runs a few
    real-mode instructions, yet no kernel boots under it).  Under TCG the
    same boot passes; cut short, it is a stall."""
    assert boots_under(120, "-accel", "tcg").returncode == 0
    assert boots_under(1, "-accel", "tcg").returncode == 124


def test_failing_command_fails():
    r = vm_run("--", "false")
    assert r.returncode == 1, r.stderr


def test_hanging_command_is_killed_at_timeout():
    # The shortest limit vm-run takes: the command is stopped then, or the
    # guest, if its boot took most of it; "timed out" either way.
    started = time.monotonic()
    r = vm_run("--timeout", "20", "--", "sleep", "1000")
    assert time.monotonic() - started < 50
    assert r.returncode != 0
    assert "timed out" in r.stdout + r.stderr


def test_a_guest_whose_boot_cpu_is_held_stops_after_its_command():
    """A power-off waits for CPU 0 (the kernel moves the caller there): CI
    once had a kworker hold CPU 0 (a soft lockup) after the command had
    ended, and the guest never stopped.  Here a real-time task spins on
    CPU 0 with the scheduler's real-time throttling off, which holds it as
    well: the command's output and status still come back, at once."""
    hold = ("echo -1 >/proc/sys/kernel/sched_rt_runtime_us || exit 1; "
            "taskset -c 0 chrt -f 99 bash -c 'while :; do :; done' & "
            "sleep 2; read -r _ _ state _ </proc/$!/stat; "
            "[ $state = R ] && echo cpu0-held; exit 5")
    started = time.monotonic()
    r = vm_run("--timeout", "90", "--", "bash", "-c", hold, timeout=150)
    assert r.returncode == 5, r.stdout + r.stderr
    assert "cpu0-held" in r.stdout
    assert time.monotonic() - started < 80, r.stderr


def test_a_guest_dead_before_stage2_is_booted_once_more(tmp_path):
    """A guest that dies before stage 2 (qemu aborting in PCI probing, an
    oops while the kernel patches itself: seen under TCG, about one boot
    in a few dozen) is booted once more; one that dies again fails.  Here
    the initramfs has no such init, so both boots panic at once."""
    r = vm_run("--out", str(tmp_path), "--append", "rdinit=/sroce-no-such-init",
               "--", "true")
    assert r.returncode == 125, r.stderr
    assert r.stderr.count("booting once more") == 1, r.stderr
    assert (tmp_path / "console.log.first-boot").exists()


class _Printed:
    def __init__(self, stdout):
        self.rc, self.stdout = 0, stdout


def _guest_printing(*prints):
    """A harness.Guest whose guest-state prints PRINTS in turn (no qemu)."""
    g = harness.Guest.__new__(harness.Guest)
    g.slowdown, seen = 1, []

    def run(command, timeout):
        seen.append(command)
        return _Printed(prints[min(len(seen), len(prints)) - 1])
    g.run = run
    return g, seen


ADDR = "=== ip\n7: veth0    inet6 fe80::1/64 scope link %s\\       valid_lft forever\n"


def test_a_tentative_address_is_waited_for_not_taken_for_a_leftover(monkeypatch):
    """CI at dd36ba4 booted guests again because the boot's snapshot
    caught an address still in DAD: _state() takes it again once the
    address is final, and only then."""
    monkeypatch.setattr(harness.time, "sleep", lambda s: None)
    g, seen = _guest_printing(ADDR % "tentative", ADDR % "")
    assert g._state("touch x && ") == ["ip veth0 inet6 fe80::1/64 scope link"]
    assert len(seen) == 2 and seen[0].startswith("touch x") and not seen[1].startswith("touch")
    g, seen = _guest_printing(ADDR % "")
    g._state()
    assert len(seen) == 1
    # One whose DAD failed stays so: taken at once.
    g, seen = _guest_printing(ADDR % "tentative dadfailed")
    g._state()
    assert len(seen) == 1


def test_an_address_that_stays_tentative_is_waited_for_a_bounded_time(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(harness.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(harness.time, "sleep", lambda s: clock.__setitem__(0, clock[0] + s))
    g, seen = _guest_printing(ADDR % "tentative")
    assert g._state() == ["ip veth0 inet6 fe80::1/64 scope link tentative"]
    assert len(seen) == harness.DAD_WAIT_S / 0.5 + 1


def test_boot_to_command_time(plain_run, record_property):
    # vm-run reports the guest's own boot-to-command time; the wall time
    # of a whole run bounds it from above.
    r, wall = plain_run
    assert r.returncode == 0, r.stderr
    record_property("vm_run_wall_seconds", round(wall, 1))
    print("whole vm-run (boot, command, power-off): %.1f s" % wall)


def test_debug_kernel_boots_bookworm_only():
    # Refused before anything boots or builds: there is no debug kernel for
    # another release's root (and none need be built to check that).
    r = vm_run("--kernel", "debug", "--distro", "trixie", "--", "true", timeout=30)
    assert r.returncode != 0 and "bookworm only" in r.stderr, r.stderr
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                        "--collect-only", "-q", "--kernel", "debug", "--releases", "all",
                        "guest/test_device.py"], cwd=here, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 4 and "bookworm only" in r.stdout + r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("args, why", [
    (["--cable", "/tmp:0"], "needs --wire"),
    (["--wire", "virtio-net-pci", "--cable", "/tmp:2"], "END is 0 or 1"),
    (["--wire", "virtio-net-pci", "--cable", "/no/such/folder:0"], "not a folder"),
    (["--wire", "virtio-net-pci", "--cable", "/tmp:0", "--topology", "single"],
     "its own topology"),
    (["--wire", "rtl8139"], "unknown NIC model 'rtl8139' (e1000e, igb, virtio-net-pci)"),
])
def test_a_wire_and_cable_are_checked_before_any_boot(args, why):
    r = vm_run("--check", *args, "--", "true", timeout=30)
    assert r.returncode != 0 and why in r.stderr, r.stderr


@pytest.mark.parametrize("providers", ["sroce rxe", "../sroce", "sroce,", ""])
def test_providers_are_checked_before_any_boot(providers):
    r = vm_run("--check", "--providers", providers, "--", "true", timeout=30)
    if providers:
        assert r.returncode != 0 and "driver names" in r.stderr, r.stderr
    else:
        assert r.returncode == 0, r.stderr


def qemus_with(marker):
    """pids of the qemu processes whose command line holds `marker`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0].endswith(b"qemu-system-x86_64") and any(
                marker.encode() in a for a in cmd):
            found.append(int(pid))
    return found


def wait_for(cond, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL],
                         ids=["TERM", "INT", "KILL"])
def test_stopped_vm_run_leaves_no_qemu_and_no_folder(tmp_path, sig):
    """A vm-run that is stopped (a killed test run, a CI limit) takes its
    qemu with it, and removes the folder it made, at once; killed
    outright (SIGKILL), it can remove nothing, but qemu still goes."""
    marker = "sroce-stop-test-%d-%d" % (os.getpid(), sig)
    env = dict(os.environ, TMPDIR=str(tmp_path))
    p = subprocess.Popen([VM_RUN, "--append", marker, "--", "sleep", "1000"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=env, start_new_session=True)
    try:
        assert wait_for(lambda: qemus_with(marker), 60), "qemu never started"
        p.send_signal(sig)
        p.wait(timeout=30)
        assert wait_for(lambda: not qemus_with(marker), 10), qemus_with(marker)
        if sig != signal.SIGKILL:
            assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())
    finally:
        for pid in qemus_with(marker):
            os.kill(pid, signal.SIGKILL)
        if p.poll() is None:
            p.kill()


def test_scripts_that_wait_for_a_guest_take_it_with_them():
    """Every script that starts vm-run and waits for it does so through
    lib.sh's sroce_vm_run (a parent-death signal), so that killing the
    script (scripts/bench under a CI limit, say) stops its guest too: an
    orphaned vm-run ran its guest to the end of its limit.  A script that
    execs vm-run is vm-run itself from then on."""
    scripts = os.path.join(ROOT, "scripts")
    direct = []
    for name in sorted(os.listdir(scripts)):
        path = os.path.join(scripts, name)
        if name in ("vm-run", "lib.sh") or not os.path.isfile(path):
            continue
        with open(path, errors="replace") as f:
            for n, line in enumerate(f, 1):
                code = line.split("#", 1)[0]
                # Its invocations, not its name in a usage text; --check
                # boots nothing.
                if re.search(r"\$SROCE_ROOT/scripts/vm-run\"\s", code) and \
                        not re.match(r"\s*exec\s", code) and "--check" not in code:
                    direct.append("%s:%d: %s" % (name, n, line.strip()))
    assert not direct, "\n".join(direct)


def test_stopped_test_run_leaves_no_guest(tmp_path):
    """`kill -TERM` of a test run (pytest, as scripts/test runs it) while
    a guest is up: the guest's qemu goes, and so does its folder."""
    base = tmp_path / "run"
    here = os.path.dirname(os.path.abspath(__file__))
    # A run of its own, host locks too: a test beside this one that waits
    # for the host alone must not wait for this test's inner run, which
    # waits for it.
    env = {k: v for k, v in os.environ.items() if k != LOCKS_ENV}
    p = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                          "-p", "no:xdist", "--basetemp", str(base), "-x",
                          "guest/test_device.py"],
                         cwd=here, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        # Up and serving tests: the agent is ready.
        assert wait_for(lambda: list(base.rglob("guest-*/rpc/ready")) and
                        qemus_with(str(base)), 180), "no guest came up"
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=60)
        assert wait_for(lambda: not qemus_with(str(base)), 10), qemus_with(str(base))
        left = list(base.rglob("guest-*"))
        assert not left, (left, out[-3000:])
    finally:
        for pid in qemus_with(str(base)):
            os.kill(pid, signal.SIGKILL)
        if p.poll() is None:
            p.kill()


# What the command below prints about the guest, besides its release:
# static device nodes whose module is not loaded yet, and whether /mnt
# takes a file.
FOLDER_CMD = """#!/bin/bash
echo "ran on $(cat /etc/debian_version)"
for m in loop tun; do
    grep -q "^$m " /proc/modules && echo "$m loaded" || echo "$m not loaded"
done
for n in /dev/loop-control /dev/net/tun /dev/fuse; do
    [ -c "$n" ] && echo "node $n"
done
echo x >/mnt/written && echo "mnt writable"
losetup -f >/dev/null && echo "loop device free"
exit 0
"""
_folder_runs = {}


def folder_run(release, tmp_path_factory):
    """`vm-run [--distro RELEASE] -- /tmp/.../x/cmd.sh` with the project
    tree at x/sroce (a bind mount, the way a user's clone would be), once
    per release for the tests below."""
    if release in _folder_runs:
        return _folder_runs[release]
    wait_for_release_build(release)
    top = tmp_path_factory.mktemp("folder-" + release) / "x"
    tree = top / "sroce"
    tree.mkdir(parents=True)
    cmd = top / "cmd.sh"
    cmd.write_text(FOLDER_CMD)
    cmd.chmod(0o755)
    subprocess.run(["mount", "--bind", ROOT, str(tree)], check=True)
    try:
        distro = [] if release == "bookworm" else ["--distro", release]
        r = subprocess.run([str(tree / "scripts" / "vm-run"), *distro, "--", str(cmd)],
                           capture_output=True, text=True, timeout=180, cwd="/")
    finally:
        subprocess.run(["umount", str(tree)], check=True)
    _folder_runs[release] = r
    return r


def test_command_in_a_folder_above_the_tree(tmp_path_factory, release):
    """A command whose folder holds the project tree runs (issue 41: with
    the tree at /tmp/x/sroce, `vm-run --distro trixie -- /tmp/x/cmd.sh`
    ended 127, the guest having made /tmp/x for the tree first)."""
    r = folder_run(release, tmp_path_factory)
    assert r.returncode == 0, r.stdout + r.stderr
    # The release's own root: Debian 12.x, 13.x, sid ("forky/sid").
    assert {"bookworm": "ran on 12.", "trixie": "ran on 13.",
            "sid": "/sid"}[release] in r.stdout, r.stdout


def test_a_guest_has_what_a_debian_system_has(tmp_path_factory, release):
    """The static device nodes kmod-static-nodes makes at boot, before
    their modules load (blktests' nvme/051 found no loop device without
    /dev/loop-control; the kernel's RDMA selftests need /dev/net/tun after
    they unload tun), and a writable /mnt (blktests' xfs tests mount
    there): what a user's test suite finds on any Debian system."""
    r = folder_run(release, tmp_path_factory)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.splitlines()
    assert "loop not loaded" in out and "tun not loaded" in out, r.stdout
    for node in ("/dev/loop-control", "/dev/net/tun", "/dev/fuse"):
        assert "node " + node in out, r.stdout
    assert "mnt writable" in out, r.stdout
    assert "loop device free" in out, r.stdout


def test_the_debug_kernel_boots_from_its_own_image(tmp_path):
    """--kernel debug boots scripts/debug-kernel's bzImage, and there is
    no Debian image of that kernel to look for (none in build/debug/guest,
    /boot or /usr/lib/modules): vm-run once looked anyway and died, so no
    debug guest started (701cfdf).  CI builds no debug kernel, so this
    one is a stand-in whose image is no kernel: qemu refuses it, and what
    fails is the boot, not the search for an image."""
    cache, build = tmp_path / "cache", tmp_path / "build"
    debug = cache / "kernels" / "debug"
    debug.mkdir(parents=True)
    (debug / "stamp").write_text("stand-in\n")
    (debug / "kernelrelease").write_text("6.1.0-stand-in-debug\n")
    (debug / "bzImage").write_bytes(b"not a kernel")
    # The emulator, which scripts/emulator keeps in the cache.
    (cache / "qemu").symlink_to(os.path.join(os.environ.get("SROCE_CACHE", "/var/cache/sroce"),
                                             "qemu"))
    guest = build / "debug" / "guest"
    (guest / "modules" / "extra").mkdir(parents=True)
    (guest / "kernel-stamp").write_text("stand-in\n")
    provider = build / "cmake" / "userspace-provider"
    provider.mkdir(parents=True)
    for f in (guest / "initramfs.cpio.gz", guest / "modules" / "extra" / "sroce.ko",
              provider / "libsroce-rdmav34.so"):
        f.write_bytes(b"")
    r = subprocess.run([VM_RUN, "--kernel", "debug", "--timeout", "30", "--", "true"],
                       env=dict(os.environ, SROCE_CACHE=str(cache), SROCE_BUILD=str(build)),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0, r.stderr
    assert "no image of kernel" not in r.stderr, r.stderr
    assert "accelerator" in r.stderr, r.stderr     # it got as far as starting qemu
