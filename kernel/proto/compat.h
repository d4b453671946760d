/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place where kernel/proto/ learns which world it is built in.
 *
 * Everything under kernel/proto/ is compiled three ways from the same
 * files: into sroce.ko (Kbuild, gnu11, __KERNEL__ defined), into the host
 * unit tests (C11 / C++20) and into the libFuzzer target.  So this code may
 * use only what both worlds have: fixed-width types, bool, memcpy/memset/
 * memcmp.  No allocation, no floating point, no VLAs, no u64 division
 * except through roce_div_u64_u32().
 */
#ifndef SROCE_PROTO_COMPAT_H
#define SROCE_PROTO_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#else
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
#endif

#ifdef __cplusplus
#define ROCE_STATIC_ASSERT(c, m) static_assert(c, m)
#define ROCE_EXTERN_C_BEGIN extern "C" {
#define ROCE_EXTERN_C_END }
#else
#define ROCE_STATIC_ASSERT(c, m) _Static_assert(c, m)
#define ROCE_EXTERN_C_BEGIN
#define ROCE_EXTERN_C_END
#endif

#define ROCE_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The one 64-bit division proto code may do: 32-bit kernels have no
 * native u64 '/', so the kernel spells it div_u64().
 */
static inline u64 roce_div_u64_u32(u64 dividend, u32 divisor)
{
#ifdef __KERNEL__
	return div_u64(dividend, divisor);
#else
	return dividend / divisor;
#endif
}

/* Both gcc and clang have it, so no need for the kernel's likely(). */
#define roce_likely(x) __builtin_expect(!!(x), 1)
#define roce_unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Big-endian accessors on plain byte pointers.  Wire headers sit at any
 * alignment inside an skb or a fuzzer buffer, so we never cast to a wider
 * type; compilers fold these shifts into a single load + bswap.
 */
static inline u16 roce_get_be16(const u8 *p)
{
	return (u16)((u16)p[0] << 8 | p[1]);
}

static inline u32 roce_get_be24(const u8 *p)
{
	return (u32)p[0] << 16 | (u32)p[1] << 8 | p[2];
}

static inline u32 roce_get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static inline u64 roce_get_be64(const u8 *p)
{
	return (u64)roce_get_be32(p) << 32 | roce_get_be32(p + 4);
}

static inline void roce_put_be16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)(v & 0xff);	/* masked: sparse flags a cast that truncates a constant */
}

/* Writes the low 24 bits; QPNs and PSNs are 24-bit fields. */
static inline void roce_put_be24(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 16);
	p[1] = (u8)(v >> 8);
	p[2] = (u8)v;
}

static inline void roce_put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static inline void roce_put_be64(u8 *p, u64 v)
{
	roce_put_be32(p, (u32)(v >> 32));
	roce_put_be32(p + 4, (u32)v);
}

/* Little-endian: only the ICRC trailer and the CRC engine use these. */
static inline u32 roce_get_le32(const u8 *p)
{
	return (u32)p[3] << 24 | (u32)p[2] << 16 | (u32)p[1] << 8 | p[0];
}

static inline void roce_put_le32(u8 *p, u32 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
	p[2] = (u8)(v >> 16);
	p[3] = (u8)(v >> 24);
}

#endif /* SROCE_PROTO_COMPAT_H */
