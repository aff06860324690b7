// Migration 2: the transparency log's tree and checkpoints (docs/transparency.md), beside the receipts
// they cover. Leaf i is the receipt at seq i + 1: receipt seqs are consecutive (receipt-log.ts).
import type { PgMigration } from './migration.js'

export const MIGRATION_0002: PgMigration = {
  version: 2,
  name: 'transparency-log',
  statements: [
    `CREATE TABLE transparency_state (
      id integer PRIMARY KEY CHECK (id = 1),
      log_id text NOT NULL,
      tree_size bigint NOT NULL
    )`,
    `CREATE TABLE transparency_nodes (
      level integer NOT NULL,
      idx bigint NOT NULL,
      hash bytea NOT NULL,
      PRIMARY KEY (level, idx)
    )`,
    `CREATE TABLE transparency_checkpoints (
      tree_size bigint PRIMARY KEY,
      statement text NOT NULL
    )`,
    "INSERT INTO transparency_state (id, log_id, tree_size) VALUES (1, encode(sha256((random()::text || clock_timestamp()::text)::bytea), 'hex'), 0)",
  ],
}
