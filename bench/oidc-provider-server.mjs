// The comparison for bench:introspect: node-oidc-provider (a dev dependency, pinned) with RFC 7662
// introspection on, one confidential client using client_secret_basic, and one access token it
// issued, served by plain node:http on a loopback port. It keeps its tokens in its default
// in-memory store (no database), with nothing logged (its one warning, about that store, goes
// to stderr). Prints {"url", "token", "client_id", "client_secret", "version"} as one JSON line
// once it listens.
import {generateKeyPairSync, randomBytes} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {createServer} from 'node:http'
import Provider from 'oidc-provider'

const client = {client_id: 'bench-client', client_secret: randomBytes(24).toString('base64url')}
const server = createServer()
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
const issuer = `http://127.0.0.1:${server.address().port}`
const provider = new Provider(issuer, {
  clients: [
    {
      ...client,
      redirect_uris: ['https://bench.example/callback'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  features: {introspection: {enabled: true}, devInteractions: {enabled: false}},
  cookies: {keys: [randomBytes(32).toString('base64url')]},
  jwks: {keys: [{...generateKeyPairSync('rsa', {modulusLength: 2048}).privateKey.export({format: 'jwk'}), kid: 'bench', use: 'sig', alg: 'RS256'}]},
  ttl: {AccessToken: 7200, Grant: 7200},
  findAccount: (_ctx, id) => ({accountId: id, claims: () => ({sub: id})}),
})
server.on('request', provider.callback())
const grant = new provider.Grant({accountId: '1', clientId: client.client_id})
grant.addOIDCScope('openid profile')
const grantId = await grant.save()
const token = await new provider.AccessToken({accountId: '1', client: await provider.Client.find(client.client_id), grantId, scope: 'openid profile'}).save()
const {version} = JSON.parse(readFileSync(new URL('../node_modules/oidc-provider/package.json', import.meta.url), 'utf8'))
console.log(JSON.stringify({url: issuer, token, version, ...client}))
