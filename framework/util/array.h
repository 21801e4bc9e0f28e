/* SPDX-License-Identifier: MIT */
/*
 * array -- the one way the host grows an array: doubling capacity (from a small first size),
 * so appending n items costs O(n) copies, and a failed growth leaves the array as it was.
 *
 *	struct thing *nv = array_grow(v, &cap, n + 1, sizeof(*v));
 *	if (!nv)
 *		return -ENOMEM;	// v is still valid, and still holds its n items
 *	v = nv;
 *	v[n++] = x;
 */
#ifndef IOMMULAB_ARRAY_H
#define IOMMULAB_ARRAY_H

#include <stddef.h>

/*
 * Room for at least `need` items of `size` bytes in v (capacity *cap, in items; v NULL with
 * *cap 0 to start). Returns the array, moved or not, with *cap updated; NULL when out of
 * memory (or a size that would overflow), with v and *cap untouched.
 */
void *array_grow(void *v, size_t *cap, size_t need, size_t size);

#endif /* IOMMULAB_ARRAY_H */
