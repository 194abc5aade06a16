/**
 * The codegraph JSON Schema (schema/codegraph.schema.json, JSON Schema 2020-12) and its validator.
 *
 * Invariants: the schema file is the normative definition of every known record kind; its header
 * definition pins `schema_version` to GRAPH_SCHEMA_VERSION. Nothing is read or compiled at import
 * time: the validator loads on the first validation, once per thread — the build's precompiled one
 * (dist/graph/schema-validator.cjs) when it names the shipped schema's hash, else ajv compiles it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
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
let validatorKind: 'standalone' | 'compiled' | undefined;

function compiled(): ValidateFunction {
  if (!validator) {
    // The build compiles the schema ahead (tools/build-graph-validator.mjs): loading that module costs
    // ~15 ms where loading ajv and compiling costs ~1 s. It is used only when it was compiled from
    // exactly the schema shipped beside it.
    try {
      const pre = require('./schema-validator.cjs') as ValidateFunction & { schemaSha256?: string };
      const text = readFileSync(graphSchemaPath());
      if (typeof pre === 'function' && pre.schemaSha256 === createHash('sha256').update(text).digest('hex')) {
        validator = pre;
        validatorKind = 'standalone';
        return pre;
      }
    } catch {
      // not built (a plain tsc build) or unreadable: compile below
    }
    // ajv is CommonJS; its 2020-12 build exports the class as `default`.
    const mod = require('ajv/dist/2020') as { default: new (o: object) => { compile: (s: object) => ValidateFunction } };
    const ajv = new mod.default({ allErrors: false, strict: true });
    schema ??= require('./schema/codegraph.schema.json') as Record<string, unknown>;
    validator = ajv.compile(schema);
    validatorKind = 'compiled';
  }
  return validator;
}

/** Which validator validates: the build's precompiled one, or one compiled from the schema in this process. */
export function graphValidatorKind(): 'standalone' | 'compiled' {
  compiled();
  return validatorKind!;
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
