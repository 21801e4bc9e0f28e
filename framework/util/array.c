/* SPDX-License-Identifier: MIT */
/* array -- growable arrays (see array.h). */
#include "util/array.h"

#include <stdint.h>
#include <stdlib.h>

#define ARRAY_FIRST_CAP 8

void *array_grow(void *v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : ARRAY_FIRST_CAP;
	void *nv;

	if (v && need <= *cap)
		return v;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	}
	if (!size || n > SIZE_MAX / size)
		return NULL;
	nv = realloc(v, n * size);
	if (!nv)
		return NULL;
	*cap = n;
	return nv;
}
