// The siblings of issue 37 against a running service: a root capability issued through its control
// route (`POST /v1/capabilities/issue`), a delegation link to a fresh agent key signed by the authority
// that issued it, and `count` children that agent signs under the link, each with an id of its choosing.
import { readFileSync } from 'node:fs'
import { createSigner, generateSecret, type CapabilityToken, type Signer, type ToolGrant } from '@gate/sdk'
import { siblingChildren } from '@gate/sdk/testing'
import { call } from './http-client.js'

/** The signer of a seed file `gate keygen` wrote. */
export function signerOfSeedFile(path: string): Signer {
  return createSigner({ secret: Buffer.from(readFileSync(path, 'utf8').trim(), 'hex') })
}

export interface DelegatedSiblingsOptions {
  /** The service whose control route issues the root capability. */
  url: string
  controlToken: string
  /** Its authority: signs the link. */
  authority: Signer
  /** What the root, the link and every child grant. */
  grants: ToolGrant[]
  count: number
}

/** `count` sibling children under one link delegating `grants`. */
export async function delegatedSiblings(options: DelegatedSiblingsOptions): Promise<CapabilityToken[]> {
  const subject = createSigner({ secret: generateSecret() }).publicKey
  const res = await call(`${options.url}/v1/capabilities/issue`, {
    body: { subjectPublicKey: subject, scope: { grants: options.grants }, ttlSeconds: 3600 },
    headers: { authorization: `Bearer ${options.controlToken}` },
  })
  if (res.status !== 200) throw new Error(`issue answered ${res.status}: ${res.text}`)
  const root = (res.body as { capability: CapabilityToken }).capability
  const now = Math.floor(Date.now() / 1000)
  return siblingChildren({
    authority: options.authority,
    delegatee: createSigner({ secret: generateSecret() }),
    capabilityId: root.id,
    delegated: { scope: { grants: options.grants }, expires_at: now + 600 },
    child: { scope: { grants: options.grants }, expires_at: now + 300 },
    subject,
    now,
    count: options.count,
    id: n => `${root.id}-sibling-${n}`,
  })
}
