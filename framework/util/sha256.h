/* SPDX-License-Identifier: MIT */
/*
 * sha256 -- SHA-256 (FIPS 180-4), small and dependency-free: plugins.txt names each .so that
 * ran by its checksum, so that a result can be tied to the exact build that produced it.
 */
#ifndef IOMMULAB_SHA256_H
#define IOMMULAB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32
#define SHA256_HEX_LEN	  (2 * SHA256_DIGEST_LEN + 1) /* with the terminating NUL */

struct sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t buf[64];
	size_t n_buf;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t digest[SHA256_DIGEST_LEN]);

/* The digest of data[0..len) as lower-case hex. */
void sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN]);

/* The digest of the file at path as lower-case hex: 0, or -errno when it cannot be read. */
int sha256_file_hex(const char *path, char hex[SHA256_HEX_LEN]);

#endif /* IOMMULAB_SHA256_H */
