/* SPDX-License-Identifier: MIT */
/* Unit tests of framework/util: SHA-256 against the FIPS 180-4 / NIST example vectors. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/sha256.h"

static void check(const char *msg, size_t len, const char *want)
{
	char hex[SHA256_HEX_LEN];

	sha256_hex(msg, len, hex);
	cr_assert_str_eq(hex, want, "message of %zu bytes", len);
}

Test(sha256, nist_vectors, .timeout = 10)
{
	check("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* 448 bits: the padding's length field no longer fits in the first block. */
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	check(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	const char *four = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
			   "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	check(four, strlen(four),
	      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

Test(sha256, million_a_in_uneven_pieces_and_from_a_file, .timeout = 20)
{
	static char a[1000000];
	struct sha256 s;
	uint8_t d[SHA256_DIGEST_LEN];
	char hex[SHA256_HEX_LEN], path[] = "/tmp/iommulab-sha256-XXXXXX";
	const char *want = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

	memset(a, 'a', sizeof(a));
	sha256_init(&s);
	/* Pieces that straddle the 64-byte blocks every way. */
	for (size_t off = 0, step = 1; off < sizeof(a); off += step, step = step % 97 + 1)
		sha256_update(&s, a + off, off + step > sizeof(a) ? sizeof(a) - off : step);
	sha256_final(&s, d);
	for (int i = 0; i < SHA256_DIGEST_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	cr_assert_str_eq(hex, want);

	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, a, sizeof(a)), (ssize_t)sizeof(a));
	close(fd);
	cr_assert_eq(sha256_file_hex(path, hex), 0);
	cr_assert_str_eq(hex, want);
	unlink(path);
	cr_assert_lt(sha256_file_hex(path, hex), 0, "a missing file is an error");
}
