import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { repairUpdateText } from '../../src/sync/update-text';

/** The sync update rewrite of src/sync/update-text.ts, on updates Yjs itself produced. */
describe('repairUpdateText', () => {
  function recordUpdates(build: (doc: Y.Doc) => void): Uint8Array[] {
    const doc = new Y.Doc();
    const updates: Uint8Array[] = [];
    doc.on('update', (update: Uint8Array) => updates.push(update));
    build(doc);
    return [...updates, Y.encodeStateAsUpdate(doc)];
  }

  it('returns well-formed updates untouched (the same bytes)', () => {
    const updates = recordUpdates((doc) => {
      const text = doc.getText('t');
      text.insert(0, 'hello world');
      text.format(0, 5, { bold: true });
      const row = new Y.Map();
      doc.getMap('rows').set('r1', row);
      row.set('k', 'v');
      text.delete(2, 3);
    });
    for (const update of updates) expect(repairUpdateText(update)).toBe(update);
  });

  it('replaces lone surrogates in formatting attributes and keeps everything else exactly', () => {
    let original!: Y.Doc;
    const updates = recordUpdates((doc) => {
      original = doc;
      const text = doc.getText('t');
      text.insert(0, 'hello world');
      text.format(0, 5, { link: { href: 'https://example.com/\ud800' } });
      const frag = doc.getXmlFragment('default');
      const paragraph = new Y.XmlElement('paragraph');
      frag.insert(0, [paragraph]);
      paragraph.insert(0, [new Y.XmlText('abc')]);
      text.delete(7, 2);
    });
    const repaired = updates.map(repairUpdateText);
    expect(repaired.some((update, i) => update !== updates[i])).toBe(true);
    const copy = new Y.Doc();
    for (const update of repaired.slice(0, -1)) Y.applyUpdate(copy, update);
    expect(copy.getText('t').toString()).toBe(original.getText('t').toString());
    expect(JSON.stringify(copy.getText('t').toDelta())).toContain('https://example.com/\uFFFD');
    expect(copy.getXmlFragment('default').toString()).toBe(original.getXmlFragment('default').toString());
    // Repairing is idempotent, and the full-state update repairs the same way.
    for (const update of repaired) expect(repairUpdateText(update)).toBe(update);
    const fromState = new Y.Doc();
    Y.applyUpdate(fromState, repaired.at(-1)!);
    expect(fromState.getText('t').toDelta()).toEqual(copy.getText('t').toDelta());
  });
});
