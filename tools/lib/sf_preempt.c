// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_preempt.c - the preemption model of the running kernel and whether
 * the engine's hooks run preemptibly (sf_preempt.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <zlib.h>
#include <bpf/btf.h>
#include "satfeed.h"
#include "sf_common.h"
#include "sf_preempt.h"

static const char *const models[] = {
	"none", "voluntary", "full", "lazy", "rt",
};

int sf_understudy_parse(const char *s, enum sf_understudy_choice *c)
{
	if (!strcmp(s, "auto"))
		*c = SF_UNDERSTUDY_AUTO;
	else if (!strcmp(s, "on"))
		*c = SF_UNDERSTUDY_ON;
	else if (!strcmp(s, "off"))
		*c = SF_UNDERSTUDY_OFF;
	else
		return -1;
	return 0;
}

static bool set_model(struct sf_preempt *p, const char *m, size_t n,
		      const char *source)
{
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		if (strlen(models[i]) != n || strncmp(m, models[i], n))
			continue;
		snprintf(p->model, sizeof(p->model), "%s", models[i]);
		snprintf(p->source, sizeof(p->source), "%s", source);
		return true;
	}
	return false;
}

/* "none voluntary (full) lazy": the running model is in parentheses. */
static bool model_from_debugfs(struct sf_preempt *p)
{
	const char *path = "/sys/kernel/debug/sched/preempt";
	char buf[128], *open, *close;
	FILE *f = fopen(path, "r");
	bool found = false;

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		open = strchr(buf, '(');
		close = open ? strchr(open, ')') : NULL;
		if (close)
			found = set_model(p, open + 1, close - open - 1, path);
	}
	fclose(f);
	return found;
}

static bool model_from_cmdline(struct sf_preempt *p)
{
	char buf[4096], *arg;
	FILE *f = fopen("/proc/cmdline", "r");
	bool found = false;

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		for (arg = strtok(buf, " \n"); arg && !found;
		     arg = strtok(NULL, " \n"))
			if (!strncmp(arg, "preempt=", 8))
				found = set_model(p, arg + 8, strlen(arg + 8),
						  "preempt= on /proc/cmdline");
	}
	fclose(f);
	return found;
}

/*
 * The build's default: CONFIG_PREEMPT_{NONE,VOLUNTARY,LAZY,RT} or
 * CONFIG_PREEMPT in /boot/config-<release> or /proc/config.gz.
 */
static bool model_from_config(struct sf_preempt *p, const char *release)
{
	static const struct {
		const char *line, *model;
	} keys[] = {
		{ "CONFIG_PREEMPT_RT=y", "rt" },
		{ "CONFIG_PREEMPT_LAZY=y", "lazy" },
		{ "CONFIG_PREEMPT=y", "full" },
		{ "CONFIG_PREEMPT_VOLUNTARY=y", "voluntary" },
		{ "CONFIG_PREEMPT_NONE=y", "none" },
	};
	const char *found = NULL;
	size_t best = sizeof(keys) / sizeof(keys[0]);
	char path[300], line[256];
	gzFile f;

	snprintf(path, sizeof(path), "/boot/config-%s", release);
	f = gzopen(path, "r");	/* reads plain files too */
	if (!f) {
		snprintf(path, sizeof(path), "/proc/config.gz");
		f = gzopen(path, "r");
	}
	if (!f)
		return false;
	while (gzgets(f, line, sizeof(line))) {
		for (size_t i = 0; i < best; i++) {
			if (strncmp(line, keys[i].line, strlen(keys[i].line)))
				continue;
			found = keys[i].model;
			best = i;
		}
	}
	gzclose(f);
	return found && set_model(p, found, strlen(found), path);
}

/*
 * uname -v names the build's options: "PREEMPT_RT", "PREEMPT_LAZY" (some
 * kernels), "PREEMPT" (full preemption by default), "PREEMPT_DYNAMIC" (the
 * model is chosen at boot: none of the above says which).
 */
static bool model_from_uname(struct sf_preempt *p, const char *version)
{
	static const char *const src = "uname -v";
	char buf[sizeof(((struct utsname *)0)->version)], *w;

	snprintf(buf, sizeof(buf), "%s", version);
	for (w = strtok(buf, " "); w; w = strtok(NULL, " ")) {
		if (!strcmp(w, "PREEMPT_RT"))
			return set_model(p, "rt", 2, src);
		if (!strcmp(w, "PREEMPT_LAZY"))
			return set_model(p, "lazy", 4, src);
		if (!strcmp(w, "PREEMPT"))
			return set_model(p, "full", 4, src);
	}
	return false;
}

static int tracepoints_faultable(const char *btf_path)
{
	const struct btf_member *m;
	const struct btf_type *t;
	struct btf *btf;
	int id, found = 0;

	btf = btf_path ? btf__parse(btf_path, NULL) : btf__load_vmlinux_btf();
	if (!btf)
		return -1;
	id = btf__find_by_name_kind(btf, "tracepoint_ext", BTF_KIND_STRUCT);
	if (id > 0) {
		t = btf__type_by_id(btf, id);
		m = btf_members(t);
		for (int i = 0; i < btf_vlen(t); i++, m++)
			if (!strcmp(btf__name_by_offset(btf, m->name_off),
				    "faultable"))
				found = 1;
	}
	btf__free(btf);
	return found;
}

void sf_preempt_probe(struct sf_preempt *p, const char *btf_path)
{
	struct utsname u;

	memset(p, 0, sizeof(*p));
	uname(&u);
	if (!model_from_debugfs(p) && !model_from_cmdline(p) &&
	    !model_from_uname(p, u.version) && !model_from_config(p, u.release))
		snprintf(p->source, sizeof(p->source),
			 "%s (no /sys/kernel/debug/sched/preempt, kernel config or preempt=)",
			 strstr(u.version, "PREEMPT_DYNAMIC") ?
			 "chosen at boot" : "not found");
	p->tp_faultable = tracepoints_faultable(btf_path);
}

bool sf_understudy_wanted(const struct sf_preempt *p, __u32 mode,
			  enum sf_understudy_choice choice, char *why,
			  size_t len)
{
	bool preemptible = strcmp(p->model, "none") &&
			   strcmp(p->model, "voluntary");
	char model[160];

	if (p->model[0])
		snprintf(model, sizeof(model), "preempt=%s (%s)", p->model,
			 p->source);
	else
		snprintf(model, sizeof(model), "preemption model %s; taken as preemptible",
			 p->source);
	if (choice != SF_UNDERSTUDY_AUTO) {
		snprintf(why, len, "%s (--understudy); %s",
			 choice == SF_UNDERSTUDY_ON ? "on" : "off", model);
		return choice == SF_UNDERSTUDY_ON;
	}
	if (!preemptible) {
		snprintf(why, len, "off: %s does not preempt BPF programs",
			 model);
		return false;
	}
	if (mode == SATFEED_ATTACH_TP_BTF && p->tp_faultable == 0) {
		snprintf(why, len, "off: %s, but the syscall tracepoints run their BPF programs with preemption disabled (no tracepoint_ext.faultable in BTF)",
			 model);
		return false;
	}
	snprintf(why, len, "on: %s, and %s", model,
		 mode == SATFEED_ATTACH_FENTRY ?
		 "fentry/fexit programs run with only migration disabled" :
		 p->tp_faultable > 0 ?
		 "the syscall tracepoints are faultable" :
		 "the tracepoints' kind is unknown (no BTF)");
	return true;
}
