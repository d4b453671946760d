# shellcheck shell=bash
# Shared helpers for the sroce scripts: paths, the kernel version, logging.
# Sourced, never run.

SROCE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SROCE_BUILD=${SROCE_BUILD:-$SROCE_ROOT/build}
# Debian's python, not whatever python3 comes first on PATH: pyverbs and
# pytest are Debian packages.
SROCE_PYTHON=/usr/bin/python3

die() { echo "${0##*/}: $*" >&2; exit 1; }
note() { echo "${0##*/}: $*" >&2; }

# The newest kernel that has both an image to boot and headers to build
# against; nothing hard-codes the Debian ABI suffix.
sroce_kernel_version() {
	local v best=
	for v in /boot/vmlinuz-*; do
		v=${v#/boot/vmlinuz-}
		[ -e "/lib/modules/$v/build/Makefile" ] || continue
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done
	[ -n "$best" ] || return 1
	echo "$best"
}
