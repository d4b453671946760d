"""scripts/distro-root makes the release roots with mmdebstrap, with dpkg's
syncs skipped.  mmdebstrap's eatmydata hook does that best, but the hook
asks dpkg-architecture (dpkg-dev) for the library folder, and a bare host
(a CI runner, scripts/bare-host's chroot) may not have it: there the hook
fails the whole root, so the root is made with dpkg's unsafe-io instead.
Checked with a made-up hook folder and PATH."""
import os
import subprocess

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "scripts", "lib.sh")


def nosync_options(tmp_path, tools):
    hooks = tmp_path / "hooks"
    (hooks / "eatmydata").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in tools:
        (bin_dir / tool).write_text("#!/bin/sh\n")
        (bin_dir / tool).chmod(0o755)
    # lib.sh sourced with the host's PATH, the choice made with the
    # made-up one (this host has dpkg-architecture in /usr/bin).
    env = dict(os.environ, SROCE_MMDEBSTRAP_HOOKS=str(hooks))
    r = subprocess.run(["/bin/bash", "-c", '. "$1"; PATH=$2; sroce_mmdebstrap_nosync',
                        "lib", LIB, str(bin_dir)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout.split(), hooks


def test_the_eatmydata_hook_where_the_host_can_run_it(tmp_path):
    options, hooks = nosync_options(tmp_path, ["dpkg-architecture"])
    assert options == ["--hook-dir=%s" % (hooks / "eatmydata")]


def test_unsafe_io_on_a_host_without_dpkg_architecture(tmp_path):
    options, _ = nosync_options(tmp_path, [])
    assert options == ["--dpkgopt=force-unsafe-io"]
