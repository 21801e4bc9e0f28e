/* SPDX-License-Identifier: MIT */
/* fs -- small file-system and string helpers shared by the results, plot and CLI modules. */
#ifndef IOMMULAB_FS_H
#define IOMMULAB_FS_H

#include <stddef.h>
#include <stdio.h>

/* mkdir -p: create every missing component of path. 0 or -errno (-ENOTDIR if a file). */
int util_mkdir_p(const char *path);

/* asprintf that returns the string, or NULL when out of memory. */
char *util_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The whole file, NUL-terminated, malloc'ed (its length in *len when len is not NULL); NULL
 * with errno set when it cannot be read. */
char *util_read_file(const char *path, size_t *len);

/*
 * A child's last complaint on its stderr f (rewound and read through): its last non-empty
 * line without the newline, in buf (truncated to len), "" when there is none. A sanitizer's
 * report wins over what follows it: its "SUMMARY: ..." line (the kind of error and where),
 * and lines of '=' or '-' alone (a report's frame) are never the answer.
 */
void util_last_line(FILE *f, char *buf, size_t len);

#endif /* IOMMULAB_FS_H */
