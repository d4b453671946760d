/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce: software RoCE v2 device.  Types shared by the kernel files.
 *
 * Object ownership: ib_core allocates every verbs object (ib_pd, ib_qp …)
 * with the size we declare through INIT_RDMA_OBJ_SIZE, so each sroce object
 * embeds its ib_* base as the first member and is reached with container_of.
 *
 * Contexts: verbs calls run in process context; the receive path (responder
 * and completer) runs in softirq from the UDP socket; each QP's send engine
 * (requester and READ responses) runs in whichever of those contexts
 * kicked it, or from its work item (qp.c); timers are soft hrtimers.
 * Locks are therefore taken with _bh where process context and softirq
 * meet.
 *
 * Each concept's types and functions are declared in a header of its own,
 * included here in dependency order; the .c files include this one.
 */
#ifndef SROCE_H
#define SROCE_H

#include "ring.h"
#include "cc.h"
#include "dev.h"
#include "mr.h"
#include "cq.h"
#include "rq.h"
#include "ah.h"
#include "net.h"
#include "qp.h"

#include "compat.h"

#endif /* SROCE_H */
