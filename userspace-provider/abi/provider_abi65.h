// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-core 65.0 private provider ABI (IBVERBS_PRIVATE_65), declared by us.
 * Include abi/provider_abi.h, not this file: it selects this header or
 * provider_abi34.h for the rdma-core release CMake found.
 *
 * Debian ships neither rdma-core's internal driver.h nor kern-abi.h, so a
 * provider built against the packaged libibverbs must declare the private
 * ABI itself.  Everything here is written from rdma-core 65.0's
 * libibverbs/driver.h (private) and libibverbs/verbs.h (public), as
 * packaged by Debian (65.0-1.1).  Every number pinned below was checked two
 * ways, x86_64: against rdma-core's own driver.h of that release, compiled,
 * offset by offset; and by building this header against the installed
 * headers and running the unit tests against Debian sid's libibverbs.
 *
 * What changed for a provider since 56.1 (PABI 34), through PABI 57, 59, 64
 * and 65:
 *   - verbs_context_ops: 17 ops inserted in alphabetical order (dmah and
 *     reg_mr_ex in v59, dm_export_dmabuf_fd and query_port_speed in v62,
 *     alloc_buf/free_buf in v64, ten comp_cntr ops in 65), so nearly every
 *     entry moved: 93 pointers, 744 bytes.
 *   - verbs_context (public) grew up by six pointers: `context` is at 368.
 *   - ibv_cmd_get_context() takes an ibv_fd_arr (v57), ibv_cmd_create_cq_ex()
 *     a verbs_create_cq_prov_attr before the CQ (v59), and
 *     ibv_cmd_create_qp_ex2() a trailing driver command buffer (v64).
 *   - the registration entry point is verbs_register_driver_65, and
 *     libibverbs opens lib<name>-rdmav65.so.
 * Unchanged: verbs_device_ops, verbs_device, verbs_sysfs_dev,
 * verbs_match_ent, and the verbs_mr/qp/cq/srq/xrcd wrappers.
 *
 * "Private" means it changes between rdma-core releases without the PABI
 * number necessarily changing (v62 inserted ops under PABI 59).  So:
 *   - the build refuses any libibverbs but the supported ones
 *     (CMakeLists.txt);
 *   - every size and offset libibverbs relies on is pinned below with
 *     static_assert, so an accidental edit fails to compile instead of
 *     corrupting libibverbs' memory at run time.
 *
 * Command buffers and the ibv_cmd_* marshalling helpers whose signatures
 * are the same in every supported release live in cmd_abi.h; the three
 * whose signatures changed are declared at the end of this file and called
 * through the shims in provider_abi.h.
 */
#ifndef SROCE_PROVIDER_ABI65_H
#define SROCE_PROVIDER_ABI65_H

#ifndef __cplusplus
#error "provider_abi65.h is a C++20 header"
#endif

#if !defined(SROCE_RDMA_CORE_VERSION) || SROCE_RDMA_CORE_VERSION != 6500
#error "provider_abi65.h declares rdma-core 65.0 only: SROCE_RDMA_CORE_VERSION must be 6500 (set by CMakeLists.txt)"
#endif

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>

/* The PABI this header describes; it is pasted into the registration symbol. */
#define SROCE_IBVERBS_PABI_VERSION 65

extern "C" {

/* ccan's intrusive list node, as embedded in libibverbs' own structures. */
struct verbs_list_node {
	verbs_list_node *next;
	verbs_list_node *prev;
};

/* ------------------------------------------------------------------------
 * Device matching
 * ---------------------------------------------------------------------- */

enum verbs_match_kind : uint8_t {
	VERBS_MATCH_SENTINEL = 0, /* a zeroed entry terminates the table */
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2, /* fnmatch() pattern; also used for names */
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind; /* enum verbs_match_kind */
};

/* verbs_sysfs_dev::flags: which lazily-read fields libibverbs has filled. */
enum {
	VSYSFS_READ_MODALIAS = 1 << 0,
	VSYSFS_READ_NODE_GUID = 1 << 1,
};

/*
 * One uverbs device found by enumeration.  libibverbs allocates and frees
 * it; a provider reads it (mainly ibdev_path, for sysfs attributes) and may
 * use provider_data.
 */
struct verbs_sysfs_dev {
	verbs_list_node entry;
	void *provider_data;
	const verbs_match_ent *match; /* the table entry that hit, or NULL */
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];  /* "uverbsN" */
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];  /* current IB device name */
	char ibdev_path[IBV_SYSFS_PATH_MAX];  /* .../class/infiniband/<name> */
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;                   /* enum rdma_driver_id */
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;                     /* the kernel's uverbs_abi_ver */
	struct timespec time_created;
};

