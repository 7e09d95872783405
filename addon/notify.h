/* SPDX-License-Identifier: Apache-2.0 */
/* seccomp user-notification loop logic (plain C). Owned by the pause-mode work. */
#ifndef GS_NOTIFY_H
#define GS_NOTIFY_H
#include "dataplane.h"
#endif
