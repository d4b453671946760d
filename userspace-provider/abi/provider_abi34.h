// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-core 44.0 and 56.1 private provider ABI (IBVERBS_PRIVATE_34),
 * declared by us.  Include abi/provider_abi.h, not this file: it selects
 * this header or provider_abi65.h for the rdma-core release CMake found.
 *
 * Debian ships neither rdma-core's internal driver.h nor kern-abi.h, so a
 * provider built against the packaged libibverbs must declare the private
 * ABI itself.  Everything here is written from rdma-core's
 * libibverbs/driver.h (private) and libibverbs/verbs.h (public) at tags
 * v44.0 and v56.1.  Every number pinned below was checked two ways, x86_64:
 * against rdma-core's own driver.h of each tag, compiled, offset by offset;
 * and by building this header against the installed headers and running
 * the unit tests against the libibverbs of Debian 12 (libibverbs-dev
 * 44.0-2) and Debian 13 (56.1-1).
 *
 * Between 44.0 and 56.1 the private structs and every entry point we use
 * are identical (driver.h differs only in ibv_cmd_reg_dmabuf_mr gaining a
 * trailing `driver` command buffer and the new ibv_cmd_create_cq_ex2,
 * neither of which sroce calls).  What differs is public: ibv_qp_ex gained
 * wr_flush (v45), so verbs_qp grew by 8 bytes, and ibv_port_attr gained
 * active_speed_ex.  Those pins are selected by SROCE_RDMA_CORE_VERSION.
 *
 * "Private" means it changes between rdma-core releases without the PABI
 * number necessarily changing (verbs_context_ops had 73 entries in v34 and
 * 76 from v38; verbs_sysfs_dev changed too).  So:
 *   - the build refuses any libibverbs but the supported ones
 *     (CMakeLists.txt);
 *   - every size and offset libibverbs relies on is pinned below with
 *     static_assert, so an accidental edit fails to compile instead of
 *     corrupting libibverbs' memory at run time.
 *
 * rdma-core 39.0 and 50.0 (Ubuntu 22.04 and 24.04) were checked from
 * rdma-core's tags the same way (driver.h is byte-identical at 39.0, 44.0
 * and 50.0; every private pin below holds with each tag's own driver.h;
 * the provider's unit tests pass against libibverbs built from each tag):
 * 50.0 has 56.1's public layout, 39.0 lacks ibv_qp_ex::wr_atomic_write
 * (so sroce offers no ATOMIC WRITE there).  Ubuntu's own packages of them
 * were not tried.
 *
 * Command buffers and the ibv_cmd_* marshalling helpers whose signatures
 * are the same in every supported release live in cmd_abi.h; the three
 * whose signatures changed in rdma-core 65 are declared at the end of this
 * file and called through the shims in provider_abi.h.
 */
#ifndef SROCE_PROVIDER_ABI34_H
#define SROCE_PROVIDER_ABI34_H

#ifndef __cplusplus
#error "provider_abi34.h is a C++20 header"
#endif

#if !defined(SROCE_RDMA_CORE_VERSION) ||                                       \
	(SROCE_RDMA_CORE_VERSION != 3900 && SROCE_RDMA_CORE_VERSION != 4400 &&   \
	 SROCE_RDMA_CORE_VERSION != 5000 && SROCE_RDMA_CORE_VERSION != 5601)
#error "provider_abi34.h declares rdma-core 39.0, 44.0, 50.0 and 56.1 only: SROCE_RDMA_CORE_VERSION must be 3900, 4400, 5000 or 5601 (set by CMakeLists.txt)"
#endif

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>

/* The PABI this header describes; it is pasted into the registration symbol. */
#define SROCE_IBVERBS_PABI_VERSION 34

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

/* What a provider registers with verbs_register_driver_34().  72 bytes. */
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
 * The provider's op table.  76 pointers, alphabetical, as in rdma-core 44.0
 * and 56.1 (textually identical in both).
 * verbs_set_ops() copies the non-NULL entries; NULL ones keep libibverbs'
 * dummies, which fail with EOPNOTSUPP.
 * ---------------------------------------------------------------------- */

struct verbs_mr;

