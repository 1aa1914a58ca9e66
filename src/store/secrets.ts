import {createCipheriv, createDecipheriv, hkdfSync, randomBytes} from 'node:crypto'
import {chmodSync, existsSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {hash} from 'node:crypto'
import {environment, parseSecretKeys} from '../config.js'
import {refuseSharedFiles} from './private-file.js'

/**
 * Secrets medpanel must be able to read back (partner passwords and signing secrets, sent to
 * partners) are sealed with AES-256-GCM under a key that never lives in the database: a key file
 * beside the store (`STORE.key`, created 0600 on first use) or MEDPANEL_SECRET_KEY. Each sealed
 * value names its key by id, so `rotate-secret-key` can re-seal every row under a new key while
 * values sealed under the old one still open. Whoever can read the database file alone learns
 * nothing from it. The same key (through HKDF) signs the consent page's sign-in cookies.
 */
export interface Keyring {
  /** The key new values are sealed with. */
  current: {id: string; key: Buffer}
  /** Every key a sealed value may name, by id. */
  keys: Map<string, Buffer>
  /** Where the keys came from, for messages and for reloading after a rotation elsewhere. */
  source: {kind: 'env'} | {kind: 'file'; path: string} | {kind: 'ephemeral'}
}

const PREFIX = 'sealed:v1:'

/** A key's id: the first 12 hex digits of its SHA-256; it says which key, never the key. */
function keyId(key: Buffer): string {
  return hash('sha256', key, 'hex').slice(0, 12)
}

function ring(keys: Buffer[], source: Keyring['source']): Keyring {
  const first = keys[0]!
  return {current: {id: keyId(first), key: first}, keys: new Map(keys.map((key) => [keyId(key), key])), source}
}

/** The file beside a SQLite store that holds its keys. */
export function keyFileOf(storeFile: string): string {
  return `${storeFile}.key`
}

/**
 * The keys of a store: `secretKeys` (MEDPANEL_SECRET_KEY's, by default) when there are any; else
 * the key file beside a store file, made (0600, a new random key) when missing; else (an
 * in-memory store) a key for this process only. `null` skips the variable (copy-store's source).
 */
export function loadKeyring(storeFile: string | undefined, secretKeys: Buffer[] | null = environment().secretKeys ?? null): Keyring {
  if (secretKeys !== null) return ring(secretKeys, {kind: 'env'})
  if (storeFile === undefined || storeFile === ':memory:' || storeFile === '') return ring([randomBytes(32)], {kind: 'ephemeral'})
  const path = keyFileOf(storeFile)
  if (!existsSync(path)) {
    try {
      // 'wx': two processes creating the store at once cannot each write a different key.
      writeFileSync(path, `${randomBytes(32).toString('base64')}\n`, {mode: 0o600, flag: 'wx'})
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot create the key file ${path}: ${(error as Error).message}`)
    }
  }
  // A key other users can read is no secret any more: refused, as ssh refuses such a private key.
  refuseSharedFiles([path])
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new Error(`cannot read the key file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
  return ring(parseSecretKeys(text, `the key file ${path}`), {kind: 'file', path})
}

/** Writes a key file in one step (temporary name, then rename), readable by its owner only. */
export function writeKeyFile(path: string, keys: Buffer[]): void {
  const partial = `${path}.${process.pid}.partial`
  writeFileSync(partial, `${keys.map((key) => key.toString('base64')).join('\n')}\n`, {mode: 0o600})
  // The mode above applies only to a new file: a partial left by an earlier crash keeps its own.
  chmodSync(partial, 0o600)
  renameSync(partial, path)
}

export function isSealed(value: string): boolean {
  return value.startsWith(PREFIX)
}

/** `sealed:v1:<key id>:<iv>:<ciphertext and tag>`, all base64 but the id. */
export function seal(keyring: Keyring, plaintext: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', keyring.current.key, iv)
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return `${PREFIX}${keyring.current.id}:${iv.toString('base64')}:${body.toString('base64')}`
}

/**
 * Opens a sealed value. A value that is not sealed is returned as it is: only rows an earlier
 * release wrote are, and the first open seals those.
 */
export function unseal(keyring: Keyring, value: string): string {
  if (!isSealed(value)) return value
  const [id, iv, body] = value.slice(PREFIX.length).split(':')
  let key = keyring.keys.get(id ?? '')
  if (!key && keyring.source.kind === 'file') {
    // Another process may have rotated the key since this one loaded it.
    const fresh = loadKeyring(keyring.source.path.slice(0, -'.key'.length))
    keyring.current = fresh.current
    keyring.keys = fresh.keys
    key = keyring.keys.get(id ?? '')
  }
  if (!key || !iv || !body) throw new Error(`a stored secret is sealed with key ${id ?? '?'}, which this process does not have (check MEDPANEL_SECRET_KEY or the key file)`)
  const bytes = Buffer.from(body, 'base64')
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'))
  decipher.setAuthTag(bytes.subarray(bytes.length - 16))
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8')
}

/** A key for one purpose (`purpose` names it), derived from the current key. */
export function derivedKey(keyring: Keyring, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', keyring.current.key, Buffer.alloc(0), `medpanel ${purpose}`, 32))
}

/** A new random key, as `rotate-secret-key` makes. */
export function newKey(): Buffer {
  return randomBytes(32)
}

export {keyId}
