import * as Flags from '@oclif/core/flags'
import {MAX_SEED, MAX_SEED_POSTS, seedPosts, type SeedResult} from '../src/interfaces/conversations/seed.js'
import {formatRecord} from '../src/lib/table.js'
import {BaseCommand} from './base-command.js'

export default class SeedPosts extends BaseCommand<typeof SeedPosts> {
  static override description =
    'Generate realistic community posts and comments for interface E, deterministic from --seed. Each seed owns its own post ids; re-running skips posts already stored, so a larger --count adds only the rest, and a run stopped with Ctrl-C is completed by running it again.'
  static override examples = [
    '<%= config.bin %> seed-posts',
    '<%= config.bin %> seed-posts --count 5000 --comments 3 --from 2024-01-01T00:00:00Z --to 2025-12-31T23:59:59Z --seed 7',
  ]

  static override flags = {
    count: Flags.integer({description: 'posts to generate', default: 1000, min: 1, max: MAX_SEED_POSTS}),
    comments: Flags.integer({description: 'average comments per post (each post gets 0 to twice this)', default: 5, min: 0, max: 100}),
    from: Flags.string({description: 'earliest published_at (ISO 8601); default: one year before --to'}),
    to: Flags.string({description: 'latest published_at (ISO 8601); default: now'}),
    seed: Flags.integer({
      description: `random seed from 0 to ${MAX_SEED}: the same seed (with the same --comments, --from and --to) gives the same posts, under post ids ${MAX_SEED_POSTS}×seed+1 onwards`,
      default: 1,
      min: 0,
      max: MAX_SEED,
    }),
  }

  async run(): Promise<SeedResult> {
    const f = this.flags
    const to = f.to ?? this.clock.now().toISOString()
    const from = f.from ?? new Date(new Date(to).getTime() - 365 * 86_400_000).toISOString()
    const {db} = await this.openStore()
    const result = await this.interruptibleWrite(
      'seeding posts',
      f.count,
      (progressed, stopAsked) => seedPosts(db, {count: f.count, comments: f.comments, from, to, seed: f.seed}, progressed, stopAsked),
      (r) => `kept ${r.skipped + r.posts} of ${f.count} posts (${r.posts} added by this run)`,
    )
    // The posts commit in batches of their own, so the run is recorded once they are written (or it was stopped).
    if (result.posts > 0) await this.recordAudit({kind: 'posts', target: `seed:${result.seed}`, changes: {...result}})
    this.say(formatRecord({...result}))
    if (!result.interrupted) {
      this.say(
        result.posts === 0
          ? `Nothing added: all ${result.skipped} posts of seed ${result.seed} are already stored.`
          : `${result.posts} post(s) added with ${result.comments} comment(s)${result.skipped ? `, ${result.skipped} already stored (skipped)` : ''}.`,
      )
    }
    return result
  }
}
