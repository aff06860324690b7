// Issue #38's goals for a tool call through Gate, shared by the stdio and hosted-edge rows.

/** Throughput through Gate at least this share of the server called directly. */
export const TARGET_RATIO = 0.8
/** Gate's added CPU per call at most this many µs. */
export const TARGET_CPU_MICROS = 500
