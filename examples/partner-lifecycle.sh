#!/usr/bin/env bash
# Interface B: a project's whole life pushed to the reference partner (partner-serve) and read back
# from it. Starts partner-serve itself on PARTNER_PORT (default 9191) with a store in a temp dir.
source "$(dirname "$0")/lib.sh"
port=${PARTNER_PORT:-9191}
dir=$(mktemp -d)
"$MEDPANEL" partner-serve --port "$port" --username acme --password s3cret --db "$dir/partner.db" >/dev/null 2>"$dir/partner.log" &
partner=$!
trap 'kill $partner 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
partner_url="http://127.0.0.1:$port"

client=$("$MEDPANEL" register-client --name "Acme Panels $$" --url https://acme.example --logo-url https://acme.example/l.png \
  --grant partner --partner-url "$partner_url" --partner-username acme --partner-password s3cret --json | jq -r .client_id)
project="EX-$$"
"$MEDPANEL" push-project --project-id "$project" --name 'Example study' --duration 5 --status active --type custom --partner "$client" --wait --json >/dev/null
cat >"$dir/quota.json" <<JSON
{"quota_id": "Q1", "status": "open", "limit": 2, "incidence_rate": 0.35, "type": "specialty", "matching_specialties": ["Cardiology"],
 "matching_regions": ["CA"], "cost_per_complete": "140.00", "honoraria": 90.5, "url": "https://survey.example/s?npi=<npi>", "closes_at": "2030-12-31T23:00:00Z"}
JSON
"$MEDPANEL" push-quota --project-id "$project" --file "$dir/quota.json" --wait --json >/dev/null
echo '[{"npi": "1234567893", "honoraria": 90.5, "url": "https://survey.example/s?npi=1234567893"}]' >"$dir/members.json"
"$MEDPANEL" push-members --project-id "$project" --quota-id Q1 --file "$dir/members.json" --wait --json >/dev/null
"$MEDPANEL" push-event --project-id "$project" --quota-id Q1 --npi 1234567893 --state complete --wait --json >/dev/null
"$MEDPANEL" close-project "$project" --wait --json >/dev/null

at_partner() { curl -sf -u acme:s3cret "$partner_url/v1/projects/$project$1"; }
check "the partner holds the project, closed" "$(at_partner '' | jq -r .status)" closed
check "its quota, closed" "$(at_partner /quotas/Q1 | jq -r .status)" closed
check "its member list" "$(at_partner /quotas/Q1/members | jq -r '.[0].npi')" 1234567893
check "and the complete event" "$(at_partner /events | jq -r '.[0].state')" complete
check "nothing is left in the outbox" "$("$MEDPANEL" list-deliveries --project-id "$project" --status pending --json | jq length)" 0
