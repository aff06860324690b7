// trust-control end to end on the SQLite backend (the suite: testing/trust-serve-suite.ts).
import { runTrustServeSuite } from '../testing/trust-serve-suite.js'

runTrustServeSuite('sqlite')
