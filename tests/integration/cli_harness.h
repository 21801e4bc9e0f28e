/* SPDX-License-Identifier: MIT */
/*
 * cli_harness -- what the command-line tests (test_cli, test_compare, test_noise) share: a
 * temporary directory per test, running the built iommulab with its output in files, and
 * reading a file back. Header-only: each test executable is one translation unit.
 */
#ifndef IOMMULAB_TEST_CLI_HARNESS_H
#define IOMMULAB_TEST_CLI_HARNESS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXE	TEST_BUILD_ROOT "/iommulab"
#define CONFIGS TEST_SOURCE_ROOT "/configs"

/* The running test's directory, made by cli_make_tmp (a Criterion suite's .init). */
static char tmp[256];

static inline void cli_make_tmp(const char *name)
{
	snprintf(tmp, sizeof(tmp), "/tmp/iommulab-%s-XXXXXX", name);
	cr_assert_not_null(mkdtemp(tmp));
}

static inline void cli_remove_tmp(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	(void)!system(cmd);
}

/*
 * Run iommulab with argv (NULL-terminated), stdout to out_path and stderr to err_path; return
 * its exit status (128 + the signal if one killed it), or with pid_out its pid at once.
 */
static inline int cli_run_to(char *const argv[], pid_t *pid_out, const char *out_path,
			     const char *err_path)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (!freopen(err_path, "w", stderr) || !freopen(out_path, "w", stdout))
			_exit(127);
		/* Under AddressSanitizer a plugin's SIGSEGV or abort must still kill the trial's
		 * process by that signal, as it does in a normal build. */
		const char *asan = getenv("ASAN_OPTIONS");
		char opts[1024];
		snprintf(opts, sizeof(opts), "%s%shandle_segv=0:handle_abort=0", asan ? asan : "",
			 asan && *asan ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);
		execv(EXE, argv);
		_exit(127);
	}
	if (pid_out) {
		*pid_out = pid;
		return 0;
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The file at path (at most 256 KiB of it), in a buffer the next call reuses. */
static inline char *cli_slurp_path(const char *path)
{
	static char buf[1 << 18];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* tmp/name, as cli_slurp_path. */
static inline char *cli_slurp(const char *name)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	return cli_slurp_path(path);
}

#endif /* IOMMULAB_TEST_CLI_HARNESS_H */
