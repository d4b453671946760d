// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: creation and resizing through uverbs, polling and
 * arming through the shared ring only.
 *
 * Polling is a copy: the kernel writes CQE fields in libibverbs' own
 * encodings (ibv_wc_status, ibv_wc_opcode, ibv_wc_flags), so there is
 * nothing to translate.  One acquire load of the kernel's producer index
 * per poll call covers every CQE it counts; one release store of our
 * consumer index hands the slots back after they have been copied out.
 *
 * Resize protocol assumed of the kernel (RESIZE_CQ with
 * sroce_resize_cq_resp): the process holds the CQ lock for the whole
 * command, so its consumer index is stable.  The kernel, under its own CQ
 * lock, stops producing into the old ring, copies the unread CQEs
 * [old consumer, old producer) in order into a new ring, initialises the
 * new ring's consumer index (any value it likes) and sets its producer
 * just past the copies, carries the armed state (notify word) over, and
 * publishes the new ring in the response.  It fails with EINVAL, leaving
 * the old ring in service, when the unread CQEs do not fit.  The provider
 * then maps the new ring, resumes consuming at the new ring's consumer
 * index as the kernel initialised it, and unmaps the old ring.
 */
#include "cq.hpp"

#include "provider.hpp"

#include <algorithm>
#include <mutex>
#include <new>

