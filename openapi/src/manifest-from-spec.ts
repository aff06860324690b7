// The `gate.manifest.v1` body of a converted document.
import { convertSpec, type SpecConversion } from './convert-spec.js'
import type { GeneratorConfig } from './generator-config.js'
import type { Manifest } from './types.js'

export const MANIFEST_SCHEMA_ID = 'gate.manifest.v1'
export const PROTOCOL_VERSION = '1.0'

/** Converts a document and wraps its published tools in a manifest. */
export function manifestFromSpec(input: string, config?: GeneratorConfig): Manifest {
  return buildManifest(convertSpec(input, config))
}

/** The manifest of an already converted document. */
export function buildManifest(conversion: SpecConversion): Manifest {
  return {
    schema: MANIFEST_SCHEMA_ID,
    server_id: conversion.config.serverId,
    name: conversion.title,
    version: conversion.version,
    protocol_version: PROTOCOL_VERSION,
    ...(conversion.description === undefined ? {} : { description: conversion.description }),
    policy_hash: conversion.policyHash,
    tools: conversion.operations.filter(op => op.published).map(op => op.tool),
  }
}
