/**
 * External shape (SPEC §4): what a *consumer* of a module-level declaration can observe — its
 * signature when the type is written down, its whole meaning when the type is inferred from its body,
 * class shapes with private member names but not their types or bodies, full type declarations and
 * enums — as a digest (`shape`) and the module-level names that projection mentions (`shapeRefs`).
 *
 * Only the external closure (closure/closure.ts) consumes these, yet they live in digest/: they are
 * computed from the syntax tree during extraction, by the canonical encoder and under its domain tags,
 * and stored in the slice; the closure reads the stored values through the view report and never sees
 * a tree, so closure/ stays a pure function of reports.
 *
 * Invariants:
 * - A declaration whose semantic digest is null gets no shape (it always compares as changed).
 * - No meaningful comment enters a shape; a projection that cannot be taken (too deep, inferred
 *   return type without a body digest) falls back to the whole declaration (`shape-full`).
 * - `refs` and `shapeRefs` are sorted, unique, and filtered to module-level names and imported bindings.
 */
import type * as TS from 'typescript';
import type { Variant } from '../parse/language.js';
import { digestParts } from './hash.js';
import { Ctx, TooDeep, type Encoder, type PendingDecl } from './encoder.js';
import { hasModifier, kindName } from './kinds.js';

/**
 * Give each queued module-level declaration its shape digest, `shapeRefs` and `refs` (`refs` are the
 * names the whole declaration mentions, from `pendingRefs`). Runs once all module-level names are known.
 */
export function finalizeShapes(enc: Encoder, variant: Variant, shapeQueue: readonly number[], pendingRefs: ReadonlyMap<number, Set<string>>): void {
  const moduleNames = new Set<string>();
  for (const p of enc.decls) if (p.fact.parent === -1) moduleNames.add(p.name);
  for (const local of enc.importSources.keys()) moduleNames.add(local);
  // Sorted module-level names among `names` (a set: already unique).
  const keep = (names: ReadonlySet<string>) => {
    const out: string[] = [];
    for (const n of names) if (moduleNames.has(n)) out.push(n);
    return out.sort();
  };
  for (const i of shapeQueue) {
    const p = enc.decls[i]!;
    const refs = pendingRefs.get(i) ?? new Set<string>();
    if (p.fact.semantic === null) continue;
    const shapeRefs = new Set<string>();
    const projection = shapeProjection(enc, p, shapeRefs, variant, pendingRefs);
    const kept = keep(refs);
    if (projection === null) {
      p.fact.shape = digestParts(enc.tag('shape-full'), [p.fact.kind, p.fact.semantic]);
      p.fact.shapeRefs = [...kept];
    } else {
      p.fact.shape = digestParts(enc.tag('shape'), [p.fact.kind, ...projection]);
      p.fact.shapeRefs = keep(shapeRefs);
    }
    p.fact.refs = kept;
  }
}

/** The shape tokens, or null when the whole declaration is what consumers observe. */
function shapeProjection(enc: Encoder, p: PendingDecl, refs: Set<string>, variant: Variant, pendingRefs: ReadonlyMap<number, Set<string>>): string[] | null {
  const ts = enc.ts;
  const node = p.node;
  // Declaration files and JavaScript: types are the whole content, or come from inference/JSDoc.
  if (variant === 'dts' || enc.isJs) return null;
  const buf: string[] = [];
  const savedCursor = enc.commentCursor;
  const savedRefs = enc.declRefs;
  enc.commentCursor = enc.comments.length;
  enc.declRefs = refs;
  try {
    const ok = enc.withBuffer(buf, () => emitShape(enc, node, p.name, pendingRefs));
    return ok ? buf : null;
  } catch (e) {
    if (e instanceof TooDeep || e instanceof RangeError) return null;
    throw e;
  } finally {
    enc.commentCursor = savedCursor;
    enc.declRefs = savedRefs;
  }
  void ts;
}

