# dynprof build. `make help` lists the targets.
#
# The chain, libbpf-tools style:
#   bpf/%.bpf.c -> $(BUILD)/bpf/%.bpf.o -> $(BUILD)/bpf/%.skel.h
#   user/<layer>/*.c (kernel/ includes the skeletons) -> $(BUILD)/dynprof
#   user/agent/*.c + user/shared/*.c -> libdynprof_agent.{so,a}
# user/ is one folder per layer of the data path; tools/layers lists them
# in order and `make check-layers` checks that no object calls upward.
# A fresh machine gets its build dependencies from tools/install-deps.sh first.

SANITIZE ?= 0
ifeq ($(SANITIZE),1)
BUILD ?= build/san
# float-cast-overflow: gcc leaves it out of "undefined" (clang's make fuzz has it).
SAN_FLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined,float-cast-overflow
else
BUILD ?= build
SAN_FLAGS :=
endif

PREFIX ?= /usr/local
# systemd looks in $(PREFIX)/lib/systemd/system for PREFIX=/usr/local and /usr.
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
DESTDIR ?=
CC ?= cc
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
OBJCOPY ?= objcopy
CLANG_FORMAT ?= clang-format
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

# Evaluated lazily (=): pkg-config runs only after the dependency check.
PKGS := libbpf libelf zlib libcjson
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Werror
CFLAGS_BASE := -std=gnu11 $(WARN) -O2 -g -D_GNU_SOURCE -Iinclude -I$(BUILD) $(SAN_FLAGS)
CFLAGS ?=
LDFLAGS ?=
ALL_CFLAGS = $(CFLAGS_BASE) $(PKG_CFLAGS) $(CFLAGS)
# Every compile also writes <target>.d, the headers it read (generated
# skeletons included), so touching a header rebuilds only its users. -MP
# gives each header an empty rule: a removed header does not stop make.
DEPFLAGS = -MMD -MP -MF $@.d -MT $@

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# ---- sources ----------------------------------------------------------------
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.skel.h,$(BPF_SRCS))

# Code that both the tool and the agent library use.
SHARED_SRCS := $(wildcard user/shared/*.c)
AGENT_SRCS := $(wildcard user/agent/*.c) $(SHARED_SRCS)
TOOL_SRCS := user/main.c $(filter-out user/agent/%,$(wildcard user/*/*.c))
TOOL_LIB_SRCS := $(filter-out user/main.c,$(TOOL_SRCS))

TOOL_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(TOOL_SRCS))
TOOL_LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(TOOL_LIB_SRCS))
AGENT_OBJS := $(patsubst %.c,$(BUILD)/pic/%.o,$(AGENT_SRCS))
SHARED_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SHARED_SRCS))
# The static library leaves out preload.o: its constructor is the
# LD_PRELOAD entry, and a linked program calls dynprof_agent_start itself.
AGENT_A_OBJS := $(filter-out $(BUILD)/pic/user/agent/preload.o,$(AGENT_OBJS))

