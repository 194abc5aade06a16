/**
 * The codegraph JSON Schema (schema/codegraph.schema.json, JSON Schema 2020-12) and its validator.
 *
 * Invariants: the schema file is the normative definition of every known record kind; its header
 * definition pins `schema_version` to GRAPH_SCHEMA_VERSION. Nothing is read or compiled at import
 * time: the schema and ajv load on the first validation, once per thread.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ErrorObject, ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);

/** Absolute path of the schema file shipped with @kiln/core (also exported as `@kiln/core/codegraph.schema.json`). */
export function graphSchemaPath(): string {
  return fileURLToPath(new URL('./schema/codegraph.schema.json', import.meta.url));
}

let schema: Record<string, unknown> | undefined;
/** The schema as an object (a fresh copy, so callers cannot change the validator's). */
export function graphSchema(): Record<string, unknown> {
  schema ??= require('./schema/codegraph.schema.json') as Record<string, unknown>;
  return structuredClone(schema);
}

let validator: ValidateFunction | undefined;

function compiled(): ValidateFunction {
  if (!validator) {
    // ajv is CommonJS; its 2020-12 build exports the class as `default`.
    const mod = require('ajv/dist/2020') as { default: new (o: object) => { compile: (s: object) => ValidateFunction } };
    const ajv = new mod.default({ allErrors: false, strict: true });
    schema ??= require('./schema/codegraph.schema.json') as Record<string, unknown>;
    validator = ajv.compile(schema);
  }
  return validator;
}

/** Validate one record against the schema: null when it is valid, else a one-line reason. */
export function validateGraphRecord(record: unknown): string | null {
  const v = compiled();
  if (v(record)) return null;
  return formatErrors(v.errors ?? []);
}

function formatErrors(errors: ErrorObject[]): string {
  // With `allErrors: false` ajv stops at the first failure; `if/then` adds a wrapper error after it.
  const e = errors.find((x) => x.keyword !== 'if') ?? errors[0];
  if (!e) return 'does not match the codegraph schema';
  const where = e.instancePath || '/';
  const extra = e.keyword === 'unevaluatedProperties' ? ` (${(e.params as { unevaluatedProperty?: string }).unevaluatedProperty})` : '';
  return `${where} ${e.message ?? e.keyword}${extra}`;
}
