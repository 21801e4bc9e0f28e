/* SPDX-License-Identifier: MIT */
/* Unit tests of run/noise: the verdicts on synthetic per-CPU figures, and the host readers. */
#include <criterion/criterion.h>

#include <string.h>

#include "run/noise.h"

static struct engine_cpu_result cpus[2];
static struct engine_result eres = { .cpus = cpus };
static const struct noise_mark quiet0 = { true, true, 0.5, 1000, 0 },
			       quiet1 = { true, true, 0.6, 1400, 1 };

/* An ok 1-second trial of 2 CPUs whose threads ran cpu_ms of their 1000 ms window. */
static void trial(struct trial_result *r, uint64_t cpu0_ms, uint64_t cpu1_ms, uint64_t invol,
		  uint64_t vol)
{
	memset(r, 0, sizeof(*r));
	r->status = TRIAL_OK;
	r->ops = 1000;
	r->duration_s = 1.0;
	memset(cpus, 0, sizeof(cpus));
	for (int i = 0; i < 2; i++) {
		cpus[i].have_sched = true;
		cpus[i].wall_ns = 1000000000u;
		cpus[i].cpu_ns = (i ? cpu1_ms : cpu0_ms) * 1000000u;
		cpus[i].invol_switches = invol;
		cpus[i].vol_switches = vol;
	}
}

Test(noise, quiet_trial_stays_ok_with_its_figures, .timeout = 5)
{
	struct trial_result r;

	trial(&r, 995, 990, 3, 0);
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, true, 1, 1000000000u);
	cr_assert_eq(r.status, TRIAL_OK, "%s", r.error);
	cr_assert(r.noise.measured && r.noise.have_load);
	cr_assert_float_eq(r.noise.desched_frac, 0.01, 1e-9, "the worst CPU's");
	cr_assert_eq(r.noise.invol_switches, 6);
	cr_assert_float_eq(r.noise.steal_frac, 1.0 / 400, 1e-12);
	cr_assert_float_eq(r.noise.load_end, 0.6, 1e-12);
}

Test(noise, a_shared_core_is_noisy_with_the_reason, .timeout = 5)
{
	struct trial_result r;

	/* A hog on cpu1's core: half its window. */
	trial(&r, 998, 500, 120, 0);
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, true, 1, 1000000000u);
	cr_assert_eq(r.status, TRIAL_NOISY);
	cr_assert(trial_status_measured(r.status));
	cr_assert_str_eq(trial_status_name(r.status), "noisy");
	cr_assert_not_null(strstr(r.error, "noisy: cpu1's thread was descheduled 50% of its "
					   "1.000 s window (120 involuntary"),
			   "%s", r.error);

	/* The same off-core time, slept voluntarily (a blocking plugin): not the host's. */
	trial(&r, 998, 500, 0, 500);
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, true, 1, 1000000000u);
	cr_assert_eq(r.status, TRIAL_OK, "%s", r.error);

	/* The sim runs in virtual time: never noisy by host load, whatever its host did. */
	trial(&r, 998, 500, 120, 0);
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, false, 1, 1000000000u);
	cr_assert_eq(r.status, TRIAL_OK);
	cr_assert(!r.noise.measured && !r.noise.have_load, "its row does not depend on the host");
}

Test(noise, an_oversubscribed_trial_is_judged_on_the_share_it_chose, .timeout = 5)
{
	struct trial_result r;

	/* 2 CPUs on 1 core by the scenario's choice (core_share 0.5): each thread off its core
	 * half its window is the scenario's own doing, not noise. */
	trial(&r, 498, 497, 400, 0);
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, true, 0.5, 1000000000u);
	cr_assert_eq(r.status, TRIAL_OK, "%s", r.error);
	cr_assert_float_eq(r.noise.desched_frac, 0.503, 1e-9, "the worst CPU's, as recorded");

	/* Together they ran 0.5 s of the 1 s of core the scenario left them: a hog took half. */
	trial(&r, 250, 250, 400, 0);
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, true, 0.5, 1000000000u);
	cr_assert_eq(r.status, TRIAL_NOISY);
	cr_assert_not_null(strstr(r.error, "noisy: its 2 CPUs' threads, sharing the cores by the "
					   "scenario's choice (0.50 of a core each), lost 50% of "
					   "that share of their 1.000 s window (800 involuntary"),
			   "%s", r.error);
	cr_assert_null(strstr(r.error, "cpu0's thread"), "no one thread is to blame: %s", r.error);

	/* The same loss, slept voluntarily: not the host's. */
	trial(&r, 250, 250, 0, 400);
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, true, 0.5, 1000000000u);
	cr_assert_eq(r.status, TRIAL_OK, "%s", r.error);
}

