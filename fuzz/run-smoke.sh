#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Smoke-fuzz every target in fuzz/ with libFuzzer for a short time each.
#
#   fuzz/run-smoke.sh [BUILD_DIR]          (default: build-fuzz in the source root)
#   FUZZ_SECONDS=60 fuzz/run-smoke.sh      (time per target; default 20)
#
# Configures BUILD_DIR as a clang fuzzing build if it is not configured yet (an existing one is
# only rebuilt), builds the targets, then runs each one as
#   fuzz-<name> -max_total_time=N SCRATCH fuzz/corpus/<name>
# SCRATCH (BUILD_DIR/fuzz-scratch/<name>) comes first because libFuzzer writes new inputs into
# the first directory; the seed corpus in the source tree is only read. Crash, leak and timeout
# inputs go to BUILD_DIR/fuzz-artifacts/<name>/, full logs to BUILD_DIR/fuzz-logs/<name>.log.
#
# Needs clang and its libFuzzer runtime (Debian: clang-14 and libclang-rt-14-dev).
# Exit status: 0 no findings; 1 a fuzzer found something (crash, sanitizer report, leak, invariant
# violation, timeout); 2 the build could not be set up or built.

set -uo pipefail

src_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# BUILD_DIR given on the command line is relative to the caller's directory; the default is
# relative to the source root.
build_dir=${1:-$src_root/build-fuzz}
[[ $build_dir == /* ]] || build_dir=$PWD/$build_dir
cd "$src_root" || exit 2
seconds=${FUZZ_SECONDS:-20}
case $seconds in
'' | *[!0-9]*)
        echo "run-smoke: FUZZ_SECONDS must be a whole number of seconds, not '$seconds'" >&2
        exit 2
        ;;
esac

# UBSan checks are recoverable in this build (meson's b_sanitize adds no -fno-sanitize-recover):
# halt_on_error turns a report into a crash libFuzzer records. Callers may override both.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_stack_use_after_return=1:strict_string_checks=1}

if [[ -f $build_dir/build.ninja ]]; then
        fuzzing=$(python3 -c 'import json, sys
opts = json.load(open(sys.argv[1]))
print(next((o["value"] for o in opts if o["name"] == "fuzzing"), False))' \
                "$build_dir/meson-info/intro-buildoptions.json" 2>/dev/null)
        if [[ $fuzzing != True ]]; then
                echo "run-smoke: '$build_dir' is configured without -Dfuzzing=true; use another directory" >&2
                exit 2
        fi
else
        echo "run-smoke: configuring '$build_dir'"
        if ! CC=clang meson setup "$build_dir" -Dfuzzing=true -Db_sanitize=address,undefined \
                -Db_lundef=false -Dtests=disabled; then
                echo "run-smoke: 'meson setup $build_dir' failed (see $build_dir/meson-logs/meson-log.txt)" >&2
                exit 2
        fi
fi

# Targets: each seed corpus fuzz/corpus/<name> belongs to fuzz/fuzz-<name with '-' for '_'>
# (fuzz/meson.build; one source may build several targets, e.g. one per wire format).
names=()
exes=()
for dir in fuzz/corpus/*/; do
        name=${dir#fuzz/corpus/}
        name=${name%/}
        names+=("$name")
        exes+=("fuzz/fuzz-${name//_/-}")
done
if ((${#names[@]} == 0)); then
        echo "run-smoke: no seed corpus under fuzz/corpus/" >&2
        exit 2
fi

if ! ninja -C "$build_dir" "${exes[@]}"; then
        echo "run-smoke: building the fuzz targets failed" >&2
        exit 2
fi

failed=()
for i in "${!names[@]}"; do
        name=${names[$i]}
        exe=$build_dir/${exes[$i]}
        corpus=fuzz/corpus/$name
        scratch=$build_dir/fuzz-scratch/$name
        artifacts=$build_dir/fuzz-artifacts/$name
        log=$build_dir/fuzz-logs/$name.log

        mkdir -p "$scratch" "$artifacts" "$(dirname "$log")"
        if [[ ! -d $corpus ]]; then
                echo "run-smoke: $name: no seed corpus at $corpus" >&2
                failed+=("$name (no corpus)")
                continue
        fi
        echo "run-smoke: $name: fuzzing for ${seconds}s (log: $log)"
        "$exe" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
                -artifact_prefix="$artifacts/" "$scratch" "$corpus" >"$log" 2>&1
        rc=$?
        # The last status line ("#N DONE cov: .. ft: .. corp: ..") and the final stats.
        grep -E '^#[0-9]+[[:space:]]+(DONE|INITED)' "$log" | tail -n 1
        grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb|new_units_added)' "$log"
        if ((rc != 0)); then
                echo "run-smoke: $name: FINDING (exit $rc); end of the log:" >&2
                tail -n 40 "$log" >&2
                failed+=("$name")
        fi
done

if ((${#failed[@]} > 0)); then
        echo "run-smoke: findings in: ${failed[*]}; inputs are in $build_dir/fuzz-artifacts/" >&2
        exit 1
fi
echo "run-smoke: no findings (${#names[@]} targets, ${seconds}s each)"
exit 0
