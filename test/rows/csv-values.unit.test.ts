import { describe, expect, it } from 'vitest';
import {
  addToColumnStats,
  columnKeyForHeader,
  decodeCsvCell,
  emptyColumnStats,
  encodeCsvCell,
  inferColumnType,
  mapCsvHeaders,
} from '../../src/model/table/csv';

/** How CSV cells are written and read back, and how new columns get their types (src/model/table/csv.ts, shared with the web app). */

const inferred = (...fields: string[]) => {
  const stats = emptyColumnStats();
  for (const field of fields) addToColumnStats(stats, field);
  return inferColumnType(stats);
};

describe('CSV cells', () => {
  it('every cell value reads back as itself from its encoding, by its column type', () => {
    const cases: Array<[unknown, { type: string; options?: Array<{ value: string; label: string }> }]> = [
      ['text, "quoted"\nsecond line', { type: 'text' }],
      [-0.125, { type: 'number' }],
      [1e21, { type: 'number' }],
      [true, { type: 'checkbox' }],
      [false, { type: 'checkbox' }],
      ['2026-02-28T09:30:00Z', { type: 'date' }],
      [['a', 'b, c', 'd "e"'], { type: 'select', options: ['a', 'b, c', 'd "e"'].map((value) => ({ value, label: value })) }],
      ['usr_1', { type: 'person' }],
      [['usr_1', 'agt_2'], { type: 'person' }],
      [['row_1'], { type: 'link' }],
    ];
    for (const [value, column] of cases) expect(decodeCsvCell(encodeCsvCell(value), column as never), JSON.stringify(value)).toEqual(value);
    expect(encodeCsvCell(null)).toBe('');
    expect(decodeCsvCell('', { type: 'text' })).toBeUndefined();
  });

  it('options match by value, else by label or value ignoring case; a field that fits no type stays text for the validation to refuse', () => {
    const stage = { type: 'status', options: [{ value: 'todo', label: 'To do' }] };
    expect(decodeCsvCell('To Do', stage as never)).toBe('todo');
    expect(decodeCsvCell('TODO', stage as never)).toBe('todo');
    expect(decodeCsvCell('later', stage as never)).toBe('later');
    expect(decodeCsvCell('12 apples', { type: 'number' } as never)).toBe('12 apples');
    expect(decodeCsvCell('TRUE', { type: 'checkbox' } as never)).toBe(true);
  });
});

describe('types of new columns', () => {
  it('number, date, checkbox, select and text, from every non-empty field', () => {
    expect(inferred('1', '-2.5', '', '3e2')).toEqual({ type: 'number' });
    expect(inferred('2026-01-01', '2026-01-02T10:00:00Z')).toEqual({ type: 'date' });
    expect(inferred('true', 'FALSE', 'True')).toEqual({ type: 'checkbox' });
    expect(inferred('Red', 'Blue', 'Red', 'Red')).toEqual({ type: 'select', options: [{ value: 'Red', label: 'Red' }, { value: 'Blue', label: 'Blue' }] });
    expect(inferred('["a","b"]', '["b"]')).toEqual({ type: 'select', options: [{ value: 'a', label: 'a' }, { value: 'b', label: 'b' }] });
    expect(inferred('Ann', 'Ben', 'Cy')).toEqual({ type: 'text' });
    expect(inferred('', '')).toEqual({ type: 'text' });
  });

  it('codes are not numbers (leading zeros, more digits than a double keeps); a mixed column is text', () => {
    expect(inferred('007', '012').type).not.toBe('number');
    expect(inferred('1234567890123456789').type).toBe('text');
    expect(inferred('1', '2026-01-01').type).toBe('text');
    expect(inferred('2023-02-29').type).toBe('text');
  });

  it('too many distinct values, long values or values on several lines are never options', () => {
    const many = Array.from({ length: 60 }, (_, i) => `v${i % 30}`);
    expect(inferred(...many).type).toBe('text');
    expect(inferred(...Array(4).fill('x'.repeat(61))).type).toBe('text');
    expect(inferred('a\nb', 'a\nb', 'a\nb').type).toBe('text');
  });
});

describe('headers', () => {
  it('map to columns by key, then key or label ignoring case, then the key a new column would get; the rest are new columns with fresh keys (two new headers are two columns)', () => {
    const columns = [
      { key: 'title', label: 'Title' },
      { key: 'due_date', label: 'Deadline' },
      { key: 'owner', label: 'Owner' },
    ];
    const { targets, problems } = mapCsvHeaders(['id', 'TITLE', 'deadline', 'Due date', 'Owner', 'Owner ', 'Größe (cm)', 'title'], columns);
    expect(targets).toEqual([
      { kind: 'id' },
      { kind: 'column', key: 'title' },
      { kind: 'column', key: 'due_date' },
      { kind: 'column', key: 'due_date' },
      { kind: 'column', key: 'owner' },
      { kind: 'column', key: 'owner' },
      { kind: 'new', key: 'größe_cm', label: 'Größe (cm)' },
      { kind: 'column', key: 'title' },
    ]);
    expect(problems.map((p) => p.index)).toEqual([3, 5, 7]);
    expect(columnKeyForHeader('  ')).toBe('column');
    expect(mapCsvHeaders(['a', ''], []).problems).toEqual([{ index: 1, message: 'Column 2 has no header.' }]);
    expect(mapCsvHeaders(['Size', 'size!'], []).targets).toEqual([
      { kind: 'new', key: 'size', label: 'Size' },
      { kind: 'new', key: 'size_2', label: 'size!' },
    ]);
  });
});
