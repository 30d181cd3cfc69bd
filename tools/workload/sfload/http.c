// SPDX-License-Identifier: GPL-2.0
/*
 * http.c - --proto http: HTTP/1.1 keep-alive GETs of one path, and the
 * responses parsed.  A server answers the requests of one connection in
 * order (no pipelining is needed for that: sfload sends on the schedule
 * whether or not the previous answer came, and HTTP/1.1 servers answer
 * pipelined requests in order), so the receiver maps the k-th response on
 * connection c to request c + k * C, as for memcached.
 *
 * A response is a status line, headers, and a body of Content-Length
 * bytes.  Chunked bodies are refused (-1): the static files and proxied
 * answers the corpus serves all carry Content-Length.  A status >= 400
 * counts as an error reply.
 */
#include "sfload.h"

#define HTTP_MAX_HEAD	8192

/* The request, built once: it is the same for every request. */
size_t http_build_request(unsigned char *buf, size_t cap)
{
	int n;

	n = snprintf((char *)buf, cap,
		     "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: sfload\r\n"
		     "Accept: */*\r\n\r\n", cfg.path, cfg.host);
	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

/* Value of header name (lower case, with the colon) in [p, end), or NULL. */
static const char *header(const char *p, const char *end, const char *name)
{
	size_t nl = strlen(name);
	const char *eol;

	while (p < end) {
		eol = memmem(p, end - p, "\r\n", 2);
		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > nl && !strncasecmp(p, name, nl)) {
			p += nl;
			while (p < eol && (*p == ' ' || *p == '\t'))
				p++;
			return p;
		}
		p = eol + 2;
	}
	return NULL;
}

/*
 * Parse one response at p.  Returns 1 with *used set when complete
 * (*is_err for a status >= 400), 0 when more bytes are needed, -1 when it
 * is not an HTTP/1.x response sfload can frame.
 */
int http_parse(const unsigned char *p, size_t len, size_t *used,
	       bool *is_err)
{
	const char *s = (const char *)p, *hend, *v;
	unsigned long long clen;
	unsigned int status;
	size_t head;
	char *e;

	hend = memmem(s, len, "\r\n\r\n", 4);
	if (!hend)
		return len >= HTTP_MAX_HEAD ? -1 : 0;
	head = hend - s + 4;
	if (len < 12 || strncmp(s, "HTTP/1.", 7) ||
	    sscanf(s + 8, " %3u", &status) != 1 || status < 100)
		return -1;
	if (header(s, hend + 2, "transfer-encoding:"))
		return -1;
	v = header(s, hend + 2, "content-length:");
	if (!v) {
		/* 204 and 304 have no body; anything else must say */
		if (status != 204 && status != 304)
			return -1;
		clen = 0;
	} else {
		errno = 0;
		clen = strtoull(v, &e, 10);
		if (errno || e == v || clen > MAX_VALUE_SIZE)
			return -1;
	}
	if (len < head + clen)
		return 0;
	*used = head + clen;
	*is_err = status >= 400;
	return 1;
}