namespace sroce {
namespace {

using CreateCqResp = abi::DrvResp<ib_uverbs_create_cq_resp, sroce_create_cq_resp>;
using CreateCqExResp =
	abi::ExDrvResp<ib_uverbs_ex_create_cq_resp, sroce_create_cq_resp>;
using ResizeCqResp = abi::DrvResp<ib_uverbs_resize_cq_resp, sroce_resize_cq_resp>;

/* Comp-mask bits libibverbs 44 defines for ibv_cq_init_attr_ex. */
constexpr uint32_t kKnownCqInitMask =
	IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
/*
 * SINGLE_THREADED is a promise by the caller; honouring it is optional, so
 * it is accepted (we keep locking).  IGNORE_OVERRUN would change what the
 * kernel does on a full ring; it does not offer that.
 */
constexpr uint32_t kSupportedCqCreateFlags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;

/*
 * CQEs available at `tail` given the producer `head`.  Bounded by the
 * ring size: a kernel that ever claimed more would be describing slots it
 * has already overwritten.
 */
uint32_t available(const Cq &cq, uint32_t head) noexcept
{
	return std::min(head - cq.tail, cq.ring.num_slots());
}

sroce_cqe read_cqe(const Cq &cq, uint32_t index) noexcept
{
	sroce_cqe c;
	std::memcpy(&c, cq.ring.slot(index), sizeof(c));
	return c;
}

void cqe_to_wc(const sroce_cqe &c, ibv_wc *wc) noexcept
{
	wc->wr_id = c.wr_id;
	wc->status = static_cast<ibv_wc_status>(c.status);
	wc->opcode = static_cast<ibv_wc_opcode>(c.opcode);
	wc->vendor_err = c.vendor_err;
	wc->byte_len = c.byte_len;
	wc->imm_data = c.imm_data; /* or invalidated_rkey: same storage */
	wc->qp_num = c.qp_num;
	wc->src_qp = c.src_qp;
	wc->wc_flags = c.wc_flags;
	wc->pkey_index = c.pkey_index;
	wc->slid = c.slid;
	wc->sl = c.sl;
	wc->dlid_path_bits = c.dlid_path_bits;
}

/* ---- ibv_cq_ex poll API ------------------------------------------------ */

/* Loads the CQE at cq.tail into the batch and the public status/wr_id. */
void load_current(Cq &cq) noexcept
{
	cq.cur = read_cqe(cq, cq.tail);
	cq.have_cur = true;
	cq.vcq.cq_ex.status = static_cast<ibv_wc_status>(cq.cur.status);
	cq.vcq.cq_ex.wr_id = cq.cur.wr_id;
}

/*
 * Takes the CQ lock for the batch.  ENOENT (lock released, end_poll must
 * not follow - though we tolerate it) when there is nothing to poll.
 */
int cq_start_poll(ibv_cq_ex *ibcq, ibv_poll_cq_attr *attr) noexcept
{
	Cq &cq = *to_cq(ibcq);
	if (attr && attr->comp_mask)
		return EINVAL;

	cq.lock.lock();
	if (!cq.ring.attached()) {
		cq.lock.unlock();
		return EIO;
	}
	cq.seen_head = cq.ring.producer(std::memory_order_acquire);
	if (available(cq, cq.seen_head) == 0) {
		const bool yield = cq.idle.empty();
		cq.lock.unlock();
		if (yield)
			yield_cpu();
		return ENOENT;
	}
	cq.idle.found();
	cq.polling = true;
	load_current(cq);
	return 0;
}

/*
 * Consumes the current CQE and moves to the next.  On ENOENT the batch
 * stays open (end_poll closes it) and a later next_poll may still find
 * new CQEs: pyverbs retries next_poll in a loop, so consuming must happen
 * once per CQE, not once per call.
 */
int cq_next_poll(ibv_cq_ex *ibcq) noexcept
{
	Cq &cq = *to_cq(ibcq);
	if (cq.have_cur) {
		++cq.tail;
		cq.have_cur = false;
	}
	if (available(cq, cq.seen_head) == 0) {
		cq.seen_head = cq.ring.producer(std::memory_order_acquire);
		if (available(cq, cq.seen_head) == 0)
			return ENOENT;
	}
	load_current(cq);
	return 0;
}

/*
 * Consumes the current CQE, hands the slots back and drops the lock.  A
 * call without an open batch (pyverbs' `finally: end_poll()` after a
 * start_poll that timed out) is a no-op rather than an unlock of a lock
 * this thread does not hold.
 */
void cq_end_poll(ibv_cq_ex *ibcq) noexcept
{
	Cq &cq = *to_cq(ibcq);
	if (!cq.polling)
		return;
	if (cq.have_cur) {
		++cq.tail;
		cq.have_cur = false;
	}
	cq.ring.publish_consumer(cq.tail);
	cq.polling = false;
	cq.lock.unlock();
}

ibv_wc_opcode cq_read_opcode(ibv_cq_ex *ibcq) noexcept
{
	return static_cast<ibv_wc_opcode>(to_cq(ibcq)->cur.opcode);
}
uint32_t cq_read_vendor_err(ibv_cq_ex *ibcq) noexcept
{
	return to_cq(ibcq)->cur.vendor_err;
}
uint32_t cq_read_byte_len(ibv_cq_ex *ibcq) noexcept
{
	return to_cq(ibcq)->cur.byte_len;
}
__be32 cq_read_imm_data(ibv_cq_ex *ibcq) noexcept
{
	return to_cq(ibcq)->cur.imm_data;
}
uint32_t cq_read_qp_num(ibv_cq_ex *ibcq) noexcept
{
	return to_cq(ibcq)->cur.qp_num;
}
uint32_t cq_read_src_qp(ibv_cq_ex *ibcq) noexcept
{
	return to_cq(ibcq)->cur.src_qp;
}
unsigned int cq_read_wc_flags(ibv_cq_ex *ibcq) noexcept
{
	return to_cq(ibcq)->cur.wc_flags;
}
uint32_t cq_read_slid(ibv_cq_ex *ibcq) noexcept
{
	return to_cq(ibcq)->cur.slid;
}
uint8_t cq_read_sl(ibv_cq_ex *ibcq) noexcept
{
	return to_cq(ibcq)->cur.sl;
}
uint8_t cq_read_dlid_path_bits(ibv_cq_ex *ibcq) noexcept
{
	return to_cq(ibcq)->cur.dlid_path_bits;
}
uint64_t cq_read_completion_ts(ibv_cq_ex *ibcq) noexcept
{
	return to_cq(ibcq)->cur.timestamp;
}

/* ---- creation helpers -------------------------------------------------- */

/* Maps the ring the kernel described and binds the CQ to it. */
int map_cq_ring(Cq &cq, int cmd_fd, const sroce_ring_info &info) noexcept
{
	/* A ring smaller than the CQ depth the kernel reported would overrun. */
	if (cq.vcq.cq.cqe < 0 ||
	    info.num_slots < static_cast<uint32_t>(cq.vcq.cq.cqe))
		return EPROTO;

	Mapping m;
	int ret = m.map(cmd_fd, info.mmap_offset, info.mmap_length);
	if (ret)
		return ret;
	ret = init_cq_ring(cq, m.get(), m.size(), info.num_slots,
			   info.slot_size);
	if (ret)
		return ret;
	cq.map = std::move(m);
	return 0;
}

/* Undoes a kernel CQ whose user-space half could not be set up. */
void abandon_cq(Cq &cq, int err) noexcept
{
	SROCE_ERR(vctx_of(cq.vcq.cq.context),
		  "CQ %u: cannot map its ring: %d", cq.vcq.cq.handle, err);
	(void)ibv_cmd_destroy_cq(&cq.vcq.cq);
	errno = err;
}

} /* namespace */

int init_cq_ring(Cq &cq, void *base, std::size_t length, uint32_t num_slots,
		 uint32_t slot_size) noexcept
{
	Ring ring;
	const int ret = ring.attach(base, length, num_slots, slot_size,
				    sizeof(sroce_cqe));
	if (ret)
		return ret;
	cq.ring = ring;
	cq.tail = ring.consumer(std::memory_order_relaxed);
	cq.seen_head = cq.tail;
	cq.have_cur = false;
	return 0;
}

void install_cq_ex_ops(Cq &cq) noexcept
{
	ibv_cq_ex &ex = cq.vcq.cq_ex;
	ex.start_poll = cq_start_poll;
	ex.next_poll = cq_next_poll;
	ex.end_poll = cq_end_poll;
	ex.read_opcode = cq_read_opcode;
	ex.read_vendor_err = cq_read_vendor_err;
	/*
	 * Every reader whose field the CQE carries is installed whatever
	 * wc_flags asked for: they cost nothing, and a caller that reads a
	 * field it did not request gets a value instead of a NULL call.
	 * The CVLAN, flow tag, TM and wallclock readers stay NULL; their
	 * flags are refused at creation.
	 */
	ex.read_byte_len = cq_read_byte_len;
	ex.read_imm_data = cq_read_imm_data;
	ex.read_qp_num = cq_read_qp_num;
	ex.read_src_qp = cq_read_src_qp;
	ex.read_wc_flags = cq_read_wc_flags;
	ex.read_slid = cq_read_slid;
	ex.read_sl = cq_read_sl;
	ex.read_dlid_path_bits = cq_read_dlid_path_bits;
	ex.read_completion_ts = cq_read_completion_ts;
}

ibv_cq *create_cq(ibv_context *ibctx, int cqe, ibv_comp_channel *channel,
		  int comp_vector) noexcept
{
	Owned<Cq> cq(new (std::nothrow) Cq);
	if (!cq) {
		errno = ENOMEM;
		return nullptr;
	}
	cq->idle = IdlePoll(IdlePoll::caller_has_one_cpu());

	struct ibv_create_cq cmd{};
	CreateCqResp resp{};
	int ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector,
				    &cq->vcq.cq, &cmd, sizeof(cmd),
				    resp.core(), sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}

