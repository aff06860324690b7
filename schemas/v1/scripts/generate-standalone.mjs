#!/usr/bin/env node
// Writes src/generated/standalone.ts from the JSON schemas (run after `tsc -b`; see package.json
// "generate", which rebuilds before and after).
import { writeFileSync } from 'node:fs'
import { createStandaloneSource, STANDALONE_MODULE_PATH } from '../dist/standalone-source.js'

const target = new URL(`../${STANDALONE_MODULE_PATH}`, import.meta.url)
writeFileSync(target, createStandaloneSource())
console.log(`wrote ${STANDALONE_MODULE_PATH}`)
