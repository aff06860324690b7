// A kernel over the pets spec and in-memory ports, for the kernel and guard tests: a fixed clock, the
// authority that signs receipts and issues tokens, and request and token builders.
import { ANONYMOUS_CALLER, sha256Hex, signCapability, type CapabilityScope, type CapabilityToken, type GateHttpRequest, type HttpMethod, type Signer, type ToolGrant } from '@gate/sdk'
import { exampleSigner } from '@gate/sdk/testing'
import { routeTableFromSpec } from '../openapi/index.js'
import { Kernel, type KernelOptions } from '../kernel/kernel.js'
import { SERVICE_DEFAULTS } from '../config/service-config.js'
import { createMemoryPorts } from './memory-ports.js'
import { PETS_SPEC_YAML } from './pets-spec.js'

/** The kernel's clock, Unix seconds. */
export const KERNEL_NOW = 1_763_700_000
/** The kernel's authority: signs receipts, and its tokens are trusted. */
export const KERNEL_AUTHORITY: Signer = exampleSigner('ed25519', 11)
/** The subject tokens are issued to. */
export const KERNEL_AGENT: Signer = exampleSigner('ed25519', 12)

/** A kernel with in-memory ports whose receipts `receiptSigner` signs (default: the kernel's authority). */
export function setupKernel(options: Partial<KernelOptions> = {}, receiptSigner: Signer = KERNEL_AUTHORITY) {
  const ports = createMemoryPorts(receiptSigner)
  const kernel = new Kernel({
    signer: KERNEL_AUTHORITY,
    routeTable: routeTableFromSpec(PETS_SPEC_YAML),
    policyHash: sha256Hex(PETS_SPEC_YAML),
    ports,
    clock: () => KERNEL_NOW,
    trustedIssuers: [],
    strictNonces: false,
    approvalTtlSeconds: SERVICE_DEFAULTS.approvalTtlSeconds,
    nonceTtlSeconds: SERVICE_DEFAULTS.nonceTtlSeconds,
    ...options,
  })
  return { kernel, ports }
}

let seq = 0

export function kernelRequest(method: HttpMethod, path: string, extra: Partial<GateHttpRequest> = {}): GateHttpRequest {
  return { request_id: `req-${++seq}`, method, path, route_pattern: path, caller: ANONYMOUS_CALLER, timestamp: KERNEL_NOW, ...extra }
}

/** A token granting `grants` (or a whole scope), issued by the kernel's authority unless `issuer` is given. */
export function kernelToken(grants: ToolGrant[] | CapabilityScope, extra: Partial<CapabilityToken> = {}, issuer: Signer = KERNEL_AUTHORITY): CapabilityToken {
  const scope = Array.isArray(grants) ? { grants } : grants
  return signCapability({ id: `cap-${++seq}`, subject: KERNEL_AGENT.publicKey, scope, issued_at: KERNEL_NOW - 10, expires_at: KERNEL_NOW + 600, ...extra }, issuer)
}
