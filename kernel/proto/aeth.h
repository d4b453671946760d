/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * AETH syndrome byte: bits 7-5 say what the acknowledgment is, bits 4-0
 * carry its argument (credit count, RNR timer code or NAK code).
 */
#ifndef SROCE_PROTO_AETH_H
#define SROCE_PROTO_AETH_H

#include "compat.h"

ROCE_EXTERN_C_BEGIN

#define ROCE_AETH_TYPE_MASK 0xE0
#define ROCE_AETH_VALUE_MASK 0x1F
#define ROCE_AETH_MSN_MASK 0xFFFFFFu

enum roce_aeth_type {
	ROCE_AETH_ACK = 0x00,
	ROCE_AETH_RNR_NAK = 0x20,
	ROCE_AETH_NAK = 0x60,
	/* 0x40, 0x80..0xE0 are reserved: the requester must treat as error. */
};

/* Full syndrome bytes of the NAKs (type NAK | code). */
enum roce_nak_code {
	ROCE_NAK_PSN_SEQ_ERR = 0x60,
	ROCE_NAK_INVALID_REQ = 0x61,
	ROCE_NAK_REM_ACCESS_ERR = 0x62,
	ROCE_NAK_REM_OP_ERR = 0x63,
	ROCE_NAK_INVALID_RD_REQ = 0x64,
};

/* Credit code 0x1F: "no credit information" (UC-like, or no SRQ limit). */
#define ROCE_AETH_CREDITS_INVALID 0x1F

static inline u8 roce_aeth_type(u8 syndrome)
{
	return syndrome & ROCE_AETH_TYPE_MASK;
}

static inline u8 roce_aeth_value(u8 syndrome)
{
	return syndrome & ROCE_AETH_VALUE_MASK;
}

static inline u8 roce_aeth_ack_syndrome(u8 credit_code)
{
	return ROCE_AETH_ACK | (credit_code & ROCE_AETH_VALUE_MASK);
}

static inline u8 roce_aeth_rnr_syndrome(u8 rnr_timer_code)
{
	return ROCE_AETH_RNR_NAK | (rnr_timer_code & ROCE_AETH_VALUE_MASK);
}

static inline bool roce_aeth_is_ack(u8 syndrome)
{
	return roce_aeth_type(syndrome) == ROCE_AETH_ACK;
}

static inline bool roce_aeth_is_rnr_nak(u8 syndrome)
{
	return roce_aeth_type(syndrome) == ROCE_AETH_RNR_NAK;
}

static inline bool roce_aeth_is_nak(u8 syndrome)
{
	return roce_aeth_type(syndrome) == ROCE_AETH_NAK;
}

/*
 * End-to-end credits are a 5-bit log-ish code (0, 1, 2, 3, 4, 6, 8, 12,
 * ... 32768).  decode: code -> receive WQEs (0 for the invalid code 0x1F).
 * encode: the largest code not advertising more than n WQEs, so we never
 * promise buffers we do not have.
 */
u32 roce_aeth_credits_decode(u8 code);
u8 roce_aeth_credits_encode(u32 n);

/* Short name of a syndrome for logs and counters ("ACK", "NAK_SEQ", ...). */
const char *roce_aeth_syndrome_name(u8 syndrome);

ROCE_EXTERN_C_END

#endif /* SROCE_PROTO_AETH_H */
