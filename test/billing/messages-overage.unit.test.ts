import { describe, expect, it } from 'vitest';
import { messagesOverageCents } from '../../src/billing/messages-overage';

describe('messages overage pricing', () => {
  it('prices each tier at its rate, per message, rounded once to the cent', () => {
    expect(messagesOverageCents('pro', 0)).toBe(0);
    expect(messagesOverageCents('pro', 1)).toBe(0); // a tenth of a cent
    expect(messagesOverageCents('pro', 5)).toBe(1); // half a cent rounds up
    expect(messagesOverageCents('pro', 1_000)).toBe(100);
    expect(messagesOverageCents('pro', 1_500)).toBe(150);
    expect(messagesOverageCents('pro', 10_000)).toBe(1_000);
    expect(messagesOverageCents('pro', 11_000)).toBe(1_050);
    expect(messagesOverageCents('pro', 100_000)).toBe(1_000 + 4_500);
    expect(messagesOverageCents('scale', 101_000)).toBe(1_000 + 4_500 + 25);
    // Scale's whole room: 5M ceiling - 250k bundle.
    expect(messagesOverageCents('scale', 4_750_000)).toBe(1_000 + 4_500 + 4_650 * 25);
  });

  it('charges free nothing, whatever is passed', () => {
    expect(messagesOverageCents('free', 50_000)).toBe(0);
  });
});
