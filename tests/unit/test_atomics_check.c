/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of framework/verify/atomics_check (verify's lab_h_only): its reading of objdump's
 * text on canned x86-64 and aarch64 disassembly (taken from gcc and clang output of raw
 * __atomic builtins, and from the shipped plugins' sim builds), then the real thing on every
 * sim build this tree makes: the shipped plugins, the skeletons and the test fixtures pass,
 * the lab_h_only mutants and the native builds (where lab.h is atomics) do not.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verify/atomics_check.h"

static int scan_text(const char *text, struct atomics_report *r)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	cr_assert_not_null(f);
	rc = atomics_scan(f, r);
	fclose(f);
	return rc;
}

static void expect_hit(const struct atomics_report *r, size_t i, const char *func,
		       unsigned long long addr, unsigned long long offset, const char *insn,
		       const char *what)
{
	cr_assert_lt(i, r->n_hits);
	cr_expect_str_eq(r->hits[i].func, func, "hit %zu", i);
	cr_expect_eq(r->hits[i].addr, addr, "hit %zu at 0x%llx", i,
		     (unsigned long long)r->hits[i].addr);
	cr_expect_eq(r->hits[i].offset, offset, "hit %zu", i);
	cr_expect_str_eq(r->hits[i].insn, insn, "hit %zu", i);
	cr_expect(strstr(r->hits[i].what, what), "hit %zu: '%s', not '%s'", i, r->hits[i].what,
		  what);
}

/* gcc -O2 -shared of raw builtins (f, g, h, k), with a sim build's PLT and start files. */
static const char x86_text[] =
	"\n"
	"a.so:     file format elf64-x86-64\n"
	"\n"
	"\n"
	"Disassembly of section .init:\n"
	"\n"
	"0000000000001000 <_init>:\n"
	"    1000:\tsub    $0x8,%rsp\n"
	"    1004:\tmov    0x2fc5(%rip),%rax        # 3fd0 <__gmon_start__@Base>\n"
	"    100b:\ttest   %rax,%rax\n"
	"    1016:\tret\n"
	"\n"
	"Disassembly of section .plt:\n"
	"\n"
	"0000000000001020 <__atomic_compare_exchange_16@plt-0x10>:\n"
	"    1020:\tpush   0x2fe2(%rip)        # 4008 <_GLOBAL_OFFSET_TABLE_+0x8>\n"
	"    1026:\tjmp    *0x2fe4(%rip)        # 4010 <_GLOBAL_OFFSET_TABLE_+0x10>\n"
	"    102c:\tnopl   0x0(%rax)\n"
	"\n"
	"0000000000001030 <__atomic_compare_exchange_16@plt>:\n"
	"    1030:\tjmp    *0x2fca(%rip)        # 4000 "
	"<__atomic_compare_exchange_16@LIBATOMIC_1.0>\n"
	"    1036:\tpush   $0x0\n"
	"    103b:\tjmp    1020 <_init+0x20>\n"
	"\n"
	"0000000000001090 <lab_sim_fence@plt>:\n"
	"    1090:\tjmp    *0x3f9a(%rip)        # 5030 <lab_sim_fence@Base>\n"
	"\n"
	"Disassembly of section .text:\n"
	"\n"
	"00000000000010f0 <deregister_tm_clones>:\n"
	"    10f0:\tlea    0x2f39(%rip),%rdi        # 4030 <__TMC_END__>\n"
	"    1118:\tjmp    *%rax\n"
	"    111a:\tnopw   0x0(%rax,%rax,1)\n"
	"    1120:\tret\n"
	"\n"
	"0000000000001110 <f>:\n"
	"    1110:\tmov    0x2ea9(%rip),%rdx        # 3fc0 <w@@Base-0x70>\n"
	"    1117:\txor    %eax,%eax\n"
	"    1119:\tlock cmpxchg %edi,(%rdx)\n"
	"    111d:\tlock xadd %edi,(%rdx)\n"
	"    1121:\tmov    (%rdx),%eax\n"
	"    1125:\tret\n"
	"    1126:\tcs nopw 0x0(%rax,%rax,1)\n"
	"\n"
	"0000000000001130 <g>:\n"
	"    1130:\tmov    0x2e89(%rip),%rdx        # 3fc0 <w@@Base-0x70>\n"
	"    1137:\tmovl   $0x1,(%rdx)\n"
	"    113d:\tlock orq $0x0,(%rsp)\n"
	"    1143:\tjmp    114a <g+0x1a>\n"
	"    1145:\tnopl   (%rax)\n"
	"    1148:\tpause\n"
	"    114a:\tmov    (%rdx),%eax\n"
	"    114e:\tjne    1148 <g+0x18>\n"
	"    1150:\tret\n"
	"    1151:\tdata16 cs nopw 0x0(%rax,%rax,1)\n"
	"\n"
	"0000000000001160 <h>:\n"
	"    1160:\tsub    $0x18,%rsp\n"
	"    1188:\tcall   1030 <__atomic_compare_exchange_16@plt>\n"
	"    118d:\tcall   1090 <lab_sim_fence@plt>\n"
	"    1194:\tret\n"
	"    1196:\txchg   %ax,%ax\n"
	"\n"
	"00000000000011a0 <k>:\n"
	"    11a0:\tmov    0x2e19(%rip),%rdx        # 3fc0 <w@@Base-0x70>\n"
	"    11ac:\txchg   %eax,(%rdx)\n"
	"    11ae:\tmfence\n"
	"    11b1:\tjmp    1030 <__sync_fetch_and_add_16@plt>\n"
	"\n"
	"Disassembly of section .fini:\n"
	"\n"
	"00000000000011b8 <_fini>:\n"
	"    11b8:\tsub    $0x8,%rsp\n"
	"    11c0:\tret\n";

Test(atomics_scan, x86_64_every_kind_found_where_it_is, .timeout = 10)
{
	struct atomics_report r;

	cr_assert_eq(scan_text(x86_text, &r), 0, "%s", r.unchecked);
	cr_expect_eq(r.arch, ATOMICS_ARCH_X86_64);
	/* _init, deregister_tm_clones, f, g, h, k, _fini: the PLT stubs are not judged. */
	cr_expect_eq(r.n_funcs, 7);
	cr_expect_eq(r.n_hits, 8);
	cr_expect_eq(r.n_hit_funcs, 4);
	expect_hit(&r, 0, "f", 0x1119, 0x9, "lock cmpxchg %edi,(%rdx)", "lock-prefixed");
	expect_hit(&r, 1, "f", 0x111d, 0xd, "lock xadd %edi,(%rdx)", "lock-prefixed");
	/* gcc's seq_cst fence. */
	expect_hit(&r, 2, "g", 0x113d, 0xd, "lock orq $0x0,(%rsp)", "full memory fence");
	expect_hit(&r, 3, "g", 0x1148, 0x18, "pause", "spin-wait hint");
	expect_hit(&r, 4, "h", 0x1188, 0x28, "call   1030 <__atomic_compare_exchange_16@plt>",
		   "atomic function");
	/* xchg with memory is locked without the prefix; xchg %ax,%ax is a nop. */
	expect_hit(&r, 5, "k", 0x11ac, 0xc, "xchg   %eax,(%rdx)", "exchange with memory");
	expect_hit(&r, 6, "k", 0x11ae, 0xe, "mfence", "memory fence");
	expect_hit(&r, 7, "k", 0x11b1, 0x11, "jmp    1030 <__sync_fetch_and_add_16@plt>",
		   "atomic function");
}

/* A shipped plugin's sim build, as it looks: lab.h's calls, no atomic, a pass. */
static const char x86_sim_build[] =
	"cmdq-spinlock.sim.so:     file format elf64-x86-64\n"
	"Disassembly of section .plt:\n"
	"0000000000001080 <lab_sim_fence@plt>:\n"
	"    1080:\tjmp    *0x2fa2(%rip)        # 4028 <lab_sim_fence@Base>\n"
	"    1086:\tpush   $0x5\n"
	"Disassembly of section .plt.got:\n"
	"00000000000010e0 <__cxa_finalize@plt>:\n"
	"    10e0:\tjmp    *0x2ef2(%rip)        # 3fd8 <__cxa_finalize@Base>\n"
	"    10e6:\txchg   %ax,%ax\n"
	"Disassembly of section .text:\n"
	"00000000000013a0 <sl_write_one>:\n"
	"    13a0:\tpush   %rbx\n"
	"    13c1:\tmov    %eax,0x40(%rbx)\n"
	"    13d0:\tcall   1080 <lab_sim_fence@plt>\n"
	"    13d5:\tlea    0x0(,%rax,8),%rdx\n"
	"    13de:\tjmp    *%rax\n"
	"    13e0:\tcs nopw 0x0(%rax,%rax,1)\n"
	"    13ea:\trep stos %rax,%es:(%rdi)\n"
	"\t...\n"
	"    144e:\txchg   %ax,%ax\n"
	"0000000000001450 <iommulab_plugin_entry>:\n"
	"    1450:\tlea    0x2be9(%rip),%rax        # 4040 <sl_plugin>\n"
	"    1457:\tret\n";

Test(atomics_scan, x86_64_sim_build_of_a_shipped_plugin_passes, .timeout = 10)
{
	struct atomics_report r;

	cr_assert_eq(scan_text(x86_sim_build, &r), 0, "%s", r.unchecked);
	cr_expect_eq(r.n_funcs, 2);
	cr_expect_eq(r.n_hits, 0, "found %s", r.n_hits ? r.hits[0].insn : "");
}

/* Older binutils print a lock prefix they cannot attach on its own line. */
Test(atomics_scan, x86_64_lone_lock_prefix, .timeout = 10)
{
	struct atomics_report r;

	cr_assert_eq(scan_text("x.so:     file format elf64-x86-64\n"
			       "Disassembly of section .text:\n"
			       "0000000000001000 <bar>:\n"
			       "    1000:\tlock\n"
			       "    1001:\taddl   $0x1,(%rax)\n",
			       &r),
		     0);
	cr_expect_eq(r.n_hits, 1);
	expect_hit(&r, 0, "bar", 0x1000, 0, "lock", "lock-prefixed");
}

/*
 * clang --target=aarch64-linux-gnu of the same builtins: LSE (-march=armv8.1-a), LL/SC
 * (armv8-a) and gcc's outline atomics (-moutline-atomics, the helpers' bodies included).
 */
static const char a64_text[] = "b.o:     file format elf64-littleaarch64\n"
			       "\n"
			       "Disassembly of section .text:\n"
			       "\n"
			       "0000000000000000 <lse>:\n"
			       "   0:\tadrp\tx9, 0 <lse>\n"
			       "   4:\tmov\tw8, wzr\n"
			       "   c:\tcasal\tw8, w0, [x9]\n"
			       "  10:\tldadd\tw0, w8, [x9]\n"
			       "  14:\tldar\tw9, [x9]\n"
			       "  1c:\tret\n"
			       "\n"
			       "0000000000000020 <llsc>:\n"
			       "  20:\tldaxr\tw9, [x8]\n"
			       "  24:\tcbnz\tw9, 34 <llsc+0x14>\n"
			       "  28:\tstlxr\tw9, w0, [x8]\n"
			       "  2c:\tldxr\tw9, [x8]\n"
			       "  30:\tstxr\tw11, w10, [x8]\n"
			       "  34:\tclrex\n"
			       "\n"
			       "0000000000000040 <order>:\n"
			       "  40:\tmov\tw8, #0x1                   \t// #1\n"
			       "  44:\tstlr\tw8, [x9]\n"
			       "  48:\tdmb\tish\n"
			       "  4c:\tldr\tw8, [x9]\n"
			       "  50:\tyield\n"
			       "  54:\tstr\tw8, [x9, #8]\n"
			       "  58:\tret\n"
			       "\n"
			       "0000000000000680 <outline>:\n"
			       " 680:\tstp\tx29, x30, [sp, #-32]!\n"
			       " 6a4:\tbl\t700 <__aarch64_cas4_acq_rel>\n"
			       " 6b0:\tbl\t740 <__aarch64_ldadd4_relax>\n"
			       " 6b4:\tbl\t7a0 <lab_sim_rmw32@plt>\n"
			       " 6b8:\tb\t7b0 <__atomic_fetch_add_8@plt>\n"
			       " 6c4:\tret\n"
			       "\n"
			       "0000000000000700 <__aarch64_cas4_acq_rel>:\n"
			       " 700:\tadrp\tx16, 11000 <__aarch64_have_lse_atomics>\n"
			       " 704:\tldrb\tw16, [x16, #16]\n"
			       " 708:\tcbz\tw16, 714 <__aarch64_cas4_acq_rel+0x14>\n"
			       " 70c:\tcasal\tw0, w1, [x2]\n"
			       " 710:\tret\n";

Test(atomics_scan, aarch64_every_kind_found_where_it_is, .timeout = 10)
{
	struct atomics_report r;

	cr_assert_eq(scan_text(a64_text, &r), 0, "%s", r.unchecked);
	cr_expect_eq(r.arch, ATOMICS_ARCH_AARCH64);
	cr_expect_eq(r.n_funcs, 5);
	cr_expect_eq(r.n_hits, 14);
	cr_expect_eq(r.n_hit_funcs, 5);
	expect_hit(&r, 0, "lse", 0xc, 0xc, "casal\tw8, w0, [x9]", "LSE");
	expect_hit(&r, 1, "lse", 0x10, 0x10, "ldadd\tw0, w8, [x9]", "LSE");
	/* Unlike x86-64's mov, a raw acquire load is an instruction of its own here. */
	expect_hit(&r, 2, "lse", 0x14, 0x14, "ldar\tw9, [x9]", "load-acquire");
	expect_hit(&r, 3, "llsc", 0x20, 0, "ldaxr\tw9, [x8]", "load-exclusive");
	expect_hit(&r, 4, "llsc", 0x28, 0x8, "stlxr\tw9, w0, [x8]", "store-exclusive");
	expect_hit(&r, 5, "llsc", 0x2c, 0xc, "ldxr\tw9, [x8]", "load-exclusive");
	expect_hit(&r, 6, "llsc", 0x30, 0x10, "stxr\tw11, w10, [x8]", "store-exclusive");
	/* "#1" is an operand here, "//" the comment. */
	expect_hit(&r, 7, "order", 0x44, 0x4, "stlr\tw8, [x9]", "store-release");
	expect_hit(&r, 8, "order", 0x48, 0x8, "dmb\tish", "memory barrier");
	expect_hit(&r, 9, "order", 0x50, 0x10, "yield", "spin-wait hint");
	expect_hit(&r, 10, "outline", 0x6a4, 0x24, "bl\t700 <__aarch64_cas4_acq_rel>",
		   "atomic function");
	expect_hit(&r, 11, "outline", 0x6b0, 0x30, "bl\t740 <__aarch64_ldadd4_relax>",
		   "atomic function");
	expect_hit(&r, 12, "outline", 0x6b8, 0x38, "b\t7b0 <__atomic_fetch_add_8@plt>",
		   "atomic function");
	expect_hit(&r, 13, "__aarch64_cas4_acq_rel", 0x70c, 0xc, "casal\tw0, w1, [x2]", "LSE");
}

Test(atomics_scan, a_machine_without_a_table_is_unchecked, .timeout = 10)
{
	struct atomics_report r;

	cr_expect_eq(scan_text("x.so:     file format elf32-i386\n"
			       "Disassembly of section .text:\n"
			       "00001000 <bar>:\n"
			       "    1000:\tlock cmpxchg %ecx,(%edx)\n",
			       &r),
		     -EINVAL);
	cr_expect(strstr(r.unchecked, "elf32-i386"), "%s", r.unchecked);
	cr_expect_eq(scan_text("    1000:\tlock cmpxchg %ecx,(%edx)\n", &r), -EINVAL);
	cr_expect(strstr(r.unchecked, "no file format"), "%s", r.unchecked);
	cr_expect_eq(scan_text("", &r), -EINVAL);
}

Test(atomics_scan, a_hit_formats_with_its_function_and_offset, .timeout = 10)
{
	struct atomics_report r;
	char buf[512];

	cr_assert_eq(scan_text(x86_text, &r), 0);
	atomics_hit_format(&r.hits[0], buf, sizeof(buf));
	cr_expect_str_eq(buf, "function f: lock cmpxchg %edi,(%rdx) at 0x1119 (f+0x9): a "
			      "lock-prefixed read-modify-write");
}

/* ---- the real files -------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Every DIR/<name>.sim.so: lab_h_only's verdict, and how many there were. */
static size_t check_dir(const char *dir, bool want_pass)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		char path[4096];
		struct atomics_report r;
		bool raw = !strncmp(e->d_name, "cmdq-mut_raw_", strlen("cmdq-mut_raw_"));

		if (!ends_with(e->d_name, ".sim.so") || raw == want_pass)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		cr_expect_eq(atomics_check_file(path, &r), 0, "%s: %s", path, r.unchecked);
		cr_expect_gt(r.n_funcs, 0, "%s", path);
		if (want_pass) {
			char hit[512] = "";

			if (r.n_hits)
				atomics_hit_format(&r.hits[0], hit, sizeof(hit));
			cr_expect_eq(r.n_hits, 0, "%s: %s", path, hit);
		} else {
			cr_expect_gt(r.n_hits, 0, "%s: no atomic found", path);
		}
		n++;
	}
	closedir(d);
	return n;
}

