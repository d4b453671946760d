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

# sroce_install PACKAGE...: installs from the host's own apt sources those
# of the Debian packages that are not installed yet (as root); quiet and
# quick when all are.  Its status is apt-get's.
sroce_install() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	[ "$(id -u)" = 0 ] || die "need root to install: ${missing[*]}"
	note "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			"${missing[@]}" >/dev/null
}

# sroce_side_apt DIR SOURCE_LINE...: apt configured on the side, all of
# it in DIR (its sources.list, lists and downloads), for packages that are
# unpacked, never installed; sets SROCE_APT_OPTS for apt-get and apt-cache.
# The host's own apt sources and state stay untouched.  The archive here
# is a snapshot: its Release files may be past their Valid-Until.
sroce_side_apt() {
	local dir=$1
	shift
	mkdir -p "$dir/lists/partial" "$dir/archives/partial"
	printf '%s\n' "$@" >"$dir/sources.list"
	# shellcheck disable=SC2034  # for the caller
	SROCE_APT_OPTS=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache::Archives=$dir/archives"
		-o 'Acquire::Check-Valid-Until=false' -o APT::Sandbox::User=root -qq)
}

# sroce_mmdebstrap_nosync: the mmdebstrap option that spares a new root
# dpkg's syncs.  mmdebstrap's eatmydata hook spares the most, but it asks
# dpkg-architecture (dpkg-dev) for the library folder, which a bare host (a
# CI runner, scripts/bare-host's chroot) may lack, and then the whole root
# fails; there dpkg's unsafe-io spares the most it can without it.
sroce_mmdebstrap_nosync() {
	local hooks=${SROCE_MMDEBSTRAP_HOOKS:-/usr/share/mmdebstrap/hooks}
	if [ -d "$hooks/eatmydata" ] && command -v dpkg-architecture >/dev/null; then
		echo "--hook-dir=$hooks/eatmydata"
	else
		echo "--dpkgopt=force-unsafe-io"
	fi
}

