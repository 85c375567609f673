import type { CardOnFile } from './payment-provider';

/**
 * The local checkout takes test cards the way hosted providers' test modes
 * do: any number that passes the Luhn check, an expiry in the future and a
 * CVC of the right length. `4000 0000 0000 0002` is declined, as in Stripe's
 * test mode, so the failure path can be tried. Only brand, last four digits
 * and expiry are kept.
 */

export const DECLINED_TEST_CARD = '4000000000000002';

export type CardInput = { number?: string; expiry?: string; cvc?: string };
export type CardCheck = { ok: true; card: CardOnFile } | { ok: false; field: 'number' | 'expiry' | 'cvc'; message: string };

export function checkTestCard(input: CardInput, now: Date): CardCheck {
  const number = (input.number ?? '').replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(number) || !luhnValid(number)) return { ok: false, field: 'number', message: 'This card number is not valid.' };
  if (number === DECLINED_TEST_CARD) return { ok: false, field: 'number', message: 'Your card was declined.' };
  const brand = brandOf(number);

  const expiry = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(input.expiry ?? '');
  const expMonth = expiry ? Number(expiry[1]) : 0;
  const expYear = expiry ? (expiry[2]!.length === 2 ? 2000 + Number(expiry[2]) : Number(expiry[2])) : 0;
  if (!expiry || expMonth < 1 || expMonth > 12) return { ok: false, field: 'expiry', message: 'Give the expiry as MM/YY.' };
  const monthsNow = now.getUTCFullYear() * 12 + now.getUTCMonth();
  if (expYear * 12 + (expMonth - 1) < monthsNow) return { ok: false, field: 'expiry', message: 'This card has expired.' };

  const cvcLength = brand === 'amex' ? 4 : 3;
  if (!new RegExp(`^\\d{${cvcLength}}$`).test((input.cvc ?? '').trim())) {
    return { ok: false, field: 'cvc', message: `The security code is ${cvcLength} digits.` };
  }
  return { ok: true, card: { brand, last4: number.slice(-4), expMonth, expYear } };
}

function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function brandOf(number: string): string {
  if (/^4/.test(number)) return 'visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(number)) return 'mastercard';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(number)) return 'discover';
  return 'card';
}
