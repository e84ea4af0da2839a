// SPDX-License-Identifier: MIT
/*
 * A stand-in for the driver's libascend_hal.so, for the chip detection
 * tests: halGetDeviceInfo(0, MODULE_TYPE_SYSTEM, INFO_TYPE_VERSION) gives
 * a version whose bits 8..15 are chip 5 (CHIP_V4_1_0), other bits set so a
 * wrong mask shows; any other question fails.
 */
#include <stdint.h>

__attribute__((visibility("default"))) int halGetDeviceInfo(uint32_t dev, int32_t module,
							    int32_t info, int64_t *value)
{
	if (dev != 0 || module != 0 || info != 1)
		return 1;
	*value = (int64_t)0x7a0005a3;
	return 0;
}
