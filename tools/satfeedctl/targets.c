// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The target table: add and remove (the target protocol of libsatfeed's
 * sf_target), and the list of watched targets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "sf_pins.h"
#include "sf_root.h"
#include "sf_selector.h"
#include "sf_target.h"
#include "satfeedctl.h"

/* ---- changing the target table ---- */

static void warn_line(const char *text, void *ctx)
{
	sf_warn("%s", text);
}

/*
 * A process whose children do the I/O is not a target its own: say so,
 * with the cgroup that holds them all.
 */
static void children_hint(__u64 pid)
{
	char cg[512], mnt[256], list[128] = "";
	__u64 kids[4];
	size_t off = 0;
	int n;

	n = sf_proc_children(pid, kids, 4);
	if (!n)
		return;
	for (int i = 0; i < n && i < 4 && off < sizeof(list); i++)
		off += snprintf(list + off, sizeof(list) - off, "%s%llu",
				i ? " " : "", (unsigned long long)kids[i]);
	sf_cgroup2_mount(mnt, sizeof(mnt));
	if (sf_proc_cgroup(pid, cg, sizeof(cg)) || !mnt[0] || !strcmp(cg, "/"))
		sf_msg("note: pid %llu has %d child process%s (%s%s): their system calls are not this pid's; if they do the I/O, watch them with --pid or with a cgroup holding them all (--cgroup)",
		       (unsigned long long)pid, n, n == 1 ? "" : "es", list,
		       n > 4 ? " ..." : "");
	else
		sf_msg("note: pid %llu has %d child process%s (%s%s): their system calls are not this pid's; if they do the I/O, watch them all with --cgroup %s%s",
		       (unsigned long long)pid, n, n == 1 ? "" : "es", list,
		       n > 4 ? " ..." : "", mnt, cg);
}

/*
 * A multishot io_uring receive armed before the add is found at its next
 * poll wake-up by the engine's sf_uring_task_add; an engine loaded without
 * it (its kernel lacks the io_uring_task_add tracepoint or
 * REQ_F_APOLL_MULTISHOT: the loader says which) counts one only from its
 * submission.  Say so in one line when sc_mask asks for such receives.
 */
void uring_ms_note(const struct sf_pins *p, __u32 sc_mask)
{
	const __u32 recv = 1U << SATFEED_SC_URING_BIT(RECV) |
			   1U << SATFEED_SC_URING_BIT(RECVMSG);
	char have[512], want[512];

	if (!(sc_mask & recv) || !p->root[0])
		return;
	snprintf(have, sizeof(have), "%s/%s/sf_uring_complete", p->root,
		 SATFEED_PIN_PROGS);
	snprintf(want, sizeof(want), "%s/%s/sf_uring_task_add", p->root,
		 SATFEED_PIN_PROGS);
	if (!access(have, F_OK) && access(want, F_OK))
		sf_msg("note: this engine has no sf_uring_task_add (see the loader's note): a multishot io_uring receive armed before this add is not counted until it is armed again");
}

static int add_one(struct sf_pins *p, const struct args *a,
		   struct sf_selector *sel)
{
	char why[512];
	int slot, err;

	err = sf_select_check(sel, a->force, why, sizeof(why));
	if (err)
		return fail(err, "%s", why);
	err = sf_target_add_rules(p, sel, a->sc_mask, &a->rules, &slot, why,
				  sizeof(why));
	if (err)
		return fail(err, "%s", why);
	printf("watching %s %s%llu in slot %d\n",
	       sel->kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
	       sel->kind == SATFEED_TARGET_PID ? "" : "id ",
	       (unsigned long long)sel->id, slot);
	fflush(stdout);
	sf_select_overlaps(p, sel, warn_line, NULL);
	uring_ms_note(p, a->sc_mask);
	if (sel->kind == SATFEED_TARGET_PID)
		children_hint(sel->id);
	return SF_EXIT_OK;
}

/*
 * Each target named; one that fails does not stop the others, and the
 * exit status is the first failure's.
 */
int cmd_add(struct sf_pins *p, const struct args *a)
{
	struct sf_selector sel[MAX_SEL];
	int ret = SF_EXIT_OK;

	memcpy(sel, a->sel, sizeof(sel));
	for (int i = 0; i < a->nr_sel; i++) {
		int err = add_one(p, a, &sel[i]);

		if (err && !ret)
			ret = err;
	}
	return ret;
}

