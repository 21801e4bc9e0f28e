/* SPDX-License-Identifier: MIT */
/* loader -- dlopen plugins and check every promise the descriptor makes (see loader.h). */
#include "loader/loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <iommulab/cmdq.h>
#include <iommulab/iova.h>

#include "params/params.h"
#include "util/array.h"
#include "util/diag.h"

const char *plugin_kind_name(uint32_t kind)
{
	switch (kind) {
	case LAB_KIND_CMDQ:
		return "cmdq";
	case LAB_KIND_IOVA:
		return "iova";
	default:
		return "?";
	}
}

#define SIM_SUFFIX ".sim.so"

/*
 * At most this many parameters, as counters and phases have their bounds: the table is walked
 * n_params entries long (and every key compared with every other), so a count the table does
 * not hold reads past it. The shipped plugins have at most 2.
 */
#define LOADER_MAX_PARAMS 256

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* "dir/cmdq-foo.so" (or its sim build "dir/cmdq-foo.sim.so") -> kind "cmdq", name "foo". */
static int split_file_name(const char *path, char *kind, size_t kind_len, char *name,
			   size_t name_len)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dash = strchr(base, '-');
	size_t len = strlen(base);
	size_t suffix = ends_with(base, SIM_SUFFIX) ? strlen(SIM_SUFFIX) : 3;

	if (!dash || len < 4 || strcmp(base + len - 3, ".so") || base + len - suffix <= dash)
		return -EINVAL;
	snprintf(kind, kind_len, "%.*s", (int)(dash - base), base);
	snprintf(name, name_len, "%.*s", (int)(base + len - suffix - (dash + 1)), dash + 1);
	return 0;
}

