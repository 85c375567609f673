/**
 * ProseMirror JSON -> doc node. `docFromJSON` is the strict gate for bodies
 * sent by clients: it reports the first problem with a JSON path so a 400 can
 * point at it. `docFromJSONLenient` is for content already in a Y document,
 * which may come from an editor with extensions we do not know; it keeps what
 * it can instead of failing a read. Browser-safe.
 */
import { Fragment, type AttributeSpec, type ContentMatch, type Mark, type MarkType, type Node as PMNode, type NodeType } from 'prosemirror-model';
import { docSchema, SUGGESTION_MARKS } from './schema.js';

export type JSONPath = Array<string | number>;

export class DocValidationError extends Error {
  readonly path: JSONPath;
  readonly detail: string;

  constructor(detail: string, path: JSONPath) {
    super(`${detail} (at /${path.join('/')})`);
    this.name = 'DocValidationError';
    this.path = path;
    this.detail = detail;
  }
}

// Deeper nesting than this is not a document anyone wrote by hand; refusing it
// keeps a hostile body from exhausting the stack.
const MAX_DEPTH = 128;
const NODE_KEYS = new Set(['type', 'attrs', 'content', 'marks', 'text']);
const MARK_KEYS = new Set(['type', 'attrs']);

type JSONObject = Record<string, unknown>;

function isObject(value: unknown): value is JSONObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rejectUnknownKeys(json: JSONObject, allowed: Set<string>, path: JSONPath): void {
  for (const key of Object.keys(json)) {
    if (!allowed.has(key)) throw new DocValidationError(`unknown field "${key}"`, [...path, key]);
  }
}

function runValidator(spec: AttributeSpec, value: unknown, path: JSONPath): void {
  if (typeof spec.validate !== 'function') return;
  try {
    spec.validate(value);
  } catch (error) {
    throw new DocValidationError((error as Error).message, path);
  }
}

function checkAttrs(specs: Record<string, AttributeSpec>, raw: unknown, path: JSONPath, owner: string): Record<string, unknown> {
  if (raw !== undefined && raw !== null && !isObject(raw)) throw new DocValidationError('attrs must be an object', path);
  const given = (raw ?? {}) as JSONObject;
  for (const key of Object.keys(given)) {
    if (!(key in specs)) throw new DocValidationError(`${owner} has no attribute "${key}"`, [...path, key]);
  }
  const attrs: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const value = name in given ? given[name] : spec.default;
    if (value === undefined) throw new DocValidationError(`${owner} requires attribute "${name}"`, [...path, name]);
    runValidator(spec, value, [...path, name]);
    attrs[name] = value;
  }
  return attrs;
}

function buildMarks(raw: unknown, path: JSONPath): readonly Mark[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new DocValidationError('marks must be an array', path);
  let set: readonly Mark[] = [];
  raw.forEach((json, j) => {
    const markPath = [...path, j];
    if (!isObject(json)) throw new DocValidationError('expected a mark object', markPath);
    rejectUnknownKeys(json, MARK_KEYS, markPath);
    const type = typeof json.type === 'string' ? docSchema.marks[json.type] : undefined;
    if (!type) throw new DocValidationError(`unknown mark type ${JSON.stringify(json.type)}`, [...markPath, 'type']);
    if ((SUGGESTION_MARKS as readonly string[]).includes(type.name)) {
      // A plain write carrying these would put words in someone else's mouth (docs/SUGGESTIONS.md).
      throw new DocValidationError(
        `mark "${type.name}" is a suggestion and cannot be written directly: send the changed body with mode: "suggest" to propose it`,
        [...markPath, 'type'],
      );
    }
    if (type.isInSet(set)) throw new DocValidationError(`duplicate mark "${type.name}"`, markPath);
    const attrs = checkAttrs(type.spec.attrs ?? {}, json.attrs, [...markPath, 'attrs'], `mark ${type.name}`);
    set = type.create(attrs).addToSet(set);
  });
  return set;
}

function expectedTypes(match: ContentMatch): string {
  const names: string[] = [];
  for (let i = 0; i < match.edgeCount; i++) names.push(match.edge(i).type.name);
  return names.length ? names.join(' | ') : 'nothing';
}

function checkContent(type: NodeType, children: PMNode[], path: JSONPath): void {
  let match = type.contentMatch;
  children.forEach((child, i) => {
    const next = match.matchType(child.type);
    if (!next) {
      throw new DocValidationError(`${child.type.name} is not allowed here in ${type.name} (expected ${expectedTypes(match)})`, [...path, 'content', i]);
    }
    match = next;
    child.marks.forEach((mark: Mark, j: number) => {
      if (!type.allowsMarkType(mark.type)) {
        throw new DocValidationError(`mark "${mark.type.name}" is not allowed in ${type.name}`, [...path, 'content', i, 'marks', j]);
      }
    });
  });
  if (!match.validEnd) {
    throw new DocValidationError(`${type.name} content is incomplete (expected ${expectedTypes(match)})`, [...path, 'content']);
  }
}

