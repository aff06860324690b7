// Migration 1: every table of trust-control on PostgreSQL. Columns mirror the SQLite stores (Unix
// seconds as bigint, JSON kept as the exact text that was signed), with the differences PostgreSQL
// allows: the receipt id is unique (ingest is idempotent by it), a receipt may carry only its core form
// (`http_json` null: core-only receipts such as tool calls), and plain B-tree indexes replace SQLite's
// bucketed ones (PostgreSQL's planner keeps statistics and chooses between them).
import type { PgMigration } from './migration.js'

export const MIGRATION_0001: PgMigration = {
  version: 1,
  name: 'trust-stores',
  statements: [
    `CREATE TABLE receipts (
      seq bigint PRIMARY KEY,
      receipt_id text NOT NULL UNIQUE,
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
      CHECK (http_json IS NOT NULL OR core_json IS NOT NULL)
    )`,
    'CREATE INDEX receipts_by_capability ON receipts (capability_id, seq) WHERE capability_id IS NOT NULL',
    'CREATE INDEX receipts_by_subject ON receipts (subject_key, seq) WHERE subject_key IS NOT NULL',
    'CREATE INDEX receipts_by_tenant ON receipts (tenant, seq) WHERE tenant IS NOT NULL',
    'CREATE INDEX receipts_by_time ON receipts (timestamp)',
    'CREATE INDEX receipts_by_cost ON receipts (cost_currency, cost_units) WHERE cost_units IS NOT NULL',
    'CREATE INDEX receipts_core_pending ON receipts (seq) WHERE core_json IS NULL',
    'CREATE INDEX receipts_by_decision ON receipts (decision_receipt_id) WHERE decision_receipt_id IS NOT NULL',
    `CREATE TABLE listed_receipts (
      seq bigserial PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('tool', 'child')),
      receipt_id text NOT NULL,
      timestamp bigint,
      tenant text,
      capability_id text,
      tool_server text,
      tool_name text,
      session_id text,
      parent_request_id text,
      request_id text,
      json text NOT NULL,
      UNIQUE (kind, receipt_id)
    )`,
    `CREATE TABLE revocations (
      seq bigint PRIMARY KEY,
      capability_id text NOT NULL UNIQUE,
      revoked_at bigint NOT NULL
    )`,
    `CREATE TABLE invocation_budgets (
      capability_id text NOT NULL,
      grant_key text NOT NULL,
      used bigint NOT NULL,
      max_invocations bigint NOT NULL,
      updated_at bigint NOT NULL,
      PRIMARY KEY (capability_id, grant_key)
    )`,
    'CREATE INDEX invocation_budgets_by_update ON invocation_budgets (updated_at DESC)',
    `CREATE TABLE cost_usage (
      capability_id text NOT NULL,
      grant_key text NOT NULL,
      currency text NOT NULL,
      units bigint NOT NULL,
      attempted_units bigint NOT NULL,
      updated_at bigint NOT NULL,
      PRIMARY KEY (capability_id, grant_key, currency)
    )`,
    `CREATE TABLE capabilities (
      capability_id text PRIMARY KEY,
      subject text NOT NULL,
      issuer text NOT NULL,
      issued_at bigint NOT NULL,
      expires_at bigint NOT NULL,
      token_json text NOT NULL
    )`,
    'CREATE INDEX capabilities_by_subject ON capabilities (subject)',
    `CREATE TABLE approvals (
      approval_id text PRIMARY KEY,
      request_id text NOT NULL,
      caller_identity_hash text NOT NULL,
      method text NOT NULL,
      route_pattern text NOT NULL,
      content_hash text NOT NULL,
      decision_receipt_id text,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL,
      state text NOT NULL CHECK (state IN ('pending', 'approved', 'denied')),
      responder text,
      reason text,
      responded_at bigint,
      consumed_at bigint
    )`,
    'CREATE INDEX approvals_by_state ON approvals (state, expires_at)',
    `CREATE TABLE authority_keys (
      generation integer PRIMARY KEY,
      public_key text NOT NULL UNIQUE,
      seed bytea,
      created_at bigint NOT NULL,
      retired_at bigint
    )`,
    `CREATE TABLE enrolled_keys (
      public_key text PRIMARY KEY,
      label text NOT NULL,
      enrolled_at bigint NOT NULL
    )`,
    `CREATE TABLE cluster_nodes (
      node_id text PRIMARY KEY,
      started_at bigint NOT NULL,
      last_seen timestamptz NOT NULL,
      term bigint NOT NULL,
      authority_generation integer NOT NULL
    )`,
    `CREATE TABLE gate_meta (
      key text PRIMARY KEY,
      value text NOT NULL
    )`,
    // the revocation stream's id (spec 03 replication heads): fixed for the life of this database
    "INSERT INTO gate_meta (key, value) VALUES ('revocation_stream_id', md5(random()::text || clock_timestamp()::text))",
  ],
}
