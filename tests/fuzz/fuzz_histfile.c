/* SPDX-License-Identifier: MIT */
/* fuzz_histfile -- libFuzzer harness: fuzz_histfile_one() of fuzz_targets.h on every input. */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	return fuzz_histfile_one(data, len);
}
