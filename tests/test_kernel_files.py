"""scripts/lib.sh finds a kernel wherever Debian's packaging puts it: up to
7.2 in /boot (vmlinuz-V, config-V), from 7.3 (trixie-backports,
experimental) only in /usr/lib/modules/V/ (vmlinuz, or vmlinuz.unsigned,
and config).  Checked on made-up roots of both layouts."""
import os
import subprocess

import pytest

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "scripts", "lib.sh")


def lib(sysroot, call):
    r = subprocess.run(["bash", "-c", '. "$1"; %s' % call, "lib", LIB, str(sysroot)],
                       capture_output=True, text=True)
    return r.returncode, r.stdout.strip()


def kernel(root, version, layout, headers=True, image="vmlinuz"):
    mods = root / "usr" / "lib" / "modules" / version
    mods.mkdir(parents=True)
    if layout == "boot":
        (root / "boot").mkdir(exist_ok=True)
        (root / "boot" / ("vmlinuz-" + version)).write_text("image")
        (root / "boot" / ("config-" + version)).write_text("config")
    else:
        (mods / image).write_text("image")
        (mods / "config").write_text("config")
    if headers:
        (mods / "build").mkdir()
        (mods / "build" / "Makefile").write_text("")


@pytest.fixture
def root(tmp_path):
    (tmp_path / "usr" / "lib").mkdir(parents=True)
    (tmp_path / "lib").symlink_to("usr/lib")     # merged /usr, as Debian has
    return tmp_path


def test_the_newest_kernel_with_headers_in_either_layout(root):
    kernel(root, "6.12.57+deb13-amd64", "boot")
    kernel(root, "7.3.4+deb13-amd64", "usr-lib-modules")
    kernel(root, "7.4.0-rc1-amd64", "usr-lib-modules", headers=False)
    assert lib(root, 'sroce_kernel_version "$2"') == (0, "7.3.4+deb13-amd64")
    assert lib(root, 'sroce_kernel_file 7.3.4+deb13-amd64 vmlinuz "$2"') == (
        0, "%s/usr/lib/modules/7.3.4+deb13-amd64/vmlinuz" % root)
    assert lib(root, 'sroce_kernel_file 7.3.4+deb13-amd64 config "$2"') == (
        0, "%s/usr/lib/modules/7.3.4+deb13-amd64/config" % root)
    assert lib(root, 'sroce_kernel_file 6.12.57+deb13-amd64 vmlinuz "$2"') == (
        0, "%s/boot/vmlinuz-6.12.57+deb13-amd64" % root)


def test_an_unsigned_image_counts(root):
    kernel(root, "7.3.4+deb13-amd64", "usr-lib-modules", image="vmlinuz.unsigned")
    assert lib(root, 'sroce_kernel_version "$2"') == (0, "7.3.4+deb13-amd64")
    assert lib(root, 'sroce_kernel_file 7.3.4+deb13-amd64 vmlinuz "$2"') == (
        0, "%s/usr/lib/modules/7.3.4+deb13-amd64/vmlinuz.unsigned" % root)


def test_no_kernel_is_an_error_not_a_guess(root):
    kernel(root, "6.1.0-56-amd64", "boot", headers=False)
    assert lib(root, 'sroce_kernel_version "$2"')[0] != 0
    assert lib(root, 'sroce_kernel_file 6.1.0-99-amd64 vmlinuz "$2"')[0] != 0
