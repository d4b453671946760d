#!/bin/bash
# Runs in a fresh guest of one Debian release (scripts/vm-run --distro R
# --no-install), next to that release's sroce packages: installs them as a
# user would, lets `rdma link add` load the module, runs a verified RC
# pingpong across network namespaces, then removes everything and looks
# for anything left behind.  Nothing here uses the project tree.
set -euo pipefail
cd "$(dirname "$0")"
step() { echo "== $*"; }

step "install $(ls ./*.deb | xargs -n1 basename | paste -sd' ')"
# Offline: every dependency is installed in the guest already, so apt
# must resolve the two local files without downloading or upgrading.
apt-get install -y --no-install-recommends -o Dpkg::Use-Pty=0 \
	./sroce-dkms_*.deb ./ibverbs-provider-sroce_*.deb >apt-install.log 2>&1 ||
	{ cat apt-install.log; exit 1; }
grep -E '^[0-9]+ upgraded' apt-install.log
grep -q '^0 upgraded, 2 newly installed, 0 to remove' apt-install.log ||
	{ echo "apt did more than install the two packages"; cat apt-install.log; exit 1; }
dkms status sroce
[ "$(modinfo -F alias sroce)" = rdma-link-sroce ] || { echo "no rdma-link-sroce alias"; exit 1; }
echo "modinfo: version $(modinfo -F version sroce), $(modinfo -n sroce)"

step "rdma link add loads the module"
! grep -q '^sroce ' /proc/modules || { echo "sroce was loaded before rdma link add"; exit 1; }
rdma link add sroce0 type sroce netdev veth0
ip netns exec peer rdma link add sroce1 type sroce netdev veth1
grep '^sroce ' /proc/modules | cut -d' ' -f1-3
ibv_devices

step "ibv_rc_pingpong across namespaces, data checked"
# The RoCE v2 GID of an IPv4 address (::ffff:a.b.c.d).
gid_of() {	# DEV HEX
	local g
	for g in /sys/class/infiniband/$1/ports/1/gids/*; do
		if grep -q "ffff:$2" "$g" &&
			grep -q v2 "/sys/class/infiniband/$1/ports/1/gid_attrs/types/${g##*/}"; then
			echo "${g##*/}"
			return
		fi
	done
	return 1
}
g0=$(gid_of sroce0 c633:6401)
g1=$(ip netns exec peer bash -c "$(declare -f gid_of); gid_of sroce1 c633:6402")
ip netns exec peer timeout 120 ibv_rc_pingpong -d sroce1 -g "$g1" -n 200 -s 4096 -c \
	>server.log 2>&1 &
srv=$!
for _ in $(seq 100); do
	ip netns exec peer ss -Hltn 'sport = :18515' | grep -q . && break
	sleep 0.2
done
timeout 120 ibv_rc_pingpong -d sroce0 -g "$g0" -n 200 -s 4096 -c 198.51.100.2
wait $srv || { echo "server failed:"; cat server.log; exit 1; }

# A kernel installed after the package (./later/, scripts/later-kernel-debs:
# the newer kernel Debian offers this release's users): DKMS must build the
# module for it as the kernel goes in, with nothing asked of the user.
if compgen -G "./later/*.deb" >/dev/null; then
	step "a kernel installed later: $(ls ./later/linux-headers-[0-9]*-amd64_*.deb | xargs -n1 basename)"
	later=$(dpkg-deb -f ./later/linux-headers-[0-9]*-amd64_*.deb Package)
	later=${later#linux-headers-}
	# A bookworm guest shows the host's /boot, read-only: the new kernel's
	# image and initramfs go to a tmpfs over it (this guest never boots
	# them; the running kernel needs nothing from /boot).
	if ! touch /boot/.sroce-writable 2>/dev/null; then
		mount -t tmpfs tmpfs /boot
	fi
	rm -f /boot/.sroce-writable
	# Nor can the image's postinst link /vmlinuz in the read-only root
	# directory: Debian's own switch for systems without those links.
	if ! touch /.sroce-writable 2>/dev/null; then
		echo "do_symlinks = no" >>/etc/kernel-img.conf
	fi
	rm -f /.sroce-writable
	apt-get install -y --no-install-recommends -o Dpkg::Use-Pty=0 ./later/*.deb \
		>apt-later.log 2>&1 || { cat apt-later.log; exit 1; }
	grep -E '^[0-9]+ upgraded' apt-later.log
	dkms status sroce
	dkms status sroce -k "$later" | grep -q ': installed' ||
		{ echo "DKMS did not build sroce for $later"; grep -i -A3 dkms apt-later.log; exit 1; }
	ko=$(find "/lib/modules/$later" -name 'sroce.ko*' | head -1)
	[ -n "$ko" ] || { echo "no sroce.ko under /lib/modules/$later"; exit 1; }
	echo "$ko: vermagic $(modinfo -F vermagic "$ko")"
	modinfo -F vermagic "$ko" | grep -q "^$later " ||
		{ echo "$ko was not built for $later"; exit 1; }
fi

step "remove"
rdma link delete sroce0
ip netns exec peer rdma link delete sroce1
rmmod sroce
apt-get purge -y -o Dpkg::Use-Pty=0 sroce-dkms ibverbs-provider-sroce >apt-purge.log 2>&1 ||
	{ cat apt-purge.log; exit 1; }
grep -E '^[0-9]+ upgraded' apt-purge.log

step "left behind"
left=$( {
	dpkg -l | awk '$2 ~ /sroce/ { print "dpkg: " $1 " " $2 }'
	find /usr/src /var/lib/dkms /lib/modules /etc /usr/lib/x86_64-linux-gnu/libibverbs \
		/usr/share/doc /var/lib/dpkg/info -iname '*sroce*' 2>/dev/null
	grep -rl sroce "/lib/modules/$(uname -r)"/modules.{dep,alias} 2>/dev/null
} || true)
if [ -n "$left" ]; then
	echo "left behind:"
	echo "$left"
	exit 1
fi
echo "nothing left behind"
echo "package check passed"
