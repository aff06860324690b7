// How a check ends other than by returning: CheckFailure (the behaviour is wrong) or CheckSkipped (it
// cannot be observed here). Apart from check.ts so the context a check runs with can throw them without
// importing the check definitions, which import the context.

/** The behaviour was observed and is wrong. */
export class CheckFailure extends Error {
  constructor(detail: string) {
    super(detail)
    this.name = 'CheckFailure'
  }
}

/** The check cannot run against this sidecar or document; the reason says why. */
export class CheckSkipped extends Error {
  constructor(reason: string) {
    super(reason)
    this.name = 'CheckSkipped'
  }
}

/** Throws a CheckFailure. */
export function fail(detail: string): never {
  throw new CheckFailure(detail)
}

/** Throws a CheckSkipped. */
export function skip(reason: string): never {
  throw new CheckSkipped(reason)
}
