/* SPDX-License-Identifier: MIT */
/* diag -- a list of error messages collected by library code for the CLI to print. */
#ifndef IOMMULAB_DIAG_H
#define IOMMULAB_DIAG_H

#include <stddef.h>

struct diag_list {
	char **msgs;
	size_t n;
	size_t cap;
};

/* Append a printf-formatted message (no trailing newline). Out of memory drops it. */
void diag_add(struct diag_list *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_clear(struct diag_list *d);

/*
 * What a plugin's return code means: strerror(-rc) for a -errno, else that it is none (the ABI
 * wants 0 or -errno; strerror(-12345) would read "Unknown error -12345").
 */
const char *util_rc_text(int rc);

/* "SIGSEGV" for SIGSEGV: the signal's name, or NULL for a number that names none. */
const char *util_signal_name(int sig);

#endif /* IOMMULAB_DIAG_H */
