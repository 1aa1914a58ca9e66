import type {Hook} from '@hono/zod-openapi'
import {AppError} from '../errors.js'
import {describeZodError} from '../lib/validate.js'

/**
 * The default hook for every OpenAPI route: a request that fails its zod schema becomes an
 * AppError, which the interface's error shape renders (400 unless the interface says otherwise).
 */
// biome-ignore lint/suspicious/noExplicitAny: a default hook serves every route, whatever its input types (OpenAPIHono's own signature)
export const rejectInvalid: Hook<any, any, any, any> = (result) => {
  if (!result.success) throw new AppError('invalid_request', `invalid ${result.target}: ${describeZodError(result.error)}`)
}
