/**
 * The formula language's grammar (docs/FORMULAS.md "Language"), in Ohm, a
 * maintained PEG toolkit: a formula is parsed into a small tree with the
 * position of every node, never evaluated as JavaScript. Airtable's syntax:
 * `{column key}` references, "text" or 'text', numbers, TRUE and FALSE,
 * `+ - * / %`, `&`, `= != <> < <= > >=`, parentheses and FUNCTION(args).
 */
import * as ohm from 'ohm-js';

export type BinaryOperator = '+' | '-' | '*' | '/' | '%' | '&' | '=' | '!=' | '<' | '<=' | '>' | '>=';

interface Span {
  /** Offset of the node's first character in the formula (0-based). */
  start: number;
  end: number;
}

export type FormulaNode =
  | ({ kind: 'number'; value: number } & Span)
  | ({ kind: 'text'; value: string } & Span)
  | ({ kind: 'boolean'; value: boolean } & Span)
  | ({ kind: 'reference'; key: string } & Span)
  | ({ kind: 'name'; name: string } & Span)
  | ({ kind: 'call'; name: string; args: FormulaNode[] } & Span)
  | ({ kind: 'unary'; operator: '-' | '+'; operand: FormulaNode } & Span)
  | ({ kind: 'binary'; operator: BinaryOperator; left: FormulaNode; right: FormulaNode; operatorStart: number } & Span);

export class FormulaSyntaxError extends Error {
  constructor(
    message: string,
    /** 0-based offset in the formula where the problem is. */
    readonly position: number,
  ) {
    super(message);
    this.name = 'FormulaSyntaxError';
  }
}

const GRAMMAR = String.raw`
Formula {
  Formula = Exp

  Exp = Comparison

  Comparison = Comparison comparisonOperator Concatenation  -- binary
             | Concatenation

  Concatenation = Concatenation "&" Additive  -- binary
                | Additive

  Additive = Additive ("+" | "-") Multiplicative  -- binary
           | Multiplicative

  Multiplicative = Multiplicative ("*" | "/" | "%") Unary  -- binary
                 | Unary

  Unary = ("-" | "+") Unary  -- sign
        | Primary

  Primary = "(" Exp ")"  -- parens
          | Call
          | reference
          | number
          | string
          | name  -- name

  Call = name "(" ListOf<Exp, ","> ")"

  comparisonOperator (an operator) = "<=" | ">=" | "!=" | "<>" | "=" | "<" | ">"

  name (a function name) = (letter | "_") (alnum | "_")*

  reference (a {column} reference) = "{" referenceChar* "}"
  referenceChar = "\\" any  -- escaped
                | ~("}" | "\\") any  -- plain

  number (a number) = digit* "." digit+ exponent?  -- fraction
                    | digit+ exponent?  -- whole
  exponent = ("e" | "E") ("+" | "-")? digit+

  string (a "text" value) = "\"" doubleChar* "\""  -- double
                          | "'" singleChar* "'"  -- single
  doubleChar = "\\" any  -- escaped
             | ~("\"" | "\\") any  -- plain
  singleChar = "\\" any  -- escaped
             | ~("'" | "\\") any  -- plain
}
`;

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r' };

function unescape(chars: string): string {
  return chars.replace(/\\(.)/gs, (_, char: string) => ESCAPES[char] ?? char);
}

function span(node: ohm.Node): Span {
  return { start: node.source.startIdx, end: node.source.endIdx };
}

const TREE: ohm.ActionDict<FormulaNode> = {
  Formula(exp) {
    return exp.tree();
  },
  Comparison_binary(left, operator, right) {
    return binary(this, left, operator, right);
  },
  Concatenation_binary(left, operator, right) {
    return binary(this, left, operator, right);
  },
  Additive_binary(left, operator, right) {
    return binary(this, left, operator, right);
  },
  Multiplicative_binary(left, operator, right) {
    return binary(this, left, operator, right);
  },
  Unary_sign(sign, operand) {
    return { kind: 'unary', operator: sign.sourceString as '-' | '+', operand: operand.tree(), ...span(this) };
  },
  Primary_parens(_open, exp, _close) {
    return exp.tree();
  },
  Primary_name(name) {
    const upper = name.sourceString.toUpperCase();
    if (upper === 'TRUE' || upper === 'FALSE') return { kind: 'boolean', value: upper === 'TRUE', ...span(this) };
    return { kind: 'name', name: name.sourceString, ...span(this) };
  },
  Call(name, _open, args, _close) {
    return { kind: 'call', name: name.sourceString.toUpperCase(), args: args.asIteration().children.map((arg) => arg.tree()), ...span(this) };
  },
  reference(_open, chars, _close) {
    return { kind: 'reference', key: unescape(chars.sourceString), ...span(this) };
  },
  number(_) {
    return { kind: 'number', value: Number(this.sourceString), ...span(this) };
  },
  string_double(_open, chars, _close) {
    return { kind: 'text', value: unescape(chars.sourceString), ...span(this) };
  },
  string_single(_open, chars, _close) {
    return { kind: 'text', value: unescape(chars.sourceString), ...span(this) };
  },
};

/**
 * The grammar and its semantics, made when the first formula is parsed:
 * Ohm compiles a grammar (and its own built-in one first) in tens of
 * milliseconds, which a server start need not spend (docs/PERFORMANCE.md,
 * "Footprint").
 */
let language: { grammar: ohm.Grammar; semantics: ohm.Semantics } | null = null;
function formulaLanguage(): { grammar: ohm.Grammar; semantics: ohm.Semantics } {
  if (language) return language;
  const grammar = ohm.grammar(GRAMMAR);
  language = { grammar, semantics: grammar.createSemantics().addOperation<FormulaNode>('tree', TREE) };
  return language;
}