function buildText(json: JSONObject, marks: readonly Mark[], path: JSONPath): PMNode {
  if ('content' in json || 'attrs' in json) throw new DocValidationError('a text node has no attrs or content', path);
  if (typeof json.text !== 'string' || json.text === '') throw new DocValidationError('text must be a non-empty string', [...path, 'text']);
  return docSchema.text(json.text, marks);
}

function buildNode(json: unknown, path: JSONPath, depth: number): PMNode {
  if (depth > MAX_DEPTH) throw new DocValidationError(`nesting deeper than ${MAX_DEPTH}`, path);
  if (!isObject(json)) throw new DocValidationError('expected a node object', path);
  rejectUnknownKeys(json, NODE_KEYS, path);
  const type = typeof json.type === 'string' ? docSchema.nodes[json.type] : undefined;
  if (!type) throw new DocValidationError(`unknown node type ${JSON.stringify(json.type)}`, [...path, 'type']);
  const marks = buildMarks(json.marks, [...path, 'marks']);
  if (type.isText) return buildText(json, marks, path);
  if ('text' in json) throw new DocValidationError(`${type.name} has no text field`, [...path, 'text']);
  const attrs = checkAttrs(type.spec.attrs ?? {}, json.attrs, [...path, 'attrs'], type.name);
  if (json.content !== undefined && !Array.isArray(json.content)) throw new DocValidationError('content must be an array', [...path, 'content']);
  const children = ((json.content as unknown[] | undefined) ?? []).map((child, i) => buildNode(child, [...path, 'content', i], depth + 1));
  checkContent(type, children, path);
  return type.create(attrs, Fragment.fromArray(children), marks);
}

/**
 * Validates ProseMirror JSON against the doc schema and builds the node.
 * Throws DocValidationError (with `path`) on an unknown node or mark type, a
 * suggestion mark (those are made by `mode: "suggest"` writes only, see
 * suggestions.ts), an unknown, missing or invalid attribute, or content the
 * schema does not allow.
 * A doc with no blocks is accepted as an empty doc (one empty paragraph).
 */
export function docFromJSON(json: unknown): PMNode {
  if (!isObject(json) || json.type !== 'doc') throw new DocValidationError('expected a node of type "doc"', isObject(json) ? ['type'] : []);
  const filled = Array.isArray(json.content) && json.content.length === 0 ? { ...json, content: [{ type: 'paragraph' }] } : json;
  const doc = buildNode(filled, [], 0);
  try {
    doc.check();
  } catch (error) {
    throw new DocValidationError((error as Error).message, []);
  }
  return doc;
}

// ------------------------------------------------------------------ lenient

function lenientMarks(raw: unknown): Mark[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((json) => {
    const type: MarkType | undefined = isObject(json) && typeof json.type === 'string' ? docSchema.marks[json.type] : undefined;
    return type ? [type.create(isObject(json.attrs) ? json.attrs : null)] : [];
  });
}

function lenientNodes(json: unknown, depth: number): PMNode[] {
  if (!isObject(json) || depth > MAX_DEPTH) return [];
  const children = Array.isArray(json.content) ? json.content.flatMap((c) => lenientNodes(c, depth + 1)) : [];
  const type = typeof json.type === 'string' ? docSchema.nodes[json.type] : undefined;
  // An unknown wrapper (another editor's extension) keeps its content in place.
  if (!type) return children;
  const marks = lenientMarks(json.marks);
  if (type.isText) return typeof json.text === 'string' && json.text !== '' ? [docSchema.text(json.text, marks)] : [];
  return [type.create(isObject(json.attrs) ? json.attrs : null, Fragment.fromArray(children), marks)];
}

/**
 * Builds nodes from one node's JSON without rejecting anything: an unknown
 * node type yields its children, so the result may hold zero or several nodes.
 */
export function nodesFromJSONLenient(json: unknown): PMNode[] {
  return lenientNodes(json, 1);
}

/**
 * Builds a doc from JSON without rejecting anything: unknown node types are
 * unwrapped, unknown marks and attributes dropped, content left unchecked.
 */
export function docFromJSONLenient(json: unknown): PMNode {
  const content = isObject(json) && Array.isArray(json.content) ? json.content.flatMap((c) => lenientNodes(c, 1)) : [];
  return docSchema.topNodeType.create(null, content.length ? Fragment.fromArray(content) : docSchema.nodes.paragraph.create());
}