static bool valid_name(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static int check_ops(const struct lab_plugin *d, char *err, size_t len)
{
	if (!d->ops) {
		snprintf(err, len, "ops table is NULL");
		return -EINVAL;
	}
	if (d->kind == LAB_KIND_CMDQ) {
		const struct lab_cmdq_ops *o = d->ops;
		if (!LAB_OPS_HAS(o, issue)) {
			snprintf(err, len,
				 "cmdq ops struct_size %u is smaller than the ABI 1.0 layout (%zu)",
				 o->struct_size, sizeof(*o));
			return -EINVAL;
		}
		if (!o->init || !o->issue) {
			snprintf(err, len, "required cmdq op '%s' is NULL",
				 !o->init ? "init" : "issue");
			return -EINVAL;
		}
		return 0;
	}
	const struct lab_iova_ops *o = d->ops;
	if (!LAB_OPS_HAS(o, flush_all)) {
		snprintf(err, len,
			 "iova ops struct_size %u is smaller than the ABI 1.0 layout (%zu)",
			 o->struct_size, offsetof(struct lab_iova_ops, tick));
		return -EINVAL;
	}
	const char *missing = !o->init	      ? "init"
			      : !o->fini      ? "fini"
			      : !o->alloc     ? "alloc"
			      : !o->free      ? "free"
			      : !o->flush_cpu ? "flush_cpu"
			      : !o->flush_all ? "flush_all"
					      : NULL;
	if (missing) {
		snprintf(err, len, "required iova op '%s' is NULL", missing);
		return -EINVAL;
	}
	return 0;
}

static int check_tables(const struct lab_plugin *d, char *err, size_t len)
{
	char why[256];

	if (d->n_counters > LAB_MAX_COUNTERS || (d->n_counters && !d->counters)) {
		snprintf(err, len, "%u counters (at most %d, and a table)", d->n_counters,
			 LAB_MAX_COUNTERS);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < d->n_counters; i++) {
		const struct lab_counter *k = &d->counters[i];
		if (!valid_name(k->name) || !k->help ||
		    (k->kind != LAB_COUNTER_EVENTS && k->kind != LAB_COUNTER_LEVEL)) {
			snprintf(err, len,
				 "counter %u ('%s'): needs a [a-z0-9_] name, help and a kind", i,
				 k->name ? k->name : "(null)");
			return -EINVAL;
		}
	}
	if (d->n_phases >= LAB_MAX_PHASES || (d->n_phases && !d->phases)) {
		snprintf(err, len, "%u phases (at most %d, and a table)", d->n_phases,
			 LAB_MAX_PHASES - 1);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < d->n_phases; i++)
		if (!valid_name(d->phases[i])) {
			snprintf(err, len, "phase %u has no valid name", i + 1);
			return -EINVAL;
		}
	if (d->n_params > LOADER_MAX_PARAMS) {
		snprintf(err, len, "%u parameters (at most %d)", d->n_params, LOADER_MAX_PARAMS);
		return -EINVAL;
	}
	if (d->n_params && !d->params) {
		snprintf(err, len, "n_params is %u but the parameter table is NULL", d->n_params);
		return -EINVAL;
	}
	if (param_table_check(d->params, d->n_params, d->config_size, why, sizeof(why))) {
		snprintf(err, len, "parameter table: %s", why);
		return -EINVAL;
	}
	return 0;
}

static int check_descriptor(const char *path, const struct lab_plugin *d, char *err, size_t len)
{
	char kind[64], name[256];

	if (d->magic != LAB_PLUGIN_MAGIC) {
		snprintf(err, len, "bad magic 0x%08x (expected 0x%08x): not an iommulab plugin",
			 d->magic, LAB_PLUGIN_MAGIC);
		return -EINVAL;
	}
	if (d->abi_major != LAB_ABI_MAJOR || d->abi_minor > LAB_ABI_MINOR) {
		snprintf(err, len,
			 "ABI %u.%u, host speaks %d.0 to %d.%d: rebuild the plugin against "
			 "this host's headers",
			 d->abi_major, d->abi_minor, LAB_ABI_MAJOR, LAB_ABI_MAJOR, LAB_ABI_MINOR);
		return -EPROTO;
	}
	if (d->struct_size < offsetof(struct lab_plugin, ops) + sizeof(d->ops)) {
		snprintf(err, len,
			 "descriptor struct_size %u is smaller than the ABI 1.0 layout (%zu)",
			 d->struct_size, sizeof(struct lab_plugin));
		return -EINVAL;
	}
	if (d->kind != LAB_KIND_CMDQ && d->kind != LAB_KIND_IOVA) {
		snprintf(err, len, "unknown kind %u (expected %d for cmdq or %d for iova)", d->kind,
			 LAB_KIND_CMDQ, LAB_KIND_IOVA);
		return -EINVAL;
	}
	if (split_file_name(path, kind, sizeof(kind), name, sizeof(name))) {
		snprintf(err, len, "file name is not <kind>-<name>.so");
		return -EINVAL;
	}
	if (strcmp(kind, plugin_kind_name(d->kind))) {
		snprintf(err, len, "kind is %s but the file name says %s (expected %s-%s.so)",
			 plugin_kind_name(d->kind), kind, plugin_kind_name(d->kind),
			 d->name ? d->name : name);
		return -EINVAL;
	}
	if (!valid_name(d->name) || strcmp(d->name, name)) {
		snprintf(err, len,
			 "name '%s' does not match the file name (expected '%s' in %s-%s.so)",
			 d->name ? d->name : "(null)", name, kind, name);
		return -EINVAL;
	}
	if (!d->summary || !d->version) {
		snprintf(err, len, "descriptor has no %s", !d->summary ? "summary" : "version");
		return -EINVAL;
	}
	int rc = check_ops(d, err, len);
	return rc ? rc : check_tables(d, err, len);
}

/* dlopen() path here, in this process, and check it: what plugin_load() does once the file
 * loaded in a child (load_in_child()). */
static int load_here(const char *path, struct loaded_plugin *out, char *err, size_t err_len)
{
	char why[512];
	void *h;
	int rc;

	memset(out, 0, sizeof(*out));
	dlerror();
	/* A file name without a slash is a file here, not a library for dlopen() to search for
	 * (`iommulab verify cmdq-mine.so` in the plugin's directory). */
	char here[4096];
	const char *file = strchr(path, '/') ? path : here;

	snprintf(here, sizeof(here), "./%s", path);
	h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, err_len, "%s: cannot load: %s", path, dlerror());
		return -ENOEXEC;
	}
	lab_plugin_entry_fn entry;
	*(void **)&entry = dlsym(h, LAB_PLUGIN_ENTRY_NAME);
	if (!entry) {
		const char *e = dlerror();
		snprintf(err, err_len,
			 "%s: no entry symbol '%s' (export it with LAB_PLUGIN_EXPORT): %s", path,
			 LAB_PLUGIN_ENTRY_NAME, e ? e : "not found");
		rc = -ENOENT;
		goto err_close;
	}
	const struct lab_plugin *d = entry();
	if (!d) {
		snprintf(err, err_len, "%s: %s() returned NULL", path, LAB_PLUGIN_ENTRY_NAME);
		rc = -EINVAL;
		goto err_close;
	}
	rc = check_descriptor(path, d, why, sizeof(why));
	if (rc) {
		snprintf(err, err_len, "%s: %s", path, why);
		goto err_close;
	}
	out->path = strdup(path);
	if (!out->path) {
		rc = -ENOMEM;
		snprintf(err, err_len, "%s: out of memory", path);
		goto err_close;
	}
	out->handle = h;
	out->desc = d;
	return 0;

