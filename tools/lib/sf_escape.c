// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_escape.c - bounded reads and safe printing of process-controlled text.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sf_escape.h"

/* Appends to a bounded buffer, never cutting a piece; counts what it needs. */
struct out {
	char *buf;
	size_t len;
	size_t need;
	bool full;
};

static void put(struct out *o, const char *piece, size_t n)
{
	if (!o->full && o->need + n < o->len)
		memcpy(o->buf + o->need, piece, n);
	else
		o->full = true;	/* nothing after a piece that did not fit */
	o->need += n;
	if (o->len)
		o->buf[o->full ? o->len - 1 : o->need] = '\0';
}

/*
 * Length of the well-formed UTF-8 sequence at p (n bytes available), 0 if
 * there is none: no overlong forms, no surrogates, nothing above U+10FFFF
 * (RFC 3629, table 3-7 of the Unicode standard).
 */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

size_t sf_json_escape(char *buf, size_t len, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	struct out o = { buf, len, 0, false };
	size_t n = strnlen(s, max);
	char esc[8];

	if (len)
		buf[0] = '\0';
	put(&o, "\"", 1);
	for (size_t i = 0; i < n;) {
		size_t k = utf8_len(p + i, n - i);
		unsigned int cp = p[i];

		/* U+0080..U+009F (C1 controls) are C2 80..C2 9F */
		if (k == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0)
			cp = p[i + 1];
		if (k && cp == p[i] && cp >= 0x20 && cp != 0x7f && cp != '"' &&
		    cp != '\\') {
			put(&o, (const char *)p + i, k);
			i += k;
			continue;
		}
		if (cp == '"' || cp == '\\')
			snprintf(esc, sizeof(esc), "\\%c", cp);
		else
			snprintf(esc, sizeof(esc), "\\u%04x", cp);
		put(&o, esc, strlen(esc));
		i += k ? k : 1;
	}
	put(&o, "\"", 1);
	return o.need;
}

size_t sf_text_escape(char *buf, size_t len, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	struct out o = { buf, len, 0, false };
	size_t n = strnlen(s, max);
	char esc[8];

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\')
			put(&o, "\\\\", 2);
		else if (p[i] >= 0x20 && p[i] < 0x7f)
			put(&o, (const char *)p + i, 1);
		else {
			snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
			put(&o, esc, 4);
		}
	}
	return o.need;
}

int sf_read_comm(int pid, char comm[SF_COMM_LEN])
{
	char path[32];
	ssize_t n;
	int fd;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* 15 bytes of name and the newline; a newline inside the name stays */
	n = read(fd, comm, SF_COMM_LEN);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	if (n > 0 && comm[n - 1] == '\n')
		n--;
	comm[n < SF_COMM_LEN ? n : SF_COMM_LEN - 1] = '\0';
	return 0;
}
