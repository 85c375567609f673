/**
 * Calendar arithmetic and formatting for formulas, the same in Node and in
 * browsers: wall-clock fields in a time zone come from `Intl.DateTimeFormat`
 * (both ship the IANA database), everything else is plain UTC arithmetic.
 * A date without a time (`dateOnly`) is a calendar day and is never shifted
 * into a zone; a date-time is read in the evaluation's time zone.
 */
import { DateValue, FormulaError, valueError } from './values.js';

export interface WallClock {
  year: number;
  /** 1-12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
  /** 0 = Sunday */
  weekday: number;
  /** Minutes east of UTC at that instant. */
  offset: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Whether the runtime knows this IANA time zone. */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock of a date: a calendar day as it is, a date-time in `timeZone`. */
export function wallClock(date: DateValue, timeZone: string): WallClock {
  if (date.dateOnly || timeZone === 'UTC') return utcWallClock(date.ms);
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(date.ms))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const ms = ((date.ms % 1000) + 1000) % 1000;
  const asUtc = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!, ms);
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour!,
    minute: parts.minute!,
    second: parts.second!,
    ms,
    weekday: new Date(Date.UTC(parts.year!, parts.month! - 1, parts.day!)).getUTCDay(),
    offset: Math.round((asUtc - date.ms) / 60_000),
  };
}

function utcWallClock(ms: number): WallClock {
  const d = new Date(ms);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    ms: d.getUTCMilliseconds(),
    weekday: d.getUTCDay(),
    offset: 0,
  };
}

/** The instant whose wall clock in `timeZone` reads these fields (the earlier one in a repeated hour, the later in a skipped one). */
function instantOf(fields: Omit<WallClock, 'weekday' | 'offset'>, timeZone: string): number {
  const asUtc = Date.UTC(fields.year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second, fields.ms);
  if (timeZone === 'UTC') return asUtc;
  let guess = asUtc;
  for (let i = 0; i < 3; i++) {
    const offset = wallClock(new DateValue(guess, false), timeZone).offset;
    const next = asUtc - offset * 60_000;
    if (next === guess) break;
    guess = next;
  }
  return guess;
}

/** Today's calendar day in `timeZone`. */
export function today(now: number, timeZone: string): DateValue {
  const clock = wallClock(new DateValue(now, false), timeZone);
  return new DateValue(Date.UTC(clock.year, clock.month - 1, clock.day), true);
}

// ---------------------------------------------------------------------------
// Units

type Unit = 'milliseconds' | 'seconds' | 'minutes' | 'hours' | 'days' | 'weeks' | 'months' | 'quarters' | 'years';

const UNIT_NAMES: Record<string, Unit> = {};
for (const [unit, names] of Object.entries({
  milliseconds: ['milliseconds', 'millisecond', 'ms'],
  seconds: ['seconds', 'second', 's'],
  minutes: ['minutes', 'minute', 'm'],
  hours: ['hours', 'hour', 'h'],
  days: ['days', 'day', 'd'],
  weeks: ['weeks', 'week', 'w'],
  months: ['months', 'month', 'M'],
  quarters: ['quarters', 'quarter', 'Q'],
  years: ['years', 'year', 'y'],
})) {
  for (const name of names) UNIT_NAMES[name] = unit as Unit;
}

export const UNIT_LIST = 'milliseconds, seconds, minutes, hours, days, weeks, months, quarters or years (or ms, s, m, h, d, w, M, Q, y)';

export function unitOf(text: string): Unit | FormulaError {
  const unit = UNIT_NAMES[text.trim()] ?? UNIT_NAMES[text.trim().toLowerCase()];
  return unit ?? valueError(`"${text}" is not a unit: use ${UNIT_LIST}.`);
}

const FIXED_MS: Partial<Record<Unit, number>> = { milliseconds: 1, seconds: 1_000, minutes: 60_000, hours: 3_600_000 };
const MONTHS_IN: Partial<Record<Unit, number>> = { months: 1, quarters: 3, years: 12 };

