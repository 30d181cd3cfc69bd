// SPDX-License-Identifier: GPL-2.0
/*
 * dns.c - --proto dns: one DNS query per UDP datagram (RFC 1035), type A,
 * class IN, for the name q<i in hex>.<zone>, and the answers parsed.  The
 * request index travels in the name, which every answer repeats in its
 * question section, so an answer maps back to its request whatever the
 * order answers come in and however many were lost; the 16-bit message
 * id (the index's low bits) is checked against it.  A datagram lost on
 * the way is a timeout, as an unanswered TCP request is.
 *
 * With dnsmasq --address=/<zone>/127.0.0.1 every such name is answered
 * from its configuration, without an upstream server.
 */
#include "sfload.h"

#define DNS_HDR		12
#define DNS_QR		0x80	/* in the third header byte */
#define DNS_RCODE	0x0f	/* in the fourth */

/* Append the labels of a dotted name; returns the new length or 0. */
static size_t put_name(unsigned char *buf, size_t off, size_t cap,
		       const char *name)
{
	const char *dot;
	size_t l;

	while (*name) {
		dot = strchr(name, '.');
		l = dot ? (size_t)(dot - name) : strlen(name);
		if (!l || l > 63 || off + 1 + l >= cap)
			return 0;
		buf[off++] = l;
		memcpy(buf + off, name, l);
		off += l;
		name += l + (dot ? 1 : 0);
	}
	buf[off++] = 0;
	return off;
}

size_t dns_build_query(unsigned char *buf, size_t cap, uint64_t i)
{
	char name[300];
	size_t off;

	if (cap < DNS_HDR + 4)
		return 0;
	memset(buf, 0, DNS_HDR);
	buf[0] = (i >> 8) & 0xff;
	buf[1] = i & 0xff;
	buf[2] = 0x01;		/* RD */
	buf[5] = 1;		/* QDCOUNT */
	snprintf(name, sizeof(name), "q%llx.%s", (unsigned long long)i,
		 cfg.zone);
	off = put_name(buf, DNS_HDR, cap - 4, name);
	if (!off)
		return 0;
	buf[off++] = 0;
	buf[off++] = 1;		/* A */
	buf[off++] = 0;
	buf[off++] = 1;		/* IN */
	return off;
}

/* Is the name zone the same as the labels at p (case-insensitive)? */
static bool zone_matches(const unsigned char *p, size_t len)
{
	const char *z = cfg.zone;
	size_t off = 0, l;

	while (off < len && p[off]) {
		l = p[off++];
		if (l > 63 || off + l > len || strncasecmp(z, (const char *)p +
							   off, l))
			return false;
		z += l;
		off += l;
		if (*z == '.')
			z++;
		else if (*z || (off < len && p[off]))
			return false;
	}
	return !*z && off < len;
}

/*
 * Parse one answer datagram.  Returns 1 with *idx (the request index from
 * the question name) and *is_err (a non-zero RCODE), -1 when the datagram
 * is not an answer to a query sfload sent.
 */
int dns_parse(const unsigned char *p, size_t len, uint64_t *idx,
	      bool *is_err)
{
	unsigned long long i;
	char hex[20];
	size_t l;

	if (len < DNS_HDR + 2 || !(p[2] & DNS_QR) || (!p[4] && !p[5]))
		return -1;
	l = p[DNS_HDR];
	if (l < 2 || l > 17 || DNS_HDR + 1 + l >= len ||
	    p[DNS_HDR + 1] != 'q')
		return -1;
	memcpy(hex, p + DNS_HDR + 2, l - 1);
	hex[l - 1] = '\0';
	if (strspn(hex, "0123456789abcdef") != l - 1 ||
	    sscanf(hex, "%llx", &i) != 1)
		return -1;
	if (!zone_matches(p + DNS_HDR + 1 + l, len - DNS_HDR - 1 - l))
		return -1;
	if ((unsigned int)((p[0] << 8) | p[1]) != (i & 0xffff))
		return -1;
	*idx = i;
	*is_err = (p[3] & DNS_RCODE) != 0;
	return 1;
}
