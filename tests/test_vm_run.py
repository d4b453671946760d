"""scripts/vm-run itself: status, output and timeouts."""
import os
import subprocess
import sys
import time

from guest.harness import VM_RUN


def vm_run(*args, timeout=180):
    return subprocess.run([VM_RUN, *args], capture_output=True, text=True,
                          timeout=timeout)


def test_prints_guest_kernel_and_exits_zero():
    r = vm_run("--", "cat", "/proc/version")
    assert r.returncode == 0, r.stderr
    assert "Debian" in r.stdout and r.stdout.startswith("Linux version")


def test_failing_command_fails():
    r = vm_run("--", "false")
    assert r.returncode == 1, r.stderr


def test_hanging_command_is_killed_at_timeout():
    started = time.monotonic()
    r = vm_run("--timeout", "40", "--", "sleep", "1000")
    assert time.monotonic() - started < 70
    assert r.returncode != 0
    assert "timed out" in r.stdout + r.stderr


def test_boot_to_command_time(record_property):
    # vm-run reports the guest's own boot-to-command time; the wall time
    # of a whole run bounds it from above.
    started = time.monotonic()
    r = vm_run("--", "true")
    wall = time.monotonic() - started
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
