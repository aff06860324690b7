// Where the transparency-log subcommands read from: the receipt file itself (--receipt-db, with the
// authority seed when they sign) or a running service's /v1 routes (--control-url).
import { existsSync } from 'node:fs'
import type { Signer } from '@gate/sdk'
import { ConfigError, UsageError } from '../errors.js'
import { loadAuthority } from '../config/authority-seed.js'
import type { GlobalFlags } from '../config/global-flags.js'
import { openReceiptStore, openTransparencyLogStore } from '../stores/index.js'
import { Checkpointer } from '../transparency/checkpointer.js'
import { TransparencyLog } from '../transparency/transparency-log.js'

/** `local` over --receipt-db, `remote` over --control-url; exactly one. */
export function chooseLogSource(global: GlobalFlags): 'local' | 'remote' {
  if (global.receiptDb !== undefined && global.controlUrl !== undefined) throw new UsageError('give either --receipt-db or --control-url, not both')
  if (global.controlUrl !== undefined) return 'remote'
  if (global.receiptDb !== undefined) return 'local'
  throw new UsageError('a receipt source is required: --receipt-db PATH or --control-url URL')
}

/** Runs `fn` over the log of the receipt file at `global.receiptDb`; it signs only with --authority-seed-file. */
export async function withLocalLog<T>(global: GlobalFlags, fn: (log: TransparencyLog) => Promise<T>): Promise<T> {
  const path = global.receiptDb!
  // never create a store by reading one
  if (!existsSync(path)) throw new ConfigError(`--receipt-db ${path} does not exist`)
  const signer: Signer | undefined = global.authoritySeedFile === undefined ? undefined : (await loadAuthority(global.authoritySeedFile)).signer
  const receipts = await openReceiptStore(path)
  try {
    const backend = await openTransparencyLogStore(path)
    const requireSigner = (): Signer => {
      if (signer === undefined) throw new UsageError('signing a checkpoint needs --authority-seed-file (the authority key the sidecar signs with)')
      return signer
    }
    const checkpointer = new Checkpointer({
      backend,
      signer: requireSigner,
      everyReceipts: 0,
      intervalMs: 0,
      // every row is another process's here: it becomes a leaf only when the seed's key signed it
      acceptedSigners: async keys => new Set(keys.filter(k => k === requireSigner().publicKey)),
    })
    const log = new TransparencyLog({ backend, checkpointer, findSeq: async id => (await receipts.query.getById(id))?.seq })
    try {
      return await fn(log)
    } finally {
      await log.close()
    }
  } finally {
    await receipts.close()
  }
}
