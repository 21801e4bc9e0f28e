/* SPDX-License-Identifier: MIT */
/*
 * atomics_check -- lab_h_only: no hardware atomic, barrier or spin-wait hint in a plugin's sim
 * build, judged from objdump's disassembly (see atomics_check.h for why and the limits).
 */
#include "verify/atomics_check.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iommulab/plugin.h>

#include "util/fs.h"

extern char **environ;

const char *atomics_arch_name(enum atomics_arch a)
{
	switch (a) {
	case ATOMICS_ARCH_X86_64:
		return "x86-64";
	case ATOMICS_ARCH_AARCH64:
		return "aarch64";
	default:
		return "unknown";
	}
}

/* ---- what bypasses lab.h, per machine ----------------------------------------------------- */

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

#define WHAT_HINT "a spin-wait hint (a spin loop the sim cannot see)"

/*
 * A call or jump to a function that is an atomic by another name: libatomic's __atomic_* (what
 * the compiler calls for sizes it cannot inline) and its C11 atomic_flag_* and
 * atomic_thread_fence, libgcc's __sync_*, and gcc's aarch64 outline atomics
 * (-moutline-atomics, the default there: __aarch64_cas4_acq_rel, __aarch64_ldadd8_relax...).
 */
static const char *atomic_call(const char *ops)
{
	static const char *const names[] = {
		"__atomic_",	   "__sync_",	      "atomic_flag_",	 "atomic_thread_fence",
		"__aarch64_cas",   "__aarch64_swp",   "__aarch64_ldadd", "__aarch64_ldclr",
		"__aarch64_ldeor", "__aarch64_ldset",
	};
	const char *lt = strchr(ops, '<');

	/* <f+0x14> is a branch inside f, not a call of it. */
	if (!lt || lt[strcspn(lt, "+>")] == '+')
		return NULL;
	for (size_t i = 0; i < LAB_ARRAY_SIZE(names); i++)
		if (starts(lt + 1, names[i]))
			return "a call to an atomic function (libatomic or libgcc)";
	return NULL;
}

/*
 * x86-64 (AT&T syntax, objdump's default). Every plain mov is already atomic there, so only
 * what the compiler emits for a read-modify-write, a seq_cst store or a fence shows: a lock
 * prefix (lock cmpxchg, lock xadd, lock or $0,(%rsp) for a fence), xchg with memory (locked
 * implicitly), cmpxchg, the fences, pause. xchg %ax,%ax is a nop, not an exchange.
 */
static const char *classify_x86(const char *insn)
{
	static const char *const prefixes[] = {
		"lock", "xacquire", "xrelease", "rep", "repz", "repe", "repnz", "repne", "notrack",
		"bnd",	"data16",   "addr32",	"cs",  "ds",   "es",   "fs",	"gs",	 "ss",
	};
	char mnem[32];
	bool locked = false;
	const char *p = insn;

	for (;;) {
		size_t len = strcspn(p, " \t");
		bool prefix = false;

		snprintf(mnem, sizeof(mnem), "%.*s", (int)len, p);
		for (size_t i = 0; i < LAB_ARRAY_SIZE(prefixes); i++)
			prefix |= !strcmp(mnem, prefixes[i]);
		prefix |= starts(mnem, "rex");
		p += len;
		p += strspn(p, " \t");
		if (!prefix || !*p) {
			locked |= !strcmp(mnem, "lock");
			break;
		}
		locked |= !strcmp(mnem, "lock");
	}
	/* gcc's full fence is an or of 0 into the stack: no shared word, but smp_mb(). */
	if (locked && starts(mnem, "or") && strstr(p, "(%rsp)"))
		return "a full memory fence (a locked or of the stack)";
	if (locked)
		return "a lock-prefixed read-modify-write";
	if (starts(mnem, "cmpxchg"))
		return "a compare-and-exchange";
	if (starts(mnem, "xchg") && strchr(p, '('))
		return "an exchange with memory (locked implicitly)";
	if (!strcmp(mnem, "mfence") || !strcmp(mnem, "sfence") || !strcmp(mnem, "lfence"))
		return "a memory fence";
	if (!strcmp(mnem, "pause"))
		return WHAT_HINT;
	if (starts(mnem, "call") || mnem[0] == 'j')
		return atomic_call(p);
	return NULL;
}