struct verbs_device;

/* What a provider registers with verbs_register_driver_65().  72 bytes. */
struct verbs_device_ops {
	const char *name;

	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const verbs_match_ent *match_table;
	const verbs_device_ops **static_providers;

	/* Called unconditionally after the table match; decides alone. */
	bool (*match_device)(verbs_sysfs_dev *sysfs_dev);

	verbs_context *(*alloc_context)(ibv_device *device, int cmd_fd,
					void *private_data);
	verbs_context *(*import_context)(ibv_device *device, int cmd_fd);

	verbs_device *(*alloc_device)(verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(verbs_device *device);
};

/*
 * The provider allocates this (zeroed) in alloc_device, usually embedded
 * first in its own device type; libibverbs fills every field after `device`'s
 * private _ops and frees it only through uninit_device.
 */
struct verbs_device {
	ibv_device device; /* must be first: ibv_device* is cast back */
	const verbs_device_ops *ops;
	std::atomic<int> refcount; /* C11 atomic_int on the library side */
	verbs_list_node entry;
	verbs_sysfs_dev *sysfs;
	uint64_t core_support; /* IB_UVERBS_CORE_SUPPORT_* from GET_CONTEXT */
};

/* ------------------------------------------------------------------------
 * Private types the new ops and helpers take.  driver.h marks ibv_buf and
 * verbs_create_cq_prov_attr "Must change the PRIVATE IBVERBS_PRIVATE_ symbol
 * if this is changed".  verbs.h only forward-declares ibv_buf.
 * ---------------------------------------------------------------------- */

/* A buffer from alloc_buf (ibv_alloc_buf()); dmabuf_fd is -1 if none. */
struct ibv_buf {
	void *addr;
	size_t size;
	ibv_pd *pd;
	int dmabuf_fd;
};

/* Optional caller-supplied CQ memory for ibv_cmd_create_cq_ex{,2}(). */
struct verbs_create_cq_prov_attr {
	struct {
		uint64_t length;
		union {
			uint8_t *ptr;
			struct {
				uint64_t offset;
				int fd;
			} dmabuf;
		};
	} buffer;
};

struct verbs_dmah {
	ibv_dmah dmah;
	uint32_t handle;
};

/* ------------------------------------------------------------------------
 * The provider's op table.  93 pointers, alphabetical, as in rdma-core 65.0.
 * verbs_set_ops() copies the non-NULL entries; NULL ones keep libibverbs'
 * dummies, which fail with EOPNOTSUPP.  Entries new since 56.1 are marked
 * with the release that inserted them.
 * ---------------------------------------------------------------------- */

struct verbs_mr;

struct verbs_context_ops {
	/* 0-7 */
	int (*advise_mr)(ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, ibv_sge *sg_list, uint32_t num_sges);
	void *(*alloc_buf)(ibv_pd *pd, size_t size, ibv_buf **buf); /* v64 */
	ibv_dm *(*alloc_dm)(ibv_context *context, ibv_alloc_dm_attr *attr);
	ibv_dmah *(*alloc_dmah)(ibv_context *context,
				ibv_dmah_init_attr *attr); /* v59 */
	ibv_mw *(*alloc_mw)(ibv_pd *pd, enum ibv_mw_type type);
	ibv_mr *(*alloc_null_mr)(ibv_pd *pd);
	ibv_pd *(*alloc_parent_domain)(ibv_context *context,
				       ibv_parent_domain_init_attr *attr);
	ibv_pd *(*alloc_pd)(ibv_context *context);
	/* 8-15 */
	ibv_td *(*alloc_td)(ibv_context *context, ibv_td_init_attr *init_attr);
	void (*async_event)(ibv_context *context, ibv_async_event *event);
	int (*attach_counters_point_flow)(ibv_counters *counters,
					  ibv_counter_attach_attr *attr,
					  ibv_flow *flow);
	int (*attach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind);
	int (*close_xrcd)(ibv_xrcd *xrcd);
	void (*cq_event)(ibv_cq *cq);
	ibv_ah *(*create_ah)(ibv_pd *pd, ibv_ah_attr *attr);
	/* 16-23 */
	ibv_comp_cntr *(*create_comp_cntr)(
		ibv_context *context, ibv_comp_cntr_init_attr *attr); /* 65 */
	ibv_counters *(*create_counters)(ibv_context *context,
					 ibv_counters_init_attr *init_attr);
	ibv_cq *(*create_cq)(ibv_context *context, int cqe,
			     ibv_comp_channel *channel, int comp_vector);
	ibv_cq_ex *(*create_cq_ex)(ibv_context *context,
				   ibv_cq_init_attr_ex *init_attr);
	ibv_flow *(*create_flow)(ibv_qp *qp, ibv_flow_attr *flow_attr);
	ibv_flow_action *(*create_flow_action_esp)(
		ibv_context *context, ibv_flow_action_esp_attr *attr);
	ibv_qp *(*create_qp)(ibv_pd *pd, ibv_qp_init_attr *attr);
	ibv_qp *(*create_qp_ex)(ibv_context *context,
				ibv_qp_init_attr_ex *qp_init_attr_ex);
	/* 24-31 */
	ibv_rwq_ind_table *(*create_rwq_ind_table)(
		ibv_context *context, ibv_rwq_ind_table_init_attr *init_attr);
	ibv_srq *(*create_srq)(ibv_pd *pd, ibv_srq_init_attr *srq_init_attr);
	ibv_srq *(*create_srq_ex)(ibv_context *context,
				  ibv_srq_init_attr_ex *srq_init_attr_ex);
	ibv_wq *(*create_wq)(ibv_context *context,
			     ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_dmah)(ibv_dmah *dmah); /* v59 */
	int (*dealloc_mw)(ibv_mw *mw);
	int (*dealloc_pd)(ibv_pd *pd);
	int (*dealloc_td)(ibv_td *td);
	/* 32-39 */
	int (*dereg_mr)(verbs_mr *vmr);
	int (*destroy_ah)(ibv_ah *ah);
	int (*destroy_comp_cntr)(ibv_comp_cntr *comp_cntr); /* 65 */
	int (*destroy_counters)(ibv_counters *counters);
	int (*destroy_cq)(ibv_cq *cq);
	int (*destroy_flow)(ibv_flow *flow);
	int (*destroy_flow_action)(ibv_flow_action *action);
	int (*destroy_qp)(ibv_qp *qp);
	/* 40-47 */
	int (*destroy_rwq_ind_table)(ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(ibv_srq *srq);
	int (*destroy_wq)(ibv_wq *wq);
	int (*detach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
	int (*dm_export_dmabuf_fd)(ibv_dm *dm); /* v62 */
	void (*free_buf)(ibv_buf *buf);		/* v64 */
	void (*free_context)(ibv_context *context);
	int (*free_dm)(ibv_dm *dm);
	/* 48-55 */
	int (*get_srq_num)(ibv_srq *srq, uint32_t *srq_num);
	ibv_dm *(*import_dm)(ibv_context *context, uint32_t dm_handle);
	ibv_mr *(*import_mr)(ibv_pd *pd, uint32_t mr_handle);
	ibv_pd *(*import_pd)(ibv_context *context, uint32_t pd_handle);
	int (*inc_comp_cntr)(ibv_comp_cntr *comp_cntr, uint64_t amount); /* 65 */
	int (*inc_err_comp_cntr)(ibv_comp_cntr *comp_cntr,
				 uint64_t amount); /* 65 */
	int (*modify_cq)(ibv_cq *cq, ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(ibv_flow_action *action,
				      ibv_flow_action_esp_attr *attr);
	/* 56-63 */
	int (*modify_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask);
	int (*modify_qp_rate_limit)(ibv_qp *qp, ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(ibv_wq *wq, ibv_wq_attr *wq_attr);
	ibv_qp *(*open_qp)(ibv_context *context, ibv_qp_open_attr *attr);
	ibv_xrcd *(*open_xrcd)(ibv_context *context,
			       ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(ibv_cq *cq, int num_entries, ibv_wc *wc);
	int (*post_recv)(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
	/* 64-71 */
	int (*post_send)(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr);
	int (*post_srq_ops)(ibv_srq *srq, ibv_ops_wr *op, ibv_ops_wr **bad_op);
	int (*post_srq_recv)(ibv_srq *srq, ibv_recv_wr *recv_wr,
			     ibv_recv_wr **bad_recv_wr);
	int (*qp_attach_comp_cntr)(
		ibv_qp *qp, ibv_comp_cntr *comp_cntr,
		ibv_qp_attach_comp_cntr_attr *attr); /* 65 */
	int (*query_comp_cntr_caps)(ibv_context *context,
				    ibv_comp_cntr_caps *caps,
				    size_t caps_size); /* 65 */
	int (*query_device_ex)(ibv_context *context,
			       const ibv_query_device_ex_input *input,
			       ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(ibv_qp *qp, ibv_ece *ece);
	int (*query_port)(ibv_context *context, uint8_t port_num,
			  ibv_port_attr *port_attr);
	/* 72-79 */
	int (*query_port_speed)(ibv_context *context, uint32_t port_num,
				uint64_t *speed); /* v62 */
	int (*query_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask,
			ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(ibv_context *context, ibv_values_ex *values);
	int (*query_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr);
	int (*read_comp_cntr)(ibv_comp_cntr *comp_cntr,
			      uint64_t *value); /* 65 */
	int (*read_counters)(ibv_counters *counters, uint64_t *counters_value,
			     uint32_t ncounters, uint32_t flags);
	int (*read_err_comp_cntr)(ibv_comp_cntr *comp_cntr,
				  uint64_t *value); /* 65 */
	/* 80-87 */
	ibv_mr *(*reg_dm_mr)(ibv_pd *pd, ibv_dm *dm, uint64_t dm_offset,
			     size_t length, unsigned int access);
	ibv_mr *(*reg_dmabuf_mr)(ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access);
	ibv_mr *(*reg_mr)(ibv_pd *pd, void *addr, size_t length,
			  uint64_t hca_va, int access);
	ibv_mr *(*reg_mr_ex)(ibv_pd *pd,
			     ibv_mr_init_attr *mr_init_attr); /* v59 */
	int (*req_notify_cq)(ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr,
			size_t length, int access);
	int (*resize_cq)(ibv_cq *cq, int cqe);
	int (*set_comp_cntr)(ibv_comp_cntr *comp_cntr, uint64_t value); /* 65 */
	/* 88-92 */
	int (*set_ece)(ibv_qp *qp, ibv_ece *ece);
	int (*set_err_comp_cntr)(ibv_comp_cntr *comp_cntr,
				 uint64_t value); /* 65 */
	void (*unimport_dm)(ibv_dm *dm);
	void (*unimport_mr)(ibv_mr *mr);
	void (*unimport_pd)(ibv_pd *pd);
};

/* ------------------------------------------------------------------------
 * Object wrappers.  libibverbs converts the public object pointer back to
 * these with container_of, so every provider object of that kind must embed
 * the wrapper (at offset 0 by convention).
 * ---------------------------------------------------------------------- */

enum ibv_mr_type {
	IBV_MR_TYPE_MR = 0,
	IBV_MR_TYPE_NULL_MR = 1,
	IBV_MR_TYPE_IMPORTED_MR = 2,
	IBV_MR_TYPE_DMABUF_MR = 3,
};

struct verbs_mr {
	ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

enum verbs_xrcd_mask {
	VERBS_XRCD_HANDLE = 1 << 0,
	VERBS_XRCD_RESERVED = 1 << 1,
};

struct verbs_xrcd {
	ibv_xrcd xrcd;
	uint32_t comp_mask; /* enum verbs_xrcd_mask */
	uint32_t handle;
};

enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1, /* ibv_qp_to_qp_ex() requires it */
};

struct verbs_qp {
	union {
		ibv_qp qp;
		ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask; /* enum verbs_qp_mask */
	verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		ibv_cq cq;
		ibv_cq_ex cq_ex;
	};
};

struct verbs_srq {
	ibv_srq srq;
	enum ibv_srq_type srq_type;
	verbs_xrcd *xrcd;
	ibv_cq *cq;
	uint32_t srq_num;
};

enum create_cq_cmd_flags {
	CREATE_CQ_CMD_FLAGS_TS_IGNORED_EX = 1 << 0,
	CREATE_CQ_CMD_FLAGS_WITH_MEM_VA = 1 << 1,     /* v59 */
	CREATE_CQ_CMD_FLAGS_WITH_MEM_DMABUF = 1 << 2, /* v59 */
};

/* GID type as reported by sysfs (ibv_query_gid_type()). */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1 = 0,
	IBV_GID_TYPE_SYSFS_ROCE_V2 = 1,
};

/* __verbs_log() levels; VERBS_LOG_LEVEL in the environment selects them. */
enum {
	VERBS_LOG_LEVEL_NONE = 0,
	VERBS_LOG_ERR = 1,
	VERBS_LOG_WARN = 2,
	VERBS_LOG_INFO = 3,
	VERBS_LOG_DEBUG = 4,
};

/* ------------------------------------------------------------------------
 * IBVERBS_PRIVATE_65 functions (core).  Plain -libverbs binds each of them
 * to that symbol version.
 * ---------------------------------------------------------------------- */

/* Appends ops to libibverbs' driver list; called from our constructor. */
void verbs_register_driver_65(const verbs_device_ops *ops);

/*
 * callocs alloc_size bytes, initialises the verbs_context found
 * context_offset bytes in (the offset is passed disguised as a pointer) and
 * installs the EOPNOTSUPP dummy ops.  Owns cmd_fd: closes it on failure.
 */
void *_verbs_init_and_alloc_context(ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    verbs_context *context_offset,
				    uint32_t driver_id);
/* Frees priv, closes cmd_fd/async_fd, drops the device reference. */
void verbs_uninit_context(verbs_context *context);
void verbs_set_ops(verbs_context *vctx, const verbs_context_ops *ops);
void verbs_init_cq(ibv_cq *cq, ibv_context *context,
		   ibv_comp_channel *channel, void *cq_context);

/* The real declaration has no format attribute; adding one is ABI-neutral. */
void __verbs_log(verbs_context *ctx, uint32_t level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Reads <sysfs_dev->ibdev_path>/<formatted name> into buf, strips one
 * trailing newline and NUL-terminates.  Returns the length (0 for an empty
 * file, in which case buf is untouched) or -1 (missing file, or content
 * that does not fit with its terminator).
 */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      verbs_sysfs_dev *sysfs_dev, const char *fnfmt,
			      ...) __attribute__((format(printf, 4, 5)));

int ibv_query_gid_type(ibv_context *context, uint8_t port_num,
		       unsigned int index, enum ibv_gid_type_sysfs *type);

/* When true, destroy verbs report success after a device disassociation. */
extern bool verbs_allow_disassociate_destroy;

/*
 * The three ibv_cmd_* helpers sroce calls whose signatures changed since
 * 56.1.  Call them through sroce::abi::cmd_get_context(), cmd_create_cq_ex()
 * and cmd_create_qp_ex2() (provider_abi.h).  The command structs are
 * defined in cmd_abi.h; ibv_command_buffer is libibverbs' ioctl builder,
 * which we only ever pass as NULL.
 */
struct ibv_get_context;
struct ibv_create_cq_ex;
struct ibv_create_qp_ex;
struct ibv_command_buffer;

/* v57: fd_arr (file descriptors handed to the kernel), may be NULL. */
int ibv_cmd_get_context(verbs_context *context, struct ibv_get_context *cmd,
			size_t cmd_size, ibv_fd_arr *fd_arr,
			ib_uverbs_get_context_resp *resp, size_t resp_size);
/* v59: prov_attr (provider-supplied CQ memory), inserted before cq. */
int ibv_cmd_create_cq_ex(ibv_context *context,
			 const ibv_cq_init_attr_ex *cq_attr,
			 verbs_create_cq_prov_attr *prov_attr, verbs_cq *cq,
			 struct ibv_create_cq_ex *cmd, size_t cmd_size,
			 ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
			 uint32_t cmd_flags /* enum create_cq_cmd_flags */);
/* v64: driver, extra ioctl attributes, appended. */
int ibv_cmd_create_qp_ex2(ibv_context *context, verbs_qp *qp,
			  ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  ib_uverbs_ex_create_qp_resp *resp, size_t resp_size,
			  ibv_command_buffer *driver);

} /* extern "C" */

/* ------------------------------------------------------------------------
 * Layout pins (x86_64, LP64), rdma-core 65.0.
 * ---------------------------------------------------------------------- */
namespace sroce::abi::layout_checks {

static_assert(sizeof(void *) == 8 && sizeof(long) == 8,
	      "the pinned layouts are for LP64 (x86_64)");

static_assert(sizeof(verbs_list_node) == 16);

static_assert(sizeof(verbs_match_ent) == 24);
static_assert(offsetof(verbs_match_ent, driver_data) == 0);
static_assert(offsetof(verbs_match_ent, u) == 8);
static_assert(offsetof(verbs_match_ent, vendor) == 16);
static_assert(offsetof(verbs_match_ent, device) == 18);
static_assert(offsetof(verbs_match_ent, kind) == 20);

static_assert(IBV_SYSFS_NAME_MAX == 64 && IBV_SYSFS_PATH_MAX == 256);
static_assert(sizeof(verbs_sysfs_dev) == 992);
static_assert(offsetof(verbs_sysfs_dev, entry) == 0);
static_assert(offsetof(verbs_sysfs_dev, provider_data) == 16);
static_assert(offsetof(verbs_sysfs_dev, match) == 24);
static_assert(offsetof(verbs_sysfs_dev, flags) == 32);
static_assert(offsetof(verbs_sysfs_dev, sysfs_name) == 36);
static_assert(offsetof(verbs_sysfs_dev, sysfs_cdev) == 104);
static_assert(offsetof(verbs_sysfs_dev, ibdev_name) == 112);
static_assert(offsetof(verbs_sysfs_dev, ibdev_path) == 176);
static_assert(offsetof(verbs_sysfs_dev, modalias) == 432);
static_assert(offsetof(verbs_sysfs_dev, node_guid) == 944);
static_assert(offsetof(verbs_sysfs_dev, driver_id) == 952);
static_assert(offsetof(verbs_sysfs_dev, node_type) == 956);
static_assert(offsetof(verbs_sysfs_dev, ibdev_idx) == 960);
static_assert(offsetof(verbs_sysfs_dev, num_ports) == 964);
static_assert(offsetof(verbs_sysfs_dev, abi_ver) == 968);
static_assert(offsetof(verbs_sysfs_dev, time_created) == 976);

static_assert(sizeof(verbs_device_ops) == 72);
static_assert(offsetof(verbs_device_ops, name) == 0);
static_assert(offsetof(verbs_device_ops, match_min_abi_version) == 8);
static_assert(offsetof(verbs_device_ops, match_max_abi_version) == 12);
static_assert(offsetof(verbs_device_ops, match_table) == 16);
static_assert(offsetof(verbs_device_ops, static_providers) == 24);
static_assert(offsetof(verbs_device_ops, match_device) == 32);
static_assert(offsetof(verbs_device_ops, alloc_context) == 40);
static_assert(offsetof(verbs_device_ops, import_context) == 48);
static_assert(offsetof(verbs_device_ops, alloc_device) == 56);
static_assert(offsetof(verbs_device_ops, uninit_device) == 64);

/* std::atomic<int> must be a drop-in for C11 atomic_int. */
static_assert(sizeof(std::atomic<int>) == sizeof(int) &&
	      alignof(std::atomic<int>) == alignof(int));
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(sizeof(ibv_device) == 664);
static_assert(sizeof(verbs_device) == 712);
static_assert(offsetof(verbs_device, device) == 0);
static_assert(offsetof(verbs_device, ops) == 664);
static_assert(offsetof(verbs_device, refcount) == 672);
static_assert(offsetof(verbs_device, entry) == 680);
static_assert(offsetof(verbs_device, sysfs) == 696); /* 0x2b8 */
static_assert(offsetof(verbs_device, core_support) == 704);

/* Public in verbs.h, but our code depends on where `context` sits. */
/* Six pointers more than 56.1 in front (free_buf ... alloc_dmah). */
static_assert(sizeof(verbs_context) == 696);
static_assert(offsetof(verbs_context, free_buf) == 0);
static_assert(offsetof(verbs_context, query_port) == 48);
static_assert(offsetof(verbs_context, priv) == 256);
static_assert(offsetof(verbs_context, sz) == 360);
static_assert(offsetof(verbs_context, context) == 368);
static_assert(sizeof(ibv_context) == 328);

/* 93 pointers, every one at its documented index. */
static_assert(sizeof(verbs_context_ops) == 93 * sizeof(void *));
static_assert(sizeof(verbs_context_ops) == 744);
#define SROCE_OPS_AT(member, idx)                                              \
	static_assert(offsetof(verbs_context_ops, member) == (idx) * 8,        \
		      #member " is not verbs_context_ops entry " #idx)
SROCE_OPS_AT(advise_mr, 0);
SROCE_OPS_AT(alloc_buf, 1);
SROCE_OPS_AT(alloc_dm, 2);
SROCE_OPS_AT(alloc_dmah, 3);
SROCE_OPS_AT(alloc_mw, 4);
SROCE_OPS_AT(alloc_null_mr, 5);
SROCE_OPS_AT(alloc_parent_domain, 6);
SROCE_OPS_AT(alloc_pd, 7);
SROCE_OPS_AT(alloc_td, 8);
SROCE_OPS_AT(async_event, 9);
SROCE_OPS_AT(attach_counters_point_flow, 10);
SROCE_OPS_AT(attach_mcast, 11);
SROCE_OPS_AT(bind_mw, 12);
SROCE_OPS_AT(close_xrcd, 13);
SROCE_OPS_AT(cq_event, 14);
SROCE_OPS_AT(create_ah, 15);
SROCE_OPS_AT(create_comp_cntr, 16);
SROCE_OPS_AT(create_counters, 17);
SROCE_OPS_AT(create_cq, 18);
SROCE_OPS_AT(create_cq_ex, 19);
SROCE_OPS_AT(create_flow, 20);
SROCE_OPS_AT(create_flow_action_esp, 21);
SROCE_OPS_AT(create_qp, 22);
SROCE_OPS_AT(create_qp_ex, 23);
SROCE_OPS_AT(create_rwq_ind_table, 24);
SROCE_OPS_AT(create_srq, 25);
SROCE_OPS_AT(create_srq_ex, 26);
SROCE_OPS_AT(create_wq, 27);
SROCE_OPS_AT(dealloc_dmah, 28);
SROCE_OPS_AT(dealloc_mw, 29);
SROCE_OPS_AT(dealloc_pd, 30);
SROCE_OPS_AT(dealloc_td, 31);
SROCE_OPS_AT(dereg_mr, 32);
SROCE_OPS_AT(destroy_ah, 33);
SROCE_OPS_AT(destroy_comp_cntr, 34);
SROCE_OPS_AT(destroy_counters, 35);
SROCE_OPS_AT(destroy_cq, 36);
SROCE_OPS_AT(destroy_flow, 37);
SROCE_OPS_AT(destroy_flow_action, 38);
SROCE_OPS_AT(destroy_qp, 39);
SROCE_OPS_AT(destroy_rwq_ind_table, 40);
SROCE_OPS_AT(destroy_srq, 41);
SROCE_OPS_AT(destroy_wq, 42);
SROCE_OPS_AT(detach_mcast, 43);
SROCE_OPS_AT(dm_export_dmabuf_fd, 44);
SROCE_OPS_AT(free_buf, 45);
SROCE_OPS_AT(free_context, 46);
SROCE_OPS_AT(free_dm, 47);
SROCE_OPS_AT(get_srq_num, 48);
SROCE_OPS_AT(import_dm, 49);
SROCE_OPS_AT(import_mr, 50);
SROCE_OPS_AT(import_pd, 51);
SROCE_OPS_AT(inc_comp_cntr, 52);
SROCE_OPS_AT(inc_err_comp_cntr, 53);
SROCE_OPS_AT(modify_cq, 54);
SROCE_OPS_AT(modify_flow_action_esp, 55);
SROCE_OPS_AT(modify_qp, 56);
SROCE_OPS_AT(modify_qp_rate_limit, 57);
SROCE_OPS_AT(modify_srq, 58);
SROCE_OPS_AT(modify_wq, 59);
SROCE_OPS_AT(open_qp, 60);
SROCE_OPS_AT(open_xrcd, 61);
SROCE_OPS_AT(poll_cq, 62);
SROCE_OPS_AT(post_recv, 63);
SROCE_OPS_AT(post_send, 64);
SROCE_OPS_AT(post_srq_ops, 65);
SROCE_OPS_AT(post_srq_recv, 66);
SROCE_OPS_AT(qp_attach_comp_cntr, 67);
SROCE_OPS_AT(query_comp_cntr_caps, 68);
SROCE_OPS_AT(query_device_ex, 69);
SROCE_OPS_AT(query_ece, 70);
SROCE_OPS_AT(query_port, 71);
SROCE_OPS_AT(query_port_speed, 72);
SROCE_OPS_AT(query_qp, 73);
SROCE_OPS_AT(query_qp_data_in_order, 74);
SROCE_OPS_AT(query_rt_values, 75);
SROCE_OPS_AT(query_srq, 76);
SROCE_OPS_AT(read_comp_cntr, 77);
SROCE_OPS_AT(read_counters, 78);
SROCE_OPS_AT(read_err_comp_cntr, 79);
SROCE_OPS_AT(reg_dm_mr, 80);
SROCE_OPS_AT(reg_dmabuf_mr, 81);
SROCE_OPS_AT(reg_mr, 82);
SROCE_OPS_AT(reg_mr_ex, 83);
SROCE_OPS_AT(req_notify_cq, 84);
SROCE_OPS_AT(rereg_mr, 85);
SROCE_OPS_AT(resize_cq, 86);
SROCE_OPS_AT(set_comp_cntr, 87);
SROCE_OPS_AT(set_ece, 88);
SROCE_OPS_AT(set_err_comp_cntr, 89);
SROCE_OPS_AT(unimport_dm, 90);
SROCE_OPS_AT(unimport_mr, 91);
SROCE_OPS_AT(unimport_pd, 92);
#undef SROCE_OPS_AT

static_assert(sizeof(ibv_mr) == 48);
static_assert(sizeof(verbs_mr) == 56);
static_assert(offsetof(verbs_mr, mr_type) == 48);
static_assert(offsetof(verbs_mr, access) == 52);

/* Public; unchanged since 56.1 (ibv_qp_ex::wr_flush came in v45). */
static_assert(sizeof(ibv_qp_ex) == 360);
static_assert(offsetof(ibv_qp_ex, qp_base) == 0);
static_assert(offsetof(ibv_qp_ex, wr_flush) == 352);
static_assert(offsetof(verbs_qp, comp_mask) == 360);
static_assert(offsetof(verbs_qp, xrcd) == 368);
static_assert(sizeof(verbs_qp) == 376);
static_assert(sizeof(ibv_port_attr) == 56);
static_assert(offsetof(ibv_port_attr, active_speed_ex) == 52);

static_assert(sizeof(ibv_cq_ex) == 288);
static_assert(sizeof(verbs_cq) == 288);

static_assert(sizeof(ibv_srq) == 128);
static_assert(offsetof(verbs_srq, srq_type) == 128);
static_assert(offsetof(verbs_srq, xrcd) == 136);
static_assert(offsetof(verbs_srq, cq) == 144);
static_assert(offsetof(verbs_srq, srq_num) == 152);
static_assert(sizeof(verbs_srq) == 160);

static_assert(sizeof(verbs_xrcd) == 16);
static_assert(offsetof(verbs_xrcd, comp_mask) == 8);
static_assert(offsetof(verbs_xrcd, handle) == 12);

static_assert(sizeof(enum ibv_mr_type) == 4 && sizeof(enum ibv_srq_type) == 4 &&
	      sizeof(enum ibv_node_type) == 4);

/* The private types new in this ABI. */
static_assert(sizeof(ibv_buf) == 32);
static_assert(offsetof(ibv_buf, addr) == 0);
static_assert(offsetof(ibv_buf, size) == 8);
static_assert(offsetof(ibv_buf, pd) == 16);
static_assert(offsetof(ibv_buf, dmabuf_fd) == 24);
static_assert(sizeof(verbs_create_cq_prov_attr) == 24);
static_assert(offsetof(verbs_create_cq_prov_attr, buffer.length) == 0);
static_assert(offsetof(verbs_create_cq_prov_attr, buffer.ptr) == 8);
static_assert(offsetof(verbs_create_cq_prov_attr, buffer.dmabuf.offset) == 8);
static_assert(offsetof(verbs_create_cq_prov_attr, buffer.dmabuf.fd) == 16);
static_assert(sizeof(ibv_dmah) == 8);
static_assert(sizeof(verbs_dmah) == 16);
static_assert(offsetof(verbs_dmah, handle) == 8);
static_assert(sizeof(ibv_fd_arr) == 16);
static_assert(offsetof(ibv_fd_arr, count) == 8);

} /* namespace sroce::abi::layout_checks */

#endif /* SROCE_PROVIDER_ABI65_H */
