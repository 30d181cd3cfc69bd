// SPDX-License-Identifier: GPL-2.0
/*
 * listen.c - the listening socket, and the port file that announces its
 * port.
 */
#include "sfserver.h"

/*
 * Write the port to path atomically: a new file that mkstemp() makes beside
 * it (unpredictable name, O_EXCL: no symlink is followed), renamed over
 * path (which replaces a symlink there rather than following it).
 */
int write_port_file(const char *path, unsigned int port)
{
	char tmp[PATH_MAX], text[16], *slash;
	const char *base = path;
	int fd, len, saved;
	ssize_t written;

	slash = strrchr(path, '/');
	if (slash)
		base = slash + 1;
	if (snprintf(tmp, sizeof(tmp), "%.*s.%s.XXXXXX",
		     (int)(base - path), path, base) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	len = snprintf(text, sizeof(text), "%u\n", port);
	if (fchmod(fd, 0644))
		goto remove_tmp;
	written = write(fd, text, len);
	if (written != len) {
		if (written >= 0)
			errno = EIO;
		goto remove_tmp;
	}
	if (close(fd)) {
		fd = -1;
		goto remove_tmp;
	}
	fd = -1;
	if (rename(tmp, path))
		goto remove_tmp;
	return 0;
remove_tmp:
	saved = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = saved;
	return -1;
}

/* Returns the bound port, or -1 with a message printed. */
int open_listener(void)
{
	struct sockaddr_storage ss = cfg.ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t len = cfg.sslen;
	int one = 1;

	listen_fd = socket(ss.ss_family,
			   SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		goto err;
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(listen_fd, (struct sockaddr *)&ss, len))
		goto err;
	if (listen(listen_fd, SOMAXCONN))
		goto err;
	if (getsockname(listen_fd, (struct sockaddr *)&ss, &len))
		goto err;
	return ntohs(ss.ss_family == AF_INET ? sin->sin_port :
		     sin6->sin6_port);
err:
	fprintf(stderr, "sfserver: cannot listen on %s port %u: %s\n",
		cfg.addr, cfg.port, strerror(errno));
	return -1;
}
