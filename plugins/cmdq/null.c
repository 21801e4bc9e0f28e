/* SPDX-License-Identifier: MIT */
/*
 * null -- the harness baseline: issue() returns at once without touching the queue.
 *
 * Whatever latency a run reports for this plugin is the harness's own cost per op (two
 * timestamps, one histogram record, the loop), so every other plugin's numbers can be read
 * against it. Not a correct strategy (it never consumes anything): conformance skips it.
 */
#include <iommulab/cmdq.h>

static int null_init(const struct lab_cmdq_setup *s, void **state)
{
	*state = s->smmu; /* no state of its own */
	return 0;
}

static int null_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		      bool sync)
{
	(void)c;
	(void)state;
	(void)cmds;
	(void)n;
	(void)sync;
	return 0;
}

static const struct lab_cmdq_ops null_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = null_init,
	.issue = null_issue,
};

static const struct lab_plugin null_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = "null",
	.summary = "baseline: returns at once; its latency is the harness's own cost per op",
	.version = "1.0",
	.ops = &null_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &null_plugin;
}
