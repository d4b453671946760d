"""sroce's Debian packages, used as a user would use them, on each release.

For each release: scripts/package builds sroce-dkms and
ibverbs-provider-sroce with that release's toolchain and rdma-core; a
fresh guest of that release (its own kernel and root, nothing of sroce
installed) gets only the two .deb files and tests/packages/
install_check.sh: `apt install ./...deb` (DKMS builds the module for the
running kernel in the guest), `rdma link add` loads the module by its
alias, a verified ibv_rc_pingpong across namespaces; then the newer kernel
Debian offers the release's users (bookworm-backports, trixie-backports,
experimental: scripts/later-kernel-debs) is installed, and DKMS must
build the module for it too; then `apt purge` and a look for anything
left behind, for both kernels.
"""
import glob
import os
import shutil
import subprocess

import pytest

import harness  # tests/guest, on sys.path through conftest

# One run per release with --releases; only with --packages
# (scripts/test-packages): see the marker in pytest.ini.
ALL_RELEASES = True
pytestmark = pytest.mark.packages

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "tests", "packages", "install_check.sh")


def test_packages_install_work_and_purge_clean(release, tmp_path):
    built = subprocess.run([os.path.join(ROOT, "scripts", "package"), "--distro", release],
                           capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stdout + built.stderr
    debs = glob.glob(os.path.join(ROOT, "build", "packages", release, "*.deb"))
    assert len(debs) == 2, debs
    out = tmp_path / "guest"
    out.mkdir()
    for f in debs + [CHECK]:
        shutil.copy(f, out)
    later = subprocess.run([os.path.join(ROOT, "scripts", "later-kernel-debs"), release,
                            str(out / "later")], capture_output=True, text=True, timeout=900)
    assert later.returncode == 0, later.stdout + later.stderr
    # DKMS compiles the module inside the TCG guest, for each kernel:
    # minutes, not seconds (trixie's two builds took ~30 minutes beside
    # another guest; at 3,000 s one run ended mid-build).
    args = [os.path.join(ROOT, "scripts", "vm-run"), "--no-install", "--timeout", "4800",
            "--out", str(out)]
    if release != "bookworm":
        args += ["--distro", release]
    r = subprocess.run(args + ["--", "/bin/bash", str(out / "install_check.sh")],
                       capture_output=True, text=True, timeout=4900, cwd=str(out))
    print(r.stdout[-6000:])
    print(r.stderr[-3000:])
    assert r.returncode == 0
    assert "package check passed" in r.stdout
    with open(out / "dmesg", errors="replace") as f:
        log = f.read()
    problems = [l for l in log.splitlines() if harness.BAD_KERNEL_LOG.search(l)]
    assert not problems, problems
