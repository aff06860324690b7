// The control token of a service: given (GATE_CONTROL_TOKEN before --control-token, both held to the one
// token rule), else a private file beside the receipt store, created once with a random token and
// reused after; a file others can read, or one that holds no token, is refused and never overwritten.
import t from 'tap'
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { defaultServiceTokenFile, provideServiceControlToken } from './control-token.js'

t.test('without a token the file beside the receipt store is created 0600 and reused after', async t => {
  const dir = t.testdir()
  const receiptStore = join(dir, 'state', 'receipts.db')
  const first = provideServiceControlToken({ receiptStore })
  const file = join(dir, 'state', 'control-token')
  t.same({ source: first.source, file: first.file, created: first.created }, { source: file, file, created: true })
  t.match(first.token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url')
  t.equal(statSync(file).mode & 0o777, 0o600)
  t.equal(statSync(join(dir, 'state')).mode & 0o777, 0o700, 'the directory it had to create is private too')
  t.equal(readFileSync(file, 'utf8'), `${first.token}\n`)
  const again = provideServiceControlToken({ receiptStore })
  t.same(again, { ...first, created: false }, 'a restart keeps the token')
})

t.test('--control-token-file names the file; no store means .gate/control-token here', async t => {
  const dir = t.testdir()
  const chosen = provideServiceControlToken({ controlTokenFile: join(dir, 'my-token'), receiptStore: join(dir, 'receipts.db') })
  t.equal(chosen.file, join(dir, 'my-token'))
  t.equal(defaultServiceTokenFile(undefined), resolve('.gate', 'control-token'))
  t.equal(defaultServiceTokenFile('file:/srv/gate/receipts.db?mode=rwc'), '/srv/gate/control-token')
})

t.test('a token file others can read, or one without a token, is refused and left as it is', async t => {
  const dir = t.testdir()
  const loose = join(dir, 'loose')
  writeFileSync(loose, 'a-perfectly-good-token-0123456789\n', { mode: 0o644 })
  chmodSync(loose, 0o644)
  t.throws(() => provideServiceControlToken({ controlTokenFile: loose }), { code: 'gate_invalid_config', message: /readable by others \(mode 644\).*delete the file/ })
  t.equal(readFileSync(loose, 'utf8'), 'a-perfectly-good-token-0123456789\n', 'not overwritten')
  const short = join(dir, 'short')
  writeFileSync(short, 'short\n', { mode: 0o600 })
  t.throws(() => provideServiceControlToken({ controlTokenFile: short }), { message: /does not hold a control token/ })
  const notFile = join(dir, 'a-directory')
  mkdirSync(notFile)
  t.throws(() => provideServiceControlToken({ controlTokenFile: notFile }), { message: /not a regular file/ })
})

t.test('a given token wins over the file and is held to the one rule, never echoed', async t => {
  const dir = t.testdir()
  t.same(provideServiceControlToken({ controlToken: 'given-token-0123456789', controlTokenFrom: 'GATE_CONTROL_TOKEN', receiptStore: join(dir, 'r.db') }), {
    token: 'given-token-0123456789',
    source: 'GATE_CONTROL_TOKEN',
    created: false,
  })
  const err = t.throws(() => provideServiceControlToken({ controlToken: 'change-me', controlTokenFrom: '--control-token' }), { code: 'gate_invalid_config', message: /^--control-token must be a token of at least 16 characters/ })
  t.notMatch((err as Error).message, /change-me/)
  t.throws(() => provideServiceControlToken({ controlToken: 'sixteen chars with spaces' }), { message: /no whitespace/ })
})
