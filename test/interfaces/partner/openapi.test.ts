import {describe, expect, it} from 'vitest'
import {freshApp} from '../../helpers/app.js'

describe('interface B in /openapi.json', () => {
  it('documents every call medpanel makes to a partner as a webhook, with its body, delivery id and signature headers, the Standard Webhooks ones included', async () => {
    const ctx = await freshApp()
    try {
      const doc = (await (await ctx.app.request('/openapi.json')).json()) as {
        openapi: string
        webhooks: Record<string, Record<string, {parameters?: {in: string; name: string}[]; requestBody?: unknown; security?: unknown[]}>>
      }
      expect(doc.openapi).toBe('3.1.0')
      expect(Object.keys(doc.webhooks).sort()).toEqual(['deleteQuotaMember', 'postEvent', 'postQuotaMembers', 'putProject', 'putQuota', 'putQuotaMember', 'putQuotaMembers'])
      for (const [name, item] of Object.entries(doc.webhooks)) {
        const [operation] = Object.values(item)
        const headers = (operation!.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name)
        expect(headers, name).toEqual(expect.arrayContaining(['x-medpanel-delivery', 'x-medpanel-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature']))
        expect(operation!.security, name).toEqual([{partnerBasic: []}])
        if (name !== 'deleteQuotaMember') expect(operation!.requestBody, name).toBeDefined()
      }
    } finally {
      await ctx.store.close()
    }
  })
})
