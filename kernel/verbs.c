// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ib_device_ops table.  Entry points stay thin: check arguments the way
 * real devices do, then hand off to the file that owns the concept.
 */
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

#define SROCE_GID_TABLE_LEN	256
#define SROCE_VENDOR_ID		0xFFFFFF	/* no OUI: software device */

void sroce_fill_device_attrs(struct sroce_dev *sdev, struct ib_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->sys_image_guid = sdev->ib.node_guid;
	a->max_mr_size = U64_MAX;
	a->page_size_cap = PAGE_SIZE;
	a->vendor_id = SROCE_VENDOR_ID;
	a->max_qp = SROCE_MAX_QP;
	a->max_qp_wr = SROCE_MAX_QP_WR;
	a->max_send_sge = SROCE_MAX_SGE;
	a->max_recv_sge = SROCE_MAX_SGE;
	a->max_sge_rd = SROCE_MAX_SGE;
	a->max_cq = SROCE_MAX_CQ;
	a->max_cqe = SROCE_MAX_CQE;
	a->max_mr = SROCE_MAX_MR;
	a->max_mw = SROCE_MAX_MW;
	a->max_pd = SROCE_MAX_PD;
	a->max_qp_rd_atom = SROCE_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = SROCE_MAX_RD_ATOMIC;
	a->max_res_rd_atom = SROCE_MAX_RD_ATOMIC * SROCE_MAX_QP;
	a->max_srq = SROCE_MAX_SRQ;
	a->max_srq_wr = SROCE_MAX_SRQ_WR;
	a->max_srq_sge = SROCE_MAX_SGE;
	a->max_ah = SROCE_MAX_AH;
	a->max_fast_reg_page_list_len = SROCE_MAX_FRMR_PAGES;
	a->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = SROCE_MAX_MCAST_QP;
	a->max_total_mcast_qp_attach = SROCE_MAX_MCAST_GRP * SROCE_MAX_MCAST_QP;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->atomic_cap = IB_ATOMIC_HCA;
	/* CQE timestamps are ns of the raw monotonic clock: a 1 GHz clock. */
	a->timestamp_mask = U64_MAX;
	a->hca_core_clock = 1000000;	/* kHz */
	a->device_cap_flags = IB_DEVICE_SYS_IMAGE_GUID | IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_MEM_MGT_EXTENSIONS | IB_DEVICE_SRQ_RESIZE |
			      IB_DEVICE_MEM_WINDOW | IB_DEVICE_MEM_WINDOW_TYPE_2B |
			      IB_DEVICE_XRC |
			      /* global visibility only: no persistent memory */
			      SROCE_DEVICE_PLACEMENT_CAPS;
	/* `rdma link delete` may remove the device, as for rxe. */
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_ON_DEMAND_PAGING;
	/*
	 * On-demand paging (odp.c), explicit MRs only.  RC: every operation;
	 * XRC: the same through SRQs; UD: sends (a UD receive that faults
	 * loses its datagram, so it is not offered, as on ConnectX); UC:
	 * none (a fault loses the whole message).  FLUSH and ATOMIC WRITE:
	 * the bits only newer kernels name (uapi values, 6.16).
	 */
	a->odp_caps.general_caps = IB_ODP_SUPPORT;
	a->odp_caps.per_transport_caps.rc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE |
		IB_ODP_SUPPORT_READ | IB_ODP_SUPPORT_ATOMIC |
		IB_ODP_SUPPORT_SRQ_RECV | SROCE_ODP_SUPPORT_FLUSH |
		SROCE_ODP_SUPPORT_ATOMIC_WRITE;
	a->odp_caps.per_transport_caps.xrc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
	a->odp_caps.per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND;
}

static int sroce_query_device(struct ib_device *ib, struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	/* ib_core's own query at registration passes no udata (7.x). */
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	sroce_fill_device_attrs(to_sdev(ib), attr);
	return 0;
}

static int sroce_query_port(struct ib_device *ib, u32 port,
			    struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sdev(ib);
	int err;

	/* ib_core zeroes *attr before calling us. */
	attr->state = sroce_port_state(sdev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
				   IB_PORT_PHYS_STATE_LINK_UP :
				   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = iboe_get_mtu(READ_ONCE(sdev->ndev->mtu));
	attr->gid_tbl_len = SROCE_GID_TABLE_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = 1U << 31;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;
	/*
	 * A netdev that cannot tell its speed (gre, ipip: no ethtool link
	 * settings) gets what ib_core would make of it, 1X SDR, without
	 * ib_core's warning on every query of the port.
	 */
	if (!sdev->ndev->ethtool_ops->get_link_ksettings) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
		return 0;
	}
	err = ib_get_eth_speed(ib, port, &attr->active_speed,
			       &attr->active_width);
	return err;
}

