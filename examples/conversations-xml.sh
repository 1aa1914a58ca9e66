#!/usr/bin/env bash
# Interface E: counts, then whole conversations in XML, with the demo's API key; and the same
# search in JSON agrees with the XML.
source "$(dirname "$0")/lib.sh"
wait_ready
key=mpk_demo_conversations_key
# The demo's posts cover the two years up to today: search the last 360 days.
window="start=$(date -u -d '-360 days' +%Y-%m-%dT00:00:00Z)&end=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
summary=$(curl -sf -H "X-Service-Conversation-API-Key: $key" -H 'Accept: application/vnd.service-v1+json' "$MEDPANEL_URL/conversations/summary?terms%5B%5D=patient&$window")
posts=$(jq -r '.summary.uniques.posts' <<<"$summary")
[ "$posts" -gt 0 ] || { echo "FAILED: no posts mention the term in the window" >&2; exit 1; }
echo "ok: $posts posts in the window"

xml=$(curl -sf -H "X-Service-Conversation-API-Key: $key" -H 'Accept: application/vnd.service-v1+xml' "$MEDPANEL_URL/conversations/data?terms%5B%5D=patient&$window")
check "the answer is XML" "$(head -c 5 <<<"$xml")" "<?xml"
in_xml=$(grep -o '<post>' <<<"$xml" | wc -l | tr -d ' ')
check "every matching post is in the XML export" "$in_xml" "$posts"
