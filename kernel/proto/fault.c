// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fault injection rules: the parser of a rule line and the per-packet
 * decisions (fault.h).
 */
#include "fault.h"
#include "opcode.h"

static const char *const action_names[ROCE_FAULT_NUM_ACTIONS] = {
	[ROCE_FAULT_DROP] = "drop",
	[ROCE_FAULT_DELAY] = "delay",
	[ROCE_FAULT_DUP] = "dup",
	[ROCE_FAULT_CORRUPT] = "corrupt",
	[ROCE_FAULT_RNR_NAK] = "rnr_nak",
	[ROCE_FAULT_ACCESS_NAK] = "access_nak",
};

static const char *const class_names[] = {
	"request", "ack", "read_resp", "cnp",
};

ROCE_STATIC_ASSERT(ROCE_ARRAY_SIZE(class_names) == 4 &&
		   ROCE_FAULT_ALL_CLASSES == 0xf, "one name per class bit");

const char *roce_fault_action_name(unsigned int action)
{
	return action < ROCE_FAULT_NUM_ACTIONS ? action_names[action] : NULL;
}

const char *roce_fault_class_name(unsigned int bit)
{
	return bit < ROCE_ARRAY_SIZE(class_names) ? class_names[bit] : NULL;
}

/* ---- parsing ------------------------------------------------------------ */

struct span {
	const char *p;
	size_t n;
};

static bool span_is(struct span s, const char *word)
{
	size_t n = strlen(word);

	return s.n == n && !memcmp(s.p, word, n);
}

