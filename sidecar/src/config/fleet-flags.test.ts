// The fleet flags: --control-url resolves to a URL with the staleness default; plaintext to a remote
// host, credentials in the URL, a CA without https and out-of-range staleness are refused at start.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FLEET_DEFAULTS, readFleetFlags } from './fleet-flags.js'

t.test('without --control-url there is no fleet, and its flags are refused alone', async t => {
  t.equal(readFleetFlags({}, {}), undefined)
  t.throws(() => readFleetFlags({ 'max-revocation-staleness': '5' }, {}), { code: 'gate_invalid_config', message: /needs --control-url/ })
  t.throws(() => readFleetFlags({ 'control-ca': 'ca.pem' }, {}), { message: /--control-ca needs --control-url/ })
})

t.test('a loopback or https control URL resolves with the documented staleness default', async t => {
  const local = readFleetFlags({}, { controlUrl: 'http://127.0.0.1:9300/' })
  t.equal(local?.controlUrl.href, 'http://127.0.0.1:9300/')
  t.equal(local?.maxRevocationStalenessMs, FLEET_DEFAULTS.maxRevocationStalenessSeconds * 1000)
  t.equal(readFleetFlags({}, { controlUrl: 'http://localhost:9300' })?.controlUrl.hostname, 'localhost')
  t.equal(readFleetFlags({ 'max-revocation-staleness': '2' }, { controlUrl: 'https://control.example:9300/gate' })?.maxRevocationStalenessMs, 2000)
})

t.test('plaintext to a remote host, credentials and bad staleness are refused', async t => {
  t.throws(() => readFleetFlags({}, { controlUrl: 'http://control.example:9300' }), { message: /plaintext to a remote host: use https/ })
  t.throws(() => readFleetFlags({}, { controlUrl: 'https://admin:secret@control.example' }), { message: /must not carry credentials/ })
  t.throws(() => readFleetFlags({}, { controlUrl: 'ftp://control.example' }), { message: /must be http or https/ })
  t.throws(() => readFleetFlags({}, { controlUrl: 'not a url' }), { message: /must be an http\(s\) URL/ })
  for (const bad of ['0', '3601', '1.5', '5s']) {
    t.throws(() => readFleetFlags({ 'max-revocation-staleness': bad }, { controlUrl: 'http://127.0.0.1:9300' }), { message: /whole seconds from 1 to 3600/ }, bad)
  }
})

t.test('--control-ca is read at start: a PEM certificate, over https only', async t => {
  const dir = t.testdir()
  const pem = join(dir, 'ca.pem')
  writeFileSync(pem, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
  t.match(readFleetFlags({ 'control-ca': pem }, { controlUrl: 'https://control.example' })?.ca, /BEGIN CERTIFICATE/)
  t.throws(() => readFleetFlags({ 'control-ca': pem }, { controlUrl: 'http://127.0.0.1:9300' }), { message: /needs an https --control-url/ })
  t.throws(() => readFleetFlags({ 'control-ca': join(dir, 'missing.pem') }, { controlUrl: 'https://control.example' }), { message: /cannot read --control-ca .*ENOENT/ })
  writeFileSync(join(dir, 'empty.pem'), 'nothing')
  t.throws(() => readFleetFlags({ 'control-ca': join(dir, 'empty.pem') }, { controlUrl: 'https://control.example' }), { message: /holds no PEM certificate/ })
})
