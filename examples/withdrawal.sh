#!/usr/bin/env bash
# Interface C: the demo doctor withdraws over HTTP, then an operator moves the withdrawal through
# its statuses on the command line, and the balance follows.
source "$(dirname "$0")/lib.sh"
wait_ready
before=$(curl -sf -u "$DEMO_BASIC" "$MEDPANEL_URL/balance/user_id/1/summary" | jq -r .available_funds)

created=$(curl -sf -u "$DEMO_BASIC" -H 'Content-Type: application/json' -H "Idempotency-Key: example-$$" \
  -d '{"type":"PAYPAL","amount":"10.50","member_details":{"first_name":"Dana","last_name":"Whitfield","email":"dana.whitfield@example.com"}}' \
  "$MEDPANEL_URL/balance/user_id/1/withdrawals")
id=$(jq -r .transaction_id <<<"$created")
check "the withdrawal is Processing" "$(curl -sf -u "$DEMO_BASIC" "$MEDPANEL_URL/balance/transactions/$id" | jq -r .status)" Processing
after=$(curl -sf -u "$DEMO_BASIC" "$MEDPANEL_URL/balance/user_id/1/summary" | jq -r .available_funds)
check "available funds went down by 10.50" "$(jq -n "$before - $after | . * 100 | round")" 1050

"$MEDPANEL" update-transaction "$id" --status OnHold --json >/dev/null
check "on hold" "$(curl -sf -u "$DEMO_BASIC" "$MEDPANEL_URL/balance/transactions/$id" | jq -r .status)" OnHold
"$MEDPANEL" update-transaction "$id" --status Cancelled --json >/dev/null
check "cancelled" "$(curl -sf -u "$DEMO_BASIC" "$MEDPANEL_URL/balance/transactions/$id" | jq -r .status)" Cancelled
check "a cancelled withdrawal gives the money back" "$(curl -sf -u "$DEMO_BASIC" "$MEDPANEL_URL/balance/user_id/1/summary" | jq -r .available_funds)" "$before"

refused=$("$MEDPANEL" update-transaction "$id" --status Processing 2>&1 >/dev/null || true)
check "Cancelled is final" "$(grep -c '^Error: a Cancelled transaction cannot become Processing' <<<"$refused")" 1
