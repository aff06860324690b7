// The smallest Fastify 5 app behind Gate. Run the sidecar first (see README.md), then: node server.js
import Fastify from 'fastify'
import { gate } from '@gate/fastify'

const app = Fastify()
await app.register(gate, { skip: ['/healthz'] }) // every request below is decided by the Gate sidecar

const pets = [{ id: '1', name: 'Rex' }]

app.get('/healthz', async () => ({ ok: true }))
app.get('/pets', async request => ({ pets, receipt: request.gate.receipt.id }))
app.get('/pets/:id', async request => ({ pet: pets.find(p => p.id === request.params.id) ?? null }))
app.post('/pets', async (request, reply) => {
  const pet = { id: String(pets.length + 1), name: String(request.body?.name ?? 'unnamed') }
  pets.push(pet)
  return reply.code(201).send({ pet, receipt: request.gate.receipt.id })
})

const port = Number(process.env.PORT ?? 3000)
await app.listen({ port, host: '127.0.0.1' })
console.log(`pets on http://127.0.0.1:${port}`)
