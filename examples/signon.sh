#!/usr/bin/env bash
# Interface A end to end with curl and jq, as a browser and a client would: open the authorize
# page, sign in, allow, exchange the code, then read token info and member info.
source "$(dirname "$0")/lib.sh"
wait_ready
jar=$(mktemp)
trap 'rm -f "$jar"' EXIT
redirect="$MEDPANEL_URL/demo/callback"
authorize="$MEDPANEL_URL/oauth/authorize?client_id=demo-client&redirect_uri=$(jq -rn --arg u "$redirect" '$u|@uri')&response_type=code&state=example-state"

# The sign-in page carries a form token bound to a cookie.
page=$(curl -sf -c "$jar" -b "$jar" "$authorize")
csrf=$(sed -n 's/.*name="csrf_token" value="\([^"]*\)".*/\1/p' <<<"$page" | head -1)
[ -n "$csrf" ] || { echo "FAILED: no form token on the sign-in page" >&2; exit 1; }

# A browser sends its own Origin with every form it posts.
signed_in=$(curl -s -o /dev/null -w '%{http_code}' -c "$jar" -b "$jar" -H "Origin: $MEDPANEL_URL" \
  --data-urlencode client_id=demo-client --data-urlencode "redirect_uri=$redirect" -d response_type=code -d state=example-state \
  --data-urlencode "csrf_token=$csrf" --data-urlencode email=demo.doctor@medpanel.test --data-urlencode password=demo-password \
  "$MEDPANEL_URL/oauth/session")
check "sign-in answers with a redirect to the consent page" "$signed_in" 303

# The consent page, with a new form token (a sign-in rotates it). A member who allowed the demo
# client before is sent straight back with a code instead: consent is remembered.
consent=$(curl -s -c "$jar" -b "$jar" -w '\n%{http_code} %{redirect_url}' "$authorize")
answer=$(tail -1 <<<"$consent")
if [ "${answer%% *}" = 302 ]; then
  location=${answer#* }
else
  csrf=$(sed -n 's/.*name="csrf_token" value="\([^"]*\)".*/\1/p' <<<"$consent" | head -1)
  location=$(curl -s -o /dev/null -w '%{redirect_url}' -c "$jar" -b "$jar" -H "Origin: $MEDPANEL_URL" \
    --data-urlencode client_id=demo-client --data-urlencode "redirect_uri=$redirect" -d response_type=code -d state=example-state \
    --data-urlencode "csrf_token=$csrf" -d decision=allow "$MEDPANEL_URL/oauth/authorize")
fi
code=$(sed -n 's/.*[?&]code=\([^&]*\).*/\1/p' <<<"$location")
check "Allow redirects back with the state" "$(sed -n 's/.*[?&]state=\([^&]*\).*/\1/p' <<<"$location")" example-state
[ -n "$code" ] || { echo "FAILED: no code in $location" >&2; exit 1; }

token=$(curl -sf -u "$DEMO_BASIC" -d grant_type=authorization_code --data-urlencode "code=$code" --data-urlencode "redirect_uri=$redirect" "$MEDPANEL_URL/oauth/token")
access=$(jq -r .access_token <<<"$token")
check "the token is a bearer token with the profile scope" "$(jq -r '.token_type + " " + .scope' <<<"$token")" "bearer profile"

info=$(curl -sf -H "Authorization: Bearer $access" "$MEDPANEL_URL/oauth/token/info")
check "token info names the demo client" "$(jq -r .application.uid <<<"$info")" demo-client
member=$(curl -sf -H "Authorization: Bearer $access" "$MEDPANEL_URL/oauth/user/info")
doctor=$("$MEDPANEL" list-members --json | jq -r '.[] | select(.email == "demo.doctor@medpanel.test") | .first_name + " " + .last_name')
check "member info is the demo doctor's" "$(jq -r '.first_name + " " + .last_name' <<<"$member")" "$doctor"
check "member info has a specialty" "$(jq -r 'has("primary_specialty")' <<<"$member")" true

# The code is single-use: a second exchange fails and revokes what the first one got.
replay=$(curl -s -o /dev/null -w '%{http_code}' -u "$DEMO_BASIC" -d grant_type=authorization_code --data-urlencode "code=$code" --data-urlencode "redirect_uri=$redirect" "$MEDPANEL_URL/oauth/token")
check "a replayed code is refused" "$replay" 400
check "and the token it issued is dead" "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $access" "$MEDPANEL_URL/oauth/token/info")" 401
