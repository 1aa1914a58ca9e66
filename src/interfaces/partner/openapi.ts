import type {OpenAPIHono} from '@hono/zod-openapi'
import {z} from 'zod'
import {useOpenApi} from '../../lib/zod.js'
import {eventSchema, memberListSchema, memberSchema, projectSchema, quotaSchema} from './schema.js'

useOpenApi()

/**
 * Interface B in the OpenAPI document, as `webhooks`: the calls medpanel makes to a partner's
 * base URL (the client's --partner-url), with the bodies the same schemas check before anything
 * is queued, and the headers every call carries. Pushes are sent in each project's order, retried
 * on failure, and may arrive more than once with the same delivery id.
 */
// biome-ignore lint/suspicious/noExplicitAny: registered on the app whatever its environment and schema types
export function registerPartnerWebhooks(app: OpenAPIHono<any, any, any>): void {
  const registry = app.openAPIRegistry
  registry.registerComponent('securitySchemes', 'partnerBasic', {
    type: 'http',
    scheme: 'basic',
    description: "The partner's own credentials (--partner-username, --partner-password), sent by medpanel with every push",
  })
  const headers = z.object({
    'x-medpanel-delivery': z.string().uuid().openapi({description: "The push's id: the same on every retry, so a partner can apply it once"}),
    'x-request-id': z.string().optional().openapi({
      description: 'The request id of the command run or request that queued the change (shared by every delivery it queued): for following it through logs, not for deduplication',
    }),
    'x-medpanel-signature': z.string().optional().openapi({
      description: 'For clients with a signing secret: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">',
      example: 't=1795306546,v1=5d41402abc4b2a76b9719d911017c592',
    }),
    'webhook-id': z.string().optional().openapi({
      description: 'Standard Webhooks, for clients with a signing secret: the delivery id again (the same on every retry)',
      example: '0f8b6c3e-2d1a-4c55-9a7e-3b1f0e6d2c49',
    }),
    'webhook-timestamp': z.string().optional().openapi({
      description: 'Standard Webhooks: the time of this attempt, in whole seconds since 1970',
      example: '1795306546',
    }),
    'webhook-signature': z.string().optional().openapi({
      description:
        'Standard Webhooks: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>"> keyed with the signing secret\'s UTF-8 bytes; may hold several space-separated signatures, one of which must match. The standardwebhooks and svix libraries check it with whsec_ + base64 of those bytes',
      example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    }),
  })
  const ok = {200: {description: 'Accepted (any 2xx); anything else is retried, with backoff, for three days'}}
  // A webhook has no path of its own: where each call goes is in its summary (the ids in the URL
  // are the pushed resource's own).
  const hook = (name: string, method: 'put' | 'post' | 'delete', summary: string, body?: z.ZodType) =>
    registry.registerWebhook({
      method,
      path: name,
      operationId: name,
      summary,
      tags: ['B. Partner pushes'],
      security: [{partnerBasic: []}],
      request: {headers, ...(body ? {body: {required: true, content: {'application/json': {schema: body}}}} : {})},
      responses: ok,
    })
  hook('putProject', 'put', 'PUT {partner-url}/v1/projects/{project_id}: a project, created or replaced', projectSchema)
  hook('putQuota', 'put', 'PUT {partner-url}/v1/projects/{project_id}/quotas/{quota_id}: a quota, created or replaced', quotaSchema)
  hook('putQuotaMembers', 'put', 'PUT …/quotas/{quota_id}/members: the first chunk of a member list, replacing the list', memberListSchema)
  hook('postQuotaMembers', 'post', 'POST …/quotas/{quota_id}/members: each further chunk, appended', memberListSchema)
  hook('putQuotaMember', 'put', 'PUT …/quota/{quota_id}/members/{npi}: one member, added or replaced', memberSchema)
  hook('deleteQuotaMember', 'delete', 'DELETE …/quota/{quota_id}/members/{npi}: one member removed')
  hook('postEvent', 'post', 'POST {partner-url}/v1/projects/{project_id}/events: a survey event', eventSchema)
}
