#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# fake_device_smoke.sh PROVIDER_STEM PROBE
#
# End-to-end check of discovery through the real libibverbs, without a
# kernel module: a fake sysfs tree (SYSFS_PATH) describes uverbs devices and
# a private mount namespace supplies /dev/infiniband/uverbs0 as a character
# device with /dev/null's numbers.  libibverbs then loads our provider
# (RDMAV_DRIVERS=PROVIDER_STEM), asks it to match, and ibv_open_device()
# runs alloc_context(): the "kernel" (/dev/null) accepts GET_CONTEXT but
# writes no payload, so the provider must refuse with EPROTO and clean up.
#
# Needs root (unshare -m, mount) and no ib_core (otherwise libibverbs
# enumerates over netlink and ignores SYSFS_PATH); exits 77 (skip) if not.
set -eu

PROVIDER=$1
PROBE=$2
EPROTO=71
# The uverbs ABI the provider matches: the one the ABI header defines.
ABI=$(sed -n 's/^#define SROCE_UVERBS_ABI_VERSION \([0-9]*\).*/\1/p' \
	"$(dirname "$0")/../../include/uapi/sroce-abi.h")

if [ -d /sys/module/ib_core ]; then
	echo "SKIP: ib_core is loaded; libibverbs would enumerate via netlink"
	exit 77
fi
if ! unshare -m true 2>/dev/null; then
	echo "SKIP: cannot create a mount namespace (needs root)"
	exit 77
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# make_sysfs DIR IBDEV [SROCE_ABI_VALUE]
make_sysfs() {
	mkdir -p "$1/class/infiniband_verbs/uverbs0" "$1/class/infiniband/$2"
	echo 6 >"$1/class/infiniband_verbs/abi_version"
	echo "$2" >"$1/class/infiniband_verbs/uverbs0/ibdev"
	echo 1:3 >"$1/class/infiniband_verbs/uverbs0/dev"
	echo "$ABI" >"$1/class/infiniband_verbs/uverbs0/abi_version"
	echo "1: CA" >"$1/class/infiniband/$2/node_type"
	if [ $# -ge 3 ]; then
		echo "$3" >"$1/class/infiniband/$2/sroce_abi"
	fi
}

# run_probe SYSFS -> probe output on stdout
run_probe() {
	SYSFS_PATH=$1 RDMAV_DRIVERS=$PROVIDER PROBE=$PROBE \
		unshare -m /bin/sh -ec '
			mount -t tmpfs tmpfs /dev
			mknod /dev/null c 1 3
			mkdir /dev/infiniband
			mknod /dev/infiniband/uverbs0 c 1 3
			exec "$PROBE"' 2>"$TMP/stderr"
}

fail=0
expect() {
	# expect NAME EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then
		echo "ok   $1"
	else
		echo "FAIL $1: expected '$2', got '$3'"
		sed 's/^/     stderr: /' "$TMP/stderr"
		fail=1
	fi
}

make_sysfs "$TMP/renamed" foo0 sroce-1
expect "device with the attribute is claimed whatever its name" \
	"foo0 open_errno=$EPROTO" "$(run_probe "$TMP/renamed")"

make_sysfs "$TMP/noattr" sroce0
expect "sroce-named device without the attribute is not claimed" \
	"" "$(run_probe "$TMP/noattr")"

make_sysfs "$TMP/wrongid" sroce0 sroce-999
expect "device with another sroce ABI id is not claimed" \
	"" "$(run_probe "$TMP/wrongid")"

# Under a libibverbs of another release (a copy of this one named as
# 1.14.99.0, found first through LD_LIBRARY_PATH) the provider registers
# nothing and says why: the shared layouts differ between releases.
lib=$(ldd "$PROBE" | awk '/libibverbs\.so\.1 / { print $3 }')
mkdir -p "$TMP/otherlib"
cp "$(readlink -f "$lib")" "$TMP/otherlib/libibverbs.so.1.14.99.0"
ln -s libibverbs.so.1.14.99.0 "$TMP/otherlib/libibverbs.so.1"
expect "under another release's libibverbs the provider does not register" \
	"" "$(LD_LIBRARY_PATH=$TMP/otherlib run_probe "$TMP/renamed")"
expect "and it says why" "1" \
	"$(grep -c 'built for libibverbs .*libibverbs.so.1.14.99.0; not registering' "$TMP/stderr")"

exit $fail
