"""Validates a medpanel ID token the way a Python relying party does, with Authlib.

    /usr/bin/python3 oidc_authlib_validate.py ISSUER ID_TOKEN CLIENT_ID NONCE [ACCESS_TOKEN]

Reads the issuer's OpenID configuration and its JWKS with the standard library (urllib), then
checks the token with authlib.jose: the signature by the key its kid names, an algorithm the
provider announces, and the claims (iss, aud and nonce given here; exp and iat against the clock;
at_hash against the access token when one is given). Prints {"header": ..., "claims": ...} as
JSON and exits 0, or prints {"error": ...} and exits 1.
"""

import json
import sys
import urllib.request

from authlib.jose import JsonWebKey, JsonWebToken
from authlib.jose.errors import JoseError
from authlib.oidc.core import CodeIDToken


def fetch_json(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def main(argv):
    if len(argv) not in (5, 6):
        print(__doc__, file=sys.stderr)
        return 2
    issuer, id_token, client_id, nonce = argv[1:5]
    access_token = argv[5] if len(argv) == 6 else None
    configuration = fetch_json(issuer + "/.well-known/openid-configuration")
    if configuration["issuer"] != issuer:
        print(json.dumps({"error": "the configuration names another issuer"}))
        return 1
    keys = JsonWebKey.import_key_set(fetch_json(configuration["jwks_uri"]))
    # Only the algorithms the provider signs ID tokens with: never "none", never HMAC with a public key.
    jwt = JsonWebToken(configuration["id_token_signing_alg_values_supported"])
    claims_options = {
        "iss": {"essential": True, "value": issuer},
        "aud": {"essential": True, "value": client_id},
        "nonce": {"essential": True, "value": nonce},
        "sub": {"essential": True},
        "exp": {"essential": True},
        "iat": {"essential": True},
    }
    params = {"nonce": nonce}
    if access_token is not None:
        params["access_token"] = access_token
    try:
        claims = jwt.decode(id_token, keys, claims_cls=CodeIDToken, claims_options=claims_options, claims_params=params)
        claims.validate(leeway=60)
    except (JoseError, ValueError) as error:
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        return 1
    print(json.dumps({"header": dict(claims.header), "claims": dict(claims)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
