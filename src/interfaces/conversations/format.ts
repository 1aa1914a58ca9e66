import type {Conversation, SummaryResult} from './views.js'

/** Interface E's error body, the same fields in every format. */
export interface ErrorBody {
  code: number
  message: string
  details: string
}

/**
 * One answer format of interface E (JSON, XML): everything the routes, the calls and the search
 * threads need to answer in it. Each format is one object in a file of its own, listed in
 * formats.ts; no code branches on which format it has. A data answer is written in pieces as its
 * conversations are read: head, then pages, then tail, which joined are exactly the whole answer.
 *
 * A format's file must not import zod or the OpenAPI schemas: the search threads render pages
 * with it, and their bundle stays small. answer-schema.ts holds the JSON and XML answers' schemas
 * for /openapi.json, by format name; a format it does not know is described there as text.
 */
export interface AnswerFormat {
  /** How a data job names it to a search thread (a job crosses threads as plain data). */
  readonly name: string
  /** How /openapi.json and the 406 name it, e.g. "JSON". */
  readonly label: string
  /** The media type Accept asks for and Content-Type answers with (charset aside). */
  readonly mediaType: string
  /** A whole summary answer. */
  summary(result: SummaryResult): string
  /** A data answer's opening, everything before its first conversation; `conversations` follow it. */
  head(result: SummaryResult, conversations: number): string
  /** One page of conversations; `first` for the answer's first page (each page is written as it is read). */
  page(conversations: readonly Conversation[], first: boolean): string
  /** A data answer's closing, after its last page. */
  tail(conversations: number): string
  /** An error answer's body. */
  error(body: ErrorBody): string
}
