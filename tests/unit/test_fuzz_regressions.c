/* SPDX-License-Identifier: MIT */
/*
 * test_fuzz_regressions -- replays, in every build (no clang needed), the inputs the libFuzzer
 * harnesses of tests/fuzz ever crashed on (tests/fuzz/regressions/<target>/) and their seed
 * corpora, through the same per-input code (tests/fuzz/fuzz_targets.h). An input passes when
 * the reader returns at all; the ASan/UBSan stage of CI turns any memory error into a failure.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../fuzz/fuzz_targets.h"

#define REPLAY_MAX_BYTES (1u << 20)

/* Replay every regular file under dir (recursively) through one; the number replayed. */
static size_t replay_dir(const char *dir, int (*one)(const uint8_t *, size_t))
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[1024];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			n += replay_dir(path, one);
			continue;
		}
		if (!S_ISREG(st.st_mode) || st.st_size > REPLAY_MAX_BYTES)
			continue;

		uint8_t *buf = malloc((size_t)st.st_size + 1);
		FILE *f = fopen(path, "rb");

		cr_assert_not_null(buf);
		cr_assert_not_null(f, "%s", path);
		cr_assert_eq(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size, "%s", path);
		fclose(f);
		cr_assert_eq(one(buf, (size_t)st.st_size), 0, "%s", path);
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

#define SRC TEST_SOURCE_ROOT "/"

Test(fuzz_regressions, scenario, .timeout = 60)
{
	size_t seeds = replay_dir(SRC "configs", fuzz_scenario_one) +
		       replay_dir(SRC "tests/fixtures/scenarios", fuzz_scenario_one) +
		       replay_dir(SRC "tests/fuzz/seeds/scenario", fuzz_scenario_one);

	cr_assert_geq(seeds, 8, "the seed corpus went missing (%zu files)", seeds);
	replay_dir(SRC "tests/fuzz/regressions/scenario", fuzz_scenario_one);
}

Test(fuzz_regressions, csv, .timeout = 60)
{
	cr_assert_geq(replay_dir(SRC "tests/fuzz/seeds/csv", fuzz_csv_one), 1);
	replay_dir(SRC "tests/fuzz/regressions/csv", fuzz_csv_one);
}

Test(fuzz_regressions, topology, .timeout = 60)
{
	cr_assert_geq(replay_dir(SRC "configs/topologies", fuzz_topology_one), 2);
	replay_dir(SRC "tests/fuzz/regressions/topology", fuzz_topology_one);
}

Test(fuzz_regressions, histfile, .timeout = 60)
{
	cr_assert_geq(replay_dir(SRC "tests/fuzz/seeds/histfile", fuzz_histfile_one), 2);
	replay_dir(SRC "tests/fuzz/regressions/histfile", fuzz_histfile_one);
}

/* The harness's own input format: an INI, then "--set" and one override per line. */
Test(fuzz_regressions, scenario_sets_are_applied, .timeout = 30)
{
	static const char in[] = "[scenario]\nname = x\nworkload = cmdq\n[plugins]\ncmdq = mcs\n"
				 "--set\ncpus=3\nplugin.mcs.batch=4\nsweep.cpus=1, 2\n";

	cr_assert_eq(fuzz_scenario_one((const uint8_t *)in, sizeof(in) - 1), 0);
}
