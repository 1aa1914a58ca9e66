/**
 * The topic each command is listed under in `medpanel --help`, in the order shown. Names stay flat
 * (`list-clients`, not `clients list`): scripts call them by those names; topics only group the
 * listing. Add a command: put its name in one topic here (test/commands/help-topics.test.ts fails
 * for a command in no topic, or in two). Data only: root help reads it without loading a command.
 */
export interface CommandTopic {
  /** The heading, as `medpanel --help` prints it (upper-cased). */
  name: string
  /** One line under the heading: what the commands are about. */
  summary: string
  commands: string[]
}

export const COMMAND_TOPICS: CommandTopic[] = [
  {
    name: 'server',
    summary: 'run the service',
    commands: ['serve', 'demo'],
  },
  {
    name: 'clients',
    summary: 'partner companies signing members in (interface A)',
    commands: [
      'register-client',
      'list-clients',
      'show-client',
      'update-client',
      'rotate-client-secret',
      'revoke-consent',
      'issue-token',
      'remove-client',
      'issue-registration-token',
    ],
  },
  {
    name: 'members',
    summary: 'physicians who sign in',
    commands: ['add-member', 'list-members', 'show-member', 'update-member'],
  },
  {
    name: 'keys',
    summary: 'API keys, ID-token signing keys and the key that seals stored secrets',
    commands: ['issue-api-key', 'list-api-keys', 'show-api-key', 'update-api-key', 'revoke-api-key', 'list-signing-keys', 'rotate-signing-key', 'rotate-secret-key'],
  },
  {
    name: 'balances',
    summary: 'accounts, transactions and withdrawals (interface C)',
    commands: ['show-balance', 'list-transactions', 'show-transaction', 'credit', 'debit', 'withdraw', 'update-transaction', 'list-withdrawal-types', 'restrict-withdrawal-type'],
  },
  {
    name: 'partners',
    summary: 'projects, quotas and events pushed to partners (interface B)',
    commands: [
      'list-projects',
      'show-project',
      'push-project',
      'push-quota',
      'push-members',
      'remove-member',
      'push-event',
      'close-project',
      'list-deliveries',
      'retry-deliveries',
      'verify-partner',
      'partner-serve',
    ],
  },
  {
    name: 'pulses',
    summary: 'physician pulses for export (interface D)',
    commands: ['list-pulses', 'import-pulse', 'seed-pulses'],
  },
  {
    name: 'conversations',
    summary: 'community posts for search (interface E)',
    commands: ['import-posts', 'seed-posts'],
  },
  {
    name: 'store',
    summary: 'the SQLite file or PostgreSQL database, and the audit trail of what operators changed in it',
    commands: ['status', 'list-audit', 'backup', 'restore', 'copy-store'],
  },
  {
    name: 'shell',
    summary: 'tab completion',
    commands: ['autocomplete'],
  },
]
