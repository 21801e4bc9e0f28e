/* SPDX-License-Identifier: MIT */
/* noise -- the host's load around a trial and the verdict on it (see noise.h). */
#include "run/noise.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void noise_mark(struct noise_mark *m)
{
	double load[1];
	char line[512];
	FILE *f;

	memset(m, 0, sizeof(*m));
	if (getloadavg(load, 1) == 1) {
		m->have_load = true;
		m->load1 = load[0];
	}
	f = fopen("/proc/stat", "r");
	if (!f)
		return;
	/* "cpu  user nice system idle iowait irq softirq steal guest guest_nice": guest time
	 * is already inside user and nice, so the total is the first eight. */
	if (fgets(line, sizeof(line), f) && !strncmp(line, "cpu ", 4)) {
		uint64_t v[8] = { 0 };
		int n = sscanf(line + 4,
			       "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			       " %" SCNu64 " %" SCNu64 " %" SCNu64,
			       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
		if (n >= 4) {
			m->have_stat = true;
			for (int i = 0; i < 8; i++)
				m->total_ticks += v[i];
			m->steal_ticks = v[7];
		}
	}
	fclose(f);
}

/* The share of the window a CPU's thread lost to involuntary descheduling. */
static double desched_frac(const struct engine_cpu_result *c)
{
	if (!c->have_sched || !c->wall_ns || c->cpu_ns >= c->wall_ns)
		return 0;

	double off = (double)(c->wall_ns - c->cpu_ns) / (double)c->wall_ns;
	uint64_t sw = c->invol_switches + c->vol_switches;

	/* Off its core only by choice (it slept): not the host's doing. */
	return sw ? off * (double)c->invol_switches / (double)sw : 0;
}

static void set_reason(struct trial_result *res, enum trial_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_reason(struct trial_result *res, enum trial_status st, const char *fmt, ...)
{
	va_list ap;

	res->status = st;
	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
}

void noise_judge(struct trial_result *res, const struct noise_mark *start,
		 const struct noise_mark *end, const struct engine_result *eres, uint32_t ncpus,
		 bool native, double core_share, uint64_t duration_ns)
{
	struct trial_noise *n = &res->noise;
	uint32_t worst = 0, measured = 0;
	uint64_t cpu_ns = 0, window_ns = 0, invol = 0, vol = 0;

	memset(n, 0, sizeof(*n));
	/* Only a native trial's figures depend on the host: a sim trial's row stays the same
	 * from run to run (and under any -j). */
	n->have_load = native && start->have_load && end->have_load;
	n->load_start = start->load1;
	n->load_end = end->load1;
	if (native && start->have_stat && end->have_stat && end->total_ticks > start->total_ticks)
		n->steal_frac = (double)(end->steal_ticks - start->steal_ticks) /
				(double)(end->total_ticks - start->total_ticks);
	for (uint32_t i = 0; native && eres->cpus && i < ncpus; i++) {
		const struct engine_cpu_result *c = &eres->cpus[i];
		double d = desched_frac(c);

		if (!c->have_sched)
			continue;
		n->measured = true;
		n->invol_switches += c->invol_switches;
		measured++;
		cpu_ns += c->cpu_ns < c->wall_ns ? c->cpu_ns : c->wall_ns;
		window_ns = c->wall_ns > window_ns ? c->wall_ns : window_ns;
		invol += c->invol_switches;
		vol += c->vol_switches;
		if (d > n->desched_frac) {
			n->desched_frac = d;
			worst = i;
		}
	}
	/* A fixed op count is a correctness run (verify, conformance): its timing is no result,
	 * so the host's load is no verdict on it. */
	if (res->status != TRIAL_OK || !duration_ns)
		return;

	double asked = (double)duration_ns / 1e9;

	/*
	 * On the sim nothing took the CPUs away: a CPU's window opens at its first op after the
	 * warm-up and closes at its first op boundary after the duration, so an op longer than
	 * the warm-up leaves (nearly) nothing measured. That is the scenario's to fix.
	 */
	const char *why = native ? "" : SIM_INCOMPLETE_WHY;

	if (!res->ops) {
		set_reason(res, TRIAL_INCOMPLETE, "incomplete: completed no op in %.3f s%s",
			   res->duration_s, why);
		return;
	}
	if (duration_ns && res->duration_s < NOISE_SHORT_FRAC * asked) {
		set_reason(res, TRIAL_INCOMPLETE,
			   "incomplete: measured %.4f s of its %.3f s duration (under %.0f%%)%s",
			   res->duration_s, asked, NOISE_SHORT_FRAC * 100, why);
		return;
	}
	if (!native)
		return;
	/* Oversubscribed by the scenario (core_share < 1): its threads take turns on the
	 * cores, each descheduled about 1 - core_share of the time by its siblings. The host's
	 * share is what they lost together beyond that, counted as for one thread. */
	double left = core_share * (double)measured * (double)window_ns;
	double lost = left > 0 && (double)cpu_ns < left ? 1 - (double)cpu_ns / left : 0;
	double shared = invol + vol ? lost * (double)invol / (double)(invol + vol) : 0;

	if (core_share < 1 && shared > NOISE_DESCHED_FRAC) {
		set_reason(res, TRIAL_NOISY,
			   "noisy: its %u CPUs' threads, sharing the cores by the scenario's "
			   "choice (%.2f of a core each), lost %.0f%% of that share of their %.3f "
			   "s window (%" PRIu64 " involuntary context switches; load %.2f -> "
			   "%.2f): something else ran on their cores",
			   measured, core_share, shared * 100, (double)window_ns / 1e9, invol,
			   n->load_start, n->load_end);
	} else if (core_share >= 1 && n->desched_frac > NOISE_DESCHED_FRAC) {
		const struct engine_cpu_result *c = &eres->cpus[worst];

		set_reason(res, TRIAL_NOISY,
			   "noisy: cpu%u's thread was descheduled %.0f%% of its %.3f s window "
			   "(%" PRIu64 " involuntary context switches; load %.2f -> %.2f): "
			   "something else ran on its core",
			   worst, n->desched_frac * 100, (double)c->wall_ns / 1e9,
			   c->invol_switches, n->load_start, n->load_end);
	} else if (n->steal_frac > NOISE_STEAL_FRAC) {
		set_reason(res, TRIAL_NOISY,
			   "noisy: %.0f%% steal time: the hypervisor ran others on this machine's "
			   "CPUs during the trial",
			   n->steal_frac * 100);
	}
}

/* The value of the first "key<spaces>: value" line of a file whose key is key. */
static bool file_value(const char *path, const char *key, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t kl = strlen(key);
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) || !strchr(line + kl, ':') ||
		    strspn(line + kl, " \t") != (size_t)(strchr(line + kl, ':') - (line + kl)))
			continue;
		char *v = strchr(line + kl, ':') + 1;

		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
		found = *v != '\0';
	}
	fclose(f);
	return found;
}

void noise_cpu_model(char *buf, size_t len)
{
	char part[64], impl[64];

	if (file_value("/proc/cpuinfo", "model name", buf, len) ||
	    file_value("/proc/cpuinfo", "Hardware", buf, len))
		return;
	/* arm64 names no model: its implementer and part numbers identify the core. */
	if (file_value("/proc/cpuinfo", "CPU implementer", impl, sizeof(impl)) &&
	    file_value("/proc/cpuinfo", "CPU part", part, sizeof(part))) {
		snprintf(buf, len, "implementer %s, part %s", impl, part);
		return;
	}
	snprintf(buf, len, "unknown");
}

void noise_governor(char *buf, size_t len)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "r");

	if (!f || !fgets(buf, (int)len, f) || !buf[0])
		snprintf(buf, len, "unknown");
	else
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}