err_close:
	dlclose(h);
	return rc;
}

/* ---- loading a file in a child first ----------------------------------------------------- */

/*
 * A plugin runs code the moment it is loaded: its constructors in dlopen(), then its entry
 * function. Here that is the host's process, before any trial is isolated, so a file that
 * crashes, exits or hangs there would take the host down with it, even one the scenario never
 * uses. So each file is first loaded in a forked child, which makes every check load_here()
 * makes and reports the outcome through a pipe; only a file the child loaded is then loaded
 * here (constructors run twice: the child's stdout goes to /dev/null, its stderr to the
 * parent, which quotes its last line if the child did not come back).
 *
 * How long the child may take: a shipped plugin loads in well under a millisecond (a dlopen()
 * and a walk over its tables), so 5 s is thousands of times that, enough for a CI machine
 * under load or a sanitizer build, while a plugin that hangs costs a 5 s pause at start-up
 * rather than the whole run.
 */
#define LOAD_TIMEOUT_S 5

/* The child's answer: 0 or load_here()'s -errno, then its refusal text (no NUL). One write()
 * of at most PIPE_BUF bytes, so the parent reads all of it or none. */
struct load_report {
	int32_t rc;
	char err[1024];
};

/* The fault signals: the child dies of them with the default action, never runs a handler of
 * the host's there. */
static const int fault_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };

static _Noreturn void child_load(const char *path, int report_fd, int stderr_fd)
{
	struct load_report rep = { 0 };
	struct loaded_plugin p;
	sigset_t none;
	int null = open("/dev/null", O_RDWR);

	for (size_t i = 0; i < LAB_ARRAY_SIZE(fault_signals); i++)
		signal(fault_signals[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	dup2(stderr_fd, STDERR_FILENO);
	rep.rc = load_here(path, &p, rep.err, sizeof(rep.err));
	if (!rep.rc)
		rep.err[0] = '\0';
	size_t n = offsetof(struct load_report, err) + strnlen(rep.err, sizeof(rep.err) - 1);
	while (write(report_fd, &rep, n) < 0 && errno == EINTR)
		;
	_exit(0); /* nothing of the host's (atexit, stdio buffers, destructors) runs here */
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read what fd has into buf (keeping its last cap - 1 bytes); close it at end of file. */
static void read_some(struct pollfd *fd, char *buf, size_t *n, size_t cap, bool keep_tail)
{
	char tmp[1024];
	ssize_t got = read(fd->fd, tmp, sizeof(tmp));

	if (got < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (got <= 0) {
		close(fd->fd);
		fd->fd = -1;
		return;
	}
	for (ssize_t i = 0; i < got; i++) {
		if (*n == cap - 1) {
			if (!keep_tail)
				return;
			memmove(buf, buf + cap / 2, *n - cap / 2);
			*n -= cap / 2;
		}
		buf[(*n)++] = tmp[i];
	}
}

/* The last non-empty line of what the child wrote to stderr, or "". */
static const char *last_line(char *buf, size_t n)
{
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	char *nl = strrchr(buf, '\n');
	char *line = nl ? nl + 1 : buf;
	if (strlen(line) > 200)
		strcpy(line + 197, "...");
	return line;
}

/*
 * Load path in a forked child, as load_here() would: 0 if it loaded and passed every check,
 * else -errno with the child's refusal (the loader's own text, unchanged) or what became of
 * the child in err. The child is always reaped, and every fd closed, before this returns.
 */
static int load_in_child(const char *path, char *err, size_t err_len)
{
	struct load_report rep;
	char said[4096];
	size_t got = 0, said_n = 0;
	int report[2], talk[2], status = 0;
	bool reaped = false, timed_out = false, lost = false;

	if (pipe2(report, O_CLOEXEC)) {
		int e = errno;
		snprintf(err, err_len, "%s: cannot load it in a child process first: pipe: %s",
			 path, strerror(e));
		return -e;
	}
	if (pipe2(talk, O_CLOEXEC)) {
		int e = errno;
		close(report[0]);
		close(report[1]);
		snprintf(err, err_len, "%s: cannot load it in a child process first: pipe: %s",
			 path, strerror(e));
		return -e;
	}
	fflush(NULL); /* or the child's exit() would write the host's buffered output again */
	pid_t pid = fork();
	if (pid == 0) {
		close(report[0]);
		close(talk[0]);
		child_load(path, report[1], talk[1]);
	}
	int fork_errno = errno;
	close(report[1]);
	close(talk[1]);
	if (pid < 0) {
		close(report[0]);
		close(talk[0]);
		snprintf(err, err_len, "%s: cannot load it in a child process first: fork: %s",
			 path, strerror(fork_errno));
		return -fork_errno;
	}

	/* The child's exit wakes poll() through a pidfd where the kernel has them; without one,
	 * poll() ticks every millisecond to look. */
	struct pollfd fds[3] = { { .fd = report[0], .events = POLLIN },
				 { .fd = talk[0], .events = POLLIN },
				 { .fd = -1, .events = POLLIN } };
#ifdef SYS_pidfd_open
	fds[2].fd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	int64_t deadline = now_ms() + LOAD_TIMEOUT_S * 1000;
	for (int drains = 0; drains < 64;) {
		int64_t left = deadline - now_ms();
		int wait_ms;

		if (reaped)
			wait_ms = 0; /* drain what it left in the pipes, but do not wait for EOF: a
				     process it started may hold them open */
		else if (left <= 0) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			timed_out = true;
			break;
		} else if (fds[2].fd >= 0)
			wait_ms = (int)left;
		else
			wait_ms = 1;
		int ready = poll(fds, 3, wait_ms);
		if (ready < 0 && errno != EINTR && !reaped) {
			deadline = 0; /* cannot watch it: kill it rather than leave it */
			continue;
		}
		if (ready > 0 && fds[0].revents)
			read_some(&fds[0], (char *)&rep, &got, sizeof(rep) + 1, false);
		if (ready > 0 && fds[1].revents)
			read_some(&fds[1], said, &said_n, sizeof(said), true);
		if (reaped) {
			if (ready <= 0 || (fds[0].fd < 0 && fds[1].fd < 0))
				break;
			drains++;
			continue;
		}
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid || (w < 0 && errno == ECHILD)) {
			reaped = true;
			lost = w < 0; /* someone else reaped it: only the report tells */
			if (fds[2].fd >= 0) {
				close(fds[2].fd);
				fds[2].fd = -1;
			}
		}
	}
	for (int i = 0; i < 3; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);

	bool answered = got >= offsetof(struct load_report, err);
	bool clean = lost || (WIFEXITED(status) && WEXITSTATUS(status) == 0);
	const char *tail = last_line(said, said_n);
	const char *open_paren = tail[0] ? " (it said: " : "", *close_paren = tail[0] ? ")" : "";

	if (timed_out) {
		snprintf(err, err_len,
			 "%s: did not finish loading in %d s (a constructor or its entry function "
			 "hangs)%s%s%s",
			 path, LOAD_TIMEOUT_S, open_paren, tail, close_paren);
		return -ETIMEDOUT;
	}
	if (answered && clean) {
		if (!rep.rc)
			return 0;
		size_t len = got - offsetof(struct load_report, err);
		if (len >= err_len)
			len = err_len - 1;
		memcpy(err, rep.err, len);
		err[len] = '\0';
		return rep.rc < 0 ? rep.rc : -EINVAL;
	}
	if (WIFSIGNALED(status)) {
		const char *name = util_signal_name(WTERMSIG(status));
		if (name)
			snprintf(err, err_len, "%s: crashed while loading (%s)%s%s%s", path, name,
				 open_paren, tail, close_paren);
		else
			snprintf(err, err_len, "%s: crashed while loading (signal %d)%s%s%s", path,
				 WTERMSIG(status), open_paren, tail, close_paren);
	} else if (WIFEXITED(status))
		snprintf(err, err_len, "%s: ended the process while loading (exit status %d)%s%s%s",
			 path, WEXITSTATUS(status), open_paren, tail, close_paren);
	else
		snprintf(err, err_len, "%s: its loading process ended without an answer%s%s%s",
			 path, open_paren, tail, close_paren);
	return -ENOEXEC;
}

int plugin_load(const char *path, struct loaded_plugin *out, char *err, size_t err_len)
{
	int rc = load_in_child(path, err, err_len);

	if (rc) {
		memset(out, 0, sizeof(*out));
		return rc;
	}
	return load_here(path, out, err, err_len);
}

void plugin_unload(struct loaded_plugin *p)
{
	if (!p)
		return;
	if (p->handle)
		dlclose(p->handle);
	free(p->path);
	free(p->duplicate_of);
	memset(p, 0, sizeof(*p));
}

static struct loaded_plugin *find_entry(const struct plugin_registry *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].desc->name, name))
			return &r->v[i];
	return NULL;
}