/* The shipped plugins, the skeletons and every fixture's sim build pass. */
Test(atomics_check_file, every_sim_build_of_this_tree_passes, .timeout = 60)
{
	static const char *const dirs[] = {
		"plugins",
		"tests/integration",
		"tests/fixtures/faulty",
		"tests/fixtures/handoff",
		"tests/fixtures/weak_memory",
		"tests/fixtures/verify_mutants",
	};
	char dir[4096];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/%s", TEST_BUILD_ROOT, dirs[i]);
		n += check_dir(dir, true);
	}
	/* 11 cmdq and 4 iova plugins, 2 skeletons, a handful of fixtures. */
	cr_expect_geq(n, 20, "only %zu sim builds found", n);
}

/* tests/fixtures/verify_mutants' mut_raw_*: raw __atomic builtins, each found. */
Test(atomics_check_file, the_raw_atomic_mutants_fail, .timeout = 60)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/tests/fixtures/verify_mutants", TEST_BUILD_ROOT);
	cr_expect_geq(check_dir(dir, false), 3);
}

/* Natively lab.h is these very instructions: why only the sim build can be judged. */
Test(atomics_check_file, a_native_build_is_full_of_them, .timeout = 30)
{
	struct atomics_report r;

	cr_assert_eq(atomics_check_file(TEST_BUILD_ROOT "/plugins/cmdq-fetchadd.so", &r), 0, "%s",
		     r.unchecked);
	cr_expect_gt(r.n_hits, 0);
}

