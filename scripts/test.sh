#!/usr/bin/env bash
# scripts/test.sh: run test scopes on the compiled output (dist/; `npm run build` first).
#
#   scripts/test.sh [--coverage] SCOPE...
#
# Scopes (each a set of dist/test files; every *.test.js file is in exactly one):
#   unit         test/smoke.test.ts, test/unit/            (seconds)
#   harness      test/harness/                             (the model-checked harness, every mode)
#   beta         test/beta/                                (the sync worker thread)
#   ring         test/ring/                                (the SharedArrayBuffer ring and channels)
#   server       test/server/ except the integration files (the HTTP server and the CLI)
#   hardening    test/hardening/ except the integration files (fuzz, timeouts, memory bound)
#   deps         test/deps/                                (the import direction, read from the sources)
#   sim          test/sim/                                 (the simulator)
#   bench        test/bench/                               (benchmark smoke)
#   upstream     test/store/kube-store.test.ts              (KubeStore against in-process roots; no etcd)
#   integration  test/store/ but kube-store, test/server/{kubectl,kubectl-edit,promtool,scale-out,proxy-chain,examples},
#                test/hardening/{operability,shape-safety}  (need etcd, kubectl, promtool, real processes)
#   covered      unit harness beta ring hardening upstream (the engine's own suites, no etcd or kubectl)
#   rest         every test file not in `covered`
#   all          every test file
#
# --coverage runs the scopes under c8 with the thresholds of .c8rc.json (--check-coverage);
# `npm test` is `--coverage all`: one run, every test, the gate over all of it.
# $NODE picks the node binary (default: node on PATH), e.g. Node 22 from the npm registry:
#   NODE="$(npx -y -p node@22 node -p process.execPath)" scripts/test.sh unit harness
# Each test file gets at most 5 minutes (see --test-timeout below).
# The run uses source maps (a failure points at the .ts line) and test/support/summary-reporter.ts
# (skipped tests and their reasons in the closing summary; under CI a skip fails the run).
set -euo pipefail
cd "$(dirname "$0")/.."

coverage=0
if [ "${1:-}" = "--coverage" ]; then coverage=1; shift; fi
if [ "$#" -eq 0 ]; then
  sed -n '2,28p' "$0" >&2
  exit 2
fi
[ -d dist/test ] || { echo "scripts/test.sh: no dist/test (run npm run build first)" >&2; exit 2; }

INTEGRATION_SERVER='kubectl|kubectl-edit|promtool|scale-out|proxy-chain|examples'
INTEGRATION_HARDENING='operability|shape-safety'
all_files() { find dist/test -name '*.test.js' | sort; }
scope_files() {
  case "$1" in
    unit) ls dist/test/smoke.test.js; find dist/test/unit -name '*.test.js' | sort ;;
    harness | beta | ring | sim | bench | deps) find "dist/test/$1" -name '*.test.js' | sort ;;
    server) find dist/test/server -name '*.test.js' | grep -Ev "/($INTEGRATION_SERVER)\.test\.js$" | sort ;;
    hardening) find dist/test/hardening -name '*.test.js' | grep -Ev "/($INTEGRATION_HARDENING)\.test\.js$" | sort ;;
    upstream) ls dist/test/store/kube-store.test.js ;;
    integration)
      find dist/test/store -name '*.test.js' | grep -v '/kube-store\.test\.js$' | sort
      find dist/test/server -name '*.test.js' | grep -E "/($INTEGRATION_SERVER)\.test\.js$" | sort
      find dist/test/hardening -name '*.test.js' | grep -E "/($INTEGRATION_HARDENING)\.test\.js$" | sort
      ;;
    covered) for s in unit harness beta ring hardening upstream; do scope_files "$s"; done ;;
    rest) all_files | grep -vxF -f <(scope_files covered) ;;
    all) all_files ;;
    *) echo "scripts/test.sh: unknown scope '$1'" >&2; return 2 ;;
  esac
}

files=()
for scope in "$@"; do
  while IFS= read -r f; do files+=("$f"); done < <(scope_files "$scope")
done
[ "${#files[@]}" -gt 0 ] || { echo "scripts/test.sh: no test files in: $*" >&2; exit 2; }

node_bin="${NODE:-node}"
# Through NODE_OPTIONS, so the test files' own processes, workers and spawned servers map stacks too.
export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--enable-source-maps"
# --test-timeout bounds each test FILE (node:test runs each file as one test in its own process and kills
# it at the bound, also when a leftover socket or timer keeps it alive after its tests), so a hang fails
# that file within 5 minutes, named in the summary, instead of holding the whole run until CI's limit; the
# slowest file takes well under a minute here. (--test-force-exit is not used: it also cut the runner
# short before the closing summary.)
run=("$node_bin" --test --test-concurrency=1 --test-timeout=300000
  --test-reporter=./dist/test/support/summary-reporter.js --test-reporter-destination=stdout
  "${files[@]}")
echo "scripts/test.sh: $* on $("$node_bin" --version) (${#files[@]} files)"
if [ "$coverage" = 1 ]; then
  exec npx --no-install c8 "${run[@]}"
else
  exec "${run[@]}"
fi
