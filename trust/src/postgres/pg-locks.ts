// PostgreSQL advisory lock keys Gate takes. Writes that must be serial across every trust-control node
// are serialized by the database, never by process memory: each key below names one such sequence.
// The values are fixed constants (never derived from input); 0x6761_7465 is "gate" in ASCII.

/** Migrations: one node migrates, concurrent starts wait and then find nothing to do (session lock). */
export const MIGRATION_LOCK = 0x6761_7465_0001n
/** Receipt appends: seqs are consecutive and become visible in commit order (transaction lock). */
export const RECEIPT_APPEND_LOCK = 0x6761_7465_0002n
/** Revocations: each new revocation takes the next version of the revocation stream (transaction lock). */
export const REVOCATION_LOCK = 0x6761_7465_0003n
/**
 * The authority key: signing with the current key holds it shared, a rotation holds it exclusively, so no
 * node signs with a key another node is retiring (session lock).
 */
export const AUTHORITY_LOCK = 0x6761_7465_0004n
/** The transparency log's tree and checkpoints (transaction lock). */
export const TRANSPARENCY_LOCK = 0x6761_7465_0005n
/**
 * Writes of the authority key table (transaction lock). Distinct from AUTHORITY_LOCK: a rotation writes
 * the table while its node holds AUTHORITY_LOCK on another connection (advisory locks belong to sessions,
 * so reusing the key would make the node wait for itself).
 */
export const AUTHORITY_KEYS_LOCK = 0x6761_7465_0006n
