// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_escape.c - tools/lib/sf_escape.c against an independent strict UTF-8
 * decoder and JSON string parser: every byte value 0..255 as a comm, every
 * pair of bytes, comms the kernel cut mid-character, names without a NUL,
 * and buffers too small for the result.  The terminal escaping must leave
 * printable ASCII only and decode back to the original bytes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "sf_escape.h"
#include "sf_test.h"

#define MAX_CPS 128

/*
 * Strict UTF-8 (RFC 3629): decode s into code points; false on any
 * ill-formed sequence (overlong, surrogate, above U+10FFFF, truncated).
 */
static bool utf8_decode(const unsigned char *s, size_t n, uint32_t *cps,
			size_t *nr)
{
	*nr = 0;
	for (size_t i = 0; i < n;) {
		static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
		unsigned char c = s[i];
		size_t len;
		uint32_t cp;

		if (c < 0x80) {
			len = 1;
			cp = c;
		} else if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (i + len > n)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min[len] || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		if (*nr < MAX_CPS)
			cps[(*nr)++] = cp;
		i += len;
	}
	return true;
}

static int hexval(uint32_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Parse one JSON string literal (RFC 8259) that must fill the whole text;
 * out gets its code points.  Also refuses what satfeed promises never to
 * print raw: DEL and the C1 controls.
 */
static bool json_string_parse(const char *text, uint32_t *out, size_t *nr)
{
	uint32_t cps[MAX_CPS];
	size_t n, i = 1;

	*nr = 0;
	if (!utf8_decode((const unsigned char *)text, strlen(text), cps, &n) ||
	    n < 2 || cps[0] != '"' || cps[n - 1] != '"')
		return false;
	while (i < n - 1) {
		uint32_t c = cps[i++];

		if (c == '"' || c < 0x20 || c == 0x7f ||
		    (c >= 0x80 && c <= 0x9f))
			return false;
		if (c == '\\') {
			if (i >= n - 1)
				return false;
			c = cps[i++];
			switch (c) {
			case '"': case '\\': case '/':
				break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				uint32_t v = 0;

				if (i + 4 > n - 1)
					return false;
				for (int k = 0; k < 4; k++) {
					int h = hexval(cps[i++]);

					if (h < 0)
						return false;
					v = v << 4 | h;
				}
				if (v >= 0xd800 && v <= 0xdfff)
					return false;	/* no pairs expected */
				c = v;
				break;
			}
			default:
				return false;
			}
		}
		out[(*nr)++] = c;
	}
	return true;
}

/* Escape s (max bytes) and check the result against want[nr_want]. */
static void check_json(const char *what, const char *s, size_t max,
		       const uint32_t *want, size_t nr_want)
{
	char buf[SF_JSON_ESCAPED_LEN(96)];
	uint32_t got[MAX_CPS];
	size_t need, nr;
	bool ok;

	need = sf_json_escape(buf, sizeof(buf), s, max);
	ASSERT_EQ(need, strlen(buf), what);
	ok = json_string_parse(buf, got, &nr);
	if (!ASSERT_TRUE(ok, "%s: not a valid JSON string in UTF-8: %s", what,
			 buf))
		return;
	if (!want)
		return;
	ASSERT_TRUE(nr == nr_want && !memcmp(got, want, nr * sizeof(*got)),
		    "%s: decodes to %zu code points, want %zu (%s)", what, nr,
		    nr_want, buf);
}

/* Decode the terminal escaping back into bytes; -1 if it is not ours. */
static long text_unescape(const char *t, unsigned char *out)
{
	long n = 0;

	for (size_t i = 0; t[i]; i++) {
		unsigned char c = t[i];

		if (c < 0x20 || c >= 0x7f)
			return -1;
		if (c != '\\') {
			out[n++] = c;
			continue;
		}
		if (t[i + 1] == '\\') {
			out[n++] = '\\';
			i++;
		} else if (t[i + 1] == 'x' && hexval(t[i + 2]) >= 0 &&
			   hexval(t[i + 3]) >= 0) {
			out[n++] = hexval(t[i + 2]) << 4 | hexval(t[i + 3]);
			i += 3;
		} else {
			return -1;
		}
	}
	return n;
}

static void check_text(const char *what, const char *s, size_t max)
{
	char buf[SF_TEXT_ESCAPED_LEN(96)];
	unsigned char back[96];
	size_t len = strnlen(s, max);
	long n;

	ASSERT_EQ(sf_text_escape(buf, sizeof(buf), s, max), strlen(buf), what);
	n = text_unescape(buf, back);
	ASSERT_TRUE(n == (long)len && !memcmp(back, s, len),
		    "%s: terminal form '%s' is not printable ASCII decoding to the input",
		    what, buf);
}

