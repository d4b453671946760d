/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The CRC-32 engine under the ICRC: reflected IEEE polynomial 0xEDB88320.
 *
 * Convention (identical to the kernel's crc32_le()): the state is the raw
 * CRC register.  roce_crc32_update() applies NO pre- or post-inversion;
 * whoever starts a CRC seeds it (0xFFFFFFFF for a standard CRC-32) and
 * whoever ends it inverts.  So zlib's crc32(0, p, n) equals
 * ~roce_crc32_update(0xFFFFFFFF, p, n), and chaining update calls over
 * split buffers gives the same state as one call over the whole.
 */
#ifndef SROCE_PROTO_CRC32_H
#define SROCE_PROTO_CRC32_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

#define ROCE_CRC32_INIT 0xFFFFFFFFu

/* Kernel: crc32_le() (arch-accelerated).  Host: slice-by-8 tables. */
u32 roce_crc32_update(u32 state, const void *p, size_t n);

/*
 * memcpy(dst, src, n) and roce_crc32_update(state, src, n) in one pass
 * over the bytes (slice-by-8 tables in both worlds); returns the new
 * state.  For payloads that are copied anyway: into an skb on send, out
 * of one on receive.  dst and src must not overlap.
 */
u32 roce_crc32_copy(u32 state, void *dst, const void *src, size_t n);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_CRC32_H */