# sroce_kernel_file VERSION NAME [SYSROOT]: where Debian put kernel
# VERSION's NAME (vmlinuz or config).  Up to 7.2 its packages put them in
# /boot as NAME-VERSION; from 7.3 (trixie-backports, experimental) in
# /usr/lib/modules/VERSION/ as NAME, the unsigned image as vmlinuz.unsigned,
# and nothing in /boot.
sroce_kernel_file() {
	local version=$1 name=$2 sysroot=${3:-} f
	for f in "$sysroot/boot/$name-$version" "$sysroot/usr/lib/modules/$version/$name" \
		"$sysroot/usr/lib/modules/$version/$name.unsigned"; do
		[ -e "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}

# The newest kernel that has both an image to boot and headers to build
# against; nothing hard-codes the Debian ABI suffix.  With SYSROOT: the
# newest in that root file system (a release root of scripts/distro-root).
sroce_kernel_version() {
	local sysroot=${1:-} f v best= kdir link
	for f in "$sysroot"/boot/vmlinuz-* "$sysroot"/usr/lib/modules/*/vmlinuz*; do
		case $f in
		"$sysroot"/boot/vmlinuz-*) v=${f#"$sysroot"/boot/vmlinuz-} ;;
		*/vmlinuz | */vmlinuz.unsigned) v=${f%/vmlinuz*} v=${v##*/} ;;
		*) continue ;;
		esac
		# Its headers.  The build link is absolute in bookworm's packaging
		# (6.1 and its 6.12 backport): read it inside the sysroot.
		kdir=$sysroot/lib/modules/$v/build
		if [ -L "$kdir" ]; then
			link=$(readlink "$kdir")
			case $link in
			/*) kdir=$sysroot$link ;;
			*) kdir=$sysroot/lib/modules/$v/$link ;;
			esac
		fi
		[ -e "$kdir/Makefile" ] || continue
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done
	[ -n "$best" ] || return 1
	echo "$best"
}

# The guest's qemu CPU model (scripts/vm-run --cpu; scripts/bench
# records it).  See README, "The guest's CPU model", for why this one.
export SROCE_GUEST_CPU=${SROCE_GUEST_CPU:-max,-erms,-fsrm}

# Cached release roots (scripts/distro-root), outside the work tree.
SROCE_CACHE=${SROCE_CACHE:-/var/cache/sroce}

# sroce_vm_run ARGS...: scripts/vm-run for a script that waits for it,
# with a parent-death signal: a caller that is killed (a CI limit, kill,
# a parent shell's exit) takes the guest with it, through vm-run's own
# trap, which stops qemu and removes its folder.  Without it an orphaned
# vm-run ran its guest to the end of its limit (up to 90 minutes).
# Scripts that exec vm-run need none: vm-run is then the caller.
sroce_vm_run() {
	setpriv --pdeathsig TERM -- "$SROCE_ROOT/scripts/vm-run" "$@"
}

# The qemu the guests run on: on Debian 12, the backport of qemu 10 that
# scripts/emulator unpacks into $SROCE_CACHE/qemu (its TCG is the faster),
# else the host's; SROCE_QEMU names another.  Sets SROCE_QEMU_CMD, the
# binary with the options that point it at its own firmware and modules,
# and prints the binary.
sroce_qemu() {
	local prefix=$SROCE_CACHE/qemu/current
	if [ -n "${SROCE_QEMU:-}" ]; then
		SROCE_QEMU_CMD=("$SROCE_QEMU")
	elif [ -x "$prefix/usr/bin/qemu-system-x86_64" ]; then
		SROCE_QEMU_CMD=("$prefix/usr/bin/qemu-system-x86_64" -L "$prefix/usr/share/qemu")
		# Not the host qemu's modules, which the backport refuses to load.
		export QEMU_MODULE_DIR=$prefix/usr/lib/x86_64-linux-gnu/qemu
	else
		SROCE_QEMU_CMD=(qemu-system-x86_64)
	fi
	echo "${SROCE_QEMU_CMD[0]}"
}

# sroce_boots_under SECONDS IMAGE INITRD QEMU_ARGS...: boots IMAGE with
# the guest's INITRD (no root to mount, so its init powers off) under
# QEMU_ARGS; 0 if the initramfs ran within SECONDS, 124 on the time
# limit, else qemu's status.  SROCE_BOOT_OUTPUT: the console.
sroce_boots_under() {
	local seconds=$1 image=$2 initrd=$3 rc=0
	shift 3
	SROCE_BOOT_OUTPUT=$(timeout -k 2 "$seconds" "${SROCE_QEMU_CMD[@]}" "$@" \
		-smp 2 -m 256 -nodefaults -display none -no-reboot -bios qboot.rom \
		-kernel "$image" -initrd "$initrd" -append "console=ttyS0 panic=-1" \
		-serial stdio </dev/null 2>&1) || rc=$?
	[ $rc != 0 ] || [[ $SROCE_BOOT_OUTPUT == *"cannot mount the host root"* ]] || rc=1
	return $rc
}

# sroce_accel IMAGE INITRD: which accelerator the guests run on, KVM or
# TCG, decided by running a guest, not by /dev/kvm's presence: on some
# machines /dev/kvm opens and creates a VM, and even runs a few real-mode
# instructions, but a kernel never boots (this one: qemu aborts on -cpu
# host, and under -cpu qemu64 6.1 stalls early in its boot).  So the probe boots the guest's own kernel and
# initramfs under KVM with no root to mount: the initramfs says so and
# powers off, in about a second where KVM works.  Decided once per host
# boot and qemu binary (cached in $SROCE_CACHE), or by SROCE_ACCEL (kvm,
# tcg; auto is the default).  Call sroce_qemu first.  Sets SROCE_ACCEL_USED
# (kvm or tcg) and SROCE_ACCEL_WHY (why, in a few words).
SROCE_ACCEL_PROBE_SECONDS=20
sroce_accel() {
	local image=$1 initrd=$2 want=${SROCE_ACCEL:-auto} key cache rc=0
	case $want in
	kvm | tcg) SROCE_ACCEL_USED=$want SROCE_ACCEL_WHY="SROCE_ACCEL=$want"; return 0 ;;
	auto) ;;
	*) die "SROCE_ACCEL=$want: kvm, tcg or auto" ;;
	esac
	if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		SROCE_ACCEL_USED=tcg SROCE_ACCEL_WHY="no usable /dev/kvm"
		return 0
	fi
	key="$(cat /proc/sys/kernel/random/boot_id 2>/dev/null) $(readlink -f "$(command -v "${SROCE_QEMU_CMD[0]}")")"
	cache=$SROCE_CACHE/accel-probe
	if [ -r "$cache" ] && [ "$(head -n 1 "$cache")" = "$key" ]; then
		SROCE_ACCEL_USED=$(sed -n 2p "$cache")
		SROCE_ACCEL_WHY="$(sed -n 3p "$cache") (probed earlier since the host booted)"
		return 0
	fi
	sroce_boots_under "$SROCE_ACCEL_PROBE_SECONDS" "$image" "$initrd" -accel kvm -cpu host || rc=$?
	case $rc in
	0) SROCE_ACCEL_USED=kvm SROCE_ACCEL_WHY="a KVM guest booted" ;;
	124 | 137)
		SROCE_ACCEL_USED=tcg
		SROCE_ACCEL_WHY="/dev/kvm opens but a KVM guest did not boot in ${SROCE_ACCEL_PROBE_SECONDS} s" ;;
	*)
		SROCE_ACCEL_USED=tcg
		SROCE_ACCEL_WHY="qemu could not run a KVM guest (status $rc: $(grep -m1 -i error <<<"$SROCE_BOOT_OUTPUT" | cut -c1-80))" ;;
	esac
	if mkdir -p "$SROCE_CACHE" 2>/dev/null; then
		{ printf '%s\n%s\n%s\n' "$key" "$SROCE_ACCEL_USED" "$SROCE_ACCEL_WHY" >"$cache.$$" &&
			mv "$cache.$$" "$cache"; } 2>/dev/null || rm -f "$cache.$$"
	fi
}

# The releases scripts/build --distro and scripts/vm-run --distro know,
# each a root the project builds (scripts/distro-root).  Without --distro
# a guest boots this machine's own root, which must then be Debian 12
# (scripts/setup); --distro bookworm boots a bookworm root the project
# built, on any Linux host.  The other three are a release's user space
# with the newer kernel Debian offers its users: bookworm-backports
# (6.12.y with rdma-core 44), trixie-backports and experimental (sid with
# the next release candidate).
SROCE_KERNEL_SUITES="bookworm-backports trixie-backports experimental"
sroce_check_distro() {
	case $1 in
	bookworm | trixie | sid | bookworm-backports | trixie-backports | experimental) ;;
	*) die "unknown release '$1' (bookworm, trixie, sid, $SROCE_KERNEL_SUITES)" ;;
	esac
}

# Whether this machine is Debian 12, whose own root a guest can boot once
# scripts/setup has installed what it needs.
sroce_host_is_bookworm() {
	# shellcheck disable=SC1091
	(. /etc/os-release 2>/dev/null && [ "${ID:-}" = debian ] && [ "${VERSION_CODENAME:-}" = bookworm ])
}

# sroce_distro_base NAME: the release whose user space a root NAME has.
sroce_distro_base() {
	case $1 in
	bookworm-backports) echo bookworm ;;
	trixie-backports) echo trixie ;;
	experimental) echo sid ;;
	*) echo "$1" ;;
	esac
}

# sroce_unpack_vmlinux VMLINUZ CONFIG OUT: Debian's vmlinuz is compressed
# (xz on 6.1, zstd on 6.12 and later), and decompressing it under TCG costs
# seconds per boot.  The same kernel, decompressed once, boots directly
# through its PVH entry point (CONFIG_PVH).  Leaves OUT absent (and vm-run
# boots the vmlinuz) when the kernel has no PVH entry or nothing unpacks.
sroce_unpack_vmlinux() {
	local vmlinuz=$1 config=$2 out=$3 magic off unpack
	[ ! -e "$out" ] || [ "$vmlinuz" -nt "$out" ] || return 0
	rm -f "$out"
	grep -q '^CONFIG_PVH=y' "$config" 2>/dev/null || return 0
	for magic in $'\xFD7zXZ\x00' $'\x28\xB5\x2F\xFD' $'\x1F\x8B\x08'; do
		case $magic in
		$'\xFD7zXZ\x00') unpack="xz -dc --single-stream" ;;
		$'\x28\xB5\x2F\xFD') unpack="zstd -dcq" ;;
		*) unpack="gzip -dc" ;;
		esac
		command -v "${unpack%% *}" >/dev/null || continue
		# The first match can be a stray byte sequence: try each.
		for off in $(LC_ALL=C grep -abo "$magic" "$vmlinuz" | cut -d: -f1 | head -5); do
			tail -c +$((off + 1)) "$vmlinuz" | $unpack >"$out.new" 2>/dev/null || true
			if [ "$(head -c 4 "$out.new" 2>/dev/null)" = $'\x7fELF' ]; then
				mv "$out.new" "$out"
				return 0
			fi
			rm -f "$out.new"
		done
	done
}

# sroce_mirror_module_sources DIR: the module's sources (Kbuild, VERSION,
# kernel/, include/) copied into DIR with their timestamps, since Kbuild
# writes its objects beside its sources; only those newer than DIR's copy,
# so make rebuilds only what changed, and those deleted since are removed.
sroce_mirror_module_sources() {
	local dir=$1
	mkdir -p "$dir"
	cp -p "$SROCE_ROOT/Kbuild" "$dir/"
	[ ! -e "$SROCE_ROOT/VERSION" ] || cp -p "$SROCE_ROOT/VERSION" "$dir/"	# read by Kbuild
	if [ -d "$dir/kernel" ]; then
		(cd "$dir" && find kernel include -type f -name '*.[ch]') |
			while read -r f; do [ -e "$SROCE_ROOT/$f" ] || rm -f "$dir/$f"; done
	fi
	(cd "$SROCE_ROOT" && find kernel include -type f -name '*.[ch]' -print0 |
		xargs -0 cp -p -u --parents -t "$dir")
}

# sroce_dkms_tree DIR VERSION: what DKMS builds sroce.ko from, in DIR
# (/usr/src/sroce-VERSION in the sroce-dkms package and for
# scripts/dkms-install): the files Kbuild and the compile probes need, as
# the repository has them (outside a git checkout, every file under
# kernel/ and include/ but build products), and dkms.conf.
sroce_dkms_tree() {
	local dir=$1 version=$2
	mkdir -p "$dir"
	(
		cd "$SROCE_ROOT"
		if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
			git ls-files -z Kbuild VERSION kernel include
		else
			find Kbuild VERSION kernel include -type f \
				! -name '*.o' ! -name '*.ko' ! -name '*.mod*' ! -name '.*.cmd' \
				! -name sroce_config.h -print0
		fi | xargs -0 cp --parents -t "$dir"
	)
	sed "s/@VERSION@/$version/" "$SROCE_ROOT/packaging/dkms.conf.in" >"$dir/dkms.conf"
}

# sroce_in_root ROOT [--bind PATH]... -- COMMAND...: runs COMMAND chrooted
# into a root (a release root, scripts/bare-host's chroot) with /proc, /dev,
# a private /tmp and each PATH (at
# its own path) mounted, in a mount namespace of its own: the mounts are
# seen by this command alone and vanish with it however it ends, so
# concurrent users of one root never collide and none is left behind.
sroce_in_root() {
	local root=$1 binds=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		[ "$1" = --bind ] || die "sroce_in_root: unknown option $1"
		binds+=("$2")
		shift 2
	done
	shift
	unshare --mount --propagation private -- /bin/bash -c '
		set -eu
		root=$1 nbinds=$2
		shift 2
		# The root a mount point of its own, as a container'\''s is: a
		# chroot nested in it (a release root built from a chroot,
		# scripts/bare-host) can then make its propagation private.
		mount --bind "$root" "$root"
		mount --bind /proc "$root/proc"
		mount --bind /dev "$root/dev"
		mount -t tmpfs -o mode=1777 tmp "$root/tmp"
		for ((i = 0; i < nbinds; i++)); do
			# mkdir through chroot: the root'\''s own symlinks resolve in it
			chroot "$root" mkdir -p "$1"
			mount --bind "$1" "$root$1"
			shift
		done
		exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 TMPDIR=/tmp DEBIAN_FRONTEND=noninteractive "$@"
	' sroce-in-root "$root" "${#binds[@]}" "${binds[@]+"${binds[@]}"}" "$@"
}
