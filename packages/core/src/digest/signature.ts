/**
 * Signature and header digests: two projections of a declaration's header (its type parameters,
 * parameters and return type, or its heritage and member names), encoded with the canonical token
 * encoder (digest/encoder.ts).
 *
 * They live in digest/ because they are digests of the tree computed during extraction, by the same
 * encoder and under the same domain tags as the semantic digest; their consumers only read the values:
 * - the signature digest separates same-named siblings (overloads, merged declarations) in their
 *   identity path (identity/finalize.ts calls it back);
 * - the header digest is explanatory: diff says whether a change touched the signature.
 *
 * Invariants:
 * - No meaningful comment enters either (they belong to the semantic digest's first walk), so a
 *   re-walk of a header part yields exactly the tokens that walk produced for it.
 * - The header digest reused from the digest walk's tokens equals the one its own walk computes.
 */
import type * as TS from 'typescript';
import { digestParts } from './hash.js';
import { Ctx, TooDeep, type Encoder, type HeaderCapture } from './encoder.js';
import { kindName } from './kinds.js';

/** The header digest of a declaration just digested: reused from its walk's tokens when they are clean. */
export function declarationHeader(enc: Encoder, node: TS.Node, cap: HeaderCapture): string | undefined {
  const reused = headerDigestFromWalk(enc, node, cap);
  return reused === null ? headerDigest(enc, node) : reused;
}

/**
 * The header digest from the tokens the digest walk already produced for the header's parts: the
 * same nodes visited the same way as headerDigest's own walk (the walk's context only changes nested
 * declarations and comments, and a part in which either appeared is not reused), assembled in the
 * same order with the same '-' for absent slots. Returns null when a part is not available: then
 * headerDigest walks the header itself.
 */
function headerDigestFromWalk(enc: Encoder, node: TS.Node, cap: HeaderCapture): string | undefined | null {
  if (cap.buf === undefined) return null;
  const ts = enc.ts;
  const buf = cap.buf;
  const parts: string[] = [];
  const list = (l: TS.NodeArray<TS.Node> | undefined): boolean => {
    if (!l) return true; // visitList(undefined) emits nothing
    const r = cap.ranges.get(l);
    if (!r) return false;
    for (let i = r[0]; i < r[1]; i++) parts.push(buf[i]!);
    return true;
  };
  const slot = (n: TS.Node | undefined): boolean => {
    if (!n) {
      parts.push('-');
      return true;
    }
    const r = cap.ranges.get(n);
    if (!r) return false;
    for (let i = r[0]; i < r[1]; i++) parts.push(buf[i]!);
    return true;
  };
  if (!list((node as { modifiers?: TS.NodeArray<TS.Node> }).modifiers)) return null;
  if (ts.isFunctionLike(node)) {
    const f = node as TS.SignatureDeclaration;
    if (!list(f.typeParameters) || !list(f.parameters) || !slot(f.type)) return null;
  } else if (ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) {
    if (!list(node.typeParameters) || !list(node.heritageClauses)) return null;
  } else if (ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node)) {
    if (!slot(node.type)) return null;
    const init = node.initializer;
    if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) {
      if (!list(init.typeParameters) || !list(init.parameters) || !slot(init.type)) return null;
    }
  }
  return parts.length ? digestParts(enc.tag('header'), parts) : undefined;
}

/** Header digest (explanatory): the signature of function-likes, the heritage of classes. */
function headerDigest(enc: Encoder, node: TS.Node): string | undefined {
  const ts = enc.ts;
  const buf: string[] = [];
  const savedCursor = enc.commentCursor;
  enc.commentCursor = enc.comments.length;
  try {
    enc.withBuffer(buf, () => {
      enc.visitList((node as { modifiers?: TS.NodeArray<TS.Node> }).modifiers, Ctx.Stmt, -1, 0);
      if (ts.isFunctionLike(node)) {
        emitSignature(enc, node as TS.SignatureDeclaration);
      } else if (ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) {
        enc.visitList(node.typeParameters, Ctx.Stmt, -1, 0);
        enc.visitList(node.heritageClauses, Ctx.Stmt, -1, 0);
      } else if (ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node)) {
        enc.slot(node.type, Ctx.Stmt, -1, 0);
        const init = node.initializer;
        if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) {
          emitSignature(enc, init);
        } else return;
      } else return;
    });
  } catch (e) {
    if (e instanceof TooDeep || e instanceof RangeError) return undefined;
    throw e;
  } finally {
    enc.commentCursor = savedCursor;
  }
  return buf.length ? digestParts(enc.tag('header'), buf) : undefined;
}

/** Digest of what separates overloads and merged declarations: their signature, not their body. */
export function signatureDigest(enc: Encoder, node: TS.Node): string {
  const ts = enc.ts;
  const buf: string[] = [];
  enc.withBuffer(buf, () => {
    const savedCursor = enc.commentCursor;
    const savedComments = enc.comments.length;
    // Signature parts are re-walked; comments were consumed on the first walk, so none are emitted.
    enc.commentCursor = savedComments;
    try {
      if (ts.isFunctionLike(node)) {
        emitSignature(enc, node as TS.SignatureDeclaration);
      } else if (ts.isInterfaceDeclaration(node) || ts.isClassDeclaration(node)) {
        enc.visitList(node.typeParameters, Ctx.Stmt, -1, 0);
        enc.visitList(node.heritageClauses, Ctx.Stmt, -1, 0);
        const names = (node.members as TS.NodeArray<TS.Node>).map((m) => {
          const nm = (m as { name?: TS.PropertyName }).name;
          return `${kindName(m.kind)}:${nm ? enc.memberName(nm) : ''}`;
        });
        buf.push(...names.sort());
      } else if (ts.isModuleDeclaration(node)) {
        let body = node.body;
        while (body && ts.isModuleDeclaration(body)) body = body.body;
        const names: string[] = [];
        if (body && ts.isModuleBlock(body)) {
          for (const s of body.statements) {
            const nm = (s as { name?: TS.Node }).name;
            names.push(`${kindName(s.kind)}:${nm && ts.isIdentifier(nm) ? nm.text : ''}`);
          }
        }
        buf.push(...names.sort());
      } else if (ts.isEnumDeclaration(node)) {
        buf.push(...node.members.map((m) => enc.memberName(m.name)).sort());
      } else if (ts.isVariableDeclaration(node)) {
        enc.slot(node.type, Ctx.Stmt, -1, 0);
      } else if (ts.isTypeAliasDeclaration(node)) {
        enc.visitList(node.typeParameters, Ctx.Stmt, -1, 0);
      }
    } catch (e) {
      if (!(e instanceof TooDeep || e instanceof RangeError)) throw e;
      buf.push('too-deep');
    } finally {
      enc.commentCursor = savedCursor;
    }
  });
  return digestParts(enc.tag('sig'), buf).slice(0, 8);
}

/** Type parameters, parameters and return type of a function-like, as the header walk emits them. */
function emitSignature(enc: Encoder, f: TS.SignatureDeclarationBase): void {
  enc.visitList(f.typeParameters, Ctx.Stmt, -1, 0);
  enc.visitList(f.parameters, Ctx.Stmt, -1, 0);
  enc.slot(f.type, Ctx.Stmt, -1, 0);
}
