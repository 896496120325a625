#!/usr/bin/env bash
# The test command of the README: prepares the machine (scripts/setup.sh),
# starts the services the tests use, runs the unit/component suites
# (npm test) and the VM suites (npm run test:vm), then the benchmark smoke
# run, and stops the services.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

# Guest artifacts (kernel, tools and base images) are built once and shared by
# the VM suites; the first run builds them (about a minute).
export AENV_TEST_CACHE="${AENV_TEST_CACHE:-/var/tmp/aenv-test-cache}"

npm run lint

status=0
npm test || status=$?
if [ "$status" -eq 0 ]; then
  npm run test:vm || status=$?
fi

# Benchmark smoke run (bench/README.md): every benchmark with tiny counts, so
# none rots. Figures never fail it (they are not pass/fail anywhere); a
# benchmark that crashes does, like a failing test. AENV_BENCH_SMOKE=0 skips it.
if [ "$status" -eq 0 ] && [ "${AENV_BENCH_SMOKE:-1}" != "0" ]; then
  node --test bench/ || status=$?
  if [ "$status" -eq 0 ]; then
    npm run bench --silent -- --quick || status=$?
  fi
fi
exit "$status"
