// SPDX-License-Identifier: Apache-2.0
// nan glue for the seccomp notify loop (pause mode).
#include <nan.h>
#include "notify.h"

void InitNotify(v8::Local<v8::Object> target) {
  (void)target;
}
