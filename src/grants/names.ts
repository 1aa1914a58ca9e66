import {stringList} from '../store/json.js'

/** The grants a client can hold, one per interface it may use (kept free of zod: read paths load it). */
export const GRANTS = ['signon', 'balance', 'pulses', 'conversations', 'partner'] as const
export type Grant = (typeof GRANTS)[number]

/** A client's grants as stored (clients.grants, a JSON list). */
export const grantsSchema = stringList(GRANTS)