Test(atomics_check_file, no_verdict_without_objdump_or_an_elf_file, .timeout = 30)
{
	struct atomics_report r;

	cr_expect_eq(atomics_check_file(TEST_SOURCE_ROOT "/README.md", &r), -ENOEXEC);
	cr_expect(strstr(r.unchecked, "not an ELF file"), "%s", r.unchecked);
	cr_expect_eq(atomics_check_file("/nonexistent/cmdq-x.sim.so", &r), -ENOENT);
	/* Unchecked, never a pass, when no objdump can be found. */
	cr_assert_eq(setenv("PATH", "/nonexistent", 1), 0);
	cr_expect_eq(atomics_check_file(TEST_BUILD_ROOT "/plugins/cmdq-fetchadd.sim.so", &r),
		     -ENOENT);
	cr_expect(strstr(r.unchecked, "no objdump on PATH"), "%s", r.unchecked);
}

/*
 * The aarch64 table on real aarch64 objects, where the cross compiler is installed: the sim
 * build of every shipped plugin and skeleton passes (the C runtime's start files included), a
 * raw builtin fails.
 */
Test(atomics_check_file, aarch64_sim_builds, .timeout = 300)
{
	static const char *const dirs[] = { "plugins/cmdq", "plugins/iova", "plugins/skeleton/cmdq",
					    "plugins/skeleton/iova" };
	char cmd[8192], dir[] = "/tmp/iommulab-atomics-XXXXXX", so[4200], src[4096];
	struct atomics_report r;
	size_t n = 0;

	if (system("command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 && "
		   "command -v aarch64-linux-gnu-objdump >/dev/null 2>&1"))
		cr_skip_test("no aarch64-linux-gnu-gcc and -objdump");
	cr_assert_not_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		DIR *d;
		struct dirent *e;

		snprintf(src, sizeof(src), "%s/%s", TEST_SOURCE_ROOT, dirs[i]);
		d = opendir(src);
		cr_assert_not_null(d, "%s", src);
		while ((e = readdir(d))) {
			if (!ends_with(e->d_name, ".c"))
				continue;
			snprintf(so, sizeof(so), "%s/%.*s.sim.so", dir,
				 (int)(strlen(e->d_name) - 2), e->d_name);
			snprintf(cmd, sizeof(cmd),
				 "aarch64-linux-gnu-gcc -O2 -shared -fPIC -fvisibility=hidden "
				 "-DLAB_ENGINE_SIM -I%s/framework/include -I%s -o %s %s/%s",
				 TEST_SOURCE_ROOT, src, so, src, e->d_name);
			cr_assert_eq(system(cmd), 0, "%s", cmd);
			cr_expect_eq(atomics_check_file(so, &r), 0, "%s: %s", so, r.unchecked);
			cr_expect_eq(r.arch, ATOMICS_ARCH_AARCH64);
			cr_expect_gt(r.n_funcs, 0);
			cr_expect_eq(r.n_hits, 0, "%s: %s in %s", e->d_name,
				     r.n_hits ? r.hits[0].insn : "",
				     r.n_hits ? r.hits[0].func : "");
			remove(so);
			n++;
		}
		closedir(d);
	}
	cr_expect_geq(n, 17, "only %zu plugins built", n);
	snprintf(so, sizeof(so), "%s/raw.so", dir);
	snprintf(cmd, sizeof(cmd),
		 "printf 'unsigned w; unsigned f(unsigned v) { return __atomic_fetch_add(&w, v, "
		 "__ATOMIC_RELAXED); }\\n' | aarch64-linux-gnu-gcc -O2 -shared -fPIC -x c -o %s -",
		 so);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cr_expect_eq(atomics_check_file(so, &r), 0, "%s", r.unchecked);
	cr_expect_gt(r.n_hits, 0);
	remove(so);
	rmdir(dir);
}
