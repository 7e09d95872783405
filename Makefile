# gensee — build, test, demo, bench. Quiet by default; `make V=1` for detail.
ifeq ($(V),1)
Q :=
else
Q := @
MAKEFLAGS += --no-print-directory
endif

CLANG    ?= clang
BPFTOOL  ?= bpftool
CC       ?= gcc
ARCH_INC := /usr/include/$(shell $(CC) -print-multiarch 2>/dev/null)
CWARN    := -Wall -Wextra -Werror
NODE_GYP := node_modules/.bin/node-gyp
# Build against the installed Node's own headers (npm's nodedir, or the
# system's /usr/include/node): node-gyp must never try to download them.
NODEDIR  ?= $(shell d=$$(npm config get nodedir 2>/dev/null); \
	if [ -n "$$d" ] && [ "$$d" != undefined ] && [ "$$d" != null ]; then echo "$$d"; \
	elif [ -f "$$(dirname $$(dirname $$(command -v node)))/include/node/node.h" ]; then dirname $$(dirname $$(command -v node)); fi)
GYP_FLAGS := $(if $(NODEDIR),--nodedir=$(NODEDIR))
TSC      := node_modules/.bin/tsc
TAP      := node_modules/.bin/tap

BPF_SRC  := bpf/gensee.bpf.c
BPF_HDR  := bpf/gensee_abi.h
ADDON_SRC := $(wildcard addon/*.c addon/*.cc addon/*.h addon/gen/*.c addon/gen/*.h)
TS_SRC   := $(shell find src test bench -name '*.ts' 2>/dev/null) $(wildcard src/gen/*.js src/gen/*.d.ts)
PROBE_SRC := $(wildcard test/probe/*.c)

ADDON    := build/Release/gensee.node
PROBE    := obj/gs-probe
TSC_STAMP := obj/tsc.stamp
SETUP_STAMP := obj/setup.stamp

.PHONY: all setup build test demo bench soak-bench soak fuzz clean typecheck check-gen gen lint
# a recipe that fails must not leave a half-written target that looks up to date
.DELETE_ON_ERROR:

all: build

$(SETUP_STAMP): $(wildcard scripts/setup.sh) package.json
	@mkdir -p obj
	$(Q)scripts/setup.sh
	@touch $@

setup: $(SETUP_STAMP)

# the kernel's own types, for the LSM hooks (CO-RE relocates them on load)
obj/vmlinux.h: $(SETUP_STAMP)
	@mkdir -p obj
	@echo "  BTF     $@"
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

obj/gensee.bpf.o: $(BPF_SRC) $(BPF_HDR) obj/vmlinux.h $(SETUP_STAMP)
	@echo "  BPF     $@"
	$(Q)$(CLANG) -O2 -g $(CWARN) -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Iobj -Ibpf -c $(BPF_SRC) -o $@

obj/gensee.skel.h: obj/gensee.bpf.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name gensee_bpf > $@.tmp && mv $@.tmp $@

# the lease top-up program (run by the resolver, never attached)
obj/lease_topup.bpf.o: bpf/lease_topup.bpf.c bpf/lease_topup.h $(BPF_HDR) $(SETUP_STAMP)
	@echo "  BPF     $@"
	$(Q)$(CLANG) -O2 -g $(CWARN) -target bpf -mcpu=v3 -I$(ARCH_INC) -Ibpf -c $< -o $@

obj/lease_topup.skel.h: obj/lease_topup.bpf.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name lease_topup_bpf > $@.tmp && mv $@.tmp $@

# node-gyp's own Makefile is made from binding.gyp: a source added or
# renamed there must reach it
build/Makefile: binding.gyp $(SETUP_STAMP)
	@echo "  GYP     $@"
	$(Q)$(NODE_GYP) configure $(GYP_FLAGS) $(if $(Q),--silent,) >/dev/null

$(ADDON): build/Makefile obj/gensee.skel.h obj/lease_topup.skel.h bpf/lease_topup.h $(ADDON_SRC) $(SETUP_STAMP)
	@echo "  ADDON   $@"
	$(Q)$(NODE_GYP) build $(GYP_FLAGS) $(if $(Q),--silent,) >/dev/null

$(PROBE): $(PROBE_SRC) $(BPF_HDR)
	@mkdir -p obj
	@echo "  CC      $@"
	$(Q)$(CC) -O2 $(CWARN) -o $@ $(PROBE_SRC) -luring -lpthread

# the bench's baseline for the resolver: the socket exchange + fdatasync alone
# (--intent: + the durable lease_intent, the lease put and read-back)
FLOOR := obj/gs-floor
$(FLOOR): bench/floor.c bench/floor_io.h $(BPF_HDR)
	@mkdir -p obj
	@echo "  CC      $@"
	$(Q)$(CC) -O2 $(CWARN) -Ibpf -o $@ $< -lbpf -lpthread

# the pause bench's floor: a minimal C seccomp notify supervisor (fast path;
# --slow adds the resolver's socket exchange, the durable intent, fdatasync, the lease put)
NOTIFY_FLOOR := obj/gs-notify-floor
$(NOTIFY_FLOOR): bench/notify-floor.c bench/floor_io.h $(BPF_HDR)
	@mkdir -p obj
	@echo "  CC      $@"
	$(Q)$(CC) -O2 $(CWARN) -Ibpf -o $@ $< -lbpf -lpthread

LAUNCHER := obj/gensee-exec
LAUNCHER_SRC := launcher/gensee-exec.c $(wildcard launcher/*.h)
$(LAUNCHER): $(LAUNCHER_SRC) $(SETUP_STAMP)
	@mkdir -p obj
	@echo "  CC      $@"
	$(Q)$(CC) -O2 $(CWARN) -o $@ $(filter %.c,$(LAUNCHER_SRC)) -lseccomp -lcap

# the fd holder of the OCI listener: plain C, no libraries (docs/restarts.md)
FDKEEP := obj/gensee-fdkeep
$(FDKEEP): launcher/gensee-fdkeep.c
	@mkdir -p obj
	@echo "  CC      $@"
	$(Q)$(CC) -O2 $(CWARN) -o $@ $<

# test/adversarial/flood.test.ts's workload: an io_uring connect flood; it
# shares gs-probe's header with bench/floor.c
ADV_FLOOD_BIN := obj/adv/flood
ADV_FLOOD_SRC := test/adversarial/flood.c
PROBE_HDR := test/probe/common.h
$(PROBE) $(FLOOR): $(PROBE_HDR)
$(ADV_FLOOD_BIN): $(ADV_FLOOD_SRC) $(PROBE_HDR)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) -O2 $(CWARN) -o $@ $(ADV_FLOOD_SRC) -luring

# test/adversarial/resources.test.ts's workload: a fork bomb and a memory
# bomb, each stopped by its own cap
ADV_BOMB_BIN := obj/adv/bomb
ADV_BOMB_SRC := test/adversarial/bomb.c
$(ADV_BOMB_BIN): $(ADV_BOMB_SRC)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) -O2 $(CWARN) -o $@ $(ADV_BOMB_SRC)

# test/adversarial/race.test.ts's workload: threads racing first connects
# to one destination whose lease rule has max_uses
ADV_RACE_BIN := obj/adv/race
$(ADV_RACE_BIN): test/adversarial/race.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) -O2 $(CWARN) -o $@ $< -lpthread

# the adversarial suite's attack programs (test/adversarial/*.c), run as the
# workload by test/adversarial/*.test.ts; flood.c, bomb.c and race.c are
# built by their own rules
ADV_SRC  := $(filter-out test/adversarial/flood.c test/adversarial/bomb.c test/adversarial/race.c,\
	$(wildcard test/adversarial/*.c))
ADV_BINS := $(patsubst test/adversarial/%.c,obj/adv/%,$(ADV_SRC))
obj/adv/%: test/adversarial/%.c $(BPF_HDR)
	@mkdir -p obj/adv
	@echo "  CC      $@"
	$(Q)$(CC) -O2 $(CWARN) -Ibpf -o $@ $< -luring -lpthread

$(TSC_STAMP): $(TS_SRC) tsconfig.json $(SETUP_STAMP)
	@echo "  TSC     dist/"
	$(Q)$(TSC) -p tsconfig.json
	$(Q)mkdir -p dist/src/gen && cp src/gen/*.js dist/src/gen/
	@touch $@

# the commit this build comes from (src/version.ts; `gensee --version`,
# operation.json): rewritten only when it changed; null outside a git checkout
BUILD_INFO := dist/build-info.json
$(BUILD_INFO): FORCE
	@mkdir -p dist
	$(Q)c=$$(git rev-parse HEAD 2>/dev/null || true); [ -n "$$c" ] && c="\"$$c\"" || c=null; j="{\"commit\": $$c}"; \
	if [ "$$(cat $@ 2>/dev/null)" != "$$j" ]; then echo "$$j" > $@; fi

.PHONY: FORCE
FORCE:

build: $(ADDON) $(PROBE) $(FLOOR) $(NOTIFY_FLOOR) $(LAUNCHER) $(FDKEEP) $(TSC_STAMP) $(BUILD_INFO)

build: $(ADDON) $(PROBE) $(FLOOR) $(NOTIFY_FLOOR) $(LAUNCHER) $(TSC_STAMP) \
	$(ADV_FLOOD_BIN) $(ADV_BOMB_BIN) $(ADV_RACE_BIN) $(ADV_BINS)

typecheck: $(SETUP_STAMP)
	$(Q)$(TSC) --noEmit -p tsconfig.json

gen: $(SETUP_STAMP)
	$(Q)if [ -x scripts/gen.sh ]; then scripts/gen.sh; fi

# generated code is checked in; fail when it no longer matches its source
check-gen: $(SETUP_STAMP)
	$(Q)if [ -x scripts/gen.sh ]; then scripts/gen.sh --check; fi

# the hand-written C and C++ (generated addon/gen/ is not ours to format);
# the glue's C++ style is in its own file: addon/ also holds kernel-style C
ESLINT   := node_modules/.bin/eslint
LINT_C   := $(wildcard addon/*.c addon/*.h bpf/*.c bpf/*.h launcher/*.c launcher/*.h \
	test/probe/*.c test/probe/*.h test/adversarial/*.c test/adversarial/*.h bench/*.c bench/*.h)
LINT_CC  := $(wildcard addon/*.cc)

lint: $(SETUP_STAMP)
	$(Q)$(ESLINT) .
	$(Q)if grep -rnE --include='*.ts' '(//|/\*) *eslint-disable' src test bench | grep -v -e ' -- ' -e '^src/gen/'; then \
	 echo "lint: an eslint-disable above has no reason (add '-- why' on the same line)" >&2; exit 1; fi
	$(Q)clang-format --dry-run --Werror $(LINT_C)
	$(Q)clang-format --dry-run --Werror --style=file:addon/glue.clang-format $(LINT_CC)

KERNEL_TALLY := $(CURDIR)/obj/kernel-tally.txt

test: build check-gen lint typecheck
	@rm -f $(KERNEL_TALLY)
	$(Q)GENSEE_REQUIRE_KERNEL=1 GENSEE_KERNEL_TALLY=$(KERNEL_TALLY) $(TAP) $(TAP_ARGS) 'dist/test/**/*.test.js'
	@ran=$$(grep -c '^ran' $(KERNEL_TALLY) 2>/dev/null || true); skipped=$$(grep -c '^skipped' $(KERNEL_TALLY) 2>/dev/null || true); \
	 echo "kernel tests executed: $${ran:-0}, skipped: $${skipped:-0}"; \
	 test "$${skipped:-0}" = 0 && test "$${ran:-0}" -gt 0

demo: build
	$(Q)scripts/demo.sh

bench: build
	$(Q)node dist/bench/run.js
	$(Q)node dist/bench/events.js
	$(Q)node dist/bench/dns.js

# the fast path against the outside floor (../shared/floors/kbench, or
# KBENCH_DIR) and gensee's own, interleaved (KBENCH_ROUNDS, default 3)
.PHONY: bench-kbench
bench-kbench: build
	$(Q)node dist/bench/kbench.js

# memory and tail under a long run (issue 15): a 10-minute, 8-client soak
# against a short run's p99; GENSEE_SOAK_SECONDS to change its length
soak-bench: build
	$(Q)node dist/bench/soak.js

# Debian 12's own 6.1 kernel under QEMU (issue 26), not part of `make test`:
# VMTEST_FILES (dist/test/...js) on that kernel and on the host's, one table
# of both; docs/vmtest.md. Slow without /dev/kvm (software emulation).
.PHONY: vmtest
vmtest: build
	$(Q)scripts/vmtest.sh

clean:
	$(Q)rm -rf obj dist build .tap

# the crash trials at soak length (test/resolver/killtrials.test.ts);
# make test runs them at their defaults: 100 supervise and 20 run trials
# on a terminal the trials draw a status line on it (src/progress.ts)
soak: build
	$(Q)GENSEE_PROGRESS_TTY=$$([ -t 2 ] && echo /dev/tty) GENSEE_REQUIRE_KERNEL=1 GENSEE_KILL_TRIALS=$${GENSEE_KILL_TRIALS:-200} GENSEE_RUN_KILL_TRIALS=$${GENSEE_RUN_KILL_TRIALS:-100} $(TAP) $(TAP_ARGS) dist/test/resolver/killtrials.test.js

# the supervisor socket fuzz at length (test/resolver/fuzz.test.ts); make
# test runs it at its default of 100000 frames
fuzz: build
	$(Q)GENSEE_REQUIRE_KERNEL=1 GENSEE_FUZZ_FRAMES=1000000 $(TAP) $(TAP_ARGS) --timeout=0 dist/test/resolver/fuzz.test.js
