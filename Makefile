# Entry points (README.md): "make demo" and "make test" do all setup on a fresh Debian 12 machine.
SRCS := $(shell git ls-files '*.c' '*.h' 2>/dev/null | grep -v '^tests/data/' || find src include tests fuzz bench -name '*.[ch]' -not -path 'tests/data/*')

.PHONY: all deps build install demo test bench fuzz format format-check clean

all: build

deps:
	scripts/install-deps

build: deps
	@[ -f build/build.ninja ] || meson setup build
	ninja -C build

install: build
	meson install -C build

demo: build
	scripts/demo

test: deps
	scripts/test-all

bench: build
	build/bench/bench-start --runs 200
	build/bench/bench-gobuild --runs 20
	build/bench/bench-analyze --runs 20
	build/bench/bench-workspace --runs 20
	build/bench/bench-exec --runs 20
	bench/bench-repair

fuzz: deps
	bash fuzz/run-smoke.sh build-fuzz

format:
	clang-format -i $(SRCS)

format-check:
	clang-format --dry-run --Werror $(SRCS)

clean:
	rm -rf build build-san build-fuzz
