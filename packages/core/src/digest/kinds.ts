/**
 * Syntax-kind tables of the canonical token encoder (digest/encoder.ts): how each node kind is
 * spelled, dispatched, flagged and commented. Built once per process from the loaded compiler.
 *
 * Invariants:
 * - Kinds enter tokens by name (kindName), never by number: SyntaxKind numbering moves between compiler
 *   versions, names rarely do.
 * - Every table is a pure function of the compiler's SyntaxKind enum; none depends on the file.
 * - Tables indexed by kind are typed arrays (one load in the visit loop, no hashing).
 */
import type * as TS from 'typescript';
import { typescript } from '../parse/typescript.js';

let kindNames: string[] | undefined;
export function kindName(kind: number): string {
  if (!kindNames) {
    // Names, not numbers: SyntaxKind numbering moves between compiler versions, names rarely do.
    const ts = typescript();
    kindNames = [];
    for (const [name, value] of Object.entries(ts.SyntaxKind)) {
      if (typeof value === 'number' && kindNames[value] === undefined) kindNames[value] = name;
    }
  }
  return kindNames[kind] ?? `K${kind}`;
}

export function hasModifier(node: TS.Node, kind: TS.SyntaxKind): boolean {
  const mods = (node as { modifiers?: TS.NodeArray<TS.ModifierLike> }).modifiers;
  return !!mods && mods.some((m) => m.kind === kind);
}

export function isProseKind(ts: typeof TS, k: TS.SyntaxKind): boolean {
  return k === ts.SyntaxKind.JSDocText || k === ts.SyntaxKind.JSDocLink || k === ts.SyntaxKind.JSDocLinkCode || k === ts.SyntaxKind.JSDocLinkPlain;
}

let typeTagKinds: Set<number> | undefined;
export function TYPE_TAG_KINDS(ts: typeof TS): Set<number> {
  if (!typeTagKinds) {
    const SK = ts.SyntaxKind;
    typeTagKinds = new Set([
      SK.JSDocTypeTag, SK.JSDocParameterTag, SK.JSDocReturnTag, SK.JSDocTypedefTag, SK.JSDocCallbackTag,
      SK.JSDocTemplateTag, SK.JSDocThisTag, SK.JSDocEnumTag, SK.JSDocSatisfiesTag, SK.JSDocImplementsTag,
      SK.JSDocAugmentsTag, SK.JSDocOverloadTag, SK.JSDocImportTag, SK.JSDocPropertyTag, SK.JSDocClassTag,
      SK.JSDocPublicTag, SK.JSDocPrivateTag, SK.JSDocProtectedTag, SK.JSDocReadonlyTag, SK.JSDocOverrideTag,
    ]);
  }
  return typeTagKinds;
}

let leftOperandParentsSet: Set<number> | undefined;
/** Nodes whose first child (always visited first) starts where they start. */
export const LEFT_OPERAND_PARENTS = {
  has(k: number): boolean {
    if (!leftOperandParentsSet) {
      const SK = typescript().SyntaxKind;
      leftOperandParentsSet = new Set([
        SK.PropertyAccessExpression, SK.ElementAccessExpression, SK.CallExpression, SK.TaggedTemplateExpression,
        SK.BinaryExpression, SK.ConditionalExpression, SK.PostfixUnaryExpression, SK.AsExpression,
        SK.SatisfiesExpression, SK.NonNullExpression, SK.ExpressionWithTypeArguments, SK.ExpressionStatement,
      ]);
    }
    return leftOperandParentsSet.has(k);
  },
};

let propertyNameParentsSet: Set<number> | undefined;
export const PROPERTY_NAME_PARENTS = {
  has(k: number): boolean {
    if (!propertyNameParentsSet) {
      const SK = typescript().SyntaxKind;
      propertyNameParentsSet = new Set([
        SK.PropertyAssignment, SK.PropertyDeclaration, SK.MethodDeclaration, SK.PropertySignature,
        SK.MethodSignature, SK.GetAccessor, SK.SetAccessor, SK.EnumMember,
      ]);
    }
    return propertyNameParentsSet.has(k);
  },
};

