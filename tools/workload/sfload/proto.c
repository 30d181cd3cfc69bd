// SPDX-License-Identifier: GPL-2.0
/*
 * proto.c - the protocols: a request in sf or memcached text (or, from
 * http.c and dns.c, HTTP and DNS), a memcached reply parsed, and the
 * memcached key set stored before the run.
 */
#include "sfload.h"

const char *proto_name(void)
{
	static const char *const names[] = {
		[PROTO_SF] = "sf",
		[PROTO_MEMCACHED] = "memcached",
		[PROTO_HTTP] = "http",
		[PROTO_DNS] = "dns",
	};

	return names[cfg.proto];
}

/*
 * Parse one memcached reply at p.  Returns 1 with *used set when complete
 * (*is_err for ERROR/CLIENT_ERROR/SERVER_ERROR, *miss for a get miss), 0 when
 * more bytes are needed, -1 on a protocol error.
 */
int mc_parse(const unsigned char *p, size_t len, size_t *used, bool *is_err,
	     bool *miss)
{
	const unsigned char *eol;
	unsigned long long bytes;
	char line[MC_MAX_LINE];
	size_t ll, need;

	eol = memmem(p, len, "\r\n", 2);
	if (!eol)
		return len >= MC_MAX_LINE ? -1 : 0;
	ll = eol - p;
	if (ll >= MC_MAX_LINE)
		return -1;
	memcpy(line, p, ll);
	line[ll] = '\0';
	*is_err = false;
	*miss = false;
	if (!strncmp(line, "VALUE ", 6)) {
		if (sscanf(line, "VALUE %*s %*u %llu", &bytes) != 1 ||
		    bytes > MAX_VALUE_SIZE * 4ull)
			return -1;
		need = ll + 2 + bytes + 2;
		if (len < need + 5)
			return 0;
		if (memcmp(p + need - 2, "\r\n", 2) ||
		    memcmp(p + need, "END\r\n", 5))
			return -1;
		*used = need + 5;
		return 1;
	}
	*used = ll + 2;
	if (!strcmp(line, "END")) {
		*miss = true;
		return 1;
	}
	if (!strcmp(line, "STORED") || !strcmp(line, "NOT_STORED") ||
	    !strcmp(line, "EXISTS") || !strcmp(line, "NOT_FOUND"))
		return 1;
	if (!strcmp(line, "ERROR") || !strncmp(line, "CLIENT_ERROR", 12) ||
	    !strncmp(line, "SERVER_ERROR", 12)) {
		*is_err = true;
		return 1;
	}
	return -1;
}

/* A memcached set of sfload:key to value at buf; returns its length. */
static size_t mc_put_set(unsigned char *buf, unsigned int key,
			 const unsigned char *value)
{
	size_t len;

	len = sprintf((char *)buf, "set sfload:%u 0 0 %u\r\n", key,
		      cfg.value_size);
	memcpy(buf + len, value, cfg.value_size);
	len += cfg.value_size;
	memcpy(buf + len, "\r\n", 2);
	return len + 2;
}

size_t build_request(unsigned char *buf, uint64_t i, uint64_t t,
		     uint64_t *rng, const unsigned char *value)
{
	uint32_t key;

	if (cfg.proto == PROTO_SF) {
		sf_msg_put(buf, i, t, cfg.work_us);
		return SF_MSG_SIZE;
	}
	if (cfg.proto == PROTO_HTTP)
		return http_build_request(buf, cfg.value_size + REQ_EXTRA);
	if (cfg.proto == PROTO_DNS)
		return dns_build_query(buf, cfg.value_size + REQ_EXTRA, i);
	key = (uint32_t)(((rng_next(rng) >> 32) * cfg.keys) >> 32);
	if (cfg.set_ratio > 0 && rng_unit(rng) <= cfg.set_ratio)
		return mc_put_set(buf, key, value);
	return sprintf((char *)buf, "get sfload:%u\r\n", key);
}

/* Set keys 0..K-1 on connection 0, in batches, before the run. */
int mc_preload(unsigned char *value)
{
	struct conn *c = &run.conns[0];
	size_t len, used, cap, off;
	unsigned int k, i, batch, got;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	uint64_t deadline;
	unsigned char *buf;
	bool is_err, miss;
	ssize_t n;
	int ret = -1, r;

	cap = PRELOAD_BATCH * (cfg.value_size + 64);
	buf = malloc(cap);
	if (!buf) {
		fprintf(stderr, "sfload: out of memory\n");
		return -1;
	}
	for (k = 0; k < cfg.keys; k += batch) {
		batch = cfg.keys - k < PRELOAD_BATCH ? cfg.keys - k :
			PRELOAD_BATCH;
		len = 0;
		for (i = 0; i < batch; i++)
			len += mc_put_set(buf + len, k + i, value);
		run.hard_deadline = sf_now_ns() + CONNECT_TIMEOUT_NS;
		if (send_all(c->fd, buf, len)) {
			fprintf(stderr, "sfload: memcached preload: send: %s\n",
				strerror(errno));
			goto out_free_buf;
		}
		deadline = sf_now_ns() + CONNECT_TIMEOUT_NS;
		got = 0;
		c->len = 0;
		while (got < batch) {
			/* signed: a deadline already passed must not wrap */
			int64_t left = (int64_t)(deadline - sf_now_ns());

			r = left > 0 ? poll(&pfd, 1, left / 1000000 + 1) : 0;
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				fprintf(stderr,
					"sfload: memcached preload: no reply from %s within 2 s\n",
					cfg.target);
				goto out_free_buf;
			}
			n = recv(c->fd, c->buf + c->len, c->size - c->len,
				 MSG_DONTWAIT);
			if (n <= 0) {
				if (n < 0 && (errno == EAGAIN ||
					      errno == EINTR))
					continue;
				fprintf(stderr,
					"sfload: memcached preload: connection closed by %s\n",
					cfg.target);
				goto out_free_buf;
			}
			c->len += n;
			off = 0;
			while (got < batch &&
			       (r = mc_parse(c->buf + off, c->len - off, &used,
					     &is_err, &miss)) == 1) {
				if (memcmp(c->buf + off, "STORED\r\n", 8)) {
					fprintf(stderr,
						"sfload: memcached preload: server replied '%.*s'\n",
						(int)(used > 2 ? used - 2 : 0),
						(char *)c->buf + off);
					goto out_free_buf;
				}
				off += used;
				got++;
			}
			if (r < 0) {
				fprintf(stderr,
					"sfload: memcached preload: %s does not speak the memcached text protocol\n",
					cfg.target);
				goto out_free_buf;
			}
			memmove(c->buf, c->buf + off, c->len - off);
			c->len -= off;
		}
	}
	c->len = 0;
	ret = 0;
out_free_buf:
	free(buf);
	return ret;
}