UNIT_SRCS := $(wildcard tests/unit/*/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
# Fuzz harnesses (tests/fuzz/fuzz.h): linked with replay.c for `make test`,
# with libFuzzer for `make fuzz`.
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/tests/fuzz/%,$(FUZZ_SRCS))
FUZZ_REPLAY_OBJ := $(BUILD)/tests/fuzz/replay.o
FUZZ_DIR := build/libfuzzer
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(TOOL_LIB_SRCS))
FUZZ_ENGINES := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(FUZZ_SRCS))
FUZZ_SECONDS ?= 30
# The agent's conversations (fuzz_agent_conv) link the agent's own objects,
# not the tool's, and keep the folders a client names inside a temporary
# one by wrapping agent_params_result_dir (see the harness).
FUZZ_CONV := fuzz_agent_conv
FUZZ_CONV_SRCS := $(filter-out user/agent/server.c user/agent/preload.c,$(AGENT_SRCS))
FUZZ_CONV_OBJS := $(patsubst %.c,$(BUILD)/pic/%.o,$(FUZZ_CONV_SRCS))
FUZZ_CONV_LIB_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_CONV_SRCS))
FUZZ_CONV_LDFLAGS := -Wl,--wrap=agent_params_result_dir -lcjson -lpthread
PEER_SRCS := $(wildcard tests/peers/*.c)
PEER_BINS := $(patsubst tests/peers/%.c,$(BUILD)/tests/peers/%,$(PEER_SRCS))
# Call counting tests: a library for a target to dlopen, and a driver of user/kernel/callcount.c.
DPCALLS_SO := $(BUILD)/tests/libdpcalls.so
# A stand-in driver library for the chip detection tests (config/chip.c).
FAKEHAL_SO := $(BUILD)/tests/libascend_hal.so
CALLCOUNT_PROBE := $(BUILD)/tests/callcount_probe
# Links libdynprof_agent.a beside its own definitions of the agent's internal names.
AGENT_NAMES := $(BUILD)/tests/agent_names
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

# A test build of the tool whose discover objects and --host-sys=osrt ask for
# 4 KiB ring buffers (-DDP_RINGBUF_BYTES=4096 -DDP_OSRT_RINGBUF_BYTES=4096),
# so lost-event tests can force losses.
DISCOVER_SRCS := $(wildcard user/kernel/discover*.c) user/hostdata/osrt.c
TINYRING_OBJS := $(patsubst %.c,$(BUILD)/tinyring/%.o,$(DISCOVER_SRCS))
TINYRING_LINK_OBJS := $(filter-out $(patsubst %.c,$(BUILD)/obj/%.o,$(DISCOVER_SRCS)),$(TOOL_OBJS)) $(TINYRING_OBJS)

# A test build whose session tables start with 2 slots (-DSESSION_FIRST_SLOTS=2),
# so a launch test makes the table grow and reuse slots with a few workers.
FEW_SRCS := user/session/session_connect.c
FEW_OBJS := $(patsubst %.c,$(BUILD)/few/%.o,$(FEW_SRCS))
FEW_LINK_OBJS := $(filter-out $(patsubst %.c,$(BUILD)/obj/%.o,$(FEW_SRCS)),$(TOOL_OBJS)) $(FEW_OBJS)

# A test build whose --host-sys-before buffer holds 2000 calls a target
# (-DHD_KEEP_MAX_CALLS=2000), so a test crosses the cap with a short burst.
KEEP_SRCS := user/hostdata/hostkeep.c user/hostdata/hostdata.c user/hostdata/hostwrite.c
KEEP_OBJS := $(patsubst %.c,$(BUILD)/smallkeep/%.o,$(KEEP_SRCS))
KEEP_LINK_OBJS := $(filter-out $(patsubst %.c,$(BUILD)/obj/%.o,$(KEEP_SRCS)),$(TOOL_OBJS)) $(KEEP_OBJS)

DYNPROF := $(BUILD)/dynprof
TINYRING := $(BUILD)/tests/dynprof-tinyring
FEWTARGETS := $(BUILD)/tests/dynprof-2targets
SMALLKEEP := $(BUILD)/tests/dynprof-smallkeep
AGENT_SO := $(BUILD)/libdynprof_agent.so
AGENT_A := $(BUILD)/libdynprof_agent.a
AGENT_A_OBJ := $(BUILD)/pic/dynprof_agent.o
DEMO := $(BUILD)/demo_task
DEPS_STAMP := $(BUILD)/.deps-ok

# One .d per compiled file. Each file also depends on its .d, whose empty
# rule makes a missing .d (a build from before -MMD, a deleted file) count
# as new: that file is compiled again and gets one.
DEPFILES := $(addsuffix .d,$(BPF_OBJS) $(TOOL_OBJS) $(AGENT_OBJS) $(TINYRING_OBJS) $(FEW_OBJS) $(KEEP_OBJS) \
	$(UNIT_BINS) $(FUZZ_BINS) $(FUZZ_REPLAY_OBJ) $(PEER_BINS) $(BENCH_BINS) $(DEMO) $(DPCALLS_SO) \
	$(FAKEHAL_SO) $(CALLCOUNT_PROBE) $(AGENT_NAMES))
FORMAT_DIRS := user bpf include tests tools bench

.DELETE_ON_ERROR:
# Kept between builds, not treated as intermediate files.
.SECONDARY: $(BPF_OBJS) $(BPF_SKELS) $(FUZZ_LIB_OBJS) $(FUZZ_CONV_LIB_OBJS)
.PHONY: all deps test test-deps test-build fuzz mutate demo bench bench-osrt install uninstall clean help check-layers format format-check

all: $(DYNPROF) $(AGENT_SO) $(AGENT_A) $(DEMO)

help:
	@echo 'make                 build $(BUILD)/dynprof, libdynprof_agent.{so,a}, the demo task'
	@echo 'make test            unit + integration tests (as root); SANITIZE=1 for ASan+UBSan; TEST_JOBS=N scripts at a time (default: 2 x nproc)'
	@echo 'make demo            attach to the bundled demo task: one window by command, one by a rule'
	@echo 'make fuzz            each parser under libFuzzer for FUZZ_SECONDS (30) (clang, libclang-rt)'
	@echo 'make mutate          break behaviours on purpose (tests/mutate/*.patch), check their tests fail'
	@echo 'make bench           benchmarks (results: docs/BENCHMARKS.md)'
	@echo 'make bench-osrt      --host-sys=osrt against perf trace, strace, ltrace, bpftrace only (QUICK=1: smoke run)'
	@echo 'make check-layers    no object uses a higher layer (tools/layers), no cycles, private headers stay in their folder (part of make test)'
	@echo 'make install         PREFIX=$(PREFIX) DESTDIR=$(DESTDIR): binary, agent library and header, man page,'
	@echo '                     docs in $(PREFIX)/share/doc/dynprof, the systemd unit in SYSTEMD_UNIT_DIR'
	@echo 'make uninstall       remove what make install put (same PREFIX, DESTDIR)'
	@echo 'make format          clang-format the C files of $(FORMAT_DIRS) in place (.clang-format)'
	@echo 'make format-check    list the C files clang-format would change; fails if any (part of make test)'
	@echo 'make deps            install missing build dependencies (Debian, as root)'
	@echo 'make test-deps       install missing test dependencies: SLURM, munge, python3, systemd-analyze, clang-format (Debian, as root)'
	@echo 'make clean           remove build/'
	@echo 'V=1 shows the commands.'

# ---- dependencies -------------------------------------------------------------
deps $(DEPS_STAMP): tools/install-deps.sh | $(BUILD)
	$(Q)tools/install-deps.sh
	$(Q)touch $(DEPS_STAMP)

$(BUILD) $(BUILD)/bpf:
	$(Q)mkdir -p $@

# ---- BPF ----------------------------------------------------------------------
# vmlinux.h is generated from the build machine's BTF rather than vendored:
# CO-RE relocates field offsets at load time, so the header need only be
# self-consistent, and generating it keeps 3 MB of kernel types out of git.
$(BUILD)/vmlinux.h: | $(DEPS_STAMP) $(BUILD)
	$(call msg,GEN,$@)
	$(Q)test -r $(VMLINUX_BTF) || { echo "dynprof build: no kernel BTF at $(VMLINUX_BTF); set VMLINUX_BTF=<file with BTF>" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

# vmlinux.h stays named: the first compile needs it before any .d exists.
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BUILD)/bpf/%.bpf.o.d $(BUILD)/vmlinux.h | $(BUILD)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -I$(BUILD) $(DEPFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@ # BTF stays; DWARF would only bloat the skeleton

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@

# The build host's system call names by number (user/hostdata/ names each
# recorded call): the kernel headers' __NR_ macros, as a C array.
SYSCALL_NAMES := $(BUILD)/syscall_names.h
$(SYSCALL_NAMES): | $(DEPS_STAMP) $(BUILD)
	$(call msg,GEN,$@)
	$(Q)echo '#include <asm/unistd.h>' | $(CC) -E -dM -x c - | \
		awk 'BEGIN { print "static const char *const dp_syscall_names[] = {" } \
		     $$1 == "#define" && $$2 ~ /^__NR_[a-z0-9_]+$$/ && $$3 ~ /^[0-9]+$$/ \
		     { printf "\t[%s] = \"%s\",\n", $$3, substr($$2, 6) } END { print "};" }' > $@

# ---- user space ---------------------------------------------------------------
# The skeletons are order-only: made before any tool object compiles (a
# first build has no .d yet), but only the objects whose .d names one
# (today kernel/callcount.o, kernel/discover_bpf.o) rebuild when it changes.
$(BUILD)/obj/%.o: %.c $(BUILD)/obj/%.o.d | $(DEPS_STAMP) $(BPF_SKELS) $(SYSCALL_NAMES)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Iuser -c $< -o $@

$(BUILD)/pic/%.o: %.c $(BUILD)/pic/%.o.d | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -fPIC -fvisibility=hidden -Iuser -c $< -o $@

$(DYNPROF): $(TOOL_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

$(AGENT_SO): $(AGENT_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,libdynprof_agent.so $^ -o $@ $(LDFLAGS) -lcjson -lpthread

# The archive holds one object: the agent linked with ld -r, then every
# hidden symbol (all but server.c's API) made local, as the .so hides them.
# Otherwise its 57 internal names (clock_ms, window_start, proto_*, ...)
# would clash with a program's own.
$(AGENT_A_OBJ): $(AGENT_A_OBJS)
	$(call msg,LD,$@)
	$(Q)$(LD) -r $^ -o $@
	$(Q)$(OBJCOPY) --localize-hidden $@

$(AGENT_A): $(AGENT_A_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# The demo links the agent statically: it uses the linked C API, no preload.
$(DEMO): tools/demo_task.c $(DEMO).d $(AGENT_A) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -rdynamic $< -o $@ $(AGENT_A) $(LDFLAGS) -lcjson -lpthread

# ---- tests --------------------------------------------------------------------
$(BUILD)/tests/unit/%: tests/unit/%.c $(BUILD)/tests/unit/%.d $(TOOL_LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Iuser -Itests/unit $< $(TOOL_LIB_OBJS) -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

$(FUZZ_REPLAY_OBJ): tests/fuzz/replay.c $(FUZZ_REPLAY_OBJ).d | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Itests/fuzz -c $< -o $@

$(BUILD)/tests/fuzz/%: tests/fuzz/%.c $(BUILD)/tests/fuzz/%.d $(FUZZ_REPLAY_OBJ) $(TOOL_LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Iuser -Itests/fuzz $< $(FUZZ_REPLAY_OBJ) $(TOOL_LIB_OBJS) -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

$(BUILD)/tests/fuzz/$(FUZZ_CONV): tests/fuzz/$(FUZZ_CONV).c $(BUILD)/tests/fuzz/$(FUZZ_CONV).d $(FUZZ_REPLAY_OBJ) $(FUZZ_CONV_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Iuser -Itests/fuzz $< $(FUZZ_REPLAY_OBJ) $(FUZZ_CONV_OBJS) -o $@ $(LDFLAGS) $(FUZZ_CONV_LDFLAGS)

# libFuzzer builds: clang only, the tool's objects instrumented for coverage.
FUZZ_CFLAGS = -std=gnu11 $(WARN) -O1 -g -D_GNU_SOURCE -Iinclude -I$(BUILD) -Iuser $(PKG_CFLAGS) \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
$(FUZZ_DIR)/obj/%.o: %.c | $(DEPS_STAMP) $(BPF_SKELS) $(SYSCALL_NAMES)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Itests/fuzz -fsanitize=fuzzer $< $(FUZZ_LIB_OBJS) -o $@ $(PKG_LIBS) -lpthread

$(FUZZ_DIR)/$(FUZZ_CONV): tests/fuzz/$(FUZZ_CONV).c $(FUZZ_CONV_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Itests/fuzz -fsanitize=fuzzer $< $(FUZZ_CONV_LIB_OBJS) -o $@ $(FUZZ_CONV_LDFLAGS)

# Each harness for FUZZ_SECONDS from its seeds (copied: the repo's corpus
# stays as committed); findings land in $(FUZZ_DIR)/findings/.
fuzz: $(FUZZ_ENGINES)
	$(Q)tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(notdir $(FUZZ_ENGINES))

# Peers take the internal helpers they use (fdio, proto) from the shared
# objects: the agent archive exports only its API.
$(BUILD)/tests/peers/%: tests/peers/%.c $(BUILD)/tests/peers/%.d $(SHARED_OBJS) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Iuser $< -o $@ $(SHARED_OBJS) $(LDFLAGS) -lcjson

$(DPCALLS_SO): tests/peers/lib/dpcalls.c $(DPCALLS_SO).d | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -fPIC -shared -Wl,-soname,libdpcalls.so $< -o $@ $(LDFLAGS)

$(FAKEHAL_SO): tests/peers/lib/fakehal.c $(FAKEHAL_SO).d | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -fPIC -shared -Wl,-soname,libascend_hal.so $< -o $@ $(LDFLAGS)

$(CALLCOUNT_PROBE): tests/tools/callcount_probe.c $(CALLCOUNT_PROBE).d $(TOOL_LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Iuser $< $(TOOL_LIB_OBJS) -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

# Only the archive and libc: the program's own clock_ms, window_start, ...
# must not meet a second definition.
$(AGENT_NAMES): tests/tools/agent_names.c $(AGENT_NAMES).d $(AGENT_A) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) $< -o $@ $(AGENT_A) $(LDFLAGS) -lcjson -lpthread

$(BUILD)/tinyring/%.o: %.c $(BUILD)/tinyring/%.o.d | $(DEPS_STAMP) $(BPF_SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -DDP_RINGBUF_BYTES=4096 -DDP_OSRT_RINGBUF_BYTES=4096 -Iuser -c $< -o $@

$(TINYRING): $(TINYRING_LINK_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

# A test build whose session tables start with two slots (they grow at the third target).
$(BUILD)/few/%.o: %.c $(BUILD)/few/%.o.d | $(DEPS_STAMP) $(BPF_SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -DSESSION_FIRST_SLOTS=2 -Iuser -c $< -o $@

$(FEWTARGETS): $(FEW_LINK_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

$(BUILD)/smallkeep/%.o: %.c $(BUILD)/smallkeep/%.o.d | $(DEPS_STAMP) $(BPF_SKELS) $(SYSCALL_NAMES)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -DHD_KEEP_MAX_CALLS=2000 -Iuser -c $< -o $@

$(SMALLKEEP): $(KEEP_LINK_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

# The layer rule of tools/layers, read from the objects' symbols; and the
# private headers (*_impl.h) included only inside their folder (the sources).
check-layers: $(TOOL_OBJS) $(AGENT_OBJS)
	$(call msg,CHECK,layers)
	$(Q)tools/check-layers.sh $(TOOL_OBJS) -- $(AGENT_OBJS)
	$(Q)tools/check-folders.sh user
	$(call msg,CHECK,private)
	$(Q)tools/check-private.sh

# Everything the tests run (tests/mutate.sh builds this in its scratch copy).
# The benchmarks' programs too: they link the tool's objects, and a change
# that breaks them must fail the suite, not the next `make bench`.
test-build: all $(UNIT_BINS) $(FUZZ_BINS) $(PEER_BINS) $(TINYRING) $(FEWTARGETS) $(SMALLKEEP) $(DPCALLS_SO) \
	$(FAKEHAL_SO) $(CALLCOUNT_PROBE) $(AGENT_NAMES) $(BENCH_BINS)

# Packages only the tests use (a real SLURM cluster): installed when missing,
# as root; without them the SLURM tests fail saying so, the others run.
test-deps:
	-$(Q)DYNPROF_BUILD=$(abspath $(BUILD)) tools/install-deps.sh test

# format-check runs after test-deps (which brings clang-format to a fresh machine).
test: test-build check-layers test-deps
	$(Q)$(MAKE) --no-print-directory format-check
	$(Q)DYNPROF_BUILD=$(abspath $(BUILD)) tests/run.sh

# Each tests/mutate/*.patch breaks one behaviour; its tests must fail
# (minutes; results in docs/MUTATE.md). MUTATE=name... runs only those.
mutate:
	$(Q)tests/mutate.sh $(MUTATE)

# ---- demo and benchmarks --------------------------------------------------------
demo: all
	$(Q)DYNPROF_BUILD=$(abspath $(BUILD)) tools/demo.sh

$(BUILD)/bench/%: bench/%.c $(BUILD)/bench/%.d $(TOOL_LIB_OBJS) $(AGENT_A)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Iuser $< $(TOOL_LIB_OBJS) -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

bench: all $(PEER_BINS) $(BENCH_BINS)
	$(Q)tools/install-deps.sh bench
	$(Q)DYNPROF_BUILD=$(abspath $(BUILD)) bench/run.sh

# --host-sys=osrt against perf trace, strace, ltrace, bpftrace alone (QUICK=1: a smoke run).
bench-osrt: all $(BENCH_BINS)
	$(Q)tools/install-deps.sh bench
	$(Q)DYNPROF_BUILD=$(abspath $(BUILD)) bench/osrt.sh

# ---- install ------------------------------------------------------------------
DOC_DIR ?= $(PREFIX)/share/doc/dynprof
DOC_FILES := README.md $(wildcard docs/*.md)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/dynprof $(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(DOC_DIR)
	install -m 0755 $(DYNPROF) $(DESTDIR)$(PREFIX)/bin/dynprof
	install -m 0755 $(AGENT_SO) $(DESTDIR)$(PREFIX)/lib/libdynprof_agent.so
	install -m 0644 $(AGENT_A) $(DESTDIR)$(PREFIX)/lib/libdynprof_agent.a
	install -m 0644 include/dynprof/agent.h $(DESTDIR)$(PREFIX)/include/dynprof/agent.h
	install -m 0644 docs/dynprof.8 $(DESTDIR)$(PREFIX)/share/man/man8/dynprof.8
	install -m 0644 $(DOC_FILES) $(DESTDIR)$(DOC_DIR)/
	install -d $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	sed 's|/usr/local/bin/dynprof|$(PREFIX)/bin/dynprof|' tools/dynprof.service > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/dynprof.service
	chmod 0644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/dynprof.service
	$(Q)tools/unit-hint.sh "$(SYSTEMD_UNIT_DIR)" "$(DESTDIR)"

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/dynprof $(DESTDIR)$(PREFIX)/lib/libdynprof_agent.so \
	      $(DESTDIR)$(PREFIX)/lib/libdynprof_agent.a $(DESTDIR)$(PREFIX)/include/dynprof/agent.h \
	      $(DESTDIR)$(PREFIX)/share/man/man8/dynprof.8 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/dynprof.service
	rm -f $(addprefix $(DESTDIR)$(DOC_DIR)/,$(notdir $(DOC_FILES)))
	-rmdir $(DESTDIR)$(DOC_DIR) 2>/dev/null

clean:
	rm -rf build

# ---- formatting -----------------------------------------------------------------
# Part of `make test` (so CI): code that differs from .clang-format fails the run,
# naming each file; `make format` fixes them.
FORMAT_FILES = $(shell find $(FORMAT_DIRS) -name '*.[ch]' | sort)

format:
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_FILES)

format-check:
	$(Q)command -v $(CLANG_FORMAT) >/dev/null || { echo "format-check: no $(CLANG_FORMAT) (Debian: apt-get install clang-format; make test-deps installs it)" >&2; exit 1; }
	$(Q)bad=0; for f in $(FORMAT_FILES); do \
		$(CLANG_FORMAT) --dry-run --Werror $$f 2>/dev/null || { echo "$$f"; bad=$$((bad + 1)); }; \
	done; \
	[ $$bad -eq 0 ] || { echo "format-check: $$bad files differ from .clang-format (make format)" >&2; exit 1; }

# ---- compiler-written dependencies -------------------------------------------------
$(DEPFILES): ;
-include $(wildcard $(DEPFILES))