/*
 * aarch64: here even a raw acquire load or release store has its own instruction (ldar,
 * stlr), unlike on x86-64; the LL/SC pairs (ldxr/stxr), the LSE atomics (cas, swp, ld<op>,
 * st<op>), the barriers, the spin hints.
 */
static const char *classify_a64(const char *insn)
{
	static const struct {
		const char *prefix, *what;
	} table[] = {
		{ "ldxr", "a load-exclusive (an LL/SC atomic)" },
		{ "ldxp", "a load-exclusive (an LL/SC atomic)" },
		{ "ldaxr", "a load-exclusive (an LL/SC atomic)" },
		{ "ldaxp", "a load-exclusive (an LL/SC atomic)" },
		{ "stxr", "a store-exclusive (an LL/SC atomic)" },
		{ "stxp", "a store-exclusive (an LL/SC atomic)" },
		{ "stlxr", "a store-exclusive (an LL/SC atomic)" },
		{ "stlxp", "a store-exclusive (an LL/SC atomic)" },
		{ "ldar", "a load-acquire" },
		{ "ldapr", "a load-acquire" },
		{ "ldapur", "a load-acquire" },
		{ "ldlar", "a load-acquire" },
		{ "stlr", "a store-release" },
		{ "stlur", "a store-release" },
		{ "stllr", "a store-release" },
		{ "cas", "an LSE atomic" },
		{ "swp", "an LSE atomic" },
		{ "ldadd", "an LSE atomic" },
		{ "ldclr", "an LSE atomic" },
		{ "ldeor", "an LSE atomic" },
		{ "ldset", "an LSE atomic" },
		{ "ldsmax", "an LSE atomic" },
		{ "ldsmin", "an LSE atomic" },
		{ "ldumax", "an LSE atomic" },
		{ "ldumin", "an LSE atomic" },
		{ "stadd", "an LSE atomic" },
		{ "stclr", "an LSE atomic" },
		{ "steor", "an LSE atomic" },
		{ "stset", "an LSE atomic" },
		{ "stsmax", "an LSE atomic" },
		{ "stsmin", "an LSE atomic" },
		{ "stumax", "an LSE atomic" },
		{ "stumin", "an LSE atomic" },
	};
	static const char *const exact[][2] = {
		{ "dmb", "a memory barrier" }, { "dsb", "a memory barrier" },
		{ "yield", WHAT_HINT },	       { "wfe", WHAT_HINT },
		{ "wfet", WHAT_HINT },	       { "sev", WHAT_HINT },
		{ "sevl", WHAT_HINT },
	};
	size_t len = strcspn(insn, " \t");
	char mnem[32];

	snprintf(mnem, sizeof(mnem), "%.*s", (int)len, insn);
	for (size_t i = 0; i < LAB_ARRAY_SIZE(table); i++)
		if (starts(mnem, table[i].prefix))
			return table[i].what;
	for (size_t i = 0; i < LAB_ARRAY_SIZE(exact); i++)
		if (!strcmp(mnem, exact[i][0]))
			return exact[i][1];
	if (!strcmp(mnem, "b") || !strcmp(mnem, "bl") || starts(mnem, "b.") || starts(mnem, "cb") ||
	    starts(mnem, "tb"))
		return atomic_call(insn + len);
	return NULL;
}

/* ---- objdump's text ----------------------------------------------------------------------- */

/* "0000000000001800 <mcs_issue>:" -> its address and name. */
static bool func_label(const char *line, uint64_t *addr, char *name, size_t len)
{
	char *end;
	const char *lt, *gt;

	*addr = strtoull(line, &end, 16);
	if (end == line || strncmp(end, " <", 2))
		return false;
	lt = end + 1;
	gt = strrchr(lt, '>');
	if (!gt || strcmp(gt, ">:"))
		return false;
	snprintf(name, len, "%.*s", (int)(gt - lt - 1), lt + 1);
	return true;
}