	ret = map_cq_ring(*cq, ibctx->cmd_fd, resp.drv.cq);
	if (ret) {
		abandon_cq(*cq, ret);
		return nullptr;
	}
	return &cq.release()->vcq.cq;
}

ibv_cq_ex *create_cq_ex(ibv_context *ibctx, ibv_cq_init_attr_ex *attr) noexcept
{
	if (attr->comp_mask & ~kKnownCqInitMask) {
		errno = EINVAL;
		return nullptr;
	}
	/* No parent domains (alloc_parent_domain is not offered). */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~kSupportedCqCreateFlags)) ||
	    (attr->wc_flags & ~kSupportedWcFlags)) {
		errno = EOPNOTSUPP;
		return nullptr;
	}

	Owned<Cq> cq(new (std::nothrow) Cq);
	if (!cq) {
		errno = ENOMEM;
		return nullptr;
	}
	cq->idle = IdlePoll(IdlePoll::caller_has_one_cpu());

	/*
	 * With COMPLETION_TIMESTAMP libibverbs asks the kernel for
	 * IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION; the kernel fills
	 * sroce_cqe::timestamp either way.
	 */
	struct ibv_create_cq_ex cmd{};
	CreateCqExResp resp{};
	int ret = abi::cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd, sizeof(cmd),
					resp.core(), sizeof(resp), 0);
	if (ret) {
		errno = ret;
		return nullptr;
	}

	ret = map_cq_ring(*cq, ibctx->cmd_fd, resp.drv.cq);
	if (ret) {
		abandon_cq(*cq, ret);
		return nullptr;
	}
	install_cq_ex_ops(*cq);
	return &cq.release()->vcq.cq_ex;
}

