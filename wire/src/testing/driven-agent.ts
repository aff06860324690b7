#!/usr/bin/env node
// An agent for tests, driven line by line: it connects to the wire socket in GATE_WIRE_SOCKET (as a
// `gate run` agent does), then reads JSON commands on stdin and writes JSON events on stdout, so a
// test can send any frame (or bytes no encoder would write) and see every frame the kernel sends.
// Commands: {"op":"send","message":{...}} (capability_token may be a string: sent as raw JSON text),
// {"op":"bytes","hex":"..."}, {"op":"end"} (closes its side), {"op":"connect"} (a new connection in
// place of the current one), {"op":"exit","code":N}.
// Events: {"event":"ready","socket","version"}, {"event":"frame","message"} (a response also has
// "receipt_text", the receipt's bytes as received), {"event":"closed","error"},
// {"event":"signal","signal"} (then it exits 3: SIGINT and SIGTERM reach it through gate run).
import { connect, type Socket } from 'node:net'
import { createInterface } from 'node:readline'
import { FrameReader, encodeFrame, parseKernelMessage, RawJson, WIRE_SOCKET_ENV, WIRE_VERSION_ENV, type AgentMessage } from '@gate/sdk/wire'

const out = (event: Record<string, unknown>) => process.stdout.write(JSON.stringify(event, (_k, v) => (typeof v === 'bigint' ? v.toString() : v instanceof RawJson ? v.value : v)) + '\n')
const socketPath = process.env[WIRE_SOCKET_ENV]
if (socketPath === undefined) {
  out({ event: 'closed', error: `${WIRE_SOCKET_ENV} is not set` })
  process.exit(2)
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    out({ event: 'signal', signal })
    process.exit(3)
  })
}

let socket: Socket = undefined as unknown as Socket
// one connection at a time; `connect` drops the current one (a framing error closes a transport for good)
const open = () => {
  const current = connect({ path: socketPath })
  socket = current
  const reader = new FrameReader()
  let closed = false
  const close = (error: string | null) => {
    if (closed) return
    closed = true
    out({ event: 'closed', error })
  }
  current.on('connect', () => out({ event: 'ready', socket: socketPath, version: process.env[WIRE_VERSION_ENV] ?? null }))
  current.on('data', chunk => {
    try {
      for (const payload of reader.push(chunk)) {
        const message = parseKernelMessage(payload)
        out({ event: 'frame', message, ...(message.type === 'tool_call_response' ? { receipt_text: (message.receipt as RawJson).text } : {}) })
      }
    } catch (err) {
      close((err as Error).message)
      current.destroy()
    }
  })
  current.on('end', () => close(null))
  current.on('error', err => close(err.message))
  current.on('close', () => close(null))
}
open()

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue
  const command = JSON.parse(line) as { op: string; message?: AgentMessage & { capability_token?: unknown }; hex?: string; code?: number }
  if (command.op === 'send') {
    const message = { ...command.message } as AgentMessage & { capability_token?: unknown }
    if (typeof message.capability_token === 'string') message.capability_token = new RawJson(message.capability_token)
    socket.write(encodeFrame(message as AgentMessage))
  } else if (command.op === 'bytes') socket.write(Buffer.from(command.hex ?? '', 'hex'))
  else if (command.op === 'end') socket.end()
  else if (command.op === 'connect') {
    socket.destroy()
    open()
  }
  else if (command.op === 'exit') process.exit(command.code ?? 0)
}
// stdin closed: leave as a finished agent does
process.exit(0)
