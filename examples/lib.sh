# Shared by the example scenarios: where the service is, how to run the CLI, and a check helper.
# MEDPANEL_URL   the running `serve --demo` (default http://127.0.0.1:8080)
# MEDPANEL       the CLI (default `medpanel` on PATH, else this checkout's bin/run.js)
# MEDPANEL_DB    the store `serve` uses, as every command reads it (default ./medpanel-demo.db)
set -euo pipefail
MEDPANEL_URL=${MEDPANEL_URL:-http://127.0.0.1:8080}
if [ -z "${MEDPANEL:-}" ]; then
  if command -v medpanel >/dev/null 2>&1; then MEDPANEL=medpanel; else MEDPANEL="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/bin/run.js"; fi
fi
export MEDPANEL_DB=${MEDPANEL_DB:-./medpanel-demo.db}
DEMO_BASIC=demo-client:demo-client-secret

# check DESCRIPTION ACTUAL EXPECTED: exits 1 naming what differed.
check() {
  if [ "$2" != "$3" ]; then
    echo "FAILED: $1: got '$2', expected '$3'" >&2
    exit 1
  fi
  echo "ok: $1"
}

# wait_ready: returns once the service says it is ready (/readyz answers 200). While it starts
# (serve --demo seeding its data set), every other path answers 503 with Retry-After, so a script
# that only waits for "any answer" would run too early. Gives up after 60 s.
wait_ready() {
  for _ in $(seq 300); do
    curl -sf -o /dev/null "$MEDPANEL_URL/readyz" && return 0
    sleep 0.2
  done
  echo "FAILED: $MEDPANEL_URL/readyz did not answer 200 within 60 s (is serve --demo running there?)" >&2
  exit 1
}