int destroy_cq(ibv_cq *ibcq) noexcept
{
	const int ret = ibv_cmd_destroy_cq(ibcq);
	if (ret) {
		errno = ret;
		return ret;
	}
	delete to_cq(ibcq); /* unmaps the ring */
	return 0;
}

int resize_cq(ibv_cq *ibcq, int cqe) noexcept
{
	Cq &cq = *to_cq(ibcq);
	std::lock_guard<SpinLock> guard(cq.lock);

	struct ibv_resize_cq cmd{};
	ResizeCqResp resp{};
	int ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), resp.core(),
				    sizeof(resp));
	if (ret) {
		errno = ret;
		return ret; /* the kernel kept the old ring */
	}

	/*
	 * From here the kernel produces into the new ring only.  If it cannot
	 * be mapped the CQ is dead: detach, so that polling reports an error
	 * instead of silently waiting on a ring nobody writes any more.
	 */
	Mapping m;
	const sroce_ring_info &info = resp.drv.cq;
	ret = info.num_slots < static_cast<uint32_t>(ibcq->cqe) ? EPROTO : 0;
	if (!ret)
		ret = m.map(ibcq->context->cmd_fd, info.mmap_offset,
			    info.mmap_length);
	if (!ret)
		ret = init_cq_ring(cq, m.get(), m.size(), info.num_slots,
				   info.slot_size);
	if (ret) {
		SROCE_ERR(vctx_of(ibcq->context),
			  "CQ %u: cannot map the resized ring: %d",
			  ibcq->handle, ret);
		cq.ring.detach();
		cq.map.reset();
		errno = ret;
		return ret;
	}
	cq.map = std::move(m); /* unmaps the old ring */
	return 0;
}

/* poll_cq under the CQ lock; *yield: the caller should yield its CPU. */
static int poll_cq_locked(Cq &cq, int num_entries, ibv_wc *wc, bool *yield) noexcept
{
	std::lock_guard<SpinLock> guard(cq.lock);

	if (!cq.ring.attached())
		return -EIO; /* lost its ring in a failed resize */

	const uint32_t head = cq.ring.producer(std::memory_order_acquire);
	const uint32_t ready = available(cq, head);
	const uint32_t n = std::min(ready,
				    static_cast<uint32_t>(std::max(num_entries, 0)));
	for (uint32_t i = 0; i < n; ++i)
		cqe_to_wc(read_cqe(cq, cq.tail + i), &wc[i]);
	if (n) {
		cq.tail += n;
		cq.ring.publish_consumer(cq.tail);
	}
	if (ready)
		cq.idle.found();
	else
		*yield = cq.idle.empty();
	return static_cast<int>(n);
}