Test(noise, steal_is_noisy, .timeout = 5)
{
	struct trial_result r;
	const struct noise_mark stolen = { true, true, 0.6, 2000, 300 };

	trial(&r, 999, 999, 1, 0);
	noise_judge(&r, &quiet0, &stolen, &eres, 2, true, 1, 1000000000u);
	cr_assert_eq(r.status, TRIAL_NOISY);
	cr_assert_not_null(strstr(r.error, "30% steal time"), "%s", r.error);
}

Test(noise, short_or_empty_trials_are_incomplete, .timeout = 5)
{
	struct trial_result r;

	/* The cmpxchg: 0.00525 s of its 1000 ms. */
	trial(&r, 5, 5, 0, 0);
	r.duration_s = 0.00525;
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, true, 1, 1000000000u);
	cr_assert_eq(r.status, TRIAL_INCOMPLETE);
	cr_assert(!trial_status_measured(r.status));
	cr_assert_str_eq(r.error,
			 "incomplete: measured 0.0053 s of its 1.000 s duration (under 50%)");

	trial(&r, 999, 999, 0, 0);
	r.ops = 0;
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, false, 1, 1000000000u);
	cr_assert_eq(r.status, TRIAL_INCOMPLETE, "the sim too");
	cr_assert_str_eq(r.error, "incomplete: completed no op in 1.000 s" SIM_INCOMPLETE_WHY);
	cr_assert(strstr(r.error, "lengthen warmup_ms"), "says what to do: %s", r.error);

	/* The sim's CPUs start measuring at an op boundary: ops longer than the warm-up. */
	trial(&r, 999, 999, 0, 0);
	r.duration_s = 0.0163;
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, false, 1, 40000000u);
	cr_assert_eq(r.status, TRIAL_INCOMPLETE);
	cr_assert_str_eq(r.error,
			 "incomplete: measured 0.0163 s of its 0.040 s duration (under "
			 "50%) of virtual time: its ops outlast the warm-up (a CPU measures "
			 "from its first op after warmup_ms to its first op boundary after "
			 "duration_ms); lengthen warmup_ms and duration_ms");

	/* A fixed op count has no duration to fall short of, and is no measurement (verify). */
	trial(&r, 5, 500, 100, 0);
	r.duration_s = 0.005;
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, true, 1, 0);
	cr_assert_eq(r.status, TRIAL_OK, "%s", r.error);
	cr_assert(r.noise.measured, "its figures are still recorded");

	/* A failed trial keeps its own reason. */
	trial(&r, 5, 5, 0, 0);
	r.status = TRIAL_FAILED;
	strcpy(r.error, "protocol violation");
	noise_judge(&r, &quiet0, &quiet1, &eres, 2, true, 1, 1000000000u);
	cr_assert_eq(r.status, TRIAL_FAILED);
	cr_assert_str_eq(r.error, "protocol violation");
}

Test(noise, host_readers_say_something, .timeout = 5)
{
	char buf[256];
	struct noise_mark m;

	noise_cpu_model(buf, sizeof(buf));
	cr_assert(buf[0], "a model, or 'unknown'");
	noise_governor(buf, sizeof(buf));
	cr_assert(buf[0] && !strchr(buf, '\n'));
	noise_mark(&m);
	cr_assert(m.have_stat && m.total_ticks > 0, "/proc/stat on Linux");
	cr_assert(m.have_load);
}