/** DATEADD: calendar units move the wall clock (a day is a calendar day even across a clock change); a month past the end of the next lands on its last day. */
export function addToDate(date: DateValue, count: number, unit: Unit, timeZone: string): DateValue {
  const fixed = FIXED_MS[unit];
  if (fixed !== undefined) return new DateValue(date.ms + Math.round(count * fixed), false);
  const whole = Math.round(count);
  const clock = wallClock(date, timeZone);
  let { year, month, day } = clock;
  if (unit === 'days' || unit === 'weeks') {
    const moved = new Date(Date.UTC(year, month - 1, day + whole * (unit === 'weeks' ? 7 : 1)));
    [year, month, day] = [moved.getUTCFullYear(), moved.getUTCMonth() + 1, moved.getUTCDate()];
  } else {
    const months = year * 12 + (month - 1) + whole * MONTHS_IN[unit]!;
    year = Math.floor(months / 12);
    month = (months % 12) + 1;
    day = Math.min(day, new Date(Date.UTC(year, month, 0)).getUTCDate());
  }
  if (date.dateOnly) return new DateValue(Date.UTC(year, month - 1, day), true);
  return new DateValue(instantOf({ ...clock, year, month, day }, timeZone), false);
}

/** DATETIME_DIFF: `a - b` in whole units, truncated toward zero (as Airtable's moment.js does). */
export function dateDifference(a: DateValue, b: DateValue, unit: Unit, timeZone: string): number {
  const fixed = FIXED_MS[unit];
  if (fixed !== undefined) return Math.trunc((a.ms - b.ms) / fixed);
  if (unit === 'days' || unit === 'weeks') {
    // Wall-clock time, so a day with a clock change still counts as one day.
    const [wa, wb] = [wallClock(a, timeZone), wallClock(b, timeZone)];
    const difference = a.ms + wa.offset * 60_000 - (b.ms + wb.offset * 60_000);
    return Math.trunc(difference / (unit === 'weeks' ? 7 * 86_400_000 : 86_400_000));
  }
  return Math.trunc(monthDifference(a, b, timeZone) / MONTHS_IN[unit]!);
}

/** Months from b to a, with the fraction of the month in progress (moment.js's monthDiff). */
function monthDifference(a: DateValue, b: DateValue, timeZone: string): number {
  const [wa, wb] = [wallClock(a, timeZone), wallClock(b, timeZone)];
  if (wa.day < wb.day) return -monthDifference(b, a, timeZone);
  const whole = (wa.year - wb.year) * 12 + (wa.month - wb.month);
  const anchor = addToDate(b, whole, 'months', timeZone).ms;
  let fraction: number;
  if (a.ms - anchor < 0) {
    const before = addToDate(b, whole - 1, 'months', timeZone).ms;
    fraction = (a.ms - anchor) / (anchor - before);
  } else {
    const after = addToDate(b, whole + 1, 'months', timeZone).ms;
    fraction = (a.ms - anchor) / (after - anchor);
  }
  return whole + fraction || 0;
}

// ---------------------------------------------------------------------------
// DATETIME_FORMAT: Airtable's (moment.js's) format specifiers, in English.

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const TOKENS = /\[[^\]]*\]|LTS|LT|LLLL|LLL|LL|L|YYYY|YY|Q|MMMM|MMM|MM|M|DDDD|DDD|Do|DD|D|dddd|ddd|dd|d|E|e|HH|H|hh|h|kk|k|mm|m|ss|s|SSS|SS|S|A|a|ZZ|Z|X|x|WW|W|ww|w/g;

export const DEFAULT_FORMAT = 'YYYY-MM-DD';

const LOCALIZED: Record<string, string> = {
  LT: 'h:mm A',
  LTS: 'h:mm:ss A',
  L: 'MM/DD/YYYY',
  LL: 'MMMM D, YYYY',
  LLL: 'MMMM D, YYYY h:mm A',
  LLLL: 'dddd, MMMM D, YYYY h:mm A',
};

