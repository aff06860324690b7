// The transparency log's backend interface is declared by @gate/trust beside the other store ports
// (store-ports.ts: SQLite's is ../stores/transparency-log-store.ts, PostgreSQL's @gate/trust's); named
// here for the checkpointer.
export type { AuditedReceipt, LogReceipt, TransparencyLogBackend } from '@gate/trust'
