// Migration 4: receipts for ten million rows and more (docs/postgres.md, "Receipts at scale").
//   - `receipts` is partitioned by RANGE on `timestamp`, one partition per week (RECEIPT_PARTITION_SECONDS)
//     plus a DEFAULT partition for rows no weekly partition takes. The log creates partitions ahead on
//     demand (pg-receipt-partitions.ts); this migration creates those the stored rows need, this week's
//     and the next.
//   - A partitioned table enforces uniqueness only on keys that include `timestamp`, so the receipt id
//     and the seq are kept unique by `receipt_ids` (receipt_id primary key, seq unique), written in the
//     same statement as the receipt: ingest stays idempotent by receipt id, and leaf i is seq i + 1.
//   - One index per filter of the query routes, each ending in `seq` so a page is a keyset range scan.
//   - Per-hour rollups (by tenant with the time totals, by tool, by agent, by cost attribution), kept in
//     the append's statement, so analytics and the operator report read hours instead of receipts.
// Existing rows are copied into the new table and the rollups backfilled from them.
import type { PgMigration } from './migration.js'

/** The width of one receipts partition: a week (docs/postgres.md says why). */
export const RECEIPT_PARTITION_SECONDS = 604_800

// Totals of a rollup row, by outcome, and the cost sums (all bigint, summed on conflict).
const TOTALS = ['total', 'allow', 'deny', 'cancelled', 'incomplete', 'charged', 'attempted']
const TOTAL_COLUMNS = TOTALS.map(c => `${c} bigint NOT NULL`).join(', ')

/** Aggregates of the totals over receipts (or a batch with the same column names). */
export const ROLLUP_SELECT = `count(*), count(*) FILTER (WHERE outcome = 'allow'), count(*) FILTER (WHERE outcome = 'deny'),
  count(*) FILTER (WHERE outcome = 'cancelled'), count(*) FILTER (WHERE outcome = 'incomplete'),
  coalesce(sum(cost_units), 0), coalesce(sum(attempted_cost_units), 0)`

/** The rollup tables: name, key columns (in order), the key expressions over a receipt, extra sums, row filter. */
export const ROLLUPS = [
  {
    table: 'receipt_rollup_time',
    keys: ['hour', 'tenant'],
    exprs: ['timestamp - timestamp % 3600', 'tenant'],
    extra: ['with_capability', 'with_cost', 'min_seq', 'max_seq'],
    extraExprs: ['count(capability_id)', 'count(cost_units)', 'min(seq)', 'max(seq)'],
    where: '',
  },
  { table: 'receipt_rollup_tool', keys: ['hour', 'tool_server', 'tool_name'], exprs: ['timestamp - timestamp % 3600', 'tool_server', 'tool_name'], extra: [], extraExprs: [], where: '' },
  {
    table: 'receipt_rollup_subject',
    keys: ['hour', 'subject_key', 'capability_id'],
    exprs: ['timestamp - timestamp % 3600', 'subject_key', 'CASE WHEN subject_key IS NULL THEN capability_id END'],
    extra: [],
    extraExprs: [],
    where: '',
  },
  {
    table: 'receipt_rollup_cost',
    keys: ['hour', 'capability_id', 'subject_key', 'cost_currency'],
    exprs: ['timestamp - timestamp % 3600', 'capability_id', 'subject_key', 'cost_currency'],
    extra: [],
    extraExprs: [],
    where: 'cost_units IS NOT NULL OR attempted_cost_units IS NOT NULL',
  },
] as const

/** `INSERT ... SELECT ... GROUP BY ... ON CONFLICT DO UPDATE` of one rollup from `source` (a table or CTE). */
export function rollupUpsert(rollup: (typeof ROLLUPS)[number], source: string): string {
  const columns = [...rollup.keys, ...TOTALS, ...rollup.extra]
  // min_seq and max_seq bound the seqs of the hour's receipts (pages by time start from them)
  const merge = (c: string) => (c === 'min_seq' ? `least(${rollup.table}.${c}, excluded.${c})` : c === 'max_seq' ? `greatest(${rollup.table}.${c}, excluded.${c})` : `${rollup.table}.${c} + excluded.${c}`)
  const sums = [...TOTALS, ...rollup.extra].map(c => `${c} = ${merge(c)}`).join(', ')
  const where = rollup.where === '' ? '' : `WHERE ${rollup.where}`
  return `INSERT INTO ${rollup.table} (${columns.join(', ')})
    SELECT ${rollup.exprs.join(', ')}, ${ROLLUP_SELECT}${rollup.extraExprs.map(e => `, ${e}`).join('')} FROM ${source} ${where}
    GROUP BY ${rollup.keys.map((_, i) => i + 1).join(', ')}
    ON CONFLICT (${rollup.keys.join(', ')}) DO UPDATE SET ${sums}`
}

