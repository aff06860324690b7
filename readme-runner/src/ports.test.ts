import t from 'tap'
import { documentedPorts, listenPort, movedPorts, movePorts } from './ports.js'

const COMMANDS = [
  'npx gate api protect --upstream http://127.0.0.1:3000 --listen 127.0.0.1:9091 --spec x.yaml',
  'GATE_SIDECAR_URL=http://127.0.0.1:9091 PORT=3000 node server.js',
  'npx next start -p 3001 -H 127.0.0.1',
  'curl http://localhost:9092/gate/health http://127.0.0.1:9/dead',
]

t.test('documented ports: addresses, PORT= and -p, each once, none below 1024', async t => {
  t.same(documentedPorts(COMMANDS), [3000, 9091, 3001, 9092])
})

t.test('moving them rewrites every mention, and nothing else', async t => {
  const moved = new Map([[3000, 41000], [9091, 41001], [3001, 41002], [9092, 41003]])
  t.same(COMMANDS.map(c => movePorts(c, moved)), [
    'npx gate api protect --upstream http://127.0.0.1:41000 --listen 127.0.0.1:41001 --spec x.yaml',
    'GATE_SIDECAR_URL=http://127.0.0.1:41001 PORT=41000 node server.js',
    'npx next start -p 41002 -H 127.0.0.1',
    'curl http://localhost:41003/gate/health http://127.0.0.1:9/dead',
  ])
  t.equal(movePorts('echo 3000 --ttl 3600', moved), 'echo 3000 --ttl 3600', 'bare numbers are not ports')
})

t.test('the port a server listens on: --listen first, then PORT=, then -p', async t => {
  t.equal(listenPort(COMMANDS[0]!), 9091)
  t.equal(listenPort(COMMANDS[1]!), 3000)
  t.equal(listenPort(COMMANDS[2]!), 3001)
  t.equal(listenPort('node server.js'), undefined)
})

t.test('moved ports are distinct and free', async t => {
  const moved = await movedPorts([1, 2, 3])
  t.equal(new Set(moved.values()).size, 3)
})