/*
 * The file's earlier outcome, when the registry tried it before (the same directory reached
 * twice, or a file named and found in a directory): its refusal was reported then, and a file
 * that hangs while loading costs its timeout once. NULL, and *st filled, when it is new.
 */
static const struct tried_file *find_tried(const struct plugin_registry *r, const char *path,
					   struct stat *st, bool *have_st)
{
	*have_st = !stat(path, st);
	for (size_t i = 0; *have_st && i < r->n_tried; i++)
		if (r->tried[i].dev == (unsigned long long)st->st_dev &&
		    r->tried[i].ino == (unsigned long long)st->st_ino)
			return &r->tried[i];
	return NULL;
}

static int remember_tried(struct plugin_registry *r, const struct stat *st, int rc)
{
	struct tried_file *v = array_grow(r->tried, &r->cap_tried, r->n_tried + 1, sizeof(*v));

	if (v) {
		r->tried = v;
		r->tried[r->n_tried++] = (struct tried_file){ (unsigned long long)st->st_dev,
							      (unsigned long long)st->st_ino, rc };
	}
	return rc;
}

/* A file not tried before: load it, and keep it unless its name is taken. */
static int add_new_file(struct plugin_registry *r, const char *path, struct diag_list *diags)
{
	struct loaded_plugin p;
	char err[1024];
	int rc = plugin_load(path, &p, err, sizeof(err));

	if (rc) {
		diag_add(diags, "%s", err);
		return rc;
	}
	struct loaded_plugin *prev = find_entry(r, p.desc->name);
	if (prev) {
		/* Another file (the same one reached twice was found by find_tried). */
		diag_add(diags,
			 "%s: plugin name '%s' is also used by %s: remove one of them or "
			 "narrow the plugin search path",
			 p.path, p.desc->name, prev->path);
		if (!prev->duplicate_of)
			prev->duplicate_of = strdup(p.path);
		plugin_unload(&p);
		return -EEXIST;
	}
	struct loaded_plugin *v = array_grow(r->v, &r->cap, r->n + 1, sizeof(*v));
	if (!v) {
		plugin_unload(&p);
		return -ENOMEM;
	}
	r->v = v;
	r->v[r->n++] = p;
	return 0;
}

