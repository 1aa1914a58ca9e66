import type {Hook} from '@hono/zod-openapi'
import type {Context, ValidationTargets} from 'hono'
import type {z} from 'zod'
import {AppError} from '../errors.js'
import {describeZodError} from '../lib/validate.js'

/** A request part that failed its zod schema, as OpenAPIHono hands it to the default hook. */
export interface SchemaFailure {
  target: keyof ValidationTargets
  error: z.ZodError
}

/** The interface's answer to a request its schema refuses. */
export type SchemaRefusal = (failure: SchemaFailure, c: Context) => AppError

/** The answer unless an interface names its own: `invalid_request`, naming the part and the problem. */
export const invalidRequest: SchemaRefusal = (failure) => new AppError('invalid_request', `invalid ${failure.target}: ${describeZodError(failure.error)}`)

/**
 * The one factory of OpenAPIHono default hooks: a request that fails its zod schema becomes the
 * AppError `refuse` makes, thrown for the interface's error shape to render (400 unless the
 * interface says otherwise). Every interface's hook comes from here.
 */
// biome-ignore lint/suspicious/noExplicitAny: a default hook serves every route, whatever its input types (OpenAPIHono's own signature)
export function schemaHook(refuse: SchemaRefusal = invalidRequest): Hook<any, any, any, any> {
  return function refuseSchemaFailure(result, c) {
    if (!result.success) throw refuse(result, c)
  }
}
