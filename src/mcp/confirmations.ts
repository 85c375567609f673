import { actorKey, type Actor } from '../policy/actor';
import { hashToken, randomToken, sha256Hex } from '../lib/secrets';
import { consumeConfirmation, insertConfirmation } from '../persistence/mcp-confirmations';
import type { Services } from '../domain/services';

/**
 * Confirmation of dangerous tools: the first call answers a token instead
 * of acting; the same caller repeats the call with the same arguments and
 * the token within 60 seconds. A token works once, only for that caller
 * (one key, or one OAuth grant), that tool and those arguments.
 */

export const CONFIRMATION_TTL_MS = 60_000;

export type PendingConfirmation = { token: string; expiresIn: number };

export async function requestConfirmation(services: Services, actor: Actor, tool: string, args: Record<string, unknown>): Promise<PendingConfirmation> {
  const token = `cfm_${randomToken(24)}`;
  const now = services.clock.now();
  await insertConfirmation(services.db, {
    tokenHash: hashToken(token),
    caller: actorKey(actor),
    tool,
    argumentsHash: argumentsHash(args),
    createdAt: now,
    expiresAt: new Date(now.getTime() + CONFIRMATION_TTL_MS),
  });
  return { token, expiresIn: CONFIRMATION_TTL_MS / 1000 };
}

/** True once for a valid token; false for an unknown, used or expired one, or one issued for another caller, tool or arguments. */
export async function confirm(services: Services, actor: Actor, tool: string, args: Record<string, unknown>, token: string): Promise<boolean> {
  return consumeConfirmation(services.db, {
    tokenHash: hashToken(token),
    caller: actorKey(actor),
    tool,
    argumentsHash: argumentsHash(args),
    now: services.clock.now(),
  });
}

/** The arguments as one string regardless of key order: `{ a, b }` and `{ b, a }` are the same call. */
function argumentsHash(args: Record<string, unknown>): string {
  return sha256Hex(canonicalJson(args));
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
