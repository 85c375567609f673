/**
 * From a formula's text to a checked, typed, runnable formula. `checkFormula`
 * answers what an editor and a column write need (is it valid, what type
 * does it give, where is the fault); `compiledFormula` turns it into a
 * closure run once per row. Both are cached by text.
 */
import { FUNCTIONS, modulo, type FormulaEnvironment, type StaticType } from './functions.js';
import { FormulaSyntaxError, parseFormula, referencesOf, type FormulaNode } from './parse.js';
import { compareValues, FormulaError, tidy, toNumber, toText, valuesEqual, type ResultType, type Value } from './values.js';

export type CompiledFormula = (env: FormulaEnvironment) => Value;

export type FormulaCheck =
  | { ok: true; resultType: ResultType; references: string[] }
  | { ok: false; error: { message: string; position: number; reference?: string } };

/**
 * Checks a formula against the columns it may use: `typeOf(key)` gives a
 * column's static type, undefined when there is no such column.
 */
export function checkFormula(formula: string, typeOf: (key: string) => StaticType | undefined): FormulaCheck {
  let tree: FormulaNode;
  try {
    tree = parsedFormula(formula);
  } catch (error) {
    if (error instanceof FormulaSyntaxError) return { ok: false, error: { message: error.message, position: error.position } };
    throw error;
  }
  const problem = structuralProblem(tree);
  if (problem) return { ok: false, error: problem };
  for (const reference of referencesOf(tree)) {
    if (typeOf(reference.key) === undefined) {
      return { ok: false, error: { message: `There is no column "${reference.key}" (the reference at position ${reference.start}).`, position: reference.start, reference: reference.key } };
    }
  }
  return { ok: true, resultType: resultTypeOf(staticType(tree, typeOf)), references: [...new Set(referencesOf(tree).map((reference) => reference.key))] };
}

/** The type a formula's cells hold, whatever its faults (a column a sync peer wrote, or that lost a column since): text when it cannot be told. */
export function formulaResultType(formula: string, typeOf: (key: string) => StaticType | undefined): ResultType {
  try {
    return resultTypeOf(staticType(parsedFormula(formula), (key) => typeOf(key) ?? 'any'));
  } catch {
    return 'text';
  }
}

/** The column keys a formula refers to (none when it does not parse). */
export function formulaReferences(formula: string): string[] {
  try {
    return [...new Set(referencesOf(parsedFormula(formula)).map((reference) => reference.key))];
  } catch {
    return [];
  }
}

/** What a static type shows as: lists, blanks and unknowns read as text. */
export function resultTypeOf(type: StaticType): ResultType {
  return type === 'number' || type === 'date' || type === 'checkbox' ? type : 'text';
}

// ---------------------------------------------------------------------------

const PARSED_KEPT = 2_000;
const parsed = new Map<string, FormulaNode | FormulaSyntaxError>();
const compiled = new Map<string, CompiledFormula>();

function parsedFormula(formula: string): FormulaNode {
  let entry = parsed.get(formula);
  if (entry === undefined) {
    try {
      entry = parseFormula(formula);
    } catch (error) {
      if (!(error instanceof FormulaSyntaxError)) throw error;
      entry = error;
    }
    if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value!);
    parsed.set(formula, entry);
  }
  if (entry instanceof FormulaSyntaxError) throw entry;
  return entry;
}

/** Unknown functions, wrong argument counts and bare names, with their position. */
function structuralProblem(node: FormulaNode): { message: string; position: number } | null {
  switch (node.kind) {
    case 'name':
      return {
        message: `"${node.name}" at position ${node.start} is not a function call or a value: write {${node.name}} for a column, "${node.name}" for text, or ${node.name.toUpperCase()}(...) for a function.`,
        position: node.start,
      };
    case 'call': {
      const spec = FUNCTIONS.get(node.name);
      if (!spec) return { message: `Unknown function ${node.name} at position ${node.start}.`, position: node.start };
      if (node.args.length < spec.minArgs || node.args.length > spec.maxArgs) {
        const range = spec.minArgs === spec.maxArgs ? `${spec.minArgs}` : spec.maxArgs === Infinity ? `at least ${spec.minArgs}` : `${spec.minArgs} to ${spec.maxArgs}`;
        return { message: `${node.name} at position ${node.start} takes ${range} argument${range === '1' ? '' : 's'}, not ${node.args.length}: ${spec.signature}.`, position: node.start };
      }
      for (const arg of node.args) {
        const problem = structuralProblem(arg);
        if (problem) return problem;
      }
      return null;
    }
    case 'binary':
      return structuralProblem(node.left) ?? structuralProblem(node.right);
    case 'unary':
      return structuralProblem(node.operand);
    default:
      return null;
  }
}

