// SPDX-License-Identifier: Apache-2.0
// seccomp user-notification loop logic (plain C); see notify.h.
#include "notify.h"
