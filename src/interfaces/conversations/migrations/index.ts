import type {AnyMigration} from '../../../store/migration-types.js'
import * as conversations from './2026112205_conversations.js'
import * as conversationTermDays from './2026112501_conversation_term_days.js'
import * as conversationSearchLexemes from './2026113001_conversation_search_lexemes.js'

/** Interface E's migrations. Names sort in the order they run; append new ones, never edit one that has shipped. */
export const migrations: Record<string, AnyMigration> = {
  '2026112205_conversations': conversations,
  '2026112501_conversation_term_days': conversationTermDays,
  '2026113001_conversation_search_lexemes': conversationSearchLexemes,
}
