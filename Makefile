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
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD ?= build
SAN_FLAGS :=
endif

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
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

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
PEER_SRCS := $(wildcard tests/peers/*.c)
PEER_BINS := $(patsubst tests/peers/%.c,$(BUILD)/tests/peers/%,$(PEER_SRCS))
# Call counting tests: a library for a target to dlopen, and a driver of user/kernel/callcount.c.
DPCALLS_SO := $(BUILD)/tests/libdpcalls.so
CALLCOUNT_PROBE := $(BUILD)/tests/callcount_probe
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

# A test build of the tool whose discover objects ask for a 4 KiB ring
# buffer (-DDP_RINGBUF_BYTES=4096), so lost-event tests can force losses.
DISCOVER_SRCS := $(wildcard user/kernel/discover*.c)
TINYRING_OBJS := $(patsubst %.c,$(BUILD)/tinyring/%.o,$(DISCOVER_SRCS))
TINYRING_LINK_OBJS := $(filter-out $(patsubst %.c,$(BUILD)/obj/%.o,$(DISCOVER_SRCS)),$(TOOL_OBJS)) $(TINYRING_OBJS)

DYNPROF := $(BUILD)/dynprof
TINYRING := $(BUILD)/tests/dynprof-tinyring
AGENT_SO := $(BUILD)/libdynprof_agent.so
AGENT_A := $(BUILD)/libdynprof_agent.a
DEMO := $(BUILD)/demo_task
DEPS_STAMP := $(BUILD)/.deps-ok

.DELETE_ON_ERROR:
# Kept between builds, not treated as intermediate files.
.SECONDARY: $(BPF_OBJS) $(BPF_SKELS)
.PHONY: all deps test test-build mutate demo bench install uninstall clean help

all: $(DYNPROF) $(AGENT_SO) $(AGENT_A) $(DEMO)

help:
	@echo 'make                 build $(BUILD)/dynprof, libdynprof_agent.{so,a}, the demo task'
	@echo 'make test            unit + integration tests (as root); SANITIZE=1 for ASan+UBSan'
	@echo 'make demo            attach to the bundled demo task: one window by command, one by a rule'
	@echo 'make mutate          break behaviours on purpose (tests/mutate/*.patch), check their tests fail'
	@echo 'make bench           benchmarks (results: docs/BENCHMARKS.md)'
	@echo 'make install         PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)'
	@echo 'make deps            install missing build dependencies (Debian, as root)'
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

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h $(wildcard include/dynprof/*.h) | $(BUILD)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -I$(BUILD) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@ # BTF stays; DWARF would only bloat the skeleton

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@

# ---- user space ---------------------------------------------------------------
$(BUILD)/obj/%.o: %.c $(wildcard include/dynprof/*.h user/*/*.h) $(BPF_SKELS) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Iuser -c $< -o $@

$(BUILD)/pic/%.o: %.c $(wildcard include/dynprof/*.h user/agent/*.h user/shared/*.h) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -Iuser -c $< -o $@

$(DYNPROF): $(TOOL_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

$(AGENT_SO): $(AGENT_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,libdynprof_agent.so $^ -o $@ $(LDFLAGS) -lcjson -lpthread

$(AGENT_A): $(AGENT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# The demo links the agent statically: it uses the linked C API, no preload.
$(DEMO): tools/demo_task.c $(AGENT_A) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -rdynamic $< -o $@ $(AGENT_A) $(LDFLAGS) -lcjson -lpthread

# ---- tests --------------------------------------------------------------------
$(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/unit.h $(TOOL_LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Iuser -Itests/unit $< $(TOOL_LIB_OBJS) -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

$(BUILD)/tests/peers/%: tests/peers/%.c $(AGENT_A) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Iuser $< -o $@ $(AGENT_A) $(LDFLAGS) -lcjson -lpthread

$(DPCALLS_SO): tests/peers/lib/dpcalls.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -shared -Wl,-soname,libdpcalls.so $< -o $@ $(LDFLAGS)

$(CALLCOUNT_PROBE): tests/tools/callcount_probe.c $(TOOL_LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Iuser $< $(TOOL_LIB_OBJS) -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

$(BUILD)/tinyring/%.o: %.c $(wildcard include/dynprof/*.h user/*/*.h) $(BPF_SKELS) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -DDP_RINGBUF_BYTES=4096 -Iuser -c $< -o $@

$(TINYRING): $(TINYRING_LINK_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

# Everything the tests run (tests/mutate.sh builds this in its scratch copy).
test-build: all $(UNIT_BINS) $(PEER_BINS) $(TINYRING) $(DPCALLS_SO) $(CALLCOUNT_PROBE)

test: test-build
	$(Q)DYNPROF_BUILD=$(abspath $(BUILD)) tests/run.sh

# Each tests/mutate/*.patch breaks one behaviour; its tests must fail
# (minutes; results in docs/MUTATE.md). MUTATE=name... runs only those.
mutate:
	$(Q)tests/mutate.sh $(MUTATE)

# ---- demo and benchmarks --------------------------------------------------------
demo: all
	$(Q)DYNPROF_BUILD=$(abspath $(BUILD)) tools/demo.sh

$(BUILD)/bench/%: bench/%.c $(TOOL_LIB_OBJS) $(AGENT_A)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Iuser $< $(TOOL_LIB_OBJS) -o $@ $(LDFLAGS) $(PKG_LIBS) -lpthread

bench: all $(PEER_BINS) $(BENCH_BINS)
	$(Q)DYNPROF_BUILD=$(abspath $(BUILD)) bench/run.sh

# ---- install ------------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/dynprof $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0755 $(DYNPROF) $(DESTDIR)$(PREFIX)/bin/dynprof
	install -m 0755 $(AGENT_SO) $(DESTDIR)$(PREFIX)/lib/libdynprof_agent.so
	install -m 0644 $(AGENT_A) $(DESTDIR)$(PREFIX)/lib/libdynprof_agent.a
	install -m 0644 include/dynprof/agent.h $(DESTDIR)$(PREFIX)/include/dynprof/agent.h
	install -m 0644 docs/dynprof.8 $(DESTDIR)$(PREFIX)/share/man/man8/dynprof.8

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/dynprof $(DESTDIR)$(PREFIX)/lib/libdynprof_agent.so \
	      $(DESTDIR)$(PREFIX)/lib/libdynprof_agent.a $(DESTDIR)$(PREFIX)/include/dynprof/agent.h \
	      $(DESTDIR)$(PREFIX)/share/man/man8/dynprof.8

clean:
	rm -rf build
