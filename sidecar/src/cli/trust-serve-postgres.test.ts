// trust-control end to end on the PostgreSQL backend: the whole suite of the SQLite backend
// (testing/trust-serve-suite.ts) against `gate trust serve --database-url` on a real server the harness
// starts (testing/postgres-server.ts). Skipped, with the reason, where no PostgreSQL can be found outside CI.
import t from 'tap'
import { postgresSkipReason } from '@gate/trust/testing'
import { runTrustServeSuite } from '../testing/trust-serve-suite.js'

const skip = postgresSkipReason()
if (skip === undefined) runTrustServeSuite('postgres')
else t.test('the trust-control suite on PostgreSQL', { skip }, () => undefined)