const RECEIPT_COLUMNS = `seq bigint NOT NULL,
      receipt_id text NOT NULL,
      timestamp bigint NOT NULL,
      request_id text,
      method text,
      route_pattern text,
      tool_server text NOT NULL,
      tool_name text NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('allow', 'deny', 'cancelled', 'incomplete')),
      capability_id text,
      tenant text,
      subject_key text,
      cost_units bigint,
      cost_currency text,
      attempted_cost_units bigint,
      kind text NOT NULL CHECK (kind IN ('decision', 'final')),
      decision_receipt_id text,
      http_json text,
      core_json text,
      CHECK (http_json IS NOT NULL OR core_json IS NOT NULL)`

const W = RECEIPT_PARTITION_SECONDS

export const MIGRATION_0004: PgMigration = {
  version: 4,
  name: 'partitioned-receipts',
  statements: [
    'ALTER TABLE receipts RENAME TO receipts_v3',
    `CREATE TABLE receipts (${RECEIPT_COLUMNS}) PARTITION BY RANGE (timestamp)`,
    'CREATE TABLE receipts_default PARTITION OF receipts DEFAULT',
    // the weeks of the stored rows (from 2000 to eight weeks ahead: others stay in the default), this one and the next
    `DO $$
    DECLARE w bigint;
    BEGIN
      FOR w IN
        SELECT DISTINCT timestamp - timestamp % ${W} FROM receipts_v3 WHERE timestamp >= 946684800 AND timestamp < extract(epoch FROM now())::bigint + 8 * ${W}
        UNION SELECT (extract(epoch FROM now())::bigint / ${W}) * ${W} + k * ${W} FROM generate_series(0, 1) AS k
      LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF receipts FOR VALUES FROM (%s) TO (%s)', 'receipts_w' || w, w, w + ${W});
      END LOOP;
    END $$`,
    'INSERT INTO receipts SELECT * FROM receipts_v3',
    `CREATE TABLE receipt_ids (
      receipt_id text PRIMARY KEY,
      seq bigint NOT NULL UNIQUE,
      timestamp bigint NOT NULL
    )`,
    'INSERT INTO receipt_ids (receipt_id, seq, timestamp) SELECT receipt_id, seq, timestamp FROM receipts_v3',
    'DROP TABLE receipts_v3',
    // one index per query filter, each ending in seq (keyset pages); created on every partition
    'CREATE INDEX receipts_by_seq ON receipts (seq)',
    'CREATE INDEX receipts_by_capability ON receipts (capability_id, seq) WHERE capability_id IS NOT NULL',
    'CREATE INDEX receipts_by_subject ON receipts (subject_key, seq) WHERE subject_key IS NOT NULL',
    // the agent route's other half: rows without a subject key, found by the agent's capabilities
    'CREATE INDEX receipts_by_lineage ON receipts (capability_id, seq) WHERE subject_key IS NULL',
    'CREATE INDEX receipts_by_tenant ON receipts (tenant, seq) WHERE tenant IS NOT NULL',
    'CREATE INDEX receipts_by_tool ON receipts (tool_name, tool_server, seq)',
    'CREATE INDEX receipts_by_outcome ON receipts (outcome, seq)',
    'CREATE INDEX receipts_by_time ON receipts (timestamp, seq)',
    'CREATE INDEX receipts_by_cost ON receipts (cost_currency, seq) INCLUDE (cost_units) WHERE cost_units IS NOT NULL',
    'CREATE INDEX receipts_core_pending ON receipts (seq) WHERE core_json IS NULL',
    'CREATE INDEX receipts_by_decision ON receipts (decision_receipt_id) WHERE decision_receipt_id IS NOT NULL',
    ...ROLLUPS.flatMap(r => [
      `CREATE TABLE ${r.table} (${r.keys.map(k => `${k} ${k === 'hour' ? 'bigint NOT NULL' : 'text'}`).join(', ')}, ${TOTAL_COLUMNS}${r.extra.map(c => `, ${c} bigint NOT NULL`).join('')},
        UNIQUE NULLS NOT DISTINCT (${r.keys.join(', ')}))`,
      rollupUpsert(r, 'receipts'),
    ]),
    // the agent route's count reads an agent's hours: by subject key, and by capability for rows without one
    'CREATE INDEX receipt_rollup_subject_by_agent ON receipt_rollup_subject (subject_key, hour) WHERE subject_key IS NOT NULL',
    'CREATE INDEX receipt_rollup_subject_by_lineage ON receipt_rollup_subject (capability_id, hour) WHERE subject_key IS NULL',
    'ANALYZE receipts',
  ],
}
