import {extendZodWithOpenApi} from '@hono/zod-openapi'
import {z} from 'zod'

// zod with `.openapi()`, extended here rather than as a side effect of importing
// @hono/zod-openapi: a command's bundle chunk may load a schema before any route module, and the
// extension must already be in place when that schema is built.
extendZodWithOpenApi(z)

export {z}
