#!/bin/bash
# Run heal on one corpus case with its scripted model, in a scratch copy (heal writes the fix there).
# usage: tests/data/repair/run-case.sh CASE [extra heal options...]
#   CASE: a directory of tests/data/broken/ or tests/data/repair/impossible/
# The case's own heal options (options.txt) are added. Prints heal's progress (stderr) and the
# exit status; the copy stays in ${HEAL_CASE_TMP:-/tmp}/heal-case-CASE, the trace next to it.
# HEAL_SCRIPT=FILE uses another script (e.g. gaps/CASE.json).
# As root, put the shell in a cgroup heal can use first: echo $$ > /sys/fs/cgroup/pids/cgroup.procs
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
case=${1:?usage: run-case.sh CASE [heal options]}; shift
src=$top/tests/data/broken/$case
script=$here/$case.json
if [ ! -d "$src" ]; then
        src=$here/impossible/$case
        script=$here/impossible/$case.json
fi
script=$(realpath -e "${HEAL_SCRIPT:-$script}" 2>/dev/null)
[ -d "$src" ] && [ -n "$script" ] || { echo "no case $case" >&2; exit 2; }
opts=$(awk -v c="$case" '$1 == c { $1 = ""; print }' "$here/options.txt")
tmp=${HEAL_CASE_TMP:-/tmp}/heal-case-$case
rm -rf "$tmp" && cp -r "$src" "$tmp" && cd "$tmp" || exit 2
# A plain command is passed as words, so heal sees `go test` (its test-gaming rules need that);
# one with shell operators goes through bash -c.
if grep -q '&&\||\|;\|env -u' cmd; then argv=(bash -c "$(cat cmd)"); else read -r -a argv < cmd; fi
# shellcheck disable=SC2086
HEAL_MODEL=exec:fake HEAL_LLM_COMMAND="python3 $top/tests/helpers/fake-model.py $script" \
        "${HEAL:-$top/build/heal}" --trace "$tmp.trace" $opts "$@" -- "${argv[@]}"
rc=$?
echo "exit status: $rc" >&2
exit $rc
