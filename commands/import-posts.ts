import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {documentConversations} from '../src/interfaces/conversations/document-stream.js'
import {checkConversations, writeConversations, type LoadResult} from '../src/interfaces/conversations/import.js'
import {formatRecord} from '../src/lib/table.js'
import {BaseCommand} from './base-command.js'
import {notJson, openInputChunks} from './input-file.js'

export default class ImportPosts extends BaseCommand<typeof ImportPosts> {
  static override description =
    'Load posts with their comments from a data-call document (as GET /conversations/data returns) or its conversations array. The file is read as a stream and validated whole before anything is written; posts already stored are replaced.'
  static override examples = ['<%= config.bin %> import-posts --file conversations.json', 'curl -s … /conversations/data | <%= config.bin %> import-posts --file -']

  static override asked = ['file']
  static override flags = {
    file: Flags.string({description: 'JSON file to load ("-" reads standard input)'}),
    'allow-empty': Flags.boolean({description: 'accept a file with no posts and import nothing (refused otherwise)', default: false}),
  }

  async run(): Promise<LoadResult> {
    const file = await this.need(this.flags.file, 'file', 'JSON file to load')
    const chunks = await openInputChunks('file', file)
    const source = () => documentConversations(chunks())
    try {
      const checked = await checkConversations(source)
      // An empty list is far more often a broken export or a wrong filter than data, and saying
      // "done" to it hides that: as with push-members, importing nothing takes an explicit flag.
      if (checked.postIds.size === 0) {
        if (!this.flags['allow-empty'])
          throw new AppError('bad_request', `${file === '-' ? 'standard input' : file} holds no posts; to accept that and import nothing, add --allow-empty`)
        this.say('No posts in the file: nothing imported.')
        return {posts: 0, comments: 0, authors: 0, replaced_posts: 0}
      }
      const result = await this.audited(
        (store) => writeConversations(store.db, source, checked),
        (loaded) => ({kind: 'posts', target: file, changes: {...loaded}}),
      )
      this.say(formatRecord({...result}))
      return result
    } catch (error) {
      throw notJson('file', file, error)
    }
  }
}
