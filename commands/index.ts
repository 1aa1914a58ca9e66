import type {Command} from '@oclif/core'

/**
 * Every command, by the name operators type, as a loader: a run imports only the command it runs
 * (and what that command imports), so `--version` or `list-clients` never load the HTTP stack.
 * oclif's own lookup is pointed here by src/cli/commands.ts.
 * Add a command: create commands/NAME.ts and add it here.
 */
export const COMMAND_LOADERS: Record<string, () => Promise<Command.Class>> = {
  'add-member': () => import('./add-member.js').then((m) => m.default),
  backup: () => import('./backup.js').then((m) => m.default),
  'copy-store': () => import('./copy-store.js').then((m) => m.default),
  restore: () => import('./restore.js').then((m) => m.default),
  demo: () => import('./demo.js').then((m) => m.default),
  'issue-token': () => import('./issue-token.js').then((m) => m.default),
  'list-clients': () => import('./list-clients.js').then((m) => m.default),
  'list-members': () => import('./list-members.js').then((m) => m.default),
  'register-client': () => import('./register-client.js').then((m) => m.default),
  'revoke-consent': () => import('./revoke-consent.js').then((m) => m.default),
  'rotate-client-secret': () => import('./rotate-client-secret.js').then((m) => m.default),
  'rotate-secret-key': () => import('./rotate-secret-key.js').then((m) => m.default),
  serve: () => import('./serve.js').then((m) => m.default),
  'show-client': () => import('./show-client.js').then((m) => m.default),
  'show-member': () => import('./show-member.js').then((m) => m.default),
  'update-client': () => import('./update-client.js').then((m) => m.default),
  'update-member': () => import('./update-member.js').then((m) => m.default),
  'push-project': () => import('./push-project.js').then((m) => m.default),
  'push-quota': () => import('./push-quota.js').then((m) => m.default),
  'push-members': () => import('./push-members.js').then((m) => m.default),
  'remove-member': () => import('./remove-member.js').then((m) => m.default),
  'push-event': () => import('./push-event.js').then((m) => m.default),
  'close-project': () => import('./close-project.js').then((m) => m.default),
  'list-deliveries': () => import('./list-deliveries.js').then((m) => m.default),
  'retry-deliveries': () => import('./retry-deliveries.js').then((m) => m.default),
  'partner-serve': () => import('./partner-serve.js').then((m) => m.default),
  'verify-partner': () => import('./verify-partner.js').then((m) => m.default),
  'import-posts': () => import('./import-posts.js').then((m) => m.default),
  'issue-api-key': () => import('./issue-api-key.js').then((m) => m.default),
  'seed-posts': () => import('./seed-posts.js').then((m) => m.default),
  'update-api-key': () => import('./update-api-key.js').then((m) => m.default),
  'seed-pulses': () => import('./seed-pulses.js').then((m) => m.default),
  'import-pulse': () => import('./import-pulse.js').then((m) => m.default),
  'list-pulses': () => import('./list-pulses.js').then((m) => m.default),
  'show-balance': () => import('./show-balance.js').then((m) => m.default),
  status: () => import('./status.js').then((m) => m.default),
  'list-transactions': () => import('./list-transactions.js').then((m) => m.default),
  credit: () => import('./credit.js').then((m) => m.default),
  debit: () => import('./debit.js').then((m) => m.default),
  withdraw: () => import('./withdraw.js').then((m) => m.default),
  'update-transaction': () => import('./update-transaction.js').then((m) => m.default),
  'list-withdrawal-types': () => import('./list-withdrawal-types.js').then((m) => m.default),
  'restrict-withdrawal-type': () => import('./restrict-withdrawal-type.js').then((m) => m.default),
}
