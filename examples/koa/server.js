// The smallest Koa 3 app behind Gate. Run the sidecar first (see README.md), then: node server.js
import Koa from 'koa'
import { bodyParser } from '@koa/bodyparser'
import { gate } from '@gate/koa'

const app = new Koa()
app.use(gate({ skip: ['/healthz'] })) // every request below is decided by the Gate sidecar
app.use(bodyParser()) // after Gate: Gate hands the body back untouched

const pets = [{ id: '1', name: 'Rex' }]

app.use(async ctx => {
  if (ctx.method === 'GET' && ctx.path === '/healthz') ctx.body = { ok: true }
  else if (ctx.method === 'GET' && ctx.path === '/pets') ctx.body = { pets, receipt: ctx.state.gate.receipt.id }
  else if (ctx.method === 'POST' && ctx.path === '/pets') {
    const pet = { id: String(pets.length + 1), name: String(ctx.request.body?.name ?? 'unnamed') }
    pets.push(pet)
    ctx.status = 201
    ctx.body = { pet, receipt: ctx.state.gate.receipt.id }
  } else ctx.status = 404
})

const port = Number(process.env.PORT ?? 3000)
app.listen(port, '127.0.0.1', () => console.log(`pets on http://127.0.0.1:${port}`))
