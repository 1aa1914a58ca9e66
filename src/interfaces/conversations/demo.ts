import type {DemoPart} from '../../demo-data.js'
import {DEMO_API_KEY} from '../../demo-data.js'
import {sha256} from '../../lib/hashing.js'
import * as repo from './repository.js'
import {FORMATS} from './formats.js'
import {API_KEY_HEADER} from './routes.js'
import {seedPosts} from './seed.js'
import {apiKeyView, issueApiKey} from './keys.js'

export {DEMO_API_KEY}
const DEMO_POSTS = 400

function wholeSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** Interface E's slice of the demo: two years of posts up to now, and the demo key. */
export const conversationDemo: DemoPart = {
  name: 'conversations',
  async seed(db, {baseUrl, now, clientId}) {
    const to = new Date(Math.floor(now.getTime() / 1000) * 1000)
    const from = new Date(to.getTime() - 2 * 365 * 86_400_000)
    const {posts} = await repo.countPosts(db)
    if (posts === 0) await seedPosts(db, {count: DEMO_POSTS, comments: 4, from: from.toISOString(), to: to.toISOString(), seed: 42})
    const existing = await repo.findApiKeyByHash(db, sha256(DEMO_API_KEY))
    const key = existing ? apiKeyView(existing, now) : await issueApiKey(db, {client_id: clientId, data_calls: 1000}, now, DEMO_API_KEY)
    const counts = await repo.countPosts(db)
    const start = wholeSeconds(new Date(to.getTime() - 365 * 86_400_000))
    const end = wholeSeconds(to)
    const query = `terms%5B%5D=atrial%20fibrillation&terms%5B%5D=metformin&terms%5B%5D=chest%20pain&start=${start}&end=${end}`
    const call = (method: string, type: string) => `curl -s "${baseUrl}/conversations/${method}?${query}" -H "Accept: ${type}" -H "${API_KEY_HEADER}: ${DEMO_API_KEY}"`
    return {
      info: {api_key: DEMO_API_KEY, id: key.id, data_calls_remaining: key.data_calls_remaining, posts: counts.posts, comments: counts.comments},
      lines: [
        `API key ${DEMO_API_KEY} (demo only; ${counts.posts} posts, ${counts.comments} comments)`,
        ...FORMATS.map((format) => call('summary', format.mediaType)),
        ...FORMATS.map((format) => call('data', format.mediaType)),
      ],
    }
  },
}