/*
 * Resolve --slot or a removed cgroup's path into sel[0].  Returns an enum
 * sf_exit.
 */
int resolve_selection(struct sf_pins *p, const struct args *a,
		      struct sf_selector *sel)
{
	int err;

	if (a->slot >= 0) {
		err = sf_select_slot(p, a->slot, &sel[0]);
		if (err == -ENOENT || err == -ERANGE)
			return fail(SF_EXIT_TARGET, "slot %ld holds no target (satfeedctl targets lists them)",
				    a->slot);
		if (err)
			return fail(SF_EXIT_ERROR, "cannot read slot %ld: %s",
				    a->slot, strerror(-err));
		return SF_EXIT_OK;
	}
	if (a->vanished && sf_select_vanished(p, a->vanished, &sel[0]))
		return fail(SF_EXIT_TARGET, "%s: no such directory, and no removed cgroup was watched there",
			    a->vanished);
	return SF_EXIT_OK;
}

int cmd_remove(struct sf_pins *p, const struct args *a)
{
	const struct sf_selector every = {};
	struct sf_selector sel[MAX_SEL];
	int nr = a->slot >= 0 ? 1 : a->nr_sel, total = 0;
	int ret = SF_EXIT_OK, n, err;
	char why[512];

	memcpy(sel, a->sel, sizeof(sel));
	if (a->all) {
		err = sf_target_remove(p, &every, &n, why, sizeof(why));
		if (err)
			return fail(err, "%s", why);
		printf("removed %d target%s\n", n, n == 1 ? "" : "s");
		return SF_EXIT_OK;
	}
	err = resolve_selection(p, a, sel);
	if (err)
		return err;
	for (int i = 0; i < nr; i++) {
		err = sf_target_remove(p, &sel[i], &n, why, sizeof(why));
		if (err) {
			fail(err, "%s", why);
			ret = ret ?: err;
			continue;
		}
		total += n;
	}
	if (total || !ret)
		printf("removed %d target%s\n", total, total == 1 ? "" : "s");
	return ret;
}

/* ---- a target's saturation rules ---- */

/* One rule as stored: its value, or the default it stands for. */
static int rule_text(char *buf, size_t len, const char *name, __u32 v,
		     __u32 def)
{
	__u32 eff = v ? v : def;

	if (eff == SATFEED_SAT_RULE_OFF)
		return snprintf(buf, len, "%s off%s", name,
				v ? "" : " (default)");
	return snprintf(buf, len, "%s %u%s", name, eff,
			v ? "" : " (default)");
}

static void rules_print(int slot, const struct satfeed_target *t,
			const struct satfeed_sat_rules *r)
{
	const struct {
		const char *name;
		__u32 v, def;
	} rule[] = {
		{ "wps-near", r->wps_near_permille,
		  SATFEED_SAT_WPS_NEAR_DEFAULT },
		{ "wps-full", r->wps_full_permille,
		  SATFEED_SAT_WPS_FULL_DEFAULT },
		{ "idle-near", r->idle_near_permille,
		  SATFEED_SAT_IDLE_NEAR_DEFAULT },
		{ "idle-full", r->idle_full_permille,
		  SATFEED_SAT_IDLE_FULL_DEFAULT },
		{ "cv2-rise", r->cv2_rise_permille,
		  SATFEED_SAT_CV2_RISE_DEFAULT },
		{ "svc-near", r->svc_near_permille,
		  SATFEED_SAT_SVC_NEAR_DEFAULT },
		{ "svc-full", r->svc_full_permille,
		  SATFEED_SAT_SVC_FULL_DEFAULT },
		{ "drop-near", r->drop_near_permille,
		  SATFEED_SAT_DROP_NEAR_DEFAULT },
		{ "drop-full", r->drop_full_permille,
		  SATFEED_SAT_DROP_FULL_DEFAULT },
		{ "cpu-near", r->cpu_near_permille,
		  SATFEED_SAT_CPU_NEAR_DEFAULT },
		{ "cpu-full", r->cpu_full_permille,
		  SATFEED_SAT_CPU_FULL_DEFAULT },
		{ "unread-near", r->unread_near_bytes,
		  SATFEED_SAT_UNREAD_NEAR_DEFAULT },
		{ "unread-full", r->unread_full_bytes,
		  SATFEED_SAT_UNREAD_FULL_DEFAULT },
	};
	char line[512];
	size_t off = 0;

	for (size_t i = 0; i < sizeof(rule) / sizeof(rule[0]); i++) {
		if (off >= sizeof(line))
			break;
		if (i)
			off += snprintf(line + off, sizeof(line) - off, ", ");
		if (off >= sizeof(line))
			break;
		off += rule_text(line + off, sizeof(line) - off, rule[i].name,
				 rule[i].v, rule[i].def);
	}
	printf("slot %d %s %llu: %s\n", slot,
	       t->kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
	       (unsigned long long)t->id, line);
}