export function formatDate(date: DateValue, format: string, timeZone: string): string {
  const clock = wallClock(date, timeZone);
  return format.replace(TOKENS, (token) => {
    if (token.startsWith('[')) return token.slice(1, -1);
    const localized = LOCALIZED[token];
    if (localized) return formatDate(date, localized, timeZone);
    return formatToken(token, clock, date);
  });
}

function formatToken(token: string, c: WallClock, date: DateValue): string {
  const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, '0');
  const hour12 = c.hour % 12 === 0 ? 12 : c.hour % 12;
  const dayOfYear = Math.round((Date.UTC(c.year, c.month - 1, c.day) - Date.UTC(c.year, 0, 1)) / 86_400_000) + 1;
  const offset = (colon: boolean) => `${c.offset < 0 ? '-' : '+'}${pad(Math.trunc(Math.abs(c.offset) / 60))}${colon ? ':' : ''}${pad(Math.abs(c.offset) % 60)}`;
  switch (token) {
    case 'YYYY': return String(c.year).padStart(4, '0');
    case 'YY': return pad(c.year % 100);
    case 'Q': return String(Math.floor((c.month - 1) / 3) + 1);
    case 'MMMM': return MONTHS[c.month - 1]!;
    case 'MMM': return MONTHS[c.month - 1]!.slice(0, 3);
    case 'MM': return pad(c.month);
    case 'M': return String(c.month);
    case 'DDDD': return pad(dayOfYear, 3);
    case 'DDD': return String(dayOfYear);
    case 'Do': return ordinal(c.day);
    case 'DD': return pad(c.day);
    case 'D': return String(c.day);
    case 'dddd': return WEEKDAYS[c.weekday]!;
    case 'ddd': return WEEKDAYS[c.weekday]!.slice(0, 3);
    case 'dd': return WEEKDAYS[c.weekday]!.slice(0, 2);
    case 'd': return String(c.weekday);
    case 'e': return String(c.weekday);
    case 'E': return String(c.weekday === 0 ? 7 : c.weekday);
    case 'WW': return pad(isoWeek(c));
    case 'W': return String(isoWeek(c));
    case 'ww': return pad(localWeek(c, dayOfYear));
    case 'w': return String(localWeek(c, dayOfYear));
    case 'HH': return pad(c.hour);
    case 'H': return String(c.hour);
    case 'hh': return pad(hour12);
    case 'h': return String(hour12);
    case 'kk': return pad(c.hour === 0 ? 24 : c.hour);
    case 'k': return String(c.hour === 0 ? 24 : c.hour);
    case 'mm': return pad(c.minute);
    case 'm': return String(c.minute);
    case 'ss': return pad(c.second);
    case 's': return String(c.second);
    case 'SSS': return pad(c.ms, 3);
    case 'SS': return pad(Math.floor(c.ms / 10));
    case 'S': return String(Math.floor(c.ms / 100));
    case 'A': return c.hour < 12 ? 'AM' : 'PM';
    case 'a': return c.hour < 12 ? 'am' : 'pm';
    case 'ZZ': return offset(false);
    case 'Z': return offset(true);
    case 'X': return String(Math.floor(date.ms / 1000));
    case 'x': return String(date.ms);
  }
  return token;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/** ISO 8601 week number (weeks start on Monday; week 1 holds the year's first Thursday). */
function isoWeek(c: WallClock): number {
  const day = Date.UTC(c.year, c.month - 1, c.day);
  const weekday = (c.weekday + 6) % 7;
  const thursday = day - weekday * 86_400_000 + 3 * 86_400_000;
  const yearStart = Date.UTC(new Date(thursday).getUTCFullYear(), 0, 1);
  return Math.floor((thursday - yearStart) / (7 * 86_400_000)) + 1;
}

/** Week of the year with weeks starting on Sunday and week 1 holding January 1 (moment's English locale). */
function localWeek(c: WallClock, dayOfYear: number): number {
  const januaryFirst = new Date(Date.UTC(c.year, 0, 1)).getUTCDay();
  return Math.floor((dayOfYear - 1 + januaryFirst) / 7) + 1;
}
