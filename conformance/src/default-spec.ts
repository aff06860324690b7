// The suite's default OpenAPI document: the sidecar tests' pets document (sidecar/src/testing/
// pets-spec.ts, one route per policy rule of spec 01) written as JSON, plus one route that shows the
// approval precedence on a safe method (/pets/{id}/records). Start the sidecar under test with exactly
// these bytes (`gate-conformance --print-default-spec > pets.json`) so the verdict-matrix expectations
// and the policy_hash check apply.

const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'Pets', version: '1.0.0' },
  paths: {
    '/pets': {
      get: { operationId: 'listPets', responses: { '200': { description: 'ok' } } },
      post: {
        operationId: 'createPet',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } } } } },
        },
        responses: { '201': { description: 'created' } },
      },
    },
    '/pets/search': {
      post: { operationId: 'searchPets', 'x-gate-side-effects': false, responses: { '200': { description: 'ok' } } },
    },
    '/pets/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { operationId: 'getPet', responses: { '200': { description: 'ok' } } },
      put: { operationId: 'replacePet', 'x-gate-publish': false, responses: { '200': { description: 'ok' } } },
      patch: { operationId: 'updatePet', 'x-gate-budget-limit': 500, responses: { '200': { description: 'ok' } } },
      delete: { operationId: 'deletePet', 'x-gate-sensitivity': 'restricted', responses: { '204': { description: 'gone' } } },
    },
    '/pets/{id}/adopt': {
      post: { operationId: 'adoptPet', 'x-gate-approval-required': true, responses: { '200': { description: 'ok' } } },
    },
    '/pets/{id}/records': {
      get: {
        operationId: 'getPetRecords',
        'x-gate-approval-required': true,
        'x-gate-side-effects': false,
        responses: { '200': { description: 'ok' } },
      },
    },
    '/admin/export': {
      get: { operationId: 'exportAll', 'x-gate-side-effects': true, responses: { '200': { description: 'ok' } } },
    },
  },
} as const

/** The default document's exact bytes (as text): what the sidecar under test should load. */
export const DEFAULT_SPEC_TEXT = JSON.stringify(DOCUMENT, null, 2) + '\n'

/** Where the default document is said to come from in reports. */
export const DEFAULT_SPEC_SOURCE = '(built-in pets document)'