/** What visitNodeBody does with a node kind; None is the generic path. */
export const enum V {
  None,
  Identifier,
  PrivateIdentifier,
  StringLiteral,
  NumericLiteral,
  BigIntLiteral,
  Template,
  RegularExpressionLiteral,
  JsxText,
  JsxExpression,
  Prose,
  ParenthesizedExpression,
  ParenthesizedType,
  ExpressionStatement,
  EmptyStatement,
  ForStatement,
  BindingElement,
  TypeParameter,
  CallExpression,
  ImportType,
  NewExpression,
  SemicolonClassElement,
}

let visitActionTable: Uint8Array | undefined;
export function visitActions(ts: typeof TS): Uint8Array {
  if (visitActionTable) return visitActionTable;
  const SK = ts.SyntaxKind;
  const t = new Uint8Array(SK.Count + 1);
  const set = (kinds: number[], v: V) => {
    for (const k of kinds) t[k] = v;
  };
  set([SK.Identifier], V.Identifier);
  set([SK.PrivateIdentifier], V.PrivateIdentifier);
  set([SK.StringLiteral], V.StringLiteral);
  set([SK.NumericLiteral], V.NumericLiteral);
  set([SK.BigIntLiteral], V.BigIntLiteral);
  set([SK.NoSubstitutionTemplateLiteral, SK.TemplateHead, SK.TemplateMiddle, SK.TemplateTail], V.Template);
  set([SK.RegularExpressionLiteral], V.RegularExpressionLiteral);
  set([SK.JsxText], V.JsxText);
  set([SK.JsxExpression], V.JsxExpression);
  set([SK.JSDocText, SK.JSDocLink, SK.JSDocLinkCode, SK.JSDocLinkPlain], V.Prose);
  set([SK.ParenthesizedExpression], V.ParenthesizedExpression);
  set([SK.ParenthesizedType], V.ParenthesizedType);
  set([SK.ExpressionStatement], V.ExpressionStatement);
  set([SK.EmptyStatement], V.EmptyStatement);
  set([SK.ForStatement], V.ForStatement);
  set([SK.BindingElement], V.BindingElement);
  set([SK.TypeParameter], V.TypeParameter);
  set([SK.CallExpression], V.CallExpression);
  set([SK.ImportType], V.ImportType);
  set([SK.NewExpression], V.NewExpression);
  set([SK.SemicolonClassElement], V.SemicolonClassElement);
  return (visitActionTable = t);
}

/** What emitFlags adds for a node kind. */
export const enum F {
  None,
  Operator,
  Token,
  KeywordToken,
  ImportClause,
  TypeOnly,
  TypeOf,
  ExportEquals,
}

let flagActionTable: Uint8Array | undefined;
export function flagActions(ts: typeof TS): Uint8Array {
  if (flagActionTable) return flagActionTable;
  const SK = ts.SyntaxKind;
  const t = new Uint8Array(SK.Count + 1);
  for (const k of [SK.PrefixUnaryExpression, SK.PostfixUnaryExpression, SK.TypeOperator]) t[k] = F.Operator;
  for (const k of [SK.HeritageClause, SK.ImportAttributes]) t[k] = F.Token;
  t[SK.MetaProperty] = F.KeywordToken;
  t[SK.ImportClause] = F.ImportClause;
  for (const k of [SK.ImportSpecifier, SK.ExportSpecifier, SK.ExportDeclaration, SK.ImportEqualsDeclaration]) t[k] = F.TypeOnly;
  t[SK.ImportType] = F.TypeOf;
  t[SK.ExportAssignment] = F.ExportEquals;
  return (flagActionTable = t);
}

let propertyNameParentTable: Uint8Array | undefined;
export function propertyNameParents(ts: typeof TS): Uint8Array {
  if (propertyNameParentTable) return propertyNameParentTable;
  const t = new Uint8Array(ts.SyntaxKind.Count + 1);
  for (let k = 0; k < t.length; k++) if (PROPERTY_NAME_PARENTS.has(k)) t[k] = 1;
  return (propertyNameParentTable = t);
}
