// The smallest Express 5 app behind Gate. Run the sidecar first (see README.md), then: node server.js
import express from 'express'
import { gate } from '@gate/express'

const app = express()
app.use(gate({ skip: ['/healthz'] })) // every request below is decided by the Gate sidecar
app.use(express.json()) // after Gate: Gate hands the body back untouched

const pets = [{ id: '1', name: 'Rex' }]

app.get('/healthz', (_req, res) => res.json({ ok: true }))
app.get('/pets', (req, res) => res.json({ pets, receipt: req.gate.receipt.id }))
app.get('/pets/:id', (req, res) => res.json({ pet: pets.find(p => p.id === req.params.id) ?? null }))
app.post('/pets', (req, res) => {
  const pet = { id: String(pets.length + 1), name: String(req.body?.name ?? 'unnamed') }
  pets.push(pet)
  res.status(201).json({ pet, receipt: req.gate.receipt.id })
})

const port = Number(process.env.PORT ?? 3000)
app.listen(port, '127.0.0.1', () => console.log(`pets on http://127.0.0.1:${port}`))