int registry_add_file(struct plugin_registry *r, const char *path, struct diag_list *diags)
{
	struct stat st;
	bool have_st;
	const struct tried_file *t = find_tried(r, path, &st, &have_st);

	if (t)
		return t->rc;
	int rc = add_new_file(r, path, diags);
	return have_st ? remember_tried(r, &st, rc) : rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int registry_add_dir(struct plugin_registry *r, const char *dir, bool quiet,
		     struct diag_list *diags)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		rc = -errno;
		if (!quiet)
			diag_add(diags, "%s: cannot open plugin directory: %s", dir, strerror(-rc));
		return rc;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 3, ".so"))
			continue;
		if (ends_with(e->d_name, SIM_SUFFIX))
			continue; /* a plugin's sim build: plugin_build_for() opens it beside its
				     .so */
		char **v = array_grow(names, &cap, n + 1, sizeof(*v));
		if (!v)
			break;
		names = v;
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		registry_add_file(r, path, diags);
		free(names[i]);
	}
	free(names);
	return 0;
}

const struct loaded_plugin *registry_find(const struct plugin_registry *r, const char *name,
					  const char **why)
{
	const struct loaded_plugin *p = find_entry(r, name);

	if (why)
		*why = NULL;
	if (p && p->duplicate_of) {
		if (why)
			*why = "two plugin files declare this name";
		return NULL;
	}
	return p;
}

void registry_free(struct plugin_registry *r)
{
	for (size_t i = 0; i < r->n; i++)
		plugin_unload(&r->v[i]);
	free(r->v);
	free(r->tried);
	memset(r, 0, sizeof(*r));
}

const char *loader_builtin_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;

	if (len > 0) {
		exe[len] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(dir, sizeof(dir), "%s/plugins", exe);
			if (!stat(dir, &st) && S_ISDIR(st.st_mode))
				return dir;
		}
	}
	snprintf(dir, sizeof(dir), "%s", LAB_PLUGIN_INSTALL_DIR);
	return dir;
}

/* ---- a plugin's other builds ------------------------------------------------------------- */

#define BUILDS_MAX 64

struct build {
	const struct lab_plugin *native;
	struct loaded_plugin sim;
};

/* Opened once and kept: descriptors must outlive every trial that uses them. */
static struct build builds[BUILDS_MAX];
static size_t n_builds;

/* Does the sim build promise what the native one does (the host sizes everything by it)? */
static bool builds_agree(const struct lab_plugin *a, const struct lab_plugin *b)
{
	return a->abi_major == b->abi_major && a->kind == b->kind && !strcmp(a->name, b->name) &&
	       a->config_size == b->config_size && a->n_counters == b->n_counters &&
	       a->n_phases == b->n_phases && a->n_params == b->n_params;
}

const struct lab_plugin *plugin_sim_build(const struct lab_plugin *native, char *err,
					  size_t err_len)
{
	char path[PATH_MAX], why[1024];
	Dl_info info;
	size_t len;

	for (size_t i = 0; i < n_builds; i++)
		if (builds[i].native == native)
			return builds[i].sim.desc;
	if (!dladdr(native, &info) || !info.dli_fname) {
		snprintf(err, err_len, "%s: cannot find the file it was loaded from", native->name);
		return NULL;
	}
	len = strlen(info.dli_fname);
	if (!ends_with(info.dli_fname, ".so") || len + 5 > sizeof(path)) {
		snprintf(err, err_len, "%s: not a .so file", info.dli_fname);
		return NULL;
	}
	snprintf(path, sizeof(path), "%.*s%s", (int)(len - 3), info.dli_fname, SIM_SUFFIX);
	if (access(path, F_OK)) {
		snprintf(err, err_len,
			 "%s has no sim build: %s: %s (build it with -DLAB_ENGINE_SIM, "
			 "see lab.h)",
			 info.dli_fname, path, strerror(errno));
		return NULL;
	}
	if (n_builds == BUILDS_MAX) {
		snprintf(err, err_len, "more than %d plugins under the sim", BUILDS_MAX);
		return NULL;
	}
	struct build *b = &builds[n_builds];
	if (plugin_load(path, &b->sim, why, sizeof(why))) {
		snprintf(err, err_len, "%s has no usable sim build: %s", info.dli_fname, why);
		return NULL;
	}
	if (!builds_agree(native, b->sim.desc)) {
		snprintf(err, err_len,
			 "%s does not match %s (name, kind, ABI, config, counters, "
			 "phases or parameters)",
			 path, info.dli_fname);
		plugin_unload(&b->sim);
		return NULL;
	}
	b->native = native;
	n_builds++;
	return b->sim.desc;
}