static void test_every_byte(void)
{
	char comm[SF_COMM_LEN], what[64];
	uint32_t want[SF_COMM_LEN];

	/* alone: every byte but NUL is its own code point (Latin-1) */
	for (int b = 0; b < 256; b++) {
		comm[0] = b;
		comm[1] = '\0';
		want[0] = b;
		snprintf(what, sizeof(what), "comm \\x%02x", b);
		check_json(what, comm, sizeof(comm), want, b ? 1 : 0);
		check_text(what, comm, sizeof(comm));
	}
	/* 15-byte comms of consecutive values, as a process could set them */
	for (int b = 1; b < 256; b += 15) {
		size_t n = 0;

		for (; n < 15 && b + n < 256; n++) {
			comm[n] = b + n;
			want[n] = b + n;
		}
		comm[n] = '\0';
		snprintf(what, sizeof(what), "comm \\x%02x..\\x%02x", b,
			 (int)(b + n - 1));
		/* a run of consecutive bytes never forms a UTF-8 sequence */
		check_json(what, comm, sizeof(comm), want, n);
		check_text(what, comm, sizeof(comm));
	}
}

static void test_every_pair(void)
{
	char s[3] = "", what[32];
	int bad = 0;

	for (int a = 1; a < 256; a++) {
		for (int b = 1; b < 256; b++) {
			char buf[SF_JSON_ESCAPED_LEN(2)];
			uint32_t got[MAX_CPS];
			size_t nr;

			s[0] = a;
			s[1] = b;
			sf_json_escape(buf, sizeof(buf), s, sizeof(s));
			if (!json_string_parse(buf, got, &nr)) {
				if (bad++ < 5)
					ASSERT_TRUE(false, "pair %02x %02x: %s",
						    a, b, buf);
				continue;
			}
			snprintf(what, sizeof(what), "pair %02x %02x", a, b);
			if (a >= 0x80 && b >= 0x80)	/* keep the log short */
				check_text(what, s, sizeof(s));
		}
	}
	ASSERT_EQ(bad, 0, "byte pairs whose JSON is invalid");
}

static void test_utf8(void)
{
	static const uint32_t e_acute[] = { 'c', 'a', 'f', 0xe9 };
	static const uint32_t euro_cut[] = { 'x', 0xe2, 0x82 };
	static const uint32_t smile[] = { 0x1f600, '!' };
	static const uint32_t overlong[] = { 0xc0, 0xaf };
	static const uint32_t surrogate[] = { 0xed, 0xa0, 0x80 };
	static const uint32_t c1[] = { 0x85, 0x9b, 'a' };
	static const uint32_t quote[] = { '"', '\\', '\n', 0x7f };
	char buf[SF_JSON_ESCAPED_LEN(16)];

	check_json("valid UTF-8 is kept", "caf\xc3\xa9", 16, e_acute, 4);
	sf_json_escape(buf, sizeof(buf), "caf\xc3\xa9", 16);
	ASSERT_TRUE(!strcmp(buf, "\"caf\xc3\xa9\""), "raw UTF-8 kept: %s", buf);
	/* the kernel cuts a 16+ byte name after 15 bytes, mid-character */
	check_json("a comm cut mid-character", "x\xe2\x82", 16, euro_cut, 3);
	check_json("4-byte sequence", "\xf0\x9f\x98\x80!", 16, smile, 2);
	check_json("overlong '/'", "\xc0\xaf", 16, overlong, 2);
	check_json("UTF-16 surrogate", "\xed\xa0\x80", 16, surrogate, 3);
	check_json("C1 controls (CSI) escaped", "\xc2\x85\xc2\x9b" "a", 16, c1,
		   3);
	check_json("quote, backslash, newline, DEL", "\"\\\n\x7f", 16, quote, 4);
	check_text("ESC [2J", "\x1b[2Jhidden", 16);
	sf_text_escape(buf, sizeof(buf), "\x1b[2J\\", 16);
	ASSERT_TRUE(!strcmp(buf, "\\x1b[2J\\\\"), "terminal form: %s", buf);
}

static void test_bounds(void)
{
	char comm[SF_COMM_LEN], buf[SF_JSON_ESCAPED_LEN(SF_COMM_LEN)];
	char small[8];
	size_t need;

	/* a comm field of 16 bytes without a NUL: read no further */
	memset(comm, 'a', sizeof(comm));
	need = sf_json_escape(buf, sizeof(buf), comm, sizeof(comm));
	ASSERT_EQ(need, 18, "16 bytes without a NUL, quoted");
	ASSERT_EQ(sf_text_escape(buf, sizeof(buf), comm, sizeof(comm)), 16,
		  "16 bytes without a NUL, terminal");
	/* too small a buffer: a prefix, NUL-terminated, no escape cut */
	need = sf_json_escape(small, sizeof(small), "ab\x01\x02", 16);
	ASSERT_EQ(need, strlen("\"ab\\u0001\\u0002\""), "needed length");
	ASSERT_TRUE(!strcmp(small, "\"ab"), "truncated to whole escapes: %s",
		    small);
	need = sf_text_escape(small, 4, "\x01\x02", 16);
	ASSERT_EQ(need, 8, "terminal needed length");
	ASSERT_TRUE(!strcmp(small, ""), "terminal truncated: '%s'", small);
	ASSERT_EQ(sf_json_escape(small, 0, "abc", 16), 5, "len 0 writes nothing");
}

int main(void)
{
	test_every_byte();
	test_every_pair();
	test_utf8();
	test_bounds();
	return sf_test_summary("test_escape");
}
