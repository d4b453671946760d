/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place that knows kernel versions differ.  sroce_config.h says
 * which shape of each API this kernel has (written by kernel/compat/
 * configure from compile probes, never from LINUX_VERSION_CODE: Debian's
 * stable kernels backport API changes).  Below, each difference gets one
 * spelling for the rest of the module: the newest kernel's where a
 * fallback can provide it on older ones, an adaptor where an ops
 * signature changed.  Each entry names the kernel change it covers.
 *
 * Included at the end of sroce.h, after the prototypes the adaptors call.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/flow.h>
#include <net/inet_dscp.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_umem.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/ib_verbs.h>

#include "sroce_config.h"

/* 6.13 "hrtimers: Introduce hrtimer_setup()"; hrtimer_init() later went. */
#ifndef HAVE_HRTIMER_SETUP
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*fn)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = fn;
}
#endif

/* 6.16 "timers: Rename from_timer() to timer_container_of()" (a macro). */
#ifndef timer_container_of
#define timer_container_of(var, timer, field) from_timer(var, timer, field)
#endif

/* 6.2 "timers: Rename del_timer() to timer_delete()", in 6.1.y from
 * 6.1.84 on; del_timer() itself went in 6.15.
 */
#ifndef HAVE_TIMER_DELETE
#define timer_delete(t) del_timer(t)
#define timer_delete_sync(t) del_timer_sync(t)
#endif

/* 6.17 "workqueue: Add new WQ_PERCPU flag", backported to 6.12.y between
 * 6.12.95 (bookworm-backports: absent) and 6.12.117 (present): a point
 * release cannot say, the compile probe does.  From 7.2 a workqueue that
 * is neither WQ_PERCPU nor WQ_UNBOUND warns.  Before the flag, bound was
 * the default, so 0 means the same there.
 */
#ifndef HAVE_WQ_PERCPU
#define WQ_PERCPU 0
#endif

/*
 * 6.2 "RDMA: Extend RDMA user ABI to support flush" and "... atomic
 * write": the device capability bits of the IBTA 1.5 placement verbs.
 * Before them ib_core knows no FLUSH access bit (an MR cannot ask for
 * one) and user space no capability to look for: nothing to claim.
 */
/* ODP capability bits of 6.16's uapi (IB_UVERBS_ODP_SUPPORT_*): fixed values. */
#define SROCE_ODP_SUPPORT_FLUSH		(1 << 6)
#define SROCE_ODP_SUPPORT_ATOMIC_WRITE	(1 << 7)

#ifdef HAVE_IB_DEVICE_PLACEMENT_CAPS
#define SROCE_DEVICE_PLACEMENT_CAPS (IB_DEVICE_FLUSH_GLOBAL | IB_DEVICE_ATOMIC_WRITE)
#else
#define SROCE_DEVICE_PLACEMENT_CAPS 0
#endif

/* 7.2 "RDMA/umem: Rename ib_umem_get() to ib_umem_get_va()". */
#ifndef HAVE_IB_UMEM_GET_VA
#define ib_umem_get_va(dev, addr, size, access) ib_umem_get(dev, addr, size, access)
#endif

/* After 6.12, setup_udp_tunnel_sock() and udp_tunnel_sock_release() take
 * the struct sock rather than its struct socket.
 */
static inline void sroce_setup_udp_tunnel_sock(struct net *net,
					       struct socket *sock,
					       struct udp_tunnel_sock_cfg *cfg)
{
#ifdef HAVE_UDP_TUNNEL_SOCK_SK
	setup_udp_tunnel_sock(net, sock->sk, cfg);
#else
	setup_udp_tunnel_sock(net, sock, cfg);
#endif
}

static inline void sroce_udp_tunnel_sock_release(struct socket *sock)
{
#ifdef HAVE_UDP_TUNNEL_SOCK_SK
	udp_tunnel_sock_release(sock->sk);
#else
	udp_tunnel_sock_release(sock);
#endif
}

/*
 * 6.14 "RDMA/core: Support link status events dispatching": ib_core
 * watches the netdev it was given (ib_device_set_netdev) and raises
 * PORT_ACTIVE/PORT_ERR itself, once per change.  A driver that also
 * raised them would deliver each one twice.
 */
#ifdef HAVE_REPORT_PORT_EVENT
#define SROCE_CORE_RAISES_PORT_EVENTS true
#else
#define SROCE_CORE_RAISES_PORT_EVENTS false
#endif

/* 6.15 "ipv4: Convert ->flowi4_tos to dscp_t": routes are looked up by
 * DSCP (flowi4_dscp is a macro where it exists).
 */
static inline void sroce_flowi4_set_tos(struct flowi4 *fl, u8 tos)
{
#ifdef flowi4_dscp
	fl->flowi4_dscp = inet_dsfield_to_dscp(tos);
#else
	fl->flowi4_tos = RT_TOS(tos);
#endif
}

/* ---- ib_device_ops whose signatures changed: one adaptor each ---------- */

/* 6.11 "RDMA: Pass entire uverbs attr bundle to create cq function". */
#ifdef HAVE_CREATE_CQ_ATTRS
static inline int sroce_create_cq_op(struct ib_cq *cq,
				     const struct ib_cq_init_attr *attr,
				     struct uverbs_attr_bundle *attrs)
{
	return sroce_create_cq(cq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
#define sroce_create_cq_op sroce_create_cq
#endif

/* 6.17 "RDMA/core: Introduce a DMAH object": reg_user_mr takes a DMA
 * handle (placement hints for PCIe TPH).  sroce has no DMA to steer.
 */
#ifdef HAVE_REG_USER_MR_DMAH
static inline struct ib_mr *sroce_reg_user_mr_op(struct ib_pd *pd, u64 start,
						 u64 length, u64 iova,
						 int access,
						 struct ib_dmah *dmah,
						 struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return sroce_reg_user_mr(pd, start, length, iova, access, udata);
}
#else
#define sroce_reg_user_mr_op sroce_reg_user_mr
#endif

/* 7.1 "RDMA: Clarify that CQ resize is a user-space verb": the op is
 * resize_user_cq and counts CQEs in an unsigned int.
 */
#ifdef HAVE_RESIZE_USER_CQ
#define SROCE_RESIZE_CQ_OP resize_user_cq
static inline int sroce_resize_cq_op(struct ib_cq *cq, unsigned int cqe,
				     struct ib_udata *udata)
{
	if (cqe > INT_MAX)
		return -EINVAL;
	return sroce_resize_cq(cq, cqe, udata);
}
#else
#define SROCE_RESIZE_CQ_OP resize_cq
#define sroce_resize_cq_op sroce_resize_cq
#endif

#endif /* SROCE_COMPAT_H */
