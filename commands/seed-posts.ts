import {Flags} from '@oclif/core'
import {seedPosts, type SeedResult} from '../src/interfaces/conversations/seed.js'
import {formatRecord} from '../src/lib/table.js'
import {BaseCommand} from './base-command.js'

export default class SeedPosts extends BaseCommand<typeof SeedPosts> {
  static override description = 'Generate realistic community posts and comments for interface E, deterministic from --seed'
  static override examples = [
    '<%= config.bin %> seed-posts',
    '<%= config.bin %> seed-posts --count 5000 --comments 3 --from 2024-01-01T00:00:00Z --to 2025-12-31T23:59:59Z --seed 7',
  ]

  static override flags = {
    count: Flags.integer({description: 'posts to generate', default: 1000, min: 1, max: 5_000_000}),
    comments: Flags.integer({description: 'average comments per post (each post gets 0 to twice this)', default: 5, min: 0, max: 100}),
    from: Flags.string({description: 'earliest published_at (ISO 8601); default: one year before --to'}),
    to: Flags.string({description: 'latest published_at (ISO 8601); default: now'}),
    seed: Flags.integer({description: 'random seed: the same seed gives the same posts', default: 1}),
  }

  async run(): Promise<SeedResult> {
    const f = this.flags
    const to = f.to ?? this.clock.now().toISOString()
    const from = f.from ?? new Date(new Date(to).getTime() - 365 * 86_400_000).toISOString()
    const {db} = await this.openStore()
    const progress = await this.progress('seeding posts', f.count)
    const result = await seedPosts(db, {count: f.count, comments: f.comments, from, to, seed: f.seed}, (done) => progress.update(done)).finally(() => progress.stop())
    this.say(formatRecord({...result}))
    return result
  }
}