/* "    1825:\tlock cmpxchg %ecx,(%rdx)  # comment" -> its address and the instruction. */
static bool insn_line(const char *line, enum atomics_arch arch, uint64_t *addr, char *insn,
		      size_t len)
{
	const char *p = line + strspn(line, " ");
	char *end, *cut;

	*addr = strtoull(p, &end, 16);
	if (end == p || end[0] != ':' || end[1] != '\t')
		return false;
	p = end + 2;
	p += strspn(p, " \t");
	snprintf(insn, len, "%s", p);
	/* objdump's comment: "# 4030 <sym>" on x86 ("#" is never an AT&T operand), "//" on aarch64.
	 */
	cut = strstr(insn, arch == ATOMICS_ARCH_AARCH64 ? "//" : "#");
	if (cut)
		*cut = '\0';
	for (size_t n = strlen(insn); n && (insn[n - 1] == ' ' || insn[n - 1] == '\t');)
		insn[--n] = '\0';
	return insn[0] != '\0';
}

int atomics_scan(FILE *f, struct atomics_report *r)
{
	char line[1024], func[ATOMICS_NAME_LEN] = "", insn[ATOMICS_INSN_LEN];
	uint64_t func_addr = 0, addr;
	bool plt = false, func_hit = false;

	memset(r, 0, sizeof(*r));
	while (fgets(line, sizeof(line), f)) {
		const char *fmt = strstr(line, "file format "), *what;

		line[strcspn(line, "\n")] = '\0';
		if (fmt && r->arch == ATOMICS_ARCH_UNKNOWN) {
			fmt += strlen("file format ");
			if (!strcmp(fmt, "elf64-x86-64"))
				r->arch = ATOMICS_ARCH_X86_64;
			else if (!strcmp(fmt, "elf64-littleaarch64") ||
				 !strcmp(fmt, "elf64-bigaarch64"))
				r->arch = ATOMICS_ARCH_AARCH64;
			else {
				snprintf(r->unchecked, sizeof(r->unchecked),
					 "file format %s: the check knows the instructions of "
					 "x86-64 and aarch64 only",
					 fmt);
				return -EINVAL;
			}
			continue;
		}
		if (starts(line, "Disassembly of section ")) {
			const char *sec = line + strlen("Disassembly of section ");

			/* .plt, .plt.got, .plt.sec, .iplt: stubs; their callers are judged. */
			plt = starts(sec, ".plt") || starts(sec, ".iplt");
			snprintf(func, sizeof(func), "%.*s", (int)strcspn(sec, ":"), sec);
			func_addr = 0;
			func_hit = false;
			continue;
		}
		if (func_label(line, &addr, func, sizeof(func))) {
			func_addr = addr;
			func_hit = false;
			r->n_funcs += !plt;
			continue;
		}
		if (plt || !insn_line(line, r->arch, &addr, insn, sizeof(insn)))
			continue;
		if (r->arch == ATOMICS_ARCH_UNKNOWN) {
			snprintf(r->unchecked, sizeof(r->unchecked),
				 "objdump's output names no file format before its instructions");
			return -EINVAL;
		}
		what = r->arch == ATOMICS_ARCH_X86_64 ? classify_x86(insn) : classify_a64(insn);
		if (!what)
			continue;
		if (r->n_hits < ATOMICS_MAX_HITS) {
			struct atomics_hit *h = &r->hits[r->n_hits];

			snprintf(h->func, sizeof(h->func), "%s", func);
			snprintf(h->insn, sizeof(h->insn), "%s", insn);
			h->addr = addr;
			h->offset = addr - func_addr;
			h->what = what;
		}
		r->n_hits++;
		r->n_hit_funcs += !func_hit;
		func_hit = true;
	}
	if (ferror(f))
		return -EIO;
	if (r->arch == ATOMICS_ARCH_UNKNOWN) {
		snprintf(r->unchecked, sizeof(r->unchecked),
			 "objdump's output names no file format");
		return -EINVAL;
	}
	return 0;
}

void atomics_hit_format(const struct atomics_hit *h, char *buf, size_t len)
{
	snprintf(buf, len, "function %s: %s at 0x%llx (%s+0x%llx): %s", h->func, h->insn,
		 (unsigned long long)h->addr, h->func, (unsigned long long)h->offset, h->what);
}

/* ---- the file: which objdump, and running it ---------------------------------------------- */

