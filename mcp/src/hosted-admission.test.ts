// Session admission: listed bearer tokens and JWTs from the configured key admit, each under a hashed
// principal; everything else is refused; no admission at all is open only when asked for.
import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { SignJWT } from 'jose'
import { createAdmission } from './hosted-admission.js'

t.test('a listed bearer token admits under a principal that is not the token', async t => {
  const admission = await createAdmission({ tokens: ['token-one-0123456789', 'token-two-0123456789'] })
  t.equal(admission.mode, 'required')
  const one = await admission.admit('Bearer token-one-0123456789')
  t.match(one, { ok: true, principal: /^token:[0-9a-f]{32}$/ })
  t.notMatch(JSON.stringify(one), /token-one/)
  t.not((await admission.admit('Bearer token-two-0123456789') as { principal: string }).principal, (one as { principal: string }).principal)
  t.match(await admission.admit('Bearer nope'), { ok: false })
  t.match(await admission.admit(undefined), { ok: false, reason: 'missing bearer token' })
  t.match(await admission.admit('Basic dXNlcjpwYXNz'), { ok: false })
})

t.test('a JWT signed by the configured key, from the configured issuer and audience, with a sub, admits', async t => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const admission = await createAdmission({ jwt: { keyText: publicKey.export({ type: 'spki', format: 'pem' }).toString(), issuer: 'https://idp', audience: 'gate' } })
  const sign = (claims: { iss?: string; aud?: string; sub?: string }) => {
    let jwt = new SignJWT({}).setProtectedHeader({ alg: 'EdDSA' }).setExpirationTime('5m')
    if (claims.iss !== undefined) jwt = jwt.setIssuer(claims.iss)
    if (claims.aud !== undefined) jwt = jwt.setAudience(claims.aud)
    if (claims.sub !== undefined) jwt = jwt.setSubject(claims.sub)
    return jwt.sign(privateKey)
  }
  t.match(await admission.admit(`Bearer ${await sign({ iss: 'https://idp', aud: 'gate', sub: 'agent' })}`), { ok: true, principal: /^jwt:/ })
  t.match(await admission.admit(`Bearer ${await sign({ iss: 'https://other', aud: 'gate', sub: 'agent' })}`), { ok: false })
  t.match(await admission.admit(`Bearer ${await sign({ iss: 'https://idp', aud: 'else', sub: 'agent' })}`), { ok: false })
  t.match(await admission.admit(`Bearer ${await sign({ iss: 'https://idp', aud: 'gate' })}`), { ok: false, reason: 'the JWT has no sub' })
  const other = generateKeyPairSync('ed25519').privateKey
  const forged = await new SignJWT({}).setProtectedHeader({ alg: 'EdDSA' }).setIssuer('https://idp').setAudience('gate').setSubject('agent').sign(other)
  t.match(await admission.admit(`Bearer ${forged}`), { ok: false })
})

t.test('a private or symmetric key is refused as configuration; no admission is open only when asked', async t => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  await t.rejects(createAdmission({ jwt: { keyText: JSON.stringify(privateKey.export({ format: 'jwk' })) } }), { code: 'gate_invalid_config' })
  await t.rejects(createAdmission({ jwt: { keyText: JSON.stringify({ kty: 'oct', k: 'c2VjcmV0' }) } }), { code: 'gate_invalid_config' })
  await t.rejects(createAdmission({}), { code: 'gate_invalid_config' })
  const open = await createAdmission({ open: true })
  t.equal(open.mode, 'open')
  t.match(await open.admit(undefined), { ok: true, principal: 'open' })
})
