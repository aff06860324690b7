// The tiny API the example protects: an in-memory pet store on 127.0.0.1:3000 (PORT to change it).
// It knows nothing about Gate. It also serves its own document at /openapi.yaml, so
// `gate api protect` can discover it when --spec is left out.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

const spec = readFileSync(new URL('./openapi.yaml', import.meta.url))
const pets = new Map([['1', { id: '1', name: 'Rex', adopted: false }]])
let next = 2

function send(res, status, value) {
  const body = value === undefined ? '' : JSON.stringify(value)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

createServer((req, res) => {
  const chunks = []
  req.on('data', c => chunks.push(c))
  req.on('end', () => {
    const path = (req.url ?? '/').split('?')[0]
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') : {}
    const [, first, id, action] = path.split('/')
    if (path === '/openapi.yaml') {
      res.writeHead(200, { 'content-type': 'application/yaml' })
      return res.end(spec)
    }
    if (first !== 'pets') return send(res, 404, { error: 'not found' })
    if (id === undefined && req.method === 'GET') return send(res, 200, [...pets.values()])
    if (id === undefined && req.method === 'POST') {
      const pet = { id: String(next++), name: String(body.name ?? 'unnamed'), adopted: false }
      pets.set(pet.id, pet)
      return send(res, 201, pet)
    }
    if (id === 'search' && req.method === 'POST') return send(res, 200, [...pets.values()].filter(p => p.name.includes(String(body.name ?? ''))))
    const pet = pets.get(id)
    if (pet === undefined) return send(res, 404, { error: `no pet ${id}` })
    if (action === 'adopt' && req.method === 'POST') return send(res, 200, Object.assign(pet, { adopted: true }))
    if (action === undefined && req.method === 'GET') return send(res, 200, pet)
    if (action === undefined && req.method === 'DELETE') {
      pets.delete(id)
      return send(res, 204)
    }
    send(res, 405, { error: 'method not allowed' })
  })
}).listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => console.log(`sample pet API on http://127.0.0.1:${process.env.PORT ?? 3000}`))
