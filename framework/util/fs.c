/* SPDX-License-Identifier: MIT */
/* fs -- small file-system and string helpers (see fs.h). */
#include "util/fs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int util_mkdir_p(const char *path)
{
	char *p = strdup(path);
	int ret = 0;

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST) {
			ret = -errno;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	if (!ret) {
		struct stat st;

		if (stat(path, &st))
			ret = -errno;
		else if (!S_ISDIR(st.st_mode))
			ret = -ENOTDIR;
	}
	return ret;
}

char *util_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

char *util_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			char *nb = realloc(buf, cap ? 2 * cap : 8192);
			if (!nb) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
			cap = cap ? 2 * cap : 8192;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* A line of one repeated character ('=' or '-'): a sanitizer report's frame, not its words. */
static bool rule_line(const char *s)
{
	size_t n = strspn(s, s[0] == '=' ? "=" : "-");

	return n >= 3 && !s[n];
}

void util_last_line(FILE *f, char *buf, size_t len)
{
	char line[512];
	bool summary = false;

	buf[0] = '\0';
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || rule_line(line) || (summary && strncmp(line, "SUMMARY: ", 9)))
			continue;
		summary = !strncmp(line, "SUMMARY: ", 9);
		snprintf(buf, len, "%s", line);
	}
}
