/* SPDX-License-Identifier: MIT */
/* fs -- small file-system and string helpers (see fs.h). */
#include "util/fs.h"

#include <errno.h>
#include <stdarg.h>
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
