import {z} from 'zod'
import {balanceConfig} from './config.js'
import {AppError} from '../../errors.js'
import {parseInput} from '../../lib/validate.js'
import {type ExactJson, readExactJson} from './decimal-json.js'
import {DECIMAL_TEXT, isDecimal, Money} from './money.js'
import {withdrawalBodySchema, type WithdrawalInput, type WithdrawalRequest} from './schema.js'

/*
 * The one edge parser of a withdrawal body, in two steps because the route answers between them
 * (an unknown account key or a bad Idempotency-Key is refused after the JSON, before the schema):
 *
 * 1. readWithdrawalText: the raw text, read once (decimal-json.ts), with its duplicate-key and
 *    depth checks in the same pass, and each top-level number's exact text kept.
 * 2. withdrawalRequest: the schema once, then the amount as an exact decimal (Money), from the
 *    text the client wrote, never through a float.
 *
 * The CLI and in-process callers, who hold an object rather than text, take step 2 alone.
 */

/** Step 1: the body text as JSON (400 when empty, not JSON, ambiguous or too deep). */
export function readWithdrawalText(text: string): ExactJson {
  if (!text.trim()) throw new AppError('bad_request', 'a JSON body with type, amount and member_details is required')
  return readExactJson(text, balanceConfig.bodyMaxDepthLevels)
}

/**
 * Step 2: the body's shape by the schema the route documents (400 when it cannot be used at all);
 * values are judged later, by the service (422). `numbers` holds the exact text of the JSON
 * numbers, when the body came as text.
 */
export function withdrawalRequest(body: unknown, numbers?: ExactJson['numbers']): WithdrawalRequest {
  const {amount, ...rest} = parseInput(withdrawalBodySchema, body)
  const amountWritten = numbers?.get('amount') ?? amount
  // Valid JSON number text and the schema's decimal strings are all Decimal syntax.
  return {...rest, amount: new Money(String(amountWritten)), amountWritten}
}

/** Takes a request already read, or reads a caller's object (step 2). */
export function asWithdrawalRequest(body: WithdrawalRequest | WithdrawalInput): WithdrawalRequest {
  return isDecimal(body.amount) && 'amountWritten' in body ? (body as WithdrawalRequest) : withdrawalRequest(body)
}

/**
 * A JSON number written with an exponent (`1e2`) passes the schema as a number, but the ledger takes
 * amounts as plain decimals only. Refused as the schema refuses such a string, once the account is
 * known: the place and the words of this answer in every release so far.
 */
export function requirePlainAmount(request: WithdrawalRequest): void {
  const written = request.amountWritten
  if (typeof written === 'string' && !DECIMAL_TEXT.test(written)) parseInput(plainAmount, {amount: written})
}

const plainAmount = z.object({amount: withdrawalBodySchema.shape.amount})
