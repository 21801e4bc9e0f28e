/* SPDX-License-Identifier: MIT */
/* Unit tests of framework/util: SHA-256 against the FIPS 180-4 / NIST example vectors. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/diag.h"
#include "util/fs.h"
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

/* The last thing a child said on stderr: glibc's one line, or a sanitizer report's summary. */
Test(util, last_line_is_the_complaint, .timeout = 10)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "", "" },
		{ "\n\n", "" },
		{ "starting\nfree(): invalid pointer\n", "free(): invalid pointer" },
		{ "no newline at the end", "no newline at the end" },
		{ "==================\nWARNING: ThreadSanitizer: data race (pid=7)\n"
		  "  Write of size 4 at 0x7b04 by thread T2:\n"
		  "SUMMARY: ThreadSanitizer: data race plugins/cmdq/x.c:12 in f\n"
		  "==================\n",
		  "SUMMARY: ThreadSanitizer: data race plugins/cmdq/x.c:12 in f" },
		{ "SUMMARY: AddressSanitizer: heap-buffer-overflow a.c:3 in g\n==1==ABORTING\n",
		  "SUMMARY: AddressSanitizer: heap-buffer-overflow a.c:3 in g" },
		{ "----\nlast words\n------\n", "last words" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = tmpfile();
		char buf[128];

		cr_assert_not_null(f);
		fputs(cases[i].text, f);
		util_last_line(f, buf, sizeof(buf));
		cr_assert_str_eq(buf, cases[i].want, "case %zu", i);
		fclose(f);
	}
}

/* A plugin's return code in a message: a -errno's text, or that it is none (not "-12345"). */
Test(util, a_return_code_reads_as_what_it_is, .timeout = 10)
{
	cr_assert_str_eq(util_rc_text(-ETIMEDOUT), strerror(ETIMEDOUT));
	cr_assert_str_eq(util_rc_text(12345),
			 "not a -errno code: the plugin ABI returns 0 or -errno");
}

Test(util, a_signal_has_its_name, .timeout = 10)
{
	cr_assert_str_eq(util_signal_name(SIGSEGV), "SIGSEGV");
	cr_assert_str_eq(util_signal_name(SIGTERM), "SIGTERM");
	cr_assert_null(util_signal_name(1000));
}
