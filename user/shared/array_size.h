/* SPDX-License-Identifier: MIT */
/* The number of elements of an array (not of a pointer: gcc warns, -Wsizeof-pointer-div). */
#ifndef DYNPROF_ARRAY_SIZE_H
#define DYNPROF_ARRAY_SIZE_H

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* DYNPROF_ARRAY_SIZE_H */