/** Emit the shape of a module-level declaration; false when it must be taken whole. */
function emitShape(enc: Encoder, node: TS.Node, name: string, pendingRefs: ReadonlyMap<number, Set<string>>): boolean {
  const ts = enc.ts;
  const signature = (f: TS.SignatureDeclaration, needsReturnType: boolean): boolean => {
    if (needsReturnType && !f.type) return false; // return type inferred from the body
    enc.visitList((f as { modifiers?: TS.NodeArray<TS.Node> }).modifiers, Ctx.Stmt, -1, 0);
    if ((f as { asteriskToken?: TS.Node }).asteriskToken) enc.out.push('generator');
    enc.visitList(f.typeParameters, Ctx.Stmt, -1, 0);
    enc.visitList(f.parameters, Ctx.Stmt, -1, 0);
    enc.slot(f.type, Ctx.Stmt, -1, 0);
    return true;
  };
  if (ts.isFunctionDeclaration(node)) {
    enc.out.push('fn', name);
    return signature(node, !!node.body);
  }
  if (ts.isVariableDeclaration(node)) {
    enc.out.push('var', name);
    enc.visit(node.name, Ctx.Stmt, -1, 0);
    if (node.type) {
      enc.visit(node.type, Ctx.Stmt, -1, 0);
      return true;
    }
    const init = node.initializer;
    // `const f = (x: A): B => …`: the type is written down on the function itself.
    if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) return signature(init, true);
    return false;
  }
  if (ts.isClassDeclaration(node)) {
    enc.out.push('class', name);
    enc.visitList(node.modifiers, Ctx.Stmt, -1, 0);
    enc.visitList(node.typeParameters, Ctx.Stmt, -1, 0);
    enc.visitList(node.heritageClauses, Ctx.Stmt, -1, 0);
    let hashPrivate = false;
    for (const m of node.members) {
      if (ts.isSemicolonClassElement(m) || ts.isClassStaticBlockDeclaration(m)) continue;
      const mname = (m as { name?: TS.PropertyName }).name;
      if (mname && ts.isPrivateIdentifier(mname)) {
        hashPrivate = true; // `#private` members make the class nominal; their names do not show
        continue;
      }
      const isPrivate = hasModifier(m, enc.SK.PrivateKeyword);
      enc.out.push('member', kindName(m.kind));
      if (isPrivate) {
        // A private member shows as `private name;`: its existence and name, not its type.
        enc.out.push('private', hasModifier(m, enc.SK.StaticKeyword) ? 'static' : 'instance');
        if (mname) enc.emitPropertyName(mname);
        continue;
      }
      if (ts.isConstructorDeclaration(m)) {
        for (const param of m.parameters) {
          const paramPrivate = hasModifier(param, enc.SK.PrivateKeyword);
          enc.out.push('param');
          if (paramPrivate) {
            enc.out.push('private');
            enc.visit(param.name, Ctx.Stmt, -1, 0);
          } else enc.visit(param, Ctx.Stmt, -1, 0);
        }
        continue;
      }
      if (ts.isMethodDeclaration(m) || ts.isGetAccessorDeclaration(m)) {
        if (mname) enc.emitPropertyName(mname);
        enc.slot(m.questionToken, Ctx.Stmt, -1, 0);
        if (!signature(m, !!m.body)) {
          // Inferred return type: the member's whole body is observable.
          const member = enc.decls.findIndex((q) => q.node === m);
          const sem = member === -1 ? null : enc.decls[member]!.fact.semantic;
          if (!sem) return false;
          enc.out.push('inferred', sem);
          for (const r of pendingRefs.get(member) ?? []) enc.declRefs.add(r);
        }
        continue;
      }
      if (ts.isSetAccessorDeclaration(m)) {
        if (mname) enc.emitPropertyName(mname);
        signature(m, false);
        continue;
      }
      if (ts.isPropertyDeclaration(m)) {
        enc.visitList(m.modifiers, Ctx.Stmt, -1, 0);
        enc.emitPropertyName(m.name);
        enc.slot(m.questionToken ?? m.exclamationToken, Ctx.Stmt, -1, 0);
        if (m.type) enc.visit(m.type, Ctx.Stmt, -1, 0);
        else if (m.initializer) enc.visit(m.initializer, Ctx.Stmt, -1, 0); // inferred from it
        continue;
      }
      // Index signatures and anything else: whole.
      enc.visit(m, Ctx.Stmt, -1, 0);
    }
    if (hashPrivate) enc.out.push('#private');
    return true;
  }
  // Interfaces, type aliases, enums (their values are inlined), namespaces, default exports: whole.
  return false;
}