function binary(node: ohm.Node, left: ohm.Node, operator: ohm.Node, right: ohm.Node): FormulaNode {
  const symbol = operator.sourceString === '<>' ? '!=' : (operator.sourceString as BinaryOperator);
  return { kind: 'binary', operator: symbol, left: left.tree(), right: right.tree(), operatorStart: operator.source.startIdx, ...span(node) };
}

/** Longest formula a column holds. */
export const MAX_FORMULA_LENGTH = 4_000;
/** Deepest nesting of operators and calls a formula may have (the evaluator recurses once per level). */
const MAX_DEPTH = 100;

/** The formula's tree; throws FormulaSyntaxError with the position at fault. */
export function parseFormula(formula: string): FormulaNode {
  if (formula.length > MAX_FORMULA_LENGTH) throw new FormulaSyntaxError(`A formula is at most ${MAX_FORMULA_LENGTH} characters long.`, MAX_FORMULA_LENGTH);
  if (formula.trim() === '') throw new FormulaSyntaxError('The formula is empty.', 0);
  const { grammar, semantics } = formulaLanguage();
  let match: ohm.MatchResult;
  try {
    match = grammar.match(formula);
  } catch (error) {
    if (error instanceof RangeError) throw new FormulaSyntaxError('The formula is nested too deeply.', 0);
    throw error;
  }
  if (match.failed()) throw syntaxError(formula, match);
  const tree = semantics(match).tree();
  const depth = depthOf(tree);
  if (depth.depth > MAX_DEPTH) throw new FormulaSyntaxError(`The formula is nested too deeply (at most ${MAX_DEPTH} levels).`, depth.at);
  return tree;
}

function syntaxError(formula: string, match: ohm.FailedMatchResult): FormulaSyntaxError {
  const unclosed = openUnclosed(formula);
  if (unclosed) return unclosed;
  const position = match.getRightmostFailurePosition();
  const expected = describeExpected(match.getExpectedText());
  const rest = formula.slice(position);
  if (rest.trim() === '') return new FormulaSyntaxError(`The formula ends too early at position ${position}: expected ${expected}.`, position);
  return new FormulaSyntaxError(`Unexpected "${rest.trimStart().slice(0, 12)}" at position ${position}: expected ${expected}.`, position);
}

/** What the grammar expected, in the words of the language rather than a list of every token. */
function describeExpected(expected: string): string {
  if (expected.includes('end of input')) return 'an operator (+ - * / % & = != < <= > >=), a comma or a closing parenthesis, or the end of the formula';
  if (expected.includes('a number')) return 'a value: a number, "text", a {column} reference, a FUNCTION(...) or a parenthesis';
  return expected;
}

/** A reference or text opened and never closed reads better as that than as what the grammar expected at the end. */
function openUnclosed(formula: string): FormulaSyntaxError | null {
  let closer: string | null = null;
  let start = 0;
  for (let i = 0; i < formula.length; i++) {
    const char = formula[i]!;
    if (closer) {
      if (char === '\\') i++;
      else if (char === closer) closer = null;
    } else if (char === '"' || char === "'" || char === '{') {
      closer = char === '{' ? '}' : char;
      start = i;
    }
  }
  if (!closer) return null;
  return new FormulaSyntaxError(closer === '}' ? `The reference opened at position ${start} is not closed with "}".` : `The text opened at position ${start} is not closed with ${closer}.`, start);
}

function depthOf(node: FormulaNode): { depth: number; at: number } {
  const children = node.kind === 'call' ? node.args : node.kind === 'binary' ? [node.left, node.right] : node.kind === 'unary' ? [node.operand] : [];
  let deepest = { depth: 0, at: node.start };
  for (const child of children) {
    const below = depthOf(child);
    if (below.depth > deepest.depth) deepest = below;
  }
  return { depth: deepest.depth + 1, at: deepest.depth === 0 ? node.start : deepest.at };
}

/** Every `{reference}` of a formula, in order. */
export function referencesOf(node: FormulaNode): Array<Extract<FormulaNode, { kind: 'reference' }>> {
  const found: Array<Extract<FormulaNode, { kind: 'reference' }>> = [];
  const visit = (n: FormulaNode) => {
    if (n.kind === 'reference') found.push(n);
    else if (n.kind === 'call') n.args.forEach(visit);
    else if (n.kind === 'binary') {
      visit(n.left);
      visit(n.right);
    } else if (n.kind === 'unary') visit(n.operand);
  };
  visit(node);
  return found;
}

/** A column key as a reference: `{key}`, with `}` and `\` escaped. */
export function referenceTo(key: string): string {
  return `{${key.replace(/[\\}]/g, (char) => `\\${char}`)}}`;
}

/**
 * The formula with its references renamed (`renames` maps old keys to new;
 * all at once, so two keys can swap). The rest of the text is kept as
 * written. A formula that does not parse is returned as it is.
 */
export function renameReferences(formula: string, renames: ReadonlyMap<string, string>): string {
  if (renames.size === 0) return formula;
  let tree: FormulaNode;
  try {
    tree = parseFormula(formula);
  } catch {
    return formula;
  }
  let out = '';
  let from = 0;
  for (const reference of referencesOf(tree)) {
    const renamed = renames.get(reference.key);
    if (renamed === undefined) continue;
    out += formula.slice(from, reference.start) + referenceTo(renamed);
    from = reference.end;
  }
  return out + formula.slice(from);
}
