/* SPDX-License-Identifier: MIT */
/* diag -- a list of error messages collected by library code for the CLI to print. */
#include "util/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

void diag_add(struct diag_list *d, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	int len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	msg = malloc((size_t)len + 1);
	if (!msg)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, (size_t)len + 1, fmt, ap);
	va_end(ap);

	char **msgs = array_grow(d->msgs, &d->cap, d->n + 1, sizeof(*msgs));
	if (!msgs) {
		free(msg);
		return;
	}
	d->msgs = msgs;
	d->msgs[d->n++] = msg;
}

void diag_clear(struct diag_list *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->msgs[i]);
	free(d->msgs);
	d->msgs = NULL;
	d->n = d->cap = 0;
}

const char *util_signal_name(int sig)
{
	static _Thread_local char name[16];
	const char *abbrev = sigabbrev_np(sig);

	if (!abbrev)
		return NULL;
	snprintf(name, sizeof(name), "SIG%s", abbrev);
	return name;
}

const char *util_rc_text(int rc)
{
	return rc < 0 ? strerror(-rc) : "not a -errno code: the plugin ABI returns 0 or -errno";
}
