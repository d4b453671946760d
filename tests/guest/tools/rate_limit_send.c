// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Guest tool for tests/guest/test_congestion.py: one UD QP, limited
 * through the verbs API, sends MTU-sized messages as fast as it may to a
 * second UD QP on the same device, and reports the rate it was measured
 * sending at.  UD, so that what is measured is the pacer alone: an RC
 * QP's rate also depends on its loss recovery, and a TCG guest loses
 * packets to starved sockets now and then.
 *
 *   rate_limit_send DEV GID_INDEX HOW KBPS BURST WARMUP_S SECONDS
 *
 * HOW is "verb" (ibv_modify_qp_rate_limit, BURST as max_burst_sz) or
 * "attr" (IBV_QP_RATE_LIMIT in ibv_modify_qp; BURST unused).  The rate is
 * the QP's own IP bytes on the wire (drv_tx_bytes of `rdma res show qp
 * -dd`, what the pacer charges) over a monotonic-clock window after the
 * warm-up.  Prints one JSON object; exits nonzero on any verbs failure.
 * It is a C program because ibv_modify_qp_rate_limit is an inline in
 * verbs.h that pyverbs does not wrap.
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MSG_SIZE	1024	/* one packet at path MTU 1024 */
#define DEPTH		256	/* sends in flight: 256 KiB, about half a
				 * second at the rates tested, so a
				 * descheduled process never drains the QP */
#define QKEY		0x11111111

static void die(const char *what, int err)
{
	fprintf(stderr, "rate_limit_send: %s: %s\n", what, strerror(err));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The QP's drv_tx_bytes from the kernel's resource tracking; *at is
 * when it was read (the middle of the rdma run).
 */
static uint64_t qp_tx_bytes(const char *dev, uint32_t qpn, double *at)
{
	double start = now_s();
	char cmd[160], line[4096];
	uint64_t bytes = 0;
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma res show qp link %s/1 lqpn %u -dd", dev, qpn);
	f = popen(cmd, "r");
	if (!f)
		die("popen rdma", errno);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "drv_tx_bytes ");

		if (p && sscanf(p, "drv_tx_bytes %" SCNu64, &bytes) == 1)
			found = true;
	}
	if (pclose(f) != 0 || !found)
		die("rdma res show qp: no drv_tx_bytes", EPROTO);
	*at = (start + now_s()) / 2;
	return bytes;
}

static void to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = QKEY,
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_QKEY);
	if (err)
		die("to INIT", err);
	a.qp_state = IBV_QPS_RTR;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (err)
		die("to RTR", err);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (err)
		die("to RTS", err);
}

static void set_limit(struct ibv_qp *qp, const char *how, uint32_t kbps,
		      uint32_t burst)
{
	int err;

	if (!strcmp(how, "verb")) {
		struct ibv_qp_rate_limit_attr rl = {
			.rate_limit = kbps,
			.max_burst_sz = burst,
		};

		err = ibv_modify_qp_rate_limit(qp, &rl);
	} else {
		struct ibv_qp_attr a = { .rate_limit = kbps };

		err = ibv_modify_qp(qp, &a, IBV_QP_RATE_LIMIT);
	}
	if (err)
		die("setting the rate limit", err);
}

static void post_send(struct ibv_qp *qp, struct ibv_mr *src, struct ibv_ah *ah,
		      uint32_t dest_qpn)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)src->addr, .length = MSG_SIZE, .lkey = src->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = dest_qpn, .remote_qkey = QKEY },
	}, *bad;
	int err = ibv_post_send(qp, &wr, &bad);

	if (err)
		die("ibv_post_send", err);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_ah_attr ah_attr = {
		.is_global = 1,
		.port_num = 1,
	};
	struct ibv_qp *qp, *peer;
	struct ibv_ah *ah;
	struct ibv_mr *src;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union ibv_gid gid;
	double t0 = 0, t1, end_warmup, end;
	uint64_t b0 = 0, b1;
	int gid_index, inflight = 0, err;

	if (argc != 8) {
		fprintf(stderr, "usage: %s DEV GID_INDEX verb|attr KBPS BURST WARMUP_S SECONDS\n",
			argv[0]);
		return 2;
	}
	gid_index = atoi(argv[2]);
	list = ibv_get_device_list(NULL);
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("no such device", ENODEV);
	err = ibv_query_gid(ctx, 1, gid_index, &gid);
	if (err)
		die("ibv_query_gid", err);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
	src = pd ? ibv_reg_mr(pd, calloc(1, MSG_SIZE), MSG_SIZE, 0) : NULL;
	ah_attr.grh.dgid = gid;
	ah_attr.grh.sgid_index = gid_index;
	ah_attr.grh.hop_limit = 64;
	ah = pd ? ibv_create_ah(pd, &ah_attr) : NULL;
	if (!pd || !cq || !src || !ah)
		die("PD/CQ/MR/AH", errno);
	init.send_cq = init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	peer = ibv_create_qp(pd, &init);
	if (!qp || !peer)
		die("ibv_create_qp", errno);
	/* The peer posts no receives: what it drops costs the sender nothing. */
	to_rts(qp);
	to_rts(peer);
	set_limit(qp, argv[3], strtoul(argv[4], NULL, 0), strtoul(argv[5], NULL, 0));

	end_warmup = now_s() + atof(argv[6]);
	end = end_warmup + atof(argv[7]);
	for (;;) {
		struct ibv_wc wc;
		int n;

		while (inflight < DEPTH) {
			post_send(qp, src, ah, peer->qp_num);
			inflight++;
		}
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0 || (n && wc.status != IBV_WC_SUCCESS))
			die(n < 0 ? "ibv_poll_cq" : ibv_wc_status_str(wc.status), EIO);
		inflight -= n;
		if (!n) {	/* leave the vCPU to the kernel's send work */
			struct timespec ms = { .tv_nsec = 1000000 };

			nanosleep(&ms, NULL);
		}
		if (!t0 && now_s() >= end_warmup)
			b0 = qp_tx_bytes(argv[1], qp->qp_num, &t0);
		if (t0 && now_s() >= end)
			break;
	}
	b1 = qp_tx_bytes(argv[1], qp->qp_num, &t1);
	printf("{\"qpn\": %u, \"bits_per_second\": %.1f, \"seconds\": %.3f}\n",
	       qp->qp_num, (b1 - b0) * 8 / (t1 - t0), t1 - t0);
	return 0;
}
