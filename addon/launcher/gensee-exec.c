// SPDX-License-Identifier: Apache-2.0
// gensee-exec: places CMD in the operation's boundary before its first instruction.
int main(void) { return 127; }
