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