static int rules_one(struct sf_pins *p, const struct args *a,
		     const struct sf_selector *sel)
{
	struct satfeed_sat_rules now;
	struct satfeed_target t;
	char why[512];
	int slot, err;

	err = sf_target_set_rules(p, sel, &a->rules, a->rules_given, &now,
				  &slot, why, sizeof(why));
	if (err)
		return fail(err, "%s", why);
	if (sf_target_read(p, slot, &t))
		return fail(SF_EXIT_ERROR, "cannot read slot %d: %s", slot,
			    strerror(errno));
	rules_print(slot, &t, &now);
	return SF_EXIT_OK;
}

/*
 * Show or change the rules of each target named (--all: of every target
 * there is; a gone one is shown, not changed).  One that fails does not
 * stop the others; the exit status is the first failure's.
 */
int cmd_rules(struct sf_pins *p, const struct args *a)
{
	struct sf_selector sel[MAX_SEL];
	int nr = a->slot >= 0 ? 1 : a->nr_sel, ret = SF_EXIT_OK, err;

	memcpy(sel, a->sel, sizeof(sel));
	if (a->all) {
		nr = 0;
		for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
			struct satfeed_target t;

			if (sf_target_read(p, slot, &t))
				return fail(SF_EXIT_ERROR, "cannot read targets: %s",
					    strerror(errno));
			if (t.kind == SATFEED_TARGET_FREE ||
			    (a->rules_given && sf_target_gone(&t)))
				continue;
			sel[nr].kind = t.kind;
			sel[nr].id = t.id;
			nr++;
		}
		if (!nr)
			return fail(SF_EXIT_TARGET, "no target is watched%s",
				    a->rules_given ? " (or every one is gone)" : "");
	} else {
		err = resolve_selection(p, a, sel);
		if (err)
			return err;
	}
	for (int i = 0; i < nr; i++) {
		err = rules_one(p, a, &sel[i]);
		ret = ret ?: err;
	}
	return ret;
}

/* ---- listing the target table ---- */

int cmd_targets(struct sf_pins *p, const struct args *a)
{
	bool json = a->json, first = true;
	struct sf_target_table *tab;
	char why[256];
	int err;

	tab = malloc(sizeof(*tab));
	if (!tab)
		return fail(SF_EXIT_ERROR, "out of memory");
	err = sf_target_table_read(p, tab, why, sizeof(why));
	if (err) {
		free(tab);
		return fail(sf_lock_exit(err), "%s", why);
	}
	if (json)
		printf("{\"targets\":[");
	else
		printf("%-5s %-7s %-20s %-16s %-7s %s\n", "SLOT", "KIND", "ID",
		       "NAME", "STATE", "SYSCALLS");
	for (__u32 slot = 0; slot < tab->nr; slot++) {
		const struct satfeed_target t = tab->t[slot];
		char mask[SF_MASK_TEXT_LEN], name[SF_TEXT_ESCAPED_LEN(sizeof(t.path))];

		if (t.kind == SATFEED_TARGET_FREE)
			continue;
		if (json) {
			printf("%s", first ? "" : ",");
			first = false;
			json_target_head(p, slot, &t);
			putchar('}');
			continue;
		}
		sf_format_syscalls(t.sc_mask, mask, sizeof(mask));
		printf("%-5u %-7s %-20llu %-16s %-7s %s\n", slot,
		       t.kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
		       (unsigned long long)t.id,
		       t.kind == SATFEED_TARGET_PID ?
			       text_str(name, sizeof(name), t.comm,
					sizeof(t.comm)) :
			       text_str(name, sizeof(name), t.path,
					sizeof(t.path)),
		       sf_target_gone(&t) ? "gone" : "active", mask);
	}
	if (json)
		printf("]}\n");
	free(tab);
	return SF_EXIT_OK;
}
