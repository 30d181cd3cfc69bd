/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * export.h - `satfeedctl export`: serve satfeed's windows to Prometheus
 * over HTTP, and/or write them for node_exporter's textfile collector.
 */
#ifndef __SF_EXPORT_H
#define __SF_EXPORT_H

#include <stdbool.h>

#define SF_EXPORT_DEFAULT_LISTEN "127.0.0.1:9437"
#define SF_EXPORT_TEXTFILE	"satfeed.prom"

struct sf_export_opts {
	const char *root;	/* the engine's pin root */
	const char *listen;	/* ADDR:PORT to serve /metrics on; NULL: none */
	bool allow_remote;	/* listen may be other than loopback */
	const char *textfile;	/* directory for satfeed.prom; NULL: none */
	double interval;	/* seconds between two satfeed.prom writes */
};

/*
 * Run until SIGINT or SIGTERM.  Returns an enum sf_exit: SF_EXIT_OK after a
 * signal, SF_EXIT_USAGE for an address that does not parse or is not
 * loopback without allow_remote, SF_EXIT_ERROR when the socket cannot
 * listen or the textfile directory cannot be written; each with a line on
 * stderr.  An engine that is not loaded is no error: satfeed_up is 0 until
 * it is.
 */
int sf_export_run(const struct sf_export_opts *o);

#endif /* __SF_EXPORT_H */
