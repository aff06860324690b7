// Stands in for your own API in the README's "Protect your own API": plain node:http, nothing of Gate.
// It also answers GET /secret, which its OpenAPI document (openapi.yaml) does not describe.
//   PORT=4000 node examples/your-own/notes-api.mjs
import { createServer } from 'node:http'

const notes = new Map()
let next = 1

function send(res, status, body) {
  const text = body === undefined ? '' : JSON.stringify(body)
  res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' }).end(text)
}

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', chunk => chunks.push(chunk))
  req.on('end', () => {
    const path = new URL(req.url, 'http://notes').pathname
    const id = /^\/notes\/([^/]+)$/.exec(path)?.[1]
    if (path === '/notes' && req.method === 'GET') return send(res, 200, [...notes.values()])
    if (path === '/notes' && req.method === 'POST') {
      let text
      try {
        text = JSON.parse(Buffer.concat(chunks).toString('utf8')).text
      } catch {
        return send(res, 400, { error: 'a JSON body {"text": "..."} please' })
      }
      const note = { id: String(next++), text: String(text) }
      notes.set(note.id, note)
      return send(res, 201, note)
    }
    if (id !== undefined && req.method === 'GET') return notes.has(id) ? send(res, 200, notes.get(id)) : send(res, 404, { error: 'no such note' })
    if (id !== undefined && req.method === 'DELETE') return notes.delete(id) ? send(res, 204) : send(res, 404, { error: 'no such note' })
    if (path === '/secret') return send(res, 200, { secret: 'the notes API answered GET /secret' })
    send(res, 404, { error: 'not found' })
  })
})

const port = Number(process.env.PORT ?? 4000)
server.listen(port, '127.0.0.1', () => console.log(`notes API on http://127.0.0.1:${port}`))
