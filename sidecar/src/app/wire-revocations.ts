// The revocation events the native wire pushes from (docs/wire.md, "Revocation"): the kernel's
// revocation port tells of a revocation made through this process's control routes (at its commit) and
// of one a fleet's feed brings. One another process commits to the shared revocation file is found
// when the store is refreshed, which happens before every call presenting a capability and, while an
// agent is connected, once a second here, so it is pushed too.
import type { RevocationEvents } from '@gate/wire'
import type { RevocationPort } from '../kernel/ports.js'

const REFRESH_EVERY_MS = 1000

export function wireRevocationEvents(port: RevocationPort, log: (line: string) => void): RevocationEvents {
  return {
    onRevoked(listener) {
      const unsubscribe = port.onRevoked?.(listener)
      if (unsubscribe === undefined) log('wire: this revocation store tells of no revocations; a revoked capability fails its next call only')
      const refresh = port.refresh
      const timer = refresh === undefined ? undefined : setInterval(() => void refresh.call(port).catch(() => {}), REFRESH_EVERY_MS)
      // never the reason the process stays up
      timer?.unref()
      return () => {
        unsubscribe?.()
        if (timer !== undefined) clearInterval(timer)
      }
    },
  }
}
