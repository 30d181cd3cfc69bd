/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_escape.h - text that a watched process controls (its comm, its cgroup's
 * path), read with a bound and made safe to print.
 *
 * Any byte but NUL can be in a comm (prctl(PR_SET_NAME), /proc/PID/comm; the
 * kernel also cuts a long name mid-character) or a cgroup directory name.
 * Printed raw, such bytes make a JSON document invalid UTF-8 or let escape
 * sequences hide or rewrite rows of a terminal table.
 */
#ifndef __SF_ESCAPE_H
#define __SF_ESCAPE_H

#include <stddef.h>

#define SF_COMM_LEN	16	/* TASK_COMM_LEN: 15 bytes and a NUL */

/* Buffer sizes that always hold the escaped form of n input bytes. */
#define SF_JSON_ESCAPED_LEN(n)	(6 * (n) + 3)	/* \u00XX each, quotes, NUL */
#define SF_TEXT_ESCAPED_LEN(n)	(4 * (n) + 1)	/* \xHH each, NUL */

/*
 * The JSON string literal, quotes included, of the bytes of s up to its
 * first NUL or max bytes.  The result is always valid UTF-8: well-formed
 * UTF-8 sequences are kept, every other byte is read as Latin-1 and written
 * \u00XX (so "\xff" becomes "\u00ff": nothing is lost, although a byte and
 * the UTF-8 encoding of the same code point print alike).  Control
 * characters (C0, DEL, C1), '"' and '\' are escaped.  Writes at most len
 * bytes including the NUL, never cutting an escape, and returns the length
 * the whole literal needs, as snprintf does.
 */
size_t sf_json_escape(char *buf, size_t len, const char *s, size_t max);

/*
 * For a terminal: printable ASCII is kept, '\' becomes "\\" and every other
 * byte "\xHH", so the output holds no control character and no byte >= 0x80.
 * Same bounds and return value as sf_json_escape().
 */
size_t sf_text_escape(char *buf, size_t len, const char *s, size_t max);

/*
 * The comm of process pid from /proc/PID/comm, read with one bounded read
 * (the kernel's newline is dropped, any other byte kept).  Returns 0, or
 * -errno with comm set to "".
 */
int sf_read_comm(int pid, char comm[SF_COMM_LEN]);

#endif /* __SF_ESCAPE_H */
