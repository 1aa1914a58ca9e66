import {extendZodWithOpenApi} from '@hono/zod-openapi'
import {z} from 'zod'

/**
 * Gives zod's schemas `.openapi()`. Each schema module that documents HTTP routes calls this at
 * its top, before defining anything: importing @hono/zod-openapi for its side effect is not
 * enough once the CLI is split into per-command chunks, since a chunk may build its schemas
 * before any module that happened to trigger the extension ran. Idempotent. Schemas that never
 * call `.openapi()` import plain zod and keep the HTTP stack out of the commands that do not serve.
 */
export function useOpenApi(): void {
  extendZodWithOpenApi(z)
}
