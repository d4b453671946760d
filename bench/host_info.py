#!/usr/bin/python3
"""The host facts scripts/bench and scripts/profile put at the top of their
reports, as one JSON object: date, commit (marked +uncommitted when the
kernel, provider or ABI differ from it), host CPU, qemu version, load.

usage: host_info.py "LOAD-AVERAGE-BEFORE" """
import datetime
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def commit():
    def git(*args):
        return subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True,
                              text=True)
    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        return "unknown"
    dirty = git("diff", "--quiet", "HEAD", "--", "kernel", "userspace-provider",
                "include").returncode != 0
    return head.stdout.strip() + ("+uncommitted" if dirty else "")


def main():
    cpuinfo = open("/proc/cpuinfo").read()
    cpu = re.search(r"^model name\s*:\s*(.*)$", cpuinfo, re.M)
    # The qemu vm-run boots with (scripts/emulator), not whichever is on PATH.
    binary = subprocess.run([os.path.join(ROOT, "scripts", "emulator"), "--path"],
                            capture_output=True, text=True).stdout.strip()
    qemu = subprocess.run([binary or "qemu-system-x86_64", "--version"],
                          capture_output=True, text=True).stdout.split("\n")[0]
    print(json.dumps({
        "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit(),
        "cpu": "%s (%d host CPUs)" % (cpu.group(1) if cpu else "?",
                                      len(re.findall(r"^processor", cpuinfo, re.M))),
        "qemu": (re.search(r"version (\S+)", qemu) or [None, "?"])[1],
        # scripts/lib.sh exports the model vm-run boots with.
        "guest_cpu": os.environ.get("SROCE_GUEST_CPU", "?"),
        "load": "%s before, %s after" % (
            sys.argv[1], " ".join(open("/proc/loadavg").read().split()[:3])),
    }))


if __name__ == "__main__":
    main()
