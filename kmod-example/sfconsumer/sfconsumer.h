/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sfconsumer.h - what sfconsumer's commands share: the command line's
 * settings and the consumer's own pins (sfconsumer_pins.c), attach
 * (sfconsumer_attach.c) and status (sfconsumer_status.c), which the
 * command line (sfconsumer.c) runs.
 */
#ifndef __SFCONSUMER_H
#define __SFCONSUMER_H

#include <stdbool.h>

/* our pins: the pull link, and one push link per engine program */
#define PIN_PULL	"pull"
#define PIN_PUSH	"push_"

enum push_mode { PUSH_AUTO, PUSH_FENTRY, PUSH_FREPLACE, PUSH_NONE };
extern const char *const push_names[];

struct sfc_env {
	const char *root;	/* satfeed's pin root */
	char pins[256];		/* our pin directory */
	enum push_mode push;
	bool pull;
	bool replace;
	bool verbose;
	bool undo_on_error;	/* attach under way: die() removes our pins */
};
extern struct sfc_env env;

/* A one-line reason on stderr, our pins undone (undo_on_error), exit 1. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* bpf_obj_get(dir/name) */
int pin_get(const char *dir, const char *name);
bool module_loaded(void);
/* Number of pins in our directory, -1 if it does not exist. */
int count_pins(void);
int remove_pins(int *removed);

int cmd_attach(void);
int cmd_status(void);

#endif /* __SFCONSUMER_H */