static int sroce_get_port_immutable(struct ib_device *ib, u32 port,
				    struct ib_port_immutable *imm)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ib, port, &attr);
	if (err)
		return err;
	imm->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	imm->pkey_tbl_len = attr.pkey_tbl_len;
	imm->gid_tbl_len = attr.gid_tbl_len;
	imm->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer sroce_get_link_layer(struct ib_device *ib, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int sroce_query_pkey(struct ib_device *ib, u32 port, u16 index, u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/*
 * Each user context pins the module: `rmmod sroce` while a process uses a
 * device fails with "in use" instead of silently tearing the device out
 * from under it.  ib_uverbs would not pin it for us, because we support
 * disassociation; that still lets `rdma link delete` go ahead, and
 * disassociation deallocates the context, so the module unloads after.
 */
static int sroce_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	struct sroce_alloc_ucontext_resp resp = {
		.abi_version = SROCE_UVERBS_ABI_VERSION,
	};
	int err;

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;		/* being unloaded */
	sroce_sq_marks_init(&to_suctx(uctx)->sq_marks, uctx, &resp);
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err) {
		sroce_sq_marks_free(&to_suctx(uctx)->sq_marks);
		module_put(THIS_MODULE);
	}
	return err;
}

static void sroce_dealloc_ucontext(struct ib_ucontext *uctx)
{
	struct sroce_sq_marks *m = &to_suctx(uctx)->sq_marks;

	sroce_sqpoll_forget(m);
	sroce_sq_marks_free(m);
	module_put(THIS_MODULE);
}

/*
 * `rdma link delete` and netdev removal must not wait for every process to
 * close its verbs file.  With this op ib_core destroys the process's
 * objects itself and lets it go on with a dead context.  Nothing else is
 * needed: its mappings are vmalloc pages that hold their own references,
 * so a process still touching its rings only touches memory nobody else
 * reads, and its doorbells fail with EIO.
 */
static void sroce_disassociate_ucontext(struct ib_ucontext *uctx)
{
}

static int sroce_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(pd->device);

	if (atomic_inc_return(&sdev->num_pd) > SROCE_MAX_PD) {
		atomic_dec(&sdev->num_pd);
		return -ENOMEM;
	}
	return 0;
}

static int sroce_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(pd->device)->num_pd);
	return 0;
}

/*
 * An XRC domain needs nothing of ours: ib_core ties it to the file, counts
 * its users and keeps its target QPs; the receive path checks that an
 * XRCETH names an SRQ of the target QP's domain by comparing pointers.
 */
static int sroce_alloc_xrcd(struct ib_xrcd *xrcd, struct ib_udata *udata)
{
	return 0;
}

static int sroce_dealloc_xrcd(struct ib_xrcd *xrcd, struct ib_udata *udata)
{
	return 0;
}

const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,
	.device_group = &sroce_attr_group,

	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.alloc_mr = sroce_alloc_mr,
	.alloc_mw = sroce_alloc_mw,
	.alloc_pd = sroce_alloc_pd,
	.alloc_ucontext = sroce_alloc_ucontext,
	.alloc_xrcd = sroce_alloc_xrcd,
	.attach_mcast = sroce_attach_mcast,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_create_cq_op,
	.create_qp = sroce_create_qp,
	.create_srq = sroce_create_srq,
	.create_user_ah = sroce_create_ah,
	.dealloc_driver = sroce_dealloc_driver,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.dealloc_xrcd = sroce_dealloc_xrcd,
	.dereg_mr = sroce_dereg_mr,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.fill_res_qp_entry = sroce_fill_res_qp_entry,
	.detach_mcast = sroce_detach_mcast,
	.advise_mr = sroce_advise_mr,
	.get_dma_mr = sroce_get_dma_mr,
	.get_hw_stats = sroce_get_hw_stats,
	.get_link_layer = sroce_get_link_layer,
	.get_port_immutable = sroce_get_port_immutable,
	.map_mr_sg = sroce_map_mr_sg,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.process_mad = sroce_process_mad,
	.query_ah = sroce_query_ah,
	.query_device = sroce_query_device,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,
	.query_qp = sroce_query_qp,
	.query_srq = sroce_query_srq,
	.reg_user_mr = sroce_reg_user_mr_op,
	.req_notify_cq = sroce_req_notify_cq,
	.SROCE_RESIZE_CQ_OP = sroce_resize_cq_op,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ib),
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ib),
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ib),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ib),
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ib),
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ib),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ib),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, sroce_xrcd, ib),
};
