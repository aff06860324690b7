// Migration 5: signing keys indexed by their hash. A hybrid key (`hybrid:<classical>:<mldsa65-hex>:...`,
// about 4,000 characters) is wider than a B-tree entry may be (2,704 bytes), so a unique index on the key
// text refused to enrol one (500 gate_store_failed) or to store a hybrid authority key. The unique
// constraints move to `key_hash`, the SHA-256 of the key text (hex), which the stores compute; the key
// text stays as it was and lookups compare it too.
import type { PgMigration } from './migration.js'

const KEY_HASH = "encode(sha256(convert_to(public_key, 'UTF8')), 'hex')"

export const MIGRATION_0005: PgMigration = {
  version: 5,
  name: 'key-hashes',
  statements: [
    'ALTER TABLE enrolled_keys ADD COLUMN key_hash text',
    `UPDATE enrolled_keys SET key_hash = ${KEY_HASH}`,
    'ALTER TABLE enrolled_keys ALTER COLUMN key_hash SET NOT NULL',
    'ALTER TABLE enrolled_keys DROP CONSTRAINT enrolled_keys_pkey',
    'ALTER TABLE enrolled_keys ADD PRIMARY KEY (key_hash)',
    'ALTER TABLE authority_keys ADD COLUMN key_hash text',
    `UPDATE authority_keys SET key_hash = ${KEY_HASH}`,
    'ALTER TABLE authority_keys ALTER COLUMN key_hash SET NOT NULL',
    'ALTER TABLE authority_keys DROP CONSTRAINT authority_keys_public_key_key',
    'ALTER TABLE authority_keys ADD CONSTRAINT authority_keys_key_hash_key UNIQUE (key_hash)',
  ],
}
