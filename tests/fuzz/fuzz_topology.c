/* SPDX-License-Identifier: MIT */
/* fuzz_topology -- libFuzzer harness: fuzz_topology_one() of fuzz_targets.h on every input. */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	return fuzz_topology_one(data, len);
}
