/**
 * Every command, listed explicitly (oclif's "explicit" strategy) so one bundle holds them all.
 * Add a command: create commands/NAME.ts and add it here under the name operators type.
 */
import AddMember from './add-member.js'
import Demo from './demo.js'
import IssueToken from './issue-token.js'
import ListClients from './list-clients.js'
import ListMembers from './list-members.js'
import RegisterClient from './register-client.js'
import RevokeConsent from './revoke-consent.js'
import RotateClientSecret from './rotate-client-secret.js'
import Serve from './serve.js'
import ShowClient from './show-client.js'
import ShowMember from './show-member.js'
import UpdateClient from './update-client.js'
import UpdateMember from './update-member.js'
import PushProject from './push-project.js'
import PushQuota from './push-quota.js'
import PushMembers from './push-members.js'
import RemoveMember from './remove-member.js'
import PushEvent from './push-event.js'
import CloseProject from './close-project.js'
import ListDeliveries from './list-deliveries.js'
import RetryDeliveries from './retry-deliveries.js'
import PartnerServe from './partner-serve.js'
import VerifyPartner from './verify-partner.js'
import ImportPosts from './import-posts.js'
import IssueApiKey from './issue-api-key.js'
import SeedPosts from './seed-posts.js'
import UpdateApiKey from './update-api-key.js'
import SeedPulses from './seed-pulses.js'
import ImportPulse from './import-pulse.js'
import ListPulses from './list-pulses.js'

import ShowBalance from './show-balance.js'
import ListTransactions from './list-transactions.js'
import Credit from './credit.js'
import Debit from './debit.js'
import Withdraw from './withdraw.js'
import UpdateTransaction from './update-transaction.js'
import ListWithdrawalTypes from './list-withdrawal-types.js'
import RestrictWithdrawalType from './restrict-withdrawal-type.js'
export const COMMANDS = {
  'add-member': AddMember,
  demo: Demo,
  'issue-token': IssueToken,
  'list-clients': ListClients,
  'list-members': ListMembers,
  'register-client': RegisterClient,
  'revoke-consent': RevokeConsent,
  'rotate-client-secret': RotateClientSecret,
  serve: Serve,
  'show-client': ShowClient,
  'show-member': ShowMember,
  'update-client': UpdateClient,
  'update-member': UpdateMember,
  'push-project': PushProject,
  'push-quota': PushQuota,
  'push-members': PushMembers,
  'remove-member': RemoveMember,
  'push-event': PushEvent,
  'close-project': CloseProject,
  'list-deliveries': ListDeliveries,
  'retry-deliveries': RetryDeliveries,
  'partner-serve': PartnerServe,
  'verify-partner': VerifyPartner,
  'import-posts': ImportPosts,
  'issue-api-key': IssueApiKey,
  'seed-posts': SeedPosts,
  'update-api-key': UpdateApiKey,
  'seed-pulses': SeedPulses,
  'import-pulse': ImportPulse,
  'list-pulses': ListPulses,
  'show-balance': ShowBalance,
  'list-transactions': ListTransactions,
  credit: Credit,
  debit: Debit,
  withdraw: Withdraw,
  'update-transaction': UpdateTransaction,
  'list-withdrawal-types': ListWithdrawalTypes,
  'restrict-withdrawal-type': RestrictWithdrawalType,
}