/* Splits @s at the first @c: the part before into *@head, the rest in @s. */
static bool span_split(struct span *s, char c, struct span *head)
{
	size_t i;

	for (i = 0; i < s->n && s->p[i] != c; i++)
		;
	head->p = s->p;
	head->n = i;
	if (i == s->n) {
		s->p += i;
		s->n = 0;
		return false;
	}
	s->p += i + 1;
	s->n -= i + 1;
	return true;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decimal, or hexadecimal after 0x; no sign, no overflow past @max. */
static bool parse_u64(struct span s, u64 max, u64 *out)
{
	unsigned int base = 10;
	u64 v = 0;
	size_t i = 0;

	if (s.n > 2 && s.p[0] == '0' && (s.p[1] == 'x' || s.p[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == s.n)
		return false;
	for (; i < s.n; i++) {
		int d = hex_digit(s.p[i]);

		if (d < 0 || (unsigned int)d >= base)
			return false;
		if (v > (max - (u64)d) / base)
			return false;
		v = v * base + (u64)d;
	}
	*out = v;
	return true;
}

/* "1", "0.25", ".000001": a probability to the millionth, at most 1. */
static bool parse_prob(struct span s, u32 *out)
{
	u32 whole = 0, frac = 0, scale = ROCE_FAULT_PROB_ONE;
	size_t i = 0;
	bool digits = false;

	for (; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++) {
		if (whole > 1)
			return false;
		whole = whole * 10 + (u32)(s.p[i] - '0');
		digits = true;
	}
	if (i < s.n) {
		if (s.p[i++] != '.')
			return false;
		for (; i < s.n; i++) {
			if (s.p[i] < '0' || s.p[i] > '9' || scale == 1)
				return false;	/* past the millionth */
			scale /= 10;
			frac += (u32)(s.p[i] - '0') * scale;
			digits = true;
		}
	}
	if (!digits || whole > 1 || (whole == 1 && frac))
		return false;
	*out = whole ? ROCE_FAULT_PROB_ONE : frac;
	return true;
}

static bool parse_classes(struct span s, u8 *out)
{
	u8 classes = 0;
	struct span name;
	unsigned int b;

	if (span_is(s, "all")) {
		*out = ROCE_FAULT_ALL_CLASSES;
		return true;
	}
	while (s.n) {
		bool known = false;

		span_split(&s, ',', &name);
		for (b = 0; b < ROCE_ARRAY_SIZE(class_names); b++) {
			if (span_is(name, class_names[b])) {
				classes |= (u8)(1u << b);
				known = true;
			}
		}
		if (!known)
			return false;
	}
	*out = classes;
	return classes != 0;
}

enum rule_key {
	KEY_DIR, KEY_CLASS, KEY_QPN, KEY_PROB, KEY_EVERY, KEY_AFTER,
	KEY_COUNT, KEY_DELAY_US, KEY_SEED, KEY_NUM
};

static const char *const key_names[KEY_NUM] = {
	"dir", "class", "qpn", "prob", "every", "after", "count", "delay_us",
	"seed",
};

/* What a key not in key_names[] is told; the list in one line of source. */
static const char unknown_key[] =
	"keys are dir, class, qpn, prob, every, after, count, delay_us, seed";

/* One key=value; NULL or the reason it is wrong. */
static const char *parse_setting(enum rule_key key, struct span v,
				 struct roce_fault_rule *r)
{
	u64 n;

	switch (key) {
	case KEY_DIR:
		if (span_is(v, "tx"))
			r->dirs = ROCE_FAULT_TX;
		else if (span_is(v, "rx"))
			r->dirs = ROCE_FAULT_RX;
		else if (span_is(v, "both"))
			r->dirs = ROCE_FAULT_TX | ROCE_FAULT_RX;
		else
			return "dir is tx, rx or both";
		return NULL;
	case KEY_CLASS:
		return parse_classes(v, &r->classes) ? NULL :
		       "class is all or a list of request,ack,read_resp,cnp";
	case KEY_QPN:
		if (span_is(v, "any")) {
			r->qpn = ROCE_FAULT_ANY_QPN;
			return NULL;
		}
		if (!parse_u64(v, 0xffffff, &n))
			return "qpn is any or a QP number below 2^24";
		r->qpn = (u32)n;
		return NULL;
	case KEY_PROB:
		return parse_prob(v, &r->prob) ? NULL :
		       "prob is a number from 0 to 1, at most 6 decimals";
	case KEY_EVERY:
		if (!parse_u64(v, 0xffffffff, &n) || !n)
			return "every is a number from 1 to 2^32-1";
		r->every = (u32)n;
		return NULL;
	case KEY_AFTER:
		return parse_u64(v, ~0ull, &r->after) ? NULL :
		       "after is a number";
	case KEY_COUNT:
		return parse_u64(v, ~0ull, &r->count) ? NULL :
		       "count is a number (0: no limit)";
	case KEY_DELAY_US:
		if (!parse_u64(v, ROCE_FAULT_MAX_DELAY_US, &n) || !n)
			return "delay_us is a number from 1 to 1000000";
		r->delay_us = (u32)n;
		return NULL;
	case KEY_SEED:
		if (!parse_u64(v, ~0ull, &r->seed))
			return "seed is a number below 2^64";
		r->seeded = true;
		return NULL;
	default:
		return "unknown key";
	}
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The next blank-separated word of @s, or an empty span at the end. */
static struct span next_word(struct span *s)
{
	struct span w;

	while (s->n && is_blank(*s->p)) {
		s->p++;
		s->n--;
	}
	w.p = s->p;
	for (w.n = 0; w.n < s->n && !is_blank(w.p[w.n]); w.n++)
		;
	s->p += w.n;
	s->n -= w.n;
	return w;
}

static const char *check_rule(const struct roce_fault_rule *r, u32 given)
{
	bool nak = (1u << r->action) & ROCE_FAULT_NAK_ACTIONS;

	if (r->action == ROCE_FAULT_DELAY && !(given & (1u << KEY_DELAY_US)))
		return "delay needs delay_us";
	if (r->action != ROCE_FAULT_DELAY && (given & (1u << KEY_DELAY_US)))
		return "delay_us belongs to delay only";
	if (nak && r->dirs != ROCE_FAULT_RX)
		return "a responder's NAK is injected on rx only";
	if (nak && r->classes != ROCE_FAULT_REQUEST)
		return "a responder's NAK answers requests only";
	return NULL;
}

const char *roce_fault_parse(const char *text, size_t len,
			     struct roce_fault_rule *r)
{
	struct span s = { text, len }, word, key;
	u32 given = 0;
	unsigned int a, k;
	bool nak;
	size_t i;

	if (len >= ROCE_FAULT_MAX_LINE)
		return "rule too long";
	if (s.n && s.p[s.n - 1] == '\n')
		s.n--;
	for (i = 0; i < s.n; i++)
		if ((unsigned char)s.p[i] < 0x20 && !is_blank(s.p[i]))
			return "one rule per line, printable characters only";

	memset(r, 0, sizeof(*r));
	word = next_word(&s);
	for (a = 0; a < ROCE_FAULT_NUM_ACTIONS; a++)
		if (span_is(word, action_names[a]))
			break;
	if (a == ROCE_FAULT_NUM_ACTIONS)
		return "the rule starts with drop, delay, dup, corrupt, rnr_nak or access_nak";
	r->action = (u8)a;
	nak = (1u << a) & ROCE_FAULT_NAK_ACTIONS;
	r->dirs = nak ? ROCE_FAULT_RX : ROCE_FAULT_TX | ROCE_FAULT_RX;
	r->classes = nak ? ROCE_FAULT_REQUEST : ROCE_FAULT_ALL_CLASSES;
	r->qpn = ROCE_FAULT_ANY_QPN;
	r->prob = ROCE_FAULT_PROB_ONE;
	r->every = 1;

	for (word = next_word(&s); word.n; word = next_word(&s)) {
		const char *err;

		if (!span_split(&word, '=', &key))
			return "settings are key=value";
		for (k = 0; k < KEY_NUM; k++)
			if (span_is(key, key_names[k]))
				break;
		if (k == KEY_NUM)
			return unknown_key;
		if (given & (1u << k))
			return "a key given twice";
		given |= 1u << k;
		err = parse_setting((enum rule_key)k, word, r);
		if (err)
			return err;
	}
	return check_rule(r, given);
}

/* ---- decisions ---------------------------------------------------------- */

u8 roce_fault_class_of(u8 opcode)
{
	u32 f = roce_opcode_get(opcode)->flags;

	if (f & ROCE_OPF_CNP)
		return ROCE_FAULT_CNP;
	if (f & ROCE_OPF_REQUEST)
		return ROCE_FAULT_REQUEST;
	if (f & ROCE_OPF_READ_RESP)
		return ROCE_FAULT_READ_RESP;
	if (f & ROCE_OPF_ACK)
		return ROCE_FAULT_ACK;
	return 0;
}

/* The RC requests a responder may answer with the rule's NAK. */
static bool nak_applies(u8 action, u8 opcode)
{
	const struct roce_opcode_info *op = roce_opcode_get(opcode);
	u32 remote = ROCE_OPF_WRITE | ROCE_OPF_READ_REQ | ROCE_OPF_ATOMIC |
		     ROCE_OPF_ATOMIC_WRITE | ROCE_OPF_FLUSH;

	if (op->qpt != ROCE_QPT_RC || !(op->flags & ROCE_OPF_REQUEST) ||
	    !(op->flags & ROCE_OPF_FIRST))
		return false;
	if (action == ROCE_FAULT_RNR_NAK)
		return op->flags & ROCE_OPF_SEND;
	return op->flags & remote;
}

bool roce_fault_selects(const struct roce_fault_rule *r, u8 dir, u8 opcode,
			u32 qpn)
{
	if (!(r->dirs & dir) || !(r->classes & roce_fault_class_of(opcode)))
		return false;
	if (r->qpn != ROCE_FAULT_ANY_QPN && r->qpn != qpn)
		return false;
	if ((1u << r->action) & ROCE_FAULT_NAK_ACTIONS)
		return nak_applies(r->action, opcode);
	return true;
}

/* splitmix64's output function: every input bit moves every output bit. */
static u64 mix64(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The @n-th number of stream @stream of the rule's seed. */
static u64 draw(const struct roce_fault_rule *r, u64 n, u64 stream)
{
	return mix64(r->seed ^ mix64(n * 0x9e3779b97f4a7c15ull + stream));
}

/* A fraction of @span from the top 32 bits of @x. */
static u32 scale32(u64 x, u32 span)
{
	return (u32)(((x >> 32) * span) >> 32);
}

bool roce_fault_hits(const struct roce_fault_rule *r, u64 n)
{
	u64 k;

	if (n < r->after)
		return false;
	k = n - r->after;
	/* (k + 1) % every, in the one u64 division proto code may do */
	if (k + 1 - roce_div_u64_u32(k + 1, r->every) * r->every)
		return false;
	if (r->prob >= ROCE_FAULT_PROB_ONE)
		return true;
	return scale32(draw(r, k, 1), ROCE_FAULT_PROB_ONE) < r->prob;
}

u32 roce_fault_pick(const struct roce_fault_rule *r, u64 n, u32 span)
{
	return scale32(draw(r, n, 2), span);
}
