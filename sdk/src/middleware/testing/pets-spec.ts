// The OpenAPI document the end-to-end tests run the real sidecar with: one route per policy rule of
// spec 01. The sidecar, proxy and conformance tests import it from here (@gate/sdk/middleware-testing).
export const PETS_SPEC_YAML = `openapi: 3.1.0
info:
  title: Pets
  version: 1.0.0
paths:
  /pets:
    get:
      operationId: listPets
      responses: { '200': { description: ok } }
    post:
      operationId: createPet
      requestBody:
        required: true
        content:
          application/json:
            schema: { type: object, properties: { name: { type: string } } }
      responses: { '201': { description: created } }
  /pets/search:
    post:
      operationId: searchPets
      x-gate-side-effects: false
      responses: { '200': { description: ok } }
  /pets/{id}:
    parameters:
      - { name: id, in: path, required: true, schema: { type: string } }
    get:
      operationId: getPet
      responses: { '200': { description: ok } }
    put:
      operationId: replacePet
      x-gate-publish: false
      responses: { '200': { description: ok } }
    patch:
      operationId: updatePet
      x-gate-budget-limit: 500
      responses: { '200': { description: ok } }
    delete:
      operationId: deletePet
      x-gate-sensitivity: restricted
      responses: { '204': { description: gone } }
  /pets/{id}/adopt:
    post:
      operationId: adoptPet
      x-gate-approval-required: true
      responses: { '200': { description: ok } }
  /admin/export:
    get:
      operationId: exportAll
      x-gate-side-effects: true
      responses: { '200': { description: ok } }
`
