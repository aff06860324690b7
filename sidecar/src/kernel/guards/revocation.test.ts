// The revocation guard: a revoked capability (or ancestor) is denied; while the revocation state cannot
// be trusted (a fleet mirror past its staleness bound), every request presenting a capability is denied
// with revocation_state_stale, and requests presenting none are decided as usual.
import t from 'tap'
import { createSigner, generateSecret } from '@gate/sdk'
import { kernelRequest, kernelToken, setupKernel } from '../../testing/kernel-setup.js'
import { encodeCapabilityToken } from '../capability-token.js'

const GRANT = [{ server_id: 'http', tool_name: 'POST /pets' }]

t.test('stale revocation state denies requests presenting a capability, and only those', async t => {
  let stale: string | undefined = 'revocations from trust-control are 31 s old, past the 30 s bound'
  const { ports } = setupKernel()
  const { kernel } = setupKernel({ ports: { ...ports, revocations: { isRevoked: () => false, unavailable: () => stale } } })
  const token = kernelToken(GRANT)
  const presented = () => kernel.evaluate({ request: kernelRequest('POST', '/pets'), capabilityHeader: encodeCapabilityToken(token) })
  t.match((await presented()).verdict, { verdict: 'deny', guard: 'RevocationGuard', details: { reason_code: 'revocation_state_stale' } })
  t.match((await kernel.evaluate({ request: kernelRequest('GET', '/pets') })).verdict, { verdict: 'allow' }, 'no capability presented: decided as usual')
  stale = undefined
  t.match((await presented()).verdict, { verdict: 'allow' }, 'fresh again: allowed')
})

t.test('followed issuers verify tokens from the first request they are known', async t => {
  const central = createSigner({ secret: generateSecret() })
  const followed: string[] = []
  const { kernel } = setupKernel({ followedIssuers: () => followed })
  const token = kernelToken(GRANT, {}, central)
  const presented = () => kernel.evaluate({ request: kernelRequest('POST', '/pets'), capabilityHeader: encodeCapabilityToken(token) })
  t.match((await presented()).verdict, { verdict: 'deny', guard: 'CapabilityGuard' }, 'an issuer not followed yet is not trusted')
  followed.push(central.publicKey)
  t.match((await presented()).verdict, { verdict: 'allow' })
})
