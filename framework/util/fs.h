/* SPDX-License-Identifier: MIT */
/* fs -- small file-system and string helpers shared by the results, plot and CLI modules. */
#ifndef IOMMULAB_FS_H
#define IOMMULAB_FS_H

/* mkdir -p: create every missing component of path. 0 or -errno (-ENOTDIR if a file). */
int util_mkdir_p(const char *path);

/* asprintf that returns the string, or NULL when out of memory. */
char *util_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* IOMMULAB_FS_H */
