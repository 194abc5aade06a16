/**
 * Issue 2, point 11 — one alphabetical registry of diagnostic codes: every entry complete (severity,
 * outcome category (issue 14 point 8), title, meaning, hint), keys sorted, every code the sources emit registered, and every registered
 * code reachable through `diagnostic()` with the registry's severity and hint.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CODES, diagnostic, formatDiagnostic, isDiagnosticCode, KilnError, OUTCOMES, type DiagnosticCode } from '@kiln/core';

const codes = Object.keys(CODES) as DiagnosticCode[];

describe('the diagnostic code registry', () => {
  it('is not empty and names codes KILN_UPPER_SNAKE', () => {
    expect(codes.length).toBeGreaterThan(10);
    for (const c of codes) expect(c).toMatch(/^KILN_[A-Z0-9]+(_[A-Z0-9]+)*$/);
  });

  it('is sorted alphabetically (code-point order, as `kiln explain --list` prints it)', () => {
    const sorted = [...codes].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(codes).toEqual(sorted);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it.each(codes)('%s has a severity, an outcome, a title, a meaning and a hint', (code) => {
    const e = CODES[code] as { severity: unknown; outcome: unknown; title: unknown; meaning: unknown; hint: unknown; wraps?: unknown };
    expect(['error', 'warning', 'info']).toContain(e.severity);
    // The outcome category is data of the registry (issue 14 point 8): one of OUTCOMES, and a warning
    // or a notice never stands for a result that was refused or failed.
    expect(Object.keys(OUTCOMES)).toContain(e.outcome);
    if (e.severity !== 'error') expect(['degraded', 'slower', 'unaffected'], code).toContain(e.outcome);
    for (const field of ['title', 'meaning', 'hint'] as const) {
      const v = e[field];
      expect(typeof v, `${code}.${field}`).toBe('string');
      expect((v as string).trim().length, `${code}.${field}`).toBeGreaterThan(8);
      expect((v as string).trim(), `${code}.${field}`).toBe(v);
    }
    expect(e.title).not.toMatch(/\.$/); // one line, no full stop
    expect(Object.keys(e).filter((k) => k !== 'wraps').sort()).toEqual(['hint', 'meaning', 'outcome', 'severity', 'title']);
    if (e.wraps !== undefined) expect(e.wraps).toBe('typescript');
  });

  it.each(codes)('%s builds a diagnostic carrying the registry severity and hint', (code) => {
    expect(isDiagnosticCode(code)).toBe(true);
    const d = diagnostic(code, 'something happened', { producer: 'test' });
    expect(d).toEqual({ code, severity: CODES[code].severity, message: 'something happened', hint: CODES[code].hint, producer: 'test' });
    // No location: none is invented.
    expect('file' in d || 'line' in d).toBe(false);
    expect(formatDiagnostic(d)).toContain(code);
    const err = new KilnError(d);
    expect(err.code).toBe(code);
  });

  it('rejects codes that are not registered', () => {
    expect(isDiagnosticCode('KILN_NOPE')).toBe(false);
    expect(isDiagnosticCode('toString')).toBe(false);
    expect(isDiagnosticCode('__proto__')).toBe(false);
  });

  it('registers every code the sources emit', () => {
    // Quoted KILN_* literals in the packages' sources (environment variables are never quoted alone).
    const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
    const used = new Set<string>();
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.(ts|tsx|mts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) {
          for (const m of readFileSync(p, 'utf8').matchAll(/['"`](KILN_[A-Z0-9_]+)['"`]/g)) used.add(m[1]!);
        }
      }
    };
    for (const pkg of readdirSync(root, { withFileTypes: true })) {
      if (!pkg.isDirectory()) continue;
      try {
        walk(join(root, pkg.name, 'src'));
      } catch {
        // a package without src/
      }
    }
    expect(used.size).toBeGreaterThan(5);
    const ENV_VARS = new Set(['KILN_STORE', 'KILN_MAX_FILE_SIZE', 'KILN_TRACE']);
    expect([...used].filter((c) => !ENV_VARS.has(c) && !isDiagnosticCode(c)).sort()).toEqual([]);
  });
});
