// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "aeth.h"

/*
 * The credit code grows by alternating x4/3 and x3/2 steps: even codes
 * c >= 2 are 2^(c/2), odd codes c >= 3 are 3 * 2^((c-3)/2), i.e. 2, 3, 4,
 * 6, 8, 12, ... 32768; 0 and 1 are literal.
 */
u32 roce_aeth_credits_decode(u8 code)
{
	code &= ROCE_AETH_VALUE_MASK;
	if (code == ROCE_AETH_CREDITS_INVALID)
		return 0;
	if (code < 2)
		return code;
	if (!(code & 1))
		return 1u << (code >> 1);
	return 3u << ((code - 3) >> 1);
}

u8 roce_aeth_credits_encode(u32 n)
{
	u8 code = ROCE_AETH_CREDITS_INVALID - 1;

	while (code > 0 && roce_aeth_credits_decode(code) > n)
		code--;
	return code;
}

const char *roce_aeth_syndrome_name(u8 syndrome)
{
	switch (roce_aeth_type(syndrome)) {
	case ROCE_AETH_ACK:
		return "ACK";
	case ROCE_AETH_RNR_NAK:
		return "RNR_NAK";
	case ROCE_AETH_NAK:
		break;
	default:
		return "RESERVED";
	}
	switch (syndrome) {
	case ROCE_NAK_PSN_SEQ_ERR:
		return "NAK_PSN_SEQ_ERR";
	case ROCE_NAK_INVALID_REQ:
		return "NAK_INVALID_REQ";
	case ROCE_NAK_REM_ACCESS_ERR:
		return "NAK_REM_ACCESS_ERR";
	case ROCE_NAK_REM_OP_ERR:
		return "NAK_REM_OP_ERR";
	case ROCE_NAK_INVALID_RD_REQ:
		return "NAK_INVALID_RD_REQ";
	default:
		return "NAK_RESERVED";
	}
}
