// An OpenAPI API that answers newline-delimited JSON (`application/x-ndjson`, `application/jsonl`)
// streams: each line is one part, delivered as soon as it is read, for an edge that can pass parts on
// (the native wire's tool_call_chunk frames; docs/wire.md). A line that is not JSON, or one longer
// than the answer limit, fails the call; blank lines are skipped; the last line needs no newline.
import { ToolServerError } from './errors.js'

const NDJSON_TYPES = new Set(['application/x-ndjson', 'application/jsonl', 'application/json-lines'])

/** Whether an answer's content type is one that streams as NDJSON. */
export function isNdjson(contentType: string | undefined): boolean {
  return contentType !== undefined && NDJSON_TYPES.has(contentType.split(';')[0]!.trim().toLowerCase())
}

/** Reads `body` line by line into `onLine`; resolves with the number of lines delivered. */
export async function readNdjson(body: AsyncIterable<Buffer>, maxLineBytes: number, onLine: (value: unknown) => void): Promise<number> {
  let pending: Buffer[] = []
  let pendingBytes = 0
  let lines = 0
  const emit = (line: Buffer) => {
    const text = line.toString('utf8').trim()
    if (text === '') return
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (err) {
      throw new ToolServerError('upstream', `line ${lines + 1} of the upstream's NDJSON answer is not JSON`, err)
    }
    lines++
    onLine(value)
  }
  for await (const chunk of body) {
    let start = 0
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      pending.push(chunk.subarray(start, nl))
      emit(Buffer.concat(pending))
      pending = []
      pendingBytes = 0
      start = nl + 1
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start))
      pendingBytes += chunk.length - start
      if (pendingBytes > maxLineBytes) throw new ToolServerError('upstream', `a line of the upstream's NDJSON answer is longer than ${maxLineBytes} bytes`)
    }
  }
  if (pendingBytes > 0) emit(Buffer.concat(pending))
  return lines
}
