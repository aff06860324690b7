// How a contract suite gets its store: each test opens a fresh, empty one (a file in t.testdir(), a new
// PostgreSQL database) that the opener closes in the test's teardown.
import type { Test } from 'tap'

/** Opens a fresh, empty store for one test and registers its close on `t`. */
export type OpenStore<S> = (t: Test) => Promise<S>
