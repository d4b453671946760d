// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* IB_DEVICE_FLUSH_GLOBAL and IB_DEVICE_ATOMIC_WRITE: the device
 * capabilities of the IBTA 1.5 placement operations (6.2, "RDMA: Extend
 * RDMA user ABI to support flush" and "... atomic write"), from which
 * ib_core also refuses an MR with the FLUSH access bits unless the device
 * claims them.  Enum values, so a probe, not #ifdef.
 */
#include <rdma/ib_verbs.h>

extern u64 sroce_probe;
u64 sroce_probe = IB_DEVICE_FLUSH_GLOBAL | IB_DEVICE_ATOMIC_WRITE;