/* The ELF machine of path (EM_X86_64, EM_AARCH64, ...), or -errno with why. */
static int elf_machine(const char *path, char *why, size_t len)
{
	unsigned char h[EI_NIDENT + 4];
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;
	ssize_t n;

	if (fd < 0) {
		rc = -errno;
		snprintf(why, len, "cannot open %s: %s", path, strerror(-rc));
		return rc;
	}
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG)) {
		snprintf(why, len, "%s is not an ELF file", path);
		return -ENOEXEC;
	}
	/* e_machine follows e_type, in the file's byte order. */
	return h[EI_DATA] == ELFDATA2MSB ? h[EI_NIDENT + 2] << 8 | h[EI_NIDENT + 3]
					 : h[EI_NIDENT + 3] << 8 | h[EI_NIDENT + 2];
}

/*
 * Run tool -d --no-show-raw-insn path and scan its output. 0, -ENOENT when the tool is not on
 * PATH (r untouched), or another -errno with r->unchecked saying why.
 */
static int run_objdump(const char *tool, const char *path, struct atomics_report *r)
{
	char *argv[] = { (char *)tool, "-d", "--no-show-raw-insn", (char *)path, NULL };
	posix_spawn_file_actions_t fa;
	FILE *errf = tmpfile(), *out = NULL;
	int pipefd[2] = { -1, -1 }, status = 0, rc, scan;
	pid_t pid;

	if (!errf || pipe2(pipefd, O_CLOEXEC)) {
		rc = -errno;
		snprintf(r->unchecked, sizeof(r->unchecked), "cannot run %s: %s", tool,
			 strerror(-rc));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, fileno(errf), STDERR_FILENO);
	rc = -posix_spawnp(&pid, tool, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	pipefd[1] = -1;
	if (rc) {
		if (rc != -ENOENT)
			snprintf(r->unchecked, sizeof(r->unchecked), "cannot run %s: %s", tool,
				 strerror(-rc));
		goto out;
	}
	out = fdopen(pipefd[0], "r");
	if (!out) {
		rc = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		snprintf(r->unchecked, sizeof(r->unchecked), "cannot read %s: %s", tool,
			 strerror(-rc));
		goto out;
	}
	pipefd[0] = -1;
	scan = atomics_scan(out, r);
	/* Drain what a scan that stopped early left, so objdump ends on its own. */
	while (fgetc(out) != EOF)
		;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		char said[200];

		util_last_line(errf, said, sizeof(said));
		snprintf(r->unchecked, sizeof(r->unchecked), "%s %s failed (%s)", tool, path,
			 said[0] ? said : "no message");
		rc = -EIO;
	} else if (scan) {
		rc = scan;
	} else if (!r->n_funcs) {
		snprintf(r->unchecked, sizeof(r->unchecked), "%s found no function in %s to judge",
			 tool, path);
		rc = -ENODATA;
	}
out:
	if (out)
		fclose(out);
	for (int i = 0; i < 2; i++)
		if (pipefd[i] >= 0)
			close(pipefd[i]);
	if (errf)
		fclose(errf);
	return rc;
}

int atomics_check_file(const char *path, struct atomics_report *r)
{
	/* The objdump that reads the file's machine: a cross one first, where there is one. */
	const char *x86[] = { "x86_64-linux-gnu-objdump", "objdump" };
	const char *a64[] = { "aarch64-linux-gnu-objdump", "objdump" };
	const char *const *tools;
	size_t n_tools = 2;
	int machine, rc = -ENOENT;

	memset(r, 0, sizeof(*r));
	machine = elf_machine(path, r->unchecked, sizeof(r->unchecked));
	if (machine < 0)
		return machine;
	if (machine == EM_X86_64) {
		tools = x86;
	} else if (machine == EM_AARCH64) {
		tools = a64;
	} else {
		snprintf(r->unchecked, sizeof(r->unchecked),
			 "%s is for ELF machine %d: the check knows the instructions of x86-64 "
			 "and aarch64 only",
			 path, machine);
		return -ENOTSUP;
	}
	for (size_t i = 0; i < n_tools && rc == -ENOENT; i++)
		rc = run_objdump(tools[i], path, r);
	if (rc == -ENOENT)
		snprintf(r->unchecked, sizeof(r->unchecked),
			 "no objdump on PATH (%s or %s; install binutils) to disassemble %s",
			 tools[0], tools[1], path);
	return rc;
}
