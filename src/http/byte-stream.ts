/**
 * A response body that pulls one piece from the generator each time the socket wants more, so a
 * slow reader holds the producer back instead of the answer piling up in memory. A failure
 * mid-answer can no longer change the status line: it goes to `onError` and the connection is
 * cut short, which a client sees as a truncated body. A reader that goes away ends the generator
 * (its `finally` runs); a piece still being produced then is dropped, and is no failure.
 */
export function toByteStream(chunks: AsyncGenerator<Uint8Array, void, undefined>, onError: (error: unknown) => void): ReadableStream<Uint8Array> {
  let cancelled = false
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await chunks.next()
          if (cancelled) return
          if (next.done) controller.close()
          else controller.enqueue(next.value)
        } catch (error) {
          if (cancelled) return
          onError(error)
          controller.error(error)
        }
      },
      async cancel() {
        cancelled = true
        await chunks.return(undefined)
      },
    },
    {highWaterMark: 1},
  )
}