/*
 * Walks the unread CQEs from the newest back, moving each kept one up by
 * the number dropped so far: the kept ones end at the producer index, in
 * order, and our consumer index moves past the dropped ones.  Nothing is
 * raced: the kernel writes only at its producer index and beyond, into
 * room our consumer index (published last) frees; other pollers wait on
 * the lock.
 */
uint32_t discard_qp_completions(ibv_cq *ibcq, uint32_t qp_num) noexcept
{
	Cq &cq = *to_cq(ibcq);
	std::lock_guard<SpinLock> guard(cq.lock);

	if (!cq.ring.attached())
		return 0;
	const uint32_t unread = available(cq, cq.ring.producer(std::memory_order_acquire));
	uint32_t dropped = 0;
	for (uint32_t i = unread; i-- > 0;) {
		const uint32_t index = cq.tail + i;
		if (read_cqe(cq, index).qp_num == qp_num)
			++dropped;
		else if (dropped)
			std::memcpy(cq.ring.slot(index + dropped), cq.ring.slot(index),
				    cq.ring.slot_size());
	}
	if (dropped) {
		cq.tail += dropped;
		cq.ring.publish_consumer(cq.tail);
	}
	return dropped;
}

int poll_cq(ibv_cq *ibcq, int num_entries, ibv_wc *wc) noexcept
{
	bool yield = false;
	const int n = poll_cq_locked(*to_cq(ibcq), num_entries, wc, &yield);

	if (yield)
		yield_cpu(); /* not under the lock: another poller may want it */
	return n;
}

/*
 * After arming: does the CQ hold completions not polled yet that the arm
 * waits for, while the arm still stands?  The kernel publishes a CQE and
 * then reads the arm, we arm and then read its producer index, each with
 * a full barrier between (the arm is a seq_cst OR, the loads below seq_cst
 * too), so one of us sees the other.  A completion published before the
 * arm raised no event; ib_req_notify_cq() promises one for every
 * completion added since the last poll, ConnectX raises it (its arm
 * carries the consumer index), and UCX's sleep mode arms with no poll in
 * between and then sleeps.  The kernel clears the arm when it fires, so a
 * cleared arm means an event is already on its way.  An arm for solicited
 * completions waits only for those (and errors): solicited_end, written
 * before the producer, says whether one is unpolled.  Steady state costs
 * nothing: a process that polled the CQ empty before arming finds nothing
 * here.
 */
bool armed_over_unpolled(const Cq &cq) noexcept
{
	const uint32_t head = cq.ring.producer(std::memory_order_seq_cst);
	const uint32_t unpolled = head - cq.ring.consumer(std::memory_order_relaxed);
	if (!unpolled)
		return false;
	const uint32_t armed = cq.ring.notify(std::memory_order_seq_cst);
	if (armed & SROCE_CQ_ARM_NEXT)
		return true;
	return armed && head - cq.ring.solicited_end(std::memory_order_relaxed) < unpolled;
}

int req_notify_cq(ibv_cq *ibcq, int solicited_only) noexcept
{
	/*
	 * No lock: arming is one atomic OR, safe against concurrent polling,
	 * and taking the CQ lock here would deadlock a thread that arms from
	 * inside its own start_poll..end_poll batch.  (Resizing concurrently
	 * with arming is the caller's race, as with every other provider.)
	 */
	Cq &cq = *to_cq(ibcq);
	if (!cq.ring.attached())
		return EIO;
	cq.ring.set_notify(solicited_only ? SROCE_CQ_ARM_SOLICITED
					  : SROCE_CQ_ARM_NEXT);
	if (!armed_over_unpolled(cq))
		return 0;
	/* Only the kernel can write the completion channel. */
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

} /* namespace sroce */
