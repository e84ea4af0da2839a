/* SPDX-License-Identifier: MIT */
/*
 * Compiler attributes shared by the tool and the agent library.
 *
 * DP_MUST_CHECK marks a function whose result says whether it worked (see
 * docs/ERRORS.md): ignoring it is a warning, so an error cannot vanish by
 * accident under -Werror. A cast to (void) does not silence it in GCC: a
 * deliberate ignore is written as a test of the result whose empty body is
 * a comment saying why the failure does not matter there.
 */
#ifndef DYNPROF_COMPILER_H
#define DYNPROF_COMPILER_H

#define DP_MUST_CHECK __attribute__((warn_unused_result))

#endif /* DYNPROF_COMPILER_H */
