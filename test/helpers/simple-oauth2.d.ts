/**
 * The little of simple-oauth2 5.x the tests use (the package ships no types). Only what the
 * tests call is declared; see node_modules/simple-oauth2/lib for the rest.
 */
declare module 'simple-oauth2' {
  export interface ModuleOptions {
    client: {id: string; secret: string}
    auth: {tokenHost: string; tokenPath?: string; revokePath?: string; authorizePath?: string}
    options?: {authorizationMethod?: 'header' | 'body'; bodyFormat?: 'form' | 'json'}
  }
  export interface AccessToken {
    /** The token answer as received, with `expires_at` added when it carried expires_in. */
    readonly token: Readonly<Record<string, unknown> & {access_token: string; expires_at?: Date}>
    expired(expirationWindowSeconds?: number): boolean
    revoke(tokenType: 'access_token' | 'refresh_token'): Promise<unknown>
    revokeAll(): Promise<void>
  }
  export class AuthorizationCode {
    constructor(options: ModuleOptions)
    authorizeURL(params: {redirect_uri: string; scope?: string | string[]; state?: string}): string
    getToken(params: {code: string; redirect_uri: string; scope?: string | string[]}): Promise<AccessToken>
  }
}
