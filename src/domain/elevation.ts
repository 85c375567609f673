import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import { hashToken, safeEqual, sixDigitCode } from '../lib/secrets';
import {
  countElevationAttempt,
  deleteElevationCode,
  findElevationCode,
  findUserById,
  upsertElevationCode,
  upsertElevationGrant,
  useElevationGrant,
} from '../persistence/accounts';
import type { Services } from './services';
import { ELEVATION_SCOPES, type ElevationScope } from '../model/schemas/account';

/** Sudo mode: sensitive actions need a fresh, per-scope grant on a human session. */
export { ELEVATION_SCOPES, type ElevationScope };

export const ELEVATION_WINDOW_MS = 15 * 60 * 1000;
const CODE_TTL_MS = 10 * 60 * 1000;
const MAX_CODE_ATTEMPTS = 5;

function sessionOf(actor: Actor): string {
  // Keys and OAuth tokens are not people at a keyboard: they cannot be elevated.
  if (actor.via !== 'session' || !actor.sessionId) throw errors.forbidden('Sensitive actions need a signed-in browser session, not an API key or token.');
  return actor.sessionId;
}

/**
 * Grants at once when the session signed in within the window; otherwise
 * mails a 6-digit code, and a second call with the code grants.
 */
export async function elevate(
  services: Services,
  actor: Actor,
  scope: ElevationScope,
  code: string | undefined,
): Promise<{ scope: ElevationScope; expiresAt: Date } | { status: 'code_sent' }> {
  const sessionId = sessionOf(actor);
  const now = services.clock.now();
  const expiresAt = new Date(now.getTime() + ELEVATION_WINDOW_MS);
  const freshSignIn = actor.sessionCreatedAt && now.getTime() - actor.sessionCreatedAt.getTime() < ELEVATION_WINDOW_MS;

  if (code === undefined) {
    if (freshSignIn) {
      await upsertElevationGrant(services.db, { sessionId, scope, expiresAt });
      return { scope, expiresAt };
    }
    await sendCode(services, actor, sessionId, scope, now);
    return { status: 'code_sent' };
  }

  const stored = await findElevationCode(services.db, sessionId, scope);
  if (!stored || stored.expiresAt <= now || stored.attempts >= MAX_CODE_ATTEMPTS) {
    throw errors.unauthorized('The elevation code is invalid or expired. Request a new one.');
  }
  if (!safeEqual(stored.codeHash, hashToken(code))) {
    await countElevationAttempt(services.db, sessionId, scope);
    throw errors.unauthorized('The elevation code is wrong.');
  }
  await deleteElevationCode(services.db, sessionId, scope);
  await upsertElevationGrant(services.db, { sessionId, scope, expiresAt });
  return { scope, expiresAt };
}

async function sendCode(services: Services, actor: Actor, sessionId: string, scope: ElevationScope, now: Date) {
  const user = await findUserById(services.db, actor.userId);
  if (!user) throw errors.unauthorized();
  const code = sixDigitCode();
  await upsertElevationCode(services.db, { sessionId, scope, codeHash: hashToken(code), expiresAt: new Date(now.getTime() + CODE_TTL_MS) });
  await services.mailer.send({
    to: user.email,
    subject: `Your Trellis confirmation code: ${code}`,
    text: `Your code to confirm a sensitive action (${scope}) is ${code}. It expires in 10 minutes.`,
  });
}

/** Called by sensitive routes: passes with a live grant (sliding it forward), else 401 elevation_required. */
export async function requireElevation(services: Services, actor: Actor, scope: ElevationScope): Promise<void> {
  const sessionId = sessionOf(actor);
  const now = services.clock.now();
  const used = await useElevationGrant(services.db, sessionId, scope, now, new Date(now.getTime() + ELEVATION_WINDOW_MS));
  if (!used) throw errors.elevationRequired(scope);
}