struct verbs_context_ops {
	/* 0-7 */
	int (*advise_mr)(ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, ibv_sge *sg_list, uint32_t num_sges);
	ibv_dm *(*alloc_dm)(ibv_context *context, ibv_alloc_dm_attr *attr);
	ibv_mw *(*alloc_mw)(ibv_pd *pd, enum ibv_mw_type type);
	ibv_mr *(*alloc_null_mr)(ibv_pd *pd);
	ibv_pd *(*alloc_parent_domain)(ibv_context *context,
				       ibv_parent_domain_init_attr *attr);
	ibv_pd *(*alloc_pd)(ibv_context *context);
	ibv_td *(*alloc_td)(ibv_context *context, ibv_td_init_attr *init_attr);
	void (*async_event)(ibv_context *context, ibv_async_event *event);
	/* 8-15 */
	int (*attach_counters_point_flow)(ibv_counters *counters,
					  ibv_counter_attach_attr *attr,
					  ibv_flow *flow);
	int (*attach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind);
	int (*close_xrcd)(ibv_xrcd *xrcd);
	void (*cq_event)(ibv_cq *cq);
	ibv_ah *(*create_ah)(ibv_pd *pd, ibv_ah_attr *attr);
	ibv_counters *(*create_counters)(ibv_context *context,
					 ibv_counters_init_attr *init_attr);
	ibv_cq *(*create_cq)(ibv_context *context, int cqe,
			     ibv_comp_channel *channel, int comp_vector);
	/* 16-22 */
	ibv_cq_ex *(*create_cq_ex)(ibv_context *context,
				   ibv_cq_init_attr_ex *init_attr);
	ibv_flow *(*create_flow)(ibv_qp *qp, ibv_flow_attr *flow_attr);
	ibv_flow_action *(*create_flow_action_esp)(
		ibv_context *context, ibv_flow_action_esp_attr *attr);
	ibv_qp *(*create_qp)(ibv_pd *pd, ibv_qp_init_attr *attr);
	ibv_qp *(*create_qp_ex)(ibv_context *context,
				ibv_qp_init_attr_ex *qp_init_attr_ex);
	ibv_rwq_ind_table *(*create_rwq_ind_table)(
		ibv_context *context, ibv_rwq_ind_table_init_attr *init_attr);
	ibv_srq *(*create_srq)(ibv_pd *pd, ibv_srq_init_attr *srq_init_attr);
	/* 23-30 */
	ibv_srq *(*create_srq_ex)(ibv_context *context,
				  ibv_srq_init_attr_ex *srq_init_attr_ex);
	ibv_wq *(*create_wq)(ibv_context *context,
			     ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(ibv_mw *mw);
	int (*dealloc_pd)(ibv_pd *pd);
	int (*dealloc_td)(ibv_td *td);
	int (*dereg_mr)(verbs_mr *vmr);
	int (*destroy_ah)(ibv_ah *ah);
	int (*destroy_counters)(ibv_counters *counters);
	/* 31-38 */
	int (*destroy_cq)(ibv_cq *cq);
	int (*destroy_flow)(ibv_flow *flow);
	int (*destroy_flow_action)(ibv_flow_action *action);
	int (*destroy_qp)(ibv_qp *qp);
	int (*destroy_rwq_ind_table)(ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(ibv_srq *srq);
	int (*destroy_wq)(ibv_wq *wq);
	int (*detach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
	/* 39-45 */
	void (*free_context)(ibv_context *context);
	int (*free_dm)(ibv_dm *dm);
	int (*get_srq_num)(ibv_srq *srq, uint32_t *srq_num);
	ibv_dm *(*import_dm)(ibv_context *context, uint32_t dm_handle);
	ibv_mr *(*import_mr)(ibv_pd *pd, uint32_t mr_handle);
	ibv_pd *(*import_pd)(ibv_context *context, uint32_t pd_handle);
	int (*modify_cq)(ibv_cq *cq, ibv_modify_cq_attr *attr);
	/* 46-52 */
	int (*modify_flow_action_esp)(ibv_flow_action *action,
				      ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask);
	int (*modify_qp_rate_limit)(ibv_qp *qp, ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(ibv_wq *wq, ibv_wq_attr *wq_attr);
	ibv_qp *(*open_qp)(ibv_context *context, ibv_qp_open_attr *attr);
	ibv_xrcd *(*open_xrcd)(ibv_context *context,
			       ibv_xrcd_init_attr *xrcd_init_attr);
	/* 53-59 */
	int (*poll_cq)(ibv_cq *cq, int num_entries, ibv_wc *wc);
	int (*post_recv)(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
	int (*post_send)(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr);
	int (*post_srq_ops)(ibv_srq *srq, ibv_ops_wr *op, ibv_ops_wr **bad_op);
	int (*post_srq_recv)(ibv_srq *srq, ibv_recv_wr *recv_wr,
			     ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(ibv_context *context,
			       const ibv_query_device_ex_input *input,
			       ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(ibv_qp *qp, ibv_ece *ece);
	/* 60-66 */
	int (*query_port)(ibv_context *context, uint8_t port_num,
			  ibv_port_attr *port_attr);
	int (*query_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask,
			ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(ibv_context *context, ibv_values_ex *values);
	int (*query_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr);
	int (*read_counters)(ibv_counters *counters, uint64_t *counters_value,
			     uint32_t ncounters, uint32_t flags);
	ibv_mr *(*reg_dm_mr)(ibv_pd *pd, ibv_dm *dm, uint64_t dm_offset,
			     size_t length, unsigned int access);
	/* 67-75 */
	ibv_mr *(*reg_dmabuf_mr)(ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access);
	ibv_mr *(*reg_mr)(ibv_pd *pd, void *addr, size_t length,
			  uint64_t hca_va, int access);
	int (*req_notify_cq)(ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr,
			size_t length, int access);
	int (*resize_cq)(ibv_cq *cq, int cqe);
	int (*set_ece)(ibv_qp *qp, ibv_ece *ece);
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
 * IBVERBS_PRIVATE_34 functions (core).  Plain -libverbs binds each of them
 * to that symbol version.
 * ---------------------------------------------------------------------- */

/* Appends ops to libibverbs' driver list; called from our constructor. */
void verbs_register_driver_34(const verbs_device_ops *ops);

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
 * The three ibv_cmd_* helpers sroce calls whose signatures changed in
 * rdma-core 65.  Call them through sroce::abi::cmd_get_context(),
 * cmd_create_cq_ex() and cmd_create_qp_ex2() (provider_abi.h).  The command
 * structs are defined in cmd_abi.h.
 */
struct ibv_get_context;
struct ibv_create_cq_ex;
struct ibv_create_qp_ex;

int ibv_cmd_get_context(verbs_context *context, struct ibv_get_context *cmd,
			size_t cmd_size, ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_create_cq_ex(ibv_context *context,
			 const ibv_cq_init_attr_ex *cq_attr, verbs_cq *cq,
			 struct ibv_create_cq_ex *cmd, size_t cmd_size,
			 ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
			 uint32_t cmd_flags /* enum create_cq_cmd_flags */);
int ibv_cmd_create_qp_ex2(ibv_context *context, verbs_qp *qp,
			  ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  ib_uverbs_ex_create_qp_resp *resp, size_t resp_size);

} /* extern "C" */

/* ------------------------------------------------------------------------
 * Layout pins (x86_64, LP64).  Private structs: identical in 44.0 and 56.1.
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
static_assert(sizeof(verbs_context) == 648);
static_assert(offsetof(verbs_context, priv) == 208);
static_assert(offsetof(verbs_context, sz) == 312);
static_assert(offsetof(verbs_context, context) == 320);
static_assert(sizeof(ibv_context) == 328);

/* 76 pointers, every one at its documented index. */
static_assert(sizeof(verbs_context_ops) == 76 * sizeof(void *));
static_assert(sizeof(verbs_context_ops) == 608);
#define SROCE_OPS_AT(member, idx)                                              \
	static_assert(offsetof(verbs_context_ops, member) == (idx) * 8,        \
		      #member " is not verbs_context_ops entry " #idx)
SROCE_OPS_AT(advise_mr, 0);
SROCE_OPS_AT(alloc_dm, 1);
SROCE_OPS_AT(alloc_mw, 2);
SROCE_OPS_AT(alloc_null_mr, 3);
SROCE_OPS_AT(alloc_parent_domain, 4);
SROCE_OPS_AT(alloc_pd, 5);
SROCE_OPS_AT(alloc_td, 6);
SROCE_OPS_AT(async_event, 7);
SROCE_OPS_AT(attach_counters_point_flow, 8);
SROCE_OPS_AT(attach_mcast, 9);
SROCE_OPS_AT(bind_mw, 10);
SROCE_OPS_AT(close_xrcd, 11);
SROCE_OPS_AT(cq_event, 12);
SROCE_OPS_AT(create_ah, 13);
SROCE_OPS_AT(create_counters, 14);
SROCE_OPS_AT(create_cq, 15);
SROCE_OPS_AT(create_cq_ex, 16);
SROCE_OPS_AT(create_flow, 17);
SROCE_OPS_AT(create_flow_action_esp, 18);
SROCE_OPS_AT(create_qp, 19);
SROCE_OPS_AT(create_qp_ex, 20);
SROCE_OPS_AT(create_rwq_ind_table, 21);
SROCE_OPS_AT(create_srq, 22);
SROCE_OPS_AT(create_srq_ex, 23);
SROCE_OPS_AT(create_wq, 24);
SROCE_OPS_AT(dealloc_mw, 25);
SROCE_OPS_AT(dealloc_pd, 26);
SROCE_OPS_AT(dealloc_td, 27);
SROCE_OPS_AT(dereg_mr, 28);
SROCE_OPS_AT(destroy_ah, 29);
SROCE_OPS_AT(destroy_counters, 30);
SROCE_OPS_AT(destroy_cq, 31);
SROCE_OPS_AT(destroy_flow, 32);
SROCE_OPS_AT(destroy_flow_action, 33);
SROCE_OPS_AT(destroy_qp, 34);
SROCE_OPS_AT(destroy_rwq_ind_table, 35);
SROCE_OPS_AT(destroy_srq, 36);
SROCE_OPS_AT(destroy_wq, 37);
SROCE_OPS_AT(detach_mcast, 38);
SROCE_OPS_AT(free_context, 39);
SROCE_OPS_AT(free_dm, 40);
SROCE_OPS_AT(get_srq_num, 41);
SROCE_OPS_AT(import_dm, 42);
SROCE_OPS_AT(import_mr, 43);
SROCE_OPS_AT(import_pd, 44);
SROCE_OPS_AT(modify_cq, 45);
SROCE_OPS_AT(modify_flow_action_esp, 46);
SROCE_OPS_AT(modify_qp, 47);
SROCE_OPS_AT(modify_qp_rate_limit, 48);
SROCE_OPS_AT(modify_srq, 49);
SROCE_OPS_AT(modify_wq, 50);
SROCE_OPS_AT(open_qp, 51);
SROCE_OPS_AT(open_xrcd, 52);
SROCE_OPS_AT(poll_cq, 53);
SROCE_OPS_AT(post_recv, 54);
SROCE_OPS_AT(post_send, 55);
SROCE_OPS_AT(post_srq_ops, 56);
SROCE_OPS_AT(post_srq_recv, 57);
SROCE_OPS_AT(query_device_ex, 58);
SROCE_OPS_AT(query_ece, 59);
SROCE_OPS_AT(query_port, 60);
SROCE_OPS_AT(query_qp, 61);
SROCE_OPS_AT(query_qp_data_in_order, 62);
SROCE_OPS_AT(query_rt_values, 63);
SROCE_OPS_AT(query_srq, 64);
SROCE_OPS_AT(read_counters, 65);
SROCE_OPS_AT(reg_dm_mr, 66);
SROCE_OPS_AT(reg_dmabuf_mr, 67);
SROCE_OPS_AT(reg_mr, 68);
SROCE_OPS_AT(req_notify_cq, 69);
SROCE_OPS_AT(rereg_mr, 70);
SROCE_OPS_AT(resize_cq, 71);
SROCE_OPS_AT(set_ece, 72);
SROCE_OPS_AT(unimport_dm, 73);
SROCE_OPS_AT(unimport_mr, 74);
SROCE_OPS_AT(unimport_pd, 75);
#undef SROCE_OPS_AT

static_assert(sizeof(ibv_mr) == 48);
static_assert(sizeof(verbs_mr) == 56);
static_assert(offsetof(verbs_mr, mr_type) == 48);
static_assert(offsetof(verbs_mr, access) == 52);

/*
 * Public growth between the releases: libibverbs' set_qp() writes
 * vqp->comp_mask and vqp->xrcd at its own offsets, so the provider must be
 * compiled against the installed verbs.h and pinned per release.
 */
static_assert(offsetof(ibv_qp_ex, qp_base) == 0);
#if SROCE_RDMA_CORE_VERSION == 3900	/* before wr_atomic_write (v44) */
static_assert(sizeof(ibv_qp_ex) == 344);
static_assert(offsetof(verbs_qp, comp_mask) == 344);
static_assert(offsetof(verbs_qp, xrcd) == 352);
static_assert(sizeof(verbs_qp) == 360);
static_assert(sizeof(ibv_port_attr) == 52);
#elif SROCE_RDMA_CORE_VERSION == 4400
static_assert(sizeof(ibv_qp_ex) == 352);
static_assert(offsetof(verbs_qp, comp_mask) == 352);
static_assert(offsetof(verbs_qp, xrcd) == 360);
static_assert(sizeof(verbs_qp) == 368);
static_assert(sizeof(ibv_port_attr) == 52);
#else /* 50.0, 56.1: ibv_qp_ex::wr_flush (v45), ibv_port_attr::active_speed_ex (v49) */
static_assert(sizeof(ibv_qp_ex) == 360);
static_assert(offsetof(ibv_qp_ex, wr_flush) == 352);
static_assert(offsetof(verbs_qp, comp_mask) == 360);
static_assert(offsetof(verbs_qp, xrcd) == 368);
static_assert(sizeof(verbs_qp) == 376);
static_assert(sizeof(ibv_port_attr) == 56);
static_assert(offsetof(ibv_port_attr, active_speed_ex) == 52);
#endif

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

} /* namespace sroce::abi::layout_checks */

#endif /* SROCE_PROVIDER_ABI34_H */
