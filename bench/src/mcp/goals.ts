// The goals both MCP benches grade against (stdio tool calls and the hosted edge): a module of its own,
// so the two benches do not import each other.

/** Calls per second through Gate, as a share of the tool server's alone. */
export const TARGET_RATIO = 0.8
/** Gate's CPU per call, in microseconds. */
export const TARGET_CPU_MICROS = 500