function staticType(node: FormulaNode, typeOf: (key: string) => StaticType | undefined): StaticType {
  switch (node.kind) {
    case 'number':
      return 'number';
    case 'text':
      return 'text';
    case 'boolean':
      return 'checkbox';
    case 'reference':
      return typeOf(node.key) ?? 'any';
    case 'name':
      return 'any';
    case 'unary':
      return 'number';
    case 'binary':
      if (node.operator === '&') return 'text';
      return ['=', '!=', '<', '<=', '>', '>='].includes(node.operator) ? 'checkbox' : 'number';
    case 'call': {
      const spec = FUNCTIONS.get(node.name);
      return spec ? spec.returns(node.args.map((arg) => staticType(arg, typeOf))) : 'any';
    }
  }
}

// ---------------------------------------------------------------------------
// Running

/** The formula as a closure, or one that answers #ERROR! naming the fault when it does not parse (a sync peer can store anything). */
export function compiledFormula(formula: string): CompiledFormula {
  let closure = compiled.get(formula);
  if (closure) return closure;
  try {
    const tree = parsedFormula(formula);
    const problem = structuralProblem(tree);
    closure = problem ? constant(new FormulaError('#ERROR!', problem.message)) : compile(tree);
  } catch (error) {
    if (!(error instanceof FormulaSyntaxError)) throw error;
    closure = constant(new FormulaError('#ERROR!', error.message));
  }
  if (compiled.size >= PARSED_KEPT) compiled.delete(compiled.keys().next().value!);
  compiled.set(formula, closure);
  return closure;
}

/** Runs a formula; a bug in a function answers #ERROR! rather than failing the read. */
export function runFormula(formula: CompiledFormula, env: FormulaEnvironment): Value {
  try {
    return formula(env);
  } catch (error) {
    return new FormulaError('#ERROR!', `The formula could not be computed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function constant(value: Value): CompiledFormula {
  return () => value;
}

function compile(node: FormulaNode): CompiledFormula {
  switch (node.kind) {
    case 'number':
    case 'text':
    case 'boolean':
      return constant(node.value);
    case 'name':
      return constant(new FormulaError('#ERROR!', `"${node.name}" is not a value.`));
    case 'reference': {
      const key = node.key;
      return (env) => env.cell(key);
    }
    case 'unary': {
      const operand = compile(node.operand);
      if (node.operator === '+') return (env) => toNumber(operand(env));
      return (env) => {
        const n = toNumber(operand(env));
        return typeof n === 'number' ? tidy(-n) : n;
      };
    }
    case 'binary':
      return compileBinary(node.operator, compile(node.left), compile(node.right));
    case 'call': {
      const spec = FUNCTIONS.get(node.name)!;
      const args = node.args.map(compile);
      if (spec.lazy) return (env) => spec.run([], env, args.map((arg) => () => arg(env)));
      return (env) => {
        const values: Value[] = [];
        for (const arg of args) {
          const value = arg(env);
          if (value instanceof FormulaError && !spec.catchesErrors) return value;
          values.push(value);
        }
        return spec.run(values, env, []);
      };
    }
  }
}

function compileBinary(operator: string, left: CompiledFormula, right: CompiledFormula): CompiledFormula {
  const arithmetic = (apply: (a: number, b: number) => number | FormulaError): CompiledFormula => (env) => {
    const a = toNumber(left(env));
    if (a instanceof FormulaError) return a;
    const b = toNumber(right(env));
    if (b instanceof FormulaError) return b;
    const result = apply(a, b);
    if (result instanceof FormulaError) return result;
    return Number.isFinite(result) ? tidy(result) : new FormulaError('#VALUE!', 'The result is too large to be a number.');
  };
  const comparison = (test: (order: number) => boolean): CompiledFormula => (env) => {
    const order = compareValues(left(env), right(env));
    return order instanceof FormulaError ? order : test(order);
  };
  switch (operator) {
    case '+':
      return arithmetic((a, b) => a + b);
    case '-':
      return arithmetic((a, b) => a - b);
    case '*':
      return arithmetic((a, b) => a * b);
    case '/':
      return arithmetic((a, b) => (b === 0 ? new FormulaError('#DIV/0!', 'Division by zero.') : a / b));
    case '%':
      return arithmetic(modulo);
    case '&':
      return (env) => {
        const a = toText(left(env));
        if (a instanceof FormulaError) return a;
        const b = toText(right(env));
        return b instanceof FormulaError ? b : a + b;
      };
    case '=':
      return (env) => valuesEqual(left(env), right(env));
    case '!=':
      return (env) => {
        const equal = valuesEqual(left(env), right(env));
        return equal instanceof FormulaError ? equal : !equal;
      };
    case '<':
      return comparison((order) => order < 0);
    case '<=':
      return comparison((order) => order <= 0);
    case '>':
      return comparison((order) => order > 0);
    default:
      return comparison((order) => order >= 0);
  }
}

